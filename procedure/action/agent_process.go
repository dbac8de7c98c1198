package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wo-runner/wo/agent"
	"github.com/wo-runner/wo/internal/identity"
	"github.com/wo-runner/wo/internal/sandbox"
	"github.com/wo-runner/wo/workorder"
)

// AgentRun is the outcome of one agent command.
type AgentRun struct {
	Agent    string // the profile's name; "command" for a command of the user's own
	Program  string // the command's first word
	ExitCode int    // -1 when a signal ended it (as Go says): Signal names it
	// Signal names the signal that stopped the agent ("interrupt" for
	// Ctrl-C, "terminated", "killed"), and StoppedBy says who or what
	// stopped it ("Ctrl-C (SIGINT) to wo", "its time limit of 30m"); both
	// are empty when it exited on its own.
	Signal, StoppedBy string
	Stdout            string // trimmed to maxAgentStdout
	Stderr            string
	Duration          time.Duration
	// Report is what the agent said of its run: a failure, its words,
	// what it cost.
	Report agent.Report
}

// What is kept of an agent's output: stdout up to 1 MiB, its first and
// last halves (the result and the deliverable come last), stderr up to
// 16 KiB.
const (
	maxAgentStdout = 1 << 20
	maxAgentStderr = 16 << 10
)

// agentGrace is how long an agent's process group has, after SIGTERM, to
// end before it gets SIGKILL.
const agentGrace = 5 * time.Second

