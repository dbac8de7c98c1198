//go:build unix

package action

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

// What an agent prints is kept up to a bound, and what was dropped is
// counted, so a chatty agent cannot fill the document or the memory.
func TestAgentOutputIsBoundedAndSaysWhatItDropped(t *testing.T) {
	b := limitedBuffer{limit: 5}
	b.Write([]byte("abc"))
	b.Write([]byte("defgh"))
	b.Write([]byte("ij"))
	if got, want := b.String(), "abcde\n[… 5 more bytes not kept]"; got != want {
		t.Errorf("kept %q, want %q", got, want)
	}
	exact := limitedBuffer{limit: 3}
	exact.Write([]byte("abc"))
	if got := exact.String(); got != "abc" {
		t.Errorf("output exactly at the bound: %q", got)
	}
	if got := trim("abcdef", 6); got != "abcdef" {
		t.Errorf("trim at the bound: %q", got)
	}
	if got := trim("abcdefg", 6); got != "abcdef\n[… 1 more bytes not kept]" {
		t.Errorf("trim past the bound: %q", got)
	}
}

func TestProcessFactsComeFromProc(t *testing.T) {
	me := os.Getpid()
	if startTicks(me) == 0 {
		t.Fatal("no start time for this very process")
	}
	other := exec.Command("sleep", "5")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	if startTicks(other.Process.Pid) < startTicks(me) {
		t.Error("a process started later has an earlier start time")
	}
	if f := statFields(me); len(f) < 20 || f[0] != "R" && f[0] != "S" {
		t.Errorf("the fields of this process's stat: %v", f)
	}
	if startTicks(1<<30) != 0 || statFields(1<<30) != nil {
		t.Error("a process that does not exist has facts")
	}
	if groupExists(0) || groupExists(1) {
		t.Error("the kernel's and init's groups count as an agent's")
	}
}

// startGroup starts a shell script as the leader of its own process
// group, with extra environment.
func startGroup(t *testing.T, script string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	return cmd
}

func TestAnAgentIsRecognisedByItsGroupStartAndTask(t *testing.T) {
	agent := startGroup(t, "sleep 30 & sleep 30", "WO_TASK_KEY=task_mine")
	pid := agent.Process.Pid
	waitForGroupMembers(t, pid, 2)
	rec := &workorder.AgentProcess{PID: pid, StartTicks: startTicks(pid)}
	if !groupExists(pid) || !groupRunsTask(pid, "task_mine") || !agentAlive(rec, "task_mine") {
		t.Fatalf("a live agent of this task is not recognised (group %v, task %v)", groupExists(pid), groupRunsTask(pid, "task_mine"))
	}
	if groupRunsTask(pid, "task_other") || agentAlive(rec, "task_other") {
		t.Error("another task's agent is taken for this task's")
	}
	if agentAlive(&workorder.AgentProcess{PID: pid, StartTicks: rec.StartTicks + 1}, "task_mine") {
		t.Error("a process that started at another time is taken for the recorded agent")
	}
	for _, p := range []int{0, 1, -5} {
		if agentAlive(&workorder.AgentProcess{PID: p}, "task_mine") {
			t.Errorf("pid %d is taken for an agent", p)
		}
	}
	if state, group, ok := procStat(pid); !ok || group != pid || state == "Z" {
		t.Errorf("procStat of the leader: %q %d %v", state, group, ok)
	}
	if _, _, ok := procStat(1 << 30); ok {
		t.Error("procStat of no process")
	}
}

func TestStoppingAGroupEndsEveryMemberEvenOneIgnoringTERM(t *testing.T) {
	t.Parallel() // most of it is waiting
	agent := startGroup(t, "trap '' TERM; sleep 30 & wait", "WO_TASK_KEY=task_stubborn")
	pid := agent.Process.Pid
	waitForGroupMembers(t, pid, 2)
	// The leader is not reaped until the cleanup, as wo stops a group
	// before it reaps its leader: a reaped leader's pid, the group's id,
	// could lead another test's group by the time the cleanup signals it.
	if !stopGroup(pid, 300*time.Millisecond) {
		t.Fatal("the group did not stop")
	}
	if groupExists(pid) {
		t.Error("a member of the group survived")
	}
	if !stopGroup(pid, 300*time.Millisecond) {
		t.Error("stopping a group that is gone must report it gone")
	}
}

