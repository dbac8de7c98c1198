package integration

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
)

// Project issue 10, items 6–8: servers that echo headers or never answer,
// and agents whose children outlive them.

// secretForms are the forms in which wo sends the token.
func secretForms() []string {
	return []string{secretToken, base64.StdEncoding.EncodeToString([]byte("x-access-token:" + secretToken))}
}

func noSecretForm(t *testing.T, where, text string) {
	t.Helper()
	for _, f := range secretForms() {
		if strings.Contains(text, f) {
			t.Errorf("the token (as %q) appears in %s", f, where)
		}
	}
}

// echoServer answers every request with 401 and a body that repeats the
// Authorization header it got; it records the headers.
func echoServer(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		// Read what the client sends (a push's pack) before answering: a
		// body left unread is read by the server after the handler while
		// the client still writes, which net/http reports as a panic.
		io.Copy(io.Discard, io.LimitReader(r.Body, 64<<20))
		mu.Lock()
		seen = append(seen, auth)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"message":"Bad credentials (you sent %s)","documentation_url":"https://docs.github.com/rest"}`, auth)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// silentListener accepts connections and never answers.
func silentListener(t *testing.T) string {
	addr, _ := countingListener(t)
	return addr
}

// countingListener accepts connections, takes what it is sent and never
// sends a byte; it counts what it accepted.
func countingListener(t *testing.T) (addr string, accepted func() int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go io.Copy(io.Discard, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String(), func() int { return int(n.Load()) }
}

// everything is what wo printed, stored and logged for a task.
func (f *fixture) everything(key string, r woResult) map[string]string {
	return map[string]string{"stdout": r.stdout, "stderr": r.stderr,
		"the document": f.wo(nil, "export").stdout, "the log": f.wo(nil, "log", key, "--json").stdout}
}

// Item 6: a GitHub API that echoes the Authorization header in its 401.
func TestEchoedGitHubTokenLeaksNowhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 5)
	api, seen := echoServer(t)
	f.importTask(f.seedTask("task_cr_01"))
	env := []string{"GITHUB_TOKEN=" + secretToken, "GITHUB_API_URL=" + api.URL, "WO_REVIEW_WAIT=1s", "WO_POLL_INTERVAL=50ms"}
	for _, args := range [][]string{{"run", "task_cr_01"}, {"run", "task_cr_01", "--json"}} {
		r := f.wo(env, args...)
		if r.code == 0 {
			t.Fatalf("wo %s succeeded against a server that refuses every token", strings.Join(args, " "))
		}
		if h := seen(); len(h) == 0 || !strings.Contains(h[0], secretToken) {
			t.Fatalf("the API server never got the token (%q): the echo was not exercised", h)
		}
		if !strings.Contains(r.stderr+r.stdout, "GITHUB_TOKEN") {
			t.Errorf("the error does not say which variable to fix:\n%s%s", r.stdout, r.stderr)
		}
		for where, text := range f.everything("task_cr_01", r) {
			noSecretForm(t, where, text)
		}
	}
	if st := stateOf(f.doc("task_cr_01")); !strings.Contains(fmt.Sprint(st["last_error"]), "Bad credentials") {
		t.Errorf("last_error lost the server's message: %v", st["last_error"])
	}
}

// Item 6: a git remote over http that echoes the credentials it got, on
// the token's GitHub host (sent, then echoed) and on another host (not
// sent at all).
func TestPushCredentialsGoOnlyToTheGitHubHost(t *testing.T) {
	t.Parallel()
	t.Run("same host echoes", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, 5)
		remote, seen := echoServer(t)
		gittest.Run(t, f.repo, "remote", "set-url", "origin", remote.URL+"/acme/hermes.git")
		f.importTask(f.task("task_cr_01", gitProcedure(), nil))
		r := f.wo([]string{"GITHUB_TOKEN=" + secretToken, "GITHUB_API_URL=" + remote.URL + "/"}, "run", "task_cr_01")
		if r.code == 0 {
			t.Fatal("a push to a remote that refuses succeeded")
		}
		if h := seen(); len(h) == 0 || !strings.Contains(h[0], secretForms()[1]) {
			t.Fatalf("the remote did not get the credentials (%q): the echo was not exercised", h)
		}
		for where, text := range f.everything("task_cr_01", r) {
			noSecretForm(t, where, text)
		}
	})
	t.Run("another host gets nothing", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, 5)
		remote, seen := echoServer(t)
		gittest.Run(t, f.repo, "remote", "set-url", "origin", remote.URL+"/acme/hermes.git")
		f.importTask(f.task("task_cr_01", gitProcedure(), nil))
		r := f.wo([]string{"GITHUB_TOKEN=" + secretToken}, "run", "task_cr_01") // the token is github.com's
		if r.code == 0 {
			t.Fatal("a push to a remote that refuses succeeded")
		}
		for _, h := range seen() {
			if h != "" {
				t.Fatalf("a remote that is not on the token's GitHub got credentials: %q", h)
			}
		}
		if !strings.Contains(r.stderr, "no credentials were sent") {
			t.Errorf("stderr does not say that no credentials were sent:\n%s", r.stderr)
		}
	})
}

// Item 7: an ArangoDB that accepts connections and never answers.
func TestHungArangoFailsWithinTheStoreTimeout(t *testing.T) {
	t.Parallel()
	addr := silentListener(t)
	cmd := exec.Command(woBin, "list", "--store", "arangodb+http://"+addr, "--database", "hades")
	cmd.Env = append(os.Environ(), "WO_STORE_TIMEOUT=1s")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(stderr.String(), addr) || !strings.Contains(stderr.String(), "--store-timeout") {
			t.Fatalf("want a failure naming the server and --store-timeout; got %v:\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("wo list hung on an ArangoDB that never answers")
	}
}

// Item 7: a git remote over http that accepts and never answers.
func TestHungGitRemoteFailsWithinTheGitTimeout(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 5)
	addr := silentListener(t)
	gittest.Run(t, f.repo, "remote", "set-url", "origin", "http://"+addr+"/acme/hermes.git")
	f.importTask(f.task("task_cr_01", gitProcedure(), nil))
	done := make(chan woResult, 1)
	go func() { done <- f.wo([]string{"WO_GIT_TIMEOUT=1s"}, "run", "task_cr_01") }()
	select {
	case r := <-done:
		if r.code == 0 || !strings.Contains(r.stderr, "--git-timeout") || !strings.Contains(r.stderr, addr) {
			t.Fatalf("want a failure naming the remote and --git-timeout; exit %d:\n%s", r.code, r.stderr)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("wo run hung on a git remote that never answers")
	}
}

// Item 8: agents and their children.

// agentScript writes an agent that records that it ran, notes any
// earlier agent still at work (an overlap: another agent's child beats
// while this one watches for half a second), starts a background child
// that beats, and waits, unless the file "quick" exists, when it finishes
// at once. The pids an agent in a box could write are its box's, not the
// host's: the tests find its processes by the worktree wo gave them
// (fixture.agentProcesses).
func agentScript(t *testing.T, dir string) string {
	path := filepath.Join(dir, "agent.sh")
	writeFile(t, path, fmt.Sprintf(`#!/bin/sh