// runAgent runs the configured agent in dir with the prompt: a named
// agent (--agent claude) with its profile's non-interactive call, a
// command of the user's with the prompt on stdin and in a file. The
// command line is split into words as a shell would, but no shell runs it.
//
// The agent gets a folder of its own (its HOME, TMPDIR, the prompt and
// the files its tool keeps), removed after the run, and runs in the
// sandbox where the machine has one (sandbox.go). The agent leads its own
// process group, and the whole group ends with it: on an interrupt or the
// time limit (--agent-timeout) it gets SIGTERM, then SIGKILL after a grace
// period, and children it left behind after exiting are stopped the same
// way. Its pid is recorded in the task's state while it runs, so that a
// rerun after wo itself was killed stops the left-over agent first: never
// two agents on one worktree.
//
// An error is a run that could not start or was stopped; a run that ended
// says what it did in AgentRun.Report, which the caller judges with the
// diff.
func runAgent(ctx context.Context, sc *StepContext, dir, prompt string) (AgentRun, error) {
	settings, key := sc.Settings(), sc.Key()
	line, err := agent.Parse(settings.Agent)
	if err != nil {
		return AgentRun{}, err
	}
	program := line.Program()
	if err := stopLeftoverAgent(ctx, sc); err != nil {
		return AgentRun{}, err
	}
	// The agent never gets the token, not even quoted in a review comment.
	prompt = sc.Redact(prompt)
	box, err := newAgentBox(key)
	if err != nil {
		return AgentRun{}, err
	}
	defer box.remove()
	if err := os.WriteFile(box.prompt, []byte(prompt), 0o600); err != nil {
		return AgentRun{}, err
	}
	env, login, caches, err := agentEnvironment(sc, line, box, dir)
	if err != nil {
		return AgentRun{}, err
	}
	if p := line.Profile; p.KeyRequired && login == "" && !slices.ContainsFunc(p.Credentials, func(n string) bool { return agentHas(env, n) }) {
		return AgentRun{Agent: p.Name, Program: program, Report: agent.Report{Failure: agent.FailAuth,
			Message: fmt.Sprintf("no credentials: set one of %s in wo's environment (wo passes it to %s by name)", strings.Join(p.Credentials[:min(4, len(p.Credentials))], ", "), p.Name)}}, nil
	}
	call := line.Call(agent.CallInput{PromptFile: box.prompt, Prompt: prompt, StateDir: box.state, UseLogin: settings.AgentLogin,
		MaxCostUSD: costLeft(sc), Set: func(name string) bool { return agentHas(env, name) }})
	leftBefore := presentLeaves(dir, line.Profile.Leaves)
	gitFile := readGitFile(dir)
	ctx, cancel := context.WithTimeout(ctx, settings.AgentTimeout)
	defer cancel()

	outR, outW, errR, errW, err := outputPipes()
	if err != nil {
		return AgentRun{}, err
	}
	launch, err := agentCommand(sc, box, dir, login, caches, line.Profile, call.Argv, env)
	if err != nil {
		closeAll(outR, outW, errR, errW)
		return AgentRun{}, err
	}
	defer launch.finish(ctx, sc)
	cmd := launch.cmd
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(call.Stdin)
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.Env = append(env, launch.env...)
	started := time.Now()
	err = cmd.Start()
	outW.Close() // the agent's copies stay open in it and its children
	errW.Close()
	if err != nil {
		closeAll(outR, errR)
		return AgentRun{}, fmt.Errorf("agent command %s could not run: %v", program, err)
	}
	pid := cmd.Process.Pid
	stdout, stderr := headTailBuffer{half: maxAgentStdout / 2}, limitedBuffer{limit: maxAgentStderr}
	shown := newAgentProgress(sc, agentWho(line.Profile.Name, program), sc.Now())
	shown.start()
	defer shown.end()
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); io.Copy(io.MultiWriter(&stdout, shown.stream()), outR) }()
	go func() { defer readers.Done(); io.Copy(io.MultiWriter(&stderr, shown.stream()), errR) }()

	// The agent's group is stopped however this ends, and its record is
	// cleared once nothing of it runs. Once the leader is reaped its pid,
	// the group's id, may belong to someone else: the group is stopped
	// before that, never after.
	reaped := false
	defer func() {
		if !reaped {
			stopGroup(pid, agentGrace)
		}
		waitAtMost(&readers, agentGrace)
		outR.Close()
		errR.Close()
		clearAgent(ctx, sc, pid)
	}()

	if err := recordAgentProcess(ctx, sc, pid); err != nil {
		return AgentRun{}, fmt.Errorf("agent command %s was stopped: its pid could not be recorded in task %s: %w", program, key, err)
	}

	waitErr := waitForGroup(ctx, cmd, pid)
	reaped = true
	waitAtMost(&readers, agentGrace)
	removeLeaves(dir, line.Profile.Leaves, leftBefore)
	restoreGitFile(dir, gitFile)
	run := AgentRun{Agent: line.Profile.Name, Program: program, Stdout: stdout.String(), Stderr: stderr.String(), Duration: time.Since(started)}
	if err := howTheRunEnded(ctx, &run, waitErr, program, settings.AgentTimeout); err != nil {
		return run, err
	}
	run.Report = call.Read(run.Stdout, run.Stderr, run.ExitCode)
	return run, nil
}