func TestAnAgentRecordedOnAnotherHostIsNeverSignalledHere(t *testing.T) {
	// The group notes every TERM, INT or HUP it gets, and wo stops a group
	// with SIGTERM before anything else: a note is the proof that wo
	// signalled it. Its survival alone is no proof either way on a shared
	// machine: pid_max is 32768, and another program's late
	// kill -KILL -- -pgid, meant for a group that ended, can land on it.
	mark := filepath.Join(t.TempDir(), "signals")
	agent := startGroup(t, `for s in TERM INT HUP; do trap "echo $s >> \"\$MARK\"" $s; done
sleep 30 & while kill -0 $! 2>/dev/null; do wait; done`, "WO_TASK_KEY="+fixture.Key, "MARK="+mark)
	pid := agent.Process.Pid
	waitForGroupMembers(t, pid, 2)
	h := newStepContext(t, stepOpts{Procedure: fixture.AgentSteps("task_note"), Agent: "echo '<deliverable>fine</deliverable>'\n"})
	h.setState(func(s *workorder.State) {
		s.Agent = &workorder.AgentProcess{PID: pid, Host: "another-machine", StartTicks: startTicks(pid), Step: 1}
	})
	h.must("agent")
	if got, err := os.ReadFile(mark); err == nil {
		t.Fatalf("a process group recorded on another machine was signalled here: %q", got)
	}
	if !groupExists(pid) {
		// No TERM came, so not from wo: something outside killed it.
		t.Logf("process group %d ended without a TERM from wo: killed from outside this test", pid)
	}
	if h.stored().Agent != nil {
		t.Errorf("the other machine's record was not cleared: %+v", h.stored().Agent)
	}
}

// waitForGroupMembers waits until the process group has n live members,
// so that a test acts on a group whose shell has started its children.
func waitForGroupMembers(t *testing.T, pgid, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		members := 0
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if pid, err := strconv.Atoi(e.Name()); err == nil {
				if state, group, ok := procStat(pid); ok && group == pgid && state != "Z" {
					members++
				}
			}
		}
		if members >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d has %d live members after 10s, want %d", pgid, members, n)
		}
	}
}

func TestHeadTailBufferKeepsBothEnds(t *testing.T) {
	b := headTailBuffer{half: 4}
	b.Write([]byte("abc"))
	if got := b.String(); got != "abc" {
		t.Errorf("short: %q", got)
	}
	b.Write([]byte("defgh"))
	if got := b.String(); got != "abcdefgh" {
		t.Errorf("exactly both halves: %q", got)
	}
	b.Write([]byte("ij"))
	b.Write([]byte("KLMNOP"))
	if got, want := b.String(), "abcd\n[… 8 bytes not kept …]\nMNOP"; got != want {
		t.Errorf("past both halves: %q, want %q", got, want)
	}
}

func TestAChangedGitFileIsPutBack(t *testing.T) {
	dir := t.TempDir()
	fixture.WriteFile(t, filepath.Join(dir, ".git"), "gitdir: /repo/.git/worktrees/w\n")
	was := readGitFile(dir)
	os.Remove(filepath.Join(dir, ".git"))
	os.Symlink("/etc", filepath.Join(dir, ".git"))
	restoreGitFile(dir, was)
	if got := fixture.ReadFile(t, filepath.Join(dir, ".git")); got != "gitdir: /repo/.git/worktrees/w\n" {
		t.Errorf(".git is %q", got)
	}
	if readGitFile(t.TempDir()) != "" {
		t.Error("a folder without .git has none")
	}
}