d=%s
before=$(cat $d/beat.* 2>/dev/null | wc -c)
sleep 0.5
[ "$(cat $d/beat.* 2>/dev/null | wc -c)" = "$before" ] || echo overlap >> $d/overlap
echo $$ >> $d/agents
n=$(wc -l < $d/agents)
(while :; do echo . >> $d/beat.$n; sleep 0.1; done) &
echo $! >> $d/children
[ -e $d/quick ] && exit 0
wait
`, dir))
	os.Chmod(path, 0o755)
	return path
}

func agentTask(f *fixture) map[string]any {
	return f.task("task_ag_01", []any{map[string]any{"step": 1, "action": "agent", "description": "let the agent work"}}, nil)
}

// processGroup is a live process's group, from /proc.
func processGroup(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	g, err := strconv.Atoi(f[2])
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// alive reports whether pid is a live process (zombies are dead).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

func pids(t *testing.T, path string) []int {
	b, _ := os.ReadFile(path)
	var out []int
	for _, l := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(l)
		if err != nil {
			t.Fatalf("%s: %q", path, l)
		}
		out = append(out, n)
	}
	return out
}

// startAgentRun starts wo run in the background and waits until the agent
// has started its child.
func startAgentRun(t *testing.T, f *fixture, dir string, env ...string) (*exec.Cmd, chan woResult) {
	cmd := f.cmd(append([]string{"WO_AGENT=" + agentScript(t, dir), "WO_AGENT_WRITABLE=" + dir}, env...), "run", "task_ag_01")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan woResult, 1)
	go func() { err := cmd.Wait(); done <- result(cmd, err, out.String(), errb.String()) }()
	t.Cleanup(func() {
		for _, p := range f.agentProcesses() {
			syscall.Kill(p, syscall.SIGKILL)
		}
	})
	waitFor(t, "the agent's child", 30*time.Second, func() bool { return len(pids(t, filepath.Join(dir, "children"))) > 0 })
	return cmd, done
}

func waitResult(t *testing.T, done chan woResult) woResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(60 * time.Second):
		t.Fatal("wo did not end")
		return woResult{}
	}
}

// assertAllGone waits for every process of the fixture's agents to end.
func assertAllGone(t *testing.T, f *fixture) {
	t.Helper()
	waitFor(t, "the agent's processes to end", 15*time.Second, func() bool { return len(f.agentProcesses()) == 0 })
}

// agentProcesses are the live processes of agents that worked in the
// fixture's folders (its worktrees, its repository), found by the WO_WORKTREE wo gave them (their
// children inherit it): only a process that has this fixture's worktree
// in its environment, since a pid may be another program's by now.
func (f *fixture) agentProcesses() []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err == nil &&
			bytes.Contains(append([]byte{0}, env...), []byte("\x00WO_WORKTREE="+f.root+string(filepath.Separator))) {
			out = append(out, pid)
		}
	}
	return out
}

func TestInterruptStopsTheAgentAndItsChildren(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	f.importTask(agentTask(f))
	dir := t.TempDir()
	cmd, done := startAgentRun(t, f, dir)
	cmd.Process.Signal(os.Interrupt)
	r := waitResult(t, done)
	if r.code == 0 {
		t.Fatalf("an interrupted run succeeded:\n%s", r.stderr)
	}
	assertAllGone(t, f)
	if st := stateOf(f.doc("task_ag_01")); st["agent"] != nil {
		t.Errorf("the agent's record was left in state: %v", st["agent"])
	}
}

func TestAgentTimeoutStopsItsChildren(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	f.importTask(agentTask(f))
	dir := t.TempDir()
	_, done := startAgentRun(t, f, dir, "WO_AGENT_TIMEOUT=2s")
	r := waitResult(t, done)
	if r.code == 0 || !strings.Contains(r.stderr, "--agent-timeout") {
		t.Fatalf("exit %d, want a failure naming --agent-timeout:\n%s", r.code, r.stderr)
	}
	assertAllGone(t, f)
}

func TestRerunAfterKillNeverRunsTwoAgents(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	f.importTask(agentTask(f))
	dir := t.TempDir()
	cmd, done := startAgentRun(t, f, dir)
	// The record is of the agent's process group: its leader is wo's
	// launcher, and the agent one of its members.
	running := f.agentProcesses()
	if len(running) == 0 {
		t.Fatal("no process of the agent is running")
	}
	st := stateOf(f.doc("task_ag_01"))
	recorded := ""
	if st["agent"] != nil {
		recorded = fmt.Sprint(st["agent"].(map[string]any)["pid"])
	}
	if !slices.ContainsFunc(running, func(p int) bool { return strconv.Itoa(processGroup(t, p)) == recorded }) {
		t.Fatalf("the running agent's group is not recorded in state: %v (its processes %v)", st["agent"], running)
	}
	// wo killed outright: its launcher ends the agent and every process
	// it started (the parent-death signal), so nothing of the killed run
	// works on beside the rerun's agent. (Where there is no launcher, the
	// rerun stops a left-over agent by its record first: stopLeftoverAgent,
	// whose checks agent_helpers_test.go tests.)
	cmd.Process.Signal(syscall.SIGKILL)
	waitResult(t, done)
	waitFor(t, "the killed run's agent and its children to end", 15*time.Second, func() bool { return len(f.agentProcesses()) == 0 })
	writeFile(t, filepath.Join(dir, "quick"), "")
	r := f.wo([]string{"WO_AGENT=" + agentScript(t, dir), "WO_AGENT_WRITABLE=" + dir}, "run", "task_ag_01")
	if r.code != 0 {
		t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "overlap")); err == nil {
		t.Fatalf("a second agent started while the first (pid %s) still ran", strings.TrimSpace(string(b)))
	}
	if n := len(pids(t, filepath.Join(dir, "agents"))); n != 2 {
		t.Errorf("%d agents ran, want 2 (the killed run's and the rerun's)", n)
	}
	assertAllGone(t, f)
	if st := stateOf(f.doc("task_ag_01")); st["agent"] != nil {
		t.Errorf("the agent's record was left in state: %v", st["agent"])
	}
}