// waitAtMost waits for wg, but no longer than d: a child the agent left
// may hold its output open.
func waitAtMost(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// recordAgentProcess records the running agent's process in the task's
// state, so that a rerun after wo was killed stops it first.
func recordAgentProcess(ctx context.Context, sc *StepContext, pid int) error {
	st := sc.State()
	st.Agent = &workorder.AgentProcess{PID: pid, Host: identity.Host(), StartTicks: startTicks(pid),
		StartedAt: workorder.Timestamp(sc.Now()), Step: sc.Step.Step}
	return sc.Checkpoint(ctx, st)
}

// waitForGroup waits for the agent's leader to exit, or for ctx to end:
// then the group gets SIGTERM, and SIGKILL after agentGrace. Children left
// behind are stopped before the leader is reaped (its pid, the group's id,
// is free once it is); it returns the leader's end.
func waitForGroup(ctx context.Context, cmd *exec.Cmd, pid int) error {
	exited := make(chan func() error, 1)
	go func() { exited <- waitLeader(cmd) }()
	var reap func() error
	select {
	case reap = <-exited:
	case <-ctx.Done():
		signalGroup(pid, syscall.SIGTERM)
		select {
		case reap = <-exited:
		case <-time.After(agentGrace):
			signalGroup(pid, syscall.SIGKILL)
			reap = <-exited
		}
	}
	stopGroup(pid, agentGrace)
	return reap()
}

// agentEnvironment is the environment the agent command runs with in
// dir, the login folder lent to it ("" when none: --agent-login lends the
// one its profile names, and fails when there is none), and the build
// caches it may use.
func agentEnvironment(sc *StepContext, line agent.Command, box agentBox, dir string) ([]string, string, map[string]string, error) {
	settings := sc.Settings()
	var profile *agent.Profile
	if line.Known() {
		profile = line.Profile
	}
	login := ""
	if settings.AgentLogin {
		if login = loginFolder(profile, sc.Getenv); login == "" {
			return nil, "", nil, fmt.Errorf("--agent-login: agent command %s has no login folder that wo knows; pass its credentials with --agent-env NAME instead", line.Program())
		}
	}
	caches := box.caches(buildCaches(sc.Getenv, sc.Key()))
	env := agentEnv{getenv: sc.Getenv, optIn: settings.AgentEnv, home: box.home, tmp: box.tmp, profile: profile, login: login, caches: caches,
		own: map[string]string{"WO_TASK_KEY": sc.Key(), "WO_WORKTREE": dir, "WO_PROMPT_FILE": box.prompt}}.environment()
	return env, login, caches, nil
}

// howTheRunEnded fills in run's exit code or signal from waitErr, and what
// stopped it; the error is a run that was stopped (by its time limit,
// ctx, or a signal wo got) or never ran (the command could not start, or
// wo's launcher said the sandbox could not).
func howTheRunEnded(ctx context.Context, run *AgentRun, waitErr error, program string, timeout time.Duration) error {
	var exit *exec.ExitError
	if errors.As(waitErr, &exit) {
		if run.Signal = signalOf(exit); run.Signal == "" {
			run.ExitCode = exit.ExitCode()
		} else {
			run.ExitCode = -1 // no exit status of its own, as Go says
		}
	}
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		run.StoppedBy = fmt.Sprintf("its time limit of %s", timeout)
		return fmt.Errorf("agent command %s ran longer than its limit of %s and was stopped with its child processes; raise --agent-timeout (WO_AGENT_TIMEOUT) if it needs longer", program, timeout)
	case ctx.Err() != nil:
		// The signal that counts is the one wo got: the agent's own end
		// came from wo's SIGTERM.
		run.Signal, run.StoppedBy = stopCause(ctx)
		return &agentStoppedError{program: program, by: run.StoppedBy, err: ctx.Err()}
	case run.Signal != "":
		// Killed from outside wo (the OOM killer, a person's kill): no
		// exit status of its own.
		run.StoppedBy = fmt.Sprintf("a signal from outside wo (%s)", run.Signal)
	case exit != nil:
	case waitErr != nil:
		return fmt.Errorf("agent command %s could not run: %v", program, waitErr)
	}
	if words, ok := sandbox.NotStarted(run.ExitCode, run.Stderr); ok {
		// wo's launcher, not the agent, said so: the agent never ran.
		return fmt.Errorf("agent command %s could not run: %s", program, agent.Meaningful(words))
	}
	return nil
}

// outputPipes are the pipes of the agent's standard output and error.
func outputPipes() (outR, outW, errR, errW *os.File, err error) {
	if outR, outW, err = os.Pipe(); err != nil {
		return nil, nil, nil, nil, err
	}
	if errR, errW, err = os.Pipe(); err != nil {
		closeAll(outR, outW)
		return nil, nil, nil, nil, err
	}
	return outR, outW, errR, errW, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// agentWho names the agent for a person: a named agent by its name, a
// command of the user's own by its program.
func agentWho(profile, program string) string {
	if profile == "" || profile == "command" {
		return "command " + filepath.Base(program)
	}
	return profile
}

// signalOf is Go's name of the signal that ended a process ("killed",
// "terminated"), "" when it exited. A status of 128+N says signal N ended
// it, as a shell says, and as the sandbox's launcher reports its agent.
func signalOf(exit *exec.ExitError) string {
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	if code := exit.ExitCode(); code > 128 && code < 128+32 {
		return syscall.Signal(code - 128).String()
	}
	return ""
}

// stopCause says why ctx ended, which stopped the agent: a signal to wo
// (signal.NotifyContext's cause names it: "interrupt signal received"),
// by Go's name and as a person says it, or what else ended the run (the
// lease lost).
func stopCause(ctx context.Context) (signal, by string) {
	cause := context.Cause(ctx)
	if cause == nil || cause == context.Canceled {
		return "", "wo" // wo itself, for no reason of the run's
	}
	name, ok := strings.CutSuffix(cause.Error(), " signal received")
	switch {
	case !ok:
		return "", "wo: " + cause.Error()
	case name == os.Interrupt.String():
		return name, "Ctrl-C (SIGINT) to wo"
	case name == syscall.SIGTERM.String():
		return name, "SIGTERM to wo"
	}
	return name, fmt.Sprintf("a signal to wo (%s)", name)
}

// agentStoppedError is an agent run that wo stopped, with its child
// processes, because wo itself was stopped: it is the context's error.
type agentStoppedError struct {
	program, by string
	err         error
}

func (e *agentStoppedError) Error() string {
	return fmt.Sprintf("agent command %s was stopped with its child processes by %s", e.program, e.by)
}

func (e *agentStoppedError) Unwrap() error { return e.err }

// stopLeftoverAgent stops an agent that an earlier run on this host left
// running (wo was killed while it worked), before a new one starts.
func stopLeftoverAgent(ctx context.Context, sc *StepContext) error {
	prev := sc.State().Agent
	if prev == nil {
		return nil
	}
	if prev.Host != identity.Host() {
		// It ran on another machine, with another worktree; nothing here to stop.
		return clearAgentRecord(ctx, sc)
	}
	if agentAlive(prev, sc.Key()) {
		sc.Log(ctx, "agent_stopped", map[string]any{"step": sc.Step.Step, "pid": prev.PID,
			"reason": "an earlier run's agent was still running"})
		if !stopGroup(prev.PID, agentGrace) {
			return fmt.Errorf("task %s: the agent of an earlier run (pid %d, process group %d) is still running and did not stop; end it (kill -KILL -- -%d), then run wo run %s",
				sc.Key(), prev.PID, prev.PID, prev.PID, sc.Key())
		}
	}
	return clearAgentRecord(ctx, sc)
}

func clearAgentRecord(ctx context.Context, sc *StepContext) error {
	st := sc.State()
	st.Agent = nil
	return sc.Checkpoint(ctx, st)
}

// clearAgent forgets the agent's record once it and its group are gone,
// even when the run was interrupted.
func clearAgent(ctx context.Context, sc *StepContext, pid int) {
	if cur := sc.State().Agent; cur == nil || cur.PID != pid {
		return
	}
	cctx, cancel := PastCancel(ctx)
	defer cancel()
	if err := clearAgentRecord(cctx, sc); err != nil {
		sc.Log(cctx, "agent_record_kept", map[string]any{"step": sc.Step.Step, "pid": pid, "error": err.Error()})
	}
}

// agentAlive reports whether the recorded agent's process group still has
// members. While the leader lives, its start time must match the record:
// a pid reused by an unrelated process is never signalled. Once the leader
// is gone its pid cannot be reused while the group still exists, so
// remaining members are the agent's children.
func agentAlive(a *workorder.AgentProcess, key string) bool {
	if a.PID <= 1 || !groupExists(a.PID) {
		return false
	}
	// The leader, while it lives, must be the process that started then.
	if ticks := startTicks(a.PID); ticks != 0 && ticks != a.StartTicks {
		return false
	}
	// A record in a document proves nothing by itself (anyone can write
	// one): only a group whose members wo started for this task, which
	// carry WO_TASK_KEY=key in their environment, is ever signalled.
	return groupRunsTask(a.PID, key)
}

// groupRunsTask reports whether a member of process group pgid has the
// environment wo gives an agent of this task.
func groupRunsTask(pgid int, key string) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	want := []byte("\x00WO_TASK_KEY=" + key + "\x00")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f := statFields(pid)
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) { // field 5: the process group
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && bytes.Contains(append([]byte{0}, env...), want) {
			return true
		}
	}
	return false
}

// stopGroup ends a process group: SIGTERM, then SIGKILL after the grace
// period. It reports whether the group is gone.
func stopGroup(pgid int, grace time.Duration) bool {
	if !groupExists(pgid) {
		return true
	}
	signalGroup(pgid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !groupExists(pgid) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	signalGroup(pgid, syscall.SIGKILL)
	for i := 0; i < 100; i++ {
		if !groupExists(pgid) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func signalGroup(pgid int, sig syscall.Signal) {
	if pgid > 1 {
		killGroup(pgid, sig)
	}
}

// groupExists reports whether any process is left in the group. Zombies,
// dead but not yet collected by their parent, do not count.
func groupExists(pgid int) bool {
	if pgid <= 1 {
		return false
	}
	if err := killGroup(pgid, 0); err == syscall.ESRCH {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true // no /proc: trust the signal
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, group, ok := procStat(pid)
		if ok && group == pgid && state != "Z" {
			return true
		}
	}
	return false
}

// procStat reads a process's state and process group from /proc.
func procStat(pid int) (state string, pgid int, ok bool) {
	f := statFields(pid)
	if len(f) < 3 {
		return "", 0, false
	}
	g, err := strconv.Atoi(f[2])
	return f[0], g, err == nil
}

// startTicks is a process's start time in clock ticks since boot, 0 when
// unknown.
func startTicks(pid int) uint64 {
	f := statFields(pid)
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}

// statFields are the fields of /proc/PID/stat after the command name, from
// the state (field 3) on.
func statFields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	return strings.Fields(s)
}

// limitedBuffer keeps the first limit bytes and counts the rest.
type limitedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	limit   int
	dropped int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.limit - b.buf.Len()
	if room > 0 {
		n := min(room, len(p))
		b.buf.Write(p[:n])
		b.dropped += len(p) - n
	} else {
		b.dropped += len(p)
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped > 0 {
		return b.buf.String() + fmt.Sprintf("\n[… %d more bytes not kept]", b.dropped)
	}
	return b.buf.String()
}

// headTailBuffer keeps the first and the last half bytes written, and
// counts what is between.
type headTailBuffer struct {
	mu      sync.Mutex
	half    int
	head    []byte
	tail    []byte // a ring of the last half bytes once full
	start   int    // where the ring's oldest byte is
	dropped int
}

func (b *headTailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.half - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if len(b.tail) < b.half {
			k := min(b.half-len(b.tail), len(p))
			b.tail = append(b.tail, p[:k]...)
			p = p[k:]
			continue
		}
		// Full: overwrite the oldest bytes.
		k := min(b.half-b.start, len(p))
		copy(b.tail[b.start:], p[:k])
		b.start = (b.start + k) % b.half
		b.dropped += k
		p = p[k:]
	}
	return n, nil
}

func (b *headTailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	tail := append(slices.Clone(b.tail[b.start:]), b.tail[:b.start]...)
	if b.dropped == 0 {
		return string(b.head) + string(tail)
	}
	return string(b.head) + fmt.Sprintf("\n[… %d bytes not kept …]\n", b.dropped) + string(tail)
}

// readGitFile is a linked worktree's .git file ("" when it is none), read
// before the agent runs.
func readGitFile(dir string) string {
	path := filepath.Join(dir, ".git")
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// restoreGitFile puts back the worktree's .git file the agent changed
// (it names the worktree's admin folder, which wo reads and cleans up by):
// a link or folder in its place is removed first, never followed.
func restoreGitFile(dir, was string) {
	if was == "" || readGitFile(dir) == was {
		return
	}
	path := filepath.Join(dir, ".git")
	os.RemoveAll(path)
	os.WriteFile(path, []byte(was), 0o644)
}
