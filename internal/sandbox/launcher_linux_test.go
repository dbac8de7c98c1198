//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
)

// These tests run the launcher's decisions in the test process, where
// coverage (and so mutation testing) sees them; the tests in
// sandbox_linux_test.go run the launcher for real.

func TestStatLinesGiveStateAndParent(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line  string
		state byte
		ppid  int
		ok    bool
	}{
		{"4242 (sleep) S 4200 4242 4200 0 -1 4194560 108 0 0 0", 'S', 4200, true},
		{"4242 (sh) R 1", 'R', 1, true},
		{"4242 (my agent) Z 4200 4242", 'Z', 4200, true},
		// A command named to look like the fields: they follow the last ")".
		{"4242 (x) R 1 (y) S 4200 4242", 'S', 4200, true},
		{"4242 (sh", 0, 0, false},
		{"7 (sh", 0, 0, false},
		{"4242 (sh) S", 0, 0, false},
		{"4242 (sh) SR 4200", 0, 0, false},
		{"4242 (sh) S parent", 0, 0, false},
		{"", 0, 0, false},
	} {
		state, ppid, ok := parseStat([]byte(c.line))
		if state != c.state || ppid != c.ppid || ok != c.ok {
			t.Errorf("parseStat(%q) = %q, %d, %v; want %q, %d, %v", c.line, state, ppid, ok, c.state, c.ppid, c.ok)
		}
	}
}

// fakeProc is a /proc in which the launcher (100) has the agent (101)
// below it, a setsid process it inherited (103), a zombie (104), and a
// process that exited while /proc was read (300, no stat).
var fakeProc = fstest.MapFS{
	"1/stat":      {Data: []byte("1 (init) S 0 1 1 0 -1\n")},
	"100/stat":    {Data: []byte("100 (wo) S 1 100 100 0 -1\n")},
	"101/stat":    {Data: []byte("101 (sh) S 100 100 100 0 -1\n")},
	"102/stat":    {Data: []byte("102 (sleep) S 101 100 100 0 -1\n")},
	"103/stat":    {Data: []byte("103 (a (b) c) S 100 103 103 0 -1\n")},
	"104/stat":    {Data: []byte("104 (git) Z 100 100 100 0 -1\n")},
	"105/stat":    {Data: []byte("105 (cat) D 102 100 100 0 -1\n")},
	"200/stat":    {Data: []byte("200 (bash) S 1 200 200 0 -1\n")},
	"300/cmdline": {Data: []byte("gone\x00")},
	"self/stat":   {Data: []byte("200 (bash) S 1 200 200 0 -1\n")},
	"uptime":      {Data: []byte("1.00 2.00\n")},
}

func TestLauncherFindsTheAgentsProcessesInProc(t *testing.T) {
	t.Parallel()
	got := parents(fakeProc)
	want := map[int]int{1: 0, 100: 1, 101: 100, 102: 101, 103: 100, 105: 102, 200: 1}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parents = %v; want %v (zombies and vanished processes left out)", got, want)
	}
	if d := sorted(descendants(got, 100)); !reflect.DeepEqual(d, []int{101, 102, 103, 105}) {
		t.Errorf("descendants of the launcher = %v; want its whole tree, 101 102 103 105", d)
	}
	if d := descendants(got, 105); len(d) != 0 {
		t.Errorf("descendants of a leaf = %v; want none", d)
	}
	if c := sorted(children(got)[100]); !reflect.DeepEqual(c, []int{101, 103}) {
		t.Errorf("children of the launcher = %v; want 101 and 103 (not the zombie 104)", c)
	}
}

func TestLauncherFindsItsChildrenInTheRealProc(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer cmd.Wait()
	defer cmd.Process.Kill()
	me := os.Getpid()
	if ppid, ok := parents(procFS())[me]; !ok || ppid != os.Getppid() {
		t.Errorf("parents of /proc give this process (%d) the parent %d, %v; want %d", me, ppid, ok, os.Getppid())
	}
	if c := children(parents(procFS()))[me]; !slices.Contains(c, pid) {
		t.Fatalf("children of this process = %v; want the sleep it started (%d)", c, pid)
	}
	// Killed but not reaped, the sleep is a zombie: no longer a child to kill.
	cmd.Process.Kill()
	for range 250 {
		if state, _, _ := readStat(procFS(), pid); state == 'Z' {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if c := children(parents(procFS()))[me]; slices.Contains(c, pid) {
		t.Errorf("children of this process = %v; want the zombie %d left out", c, pid)
	}
}

func TestLauncherExitsWithTheAgentsStatusAsAShellDoes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ws   syscall.WaitStatus
		want int
	}{
		{0, 0},
		{7 << 8, 7},
		{255 << 8, 255},
		{syscall.WaitStatus(syscall.SIGKILL), 137},
		{syscall.WaitStatus(syscall.SIGTERM), 143},
		{syscall.WaitStatus(syscall.SIGSEGV) | 0x80, 139}, // dumped core
	} {
		if got := exitCode(c.ws); got != c.want {
			t.Errorf("exitCode(%#x) = %d; want %d", int(c.ws), got, c.want)
		}
	}
}

func TestLauncherRefusesToRunForACallerThatIsGone(t *testing.T) {
	t.Parallel()
	args, err := reexecArgs(launchArg, wireSpec{Spec: Spec{Confine: true}, Parent: 4200}, []string{"agent", "-p"})
	if err != nil {
		t.Fatal(err)
	}
	if w, argv, err := parseLaunch(args, 4200); err != nil || w.Parent != 4200 || !w.Confine || !reflect.DeepEqual(argv, []string{"agent", "-p"}) {
		t.Errorf("started by its caller: parseLaunch = %+v, %q, %v", w, argv, err)
	}
	for _, ppid := range []int{1, 4201} {
		if _, _, err := parseLaunch(args, ppid); err == nil || !strings.Contains(err.Error(), "agent (pid 4200) has already exited") {
			t.Errorf("parent %d, not the caller 4200: parseLaunch error %v; want one saying the caller has exited", ppid, err)
		}
	}
	if _, _, err := parseLaunch([]string{launchArg, "{}"}, 4200); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Errorf("malformed arguments: parseLaunch error %v", err)
	}
}

// waitScript is a waitFunc that replays results, checking the options of
// each call.
type waitResult struct {
	pid int
	ws  syscall.WaitStatus
	err error
}

func waitScript(t *testing.T, options int, results ...waitResult) (waitFunc, func() int) {
	calls := 0
	return func(ws *syscall.WaitStatus, opts int) (int, error) {
		if opts != options {
			t.Errorf("wait4 options %#x; want %#x", opts, options)
		}
		if calls >= len(results) {
			t.Fatalf("wait4 called %d times; the script has %d results", calls+1, len(results))
		}
		r := results[calls]
		calls++
		*ws = r.ws
		return r.pid, r.err
	}, func() int { return calls }
}

func TestLauncherWaitsForTheAgentNotItsOrphans(t *testing.T) {
	t.Parallel()
	wait, calls := waitScript(t, 0,
		waitResult{err: syscall.EINTR},
		waitResult{pid: 300, ws: 0},      // an orphan of the agent exits first
		waitResult{pid: 301, ws: 9 << 8}, // and another, with a status of its own
		waitResult{pid: 200, ws: 7 << 8}, // then the agent
	)
	ws, err := waitChild(wait, 200)
	if err != nil || exitCode(ws) != 7 || calls() != 4 {
		t.Errorf("waitChild = %#x, %v after %d waits; want the agent's exit 7 after 4", int(ws), err, calls())
	}
	wait, _ = waitScript(t, 0, waitResult{pid: 300}, waitResult{err: syscall.ECHILD})
	if _, err := waitChild(wait, 200); err != syscall.ECHILD {
		t.Errorf("waitChild with no child left: %v; want ECHILD", err)
	}
}

func TestLauncherReapsWithoutBlocking(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		results []waitResult
		left    bool
	}{
		{"some running", []waitResult{{pid: 0}}, true},
		{"one exited, some running", []waitResult{{pid: 300}, {err: syscall.EINTR}, {pid: 0}}, true},
		{"all exited", []waitResult{{pid: 300}, {pid: 301}, {err: syscall.ECHILD}}, false},
		{"interrupted, none", []waitResult{{err: syscall.EINTR}, {err: syscall.ECHILD}}, false},
	} {
		wait, calls := waitScript(t, syscall.WNOHANG, c.results...)
		if left := reap(wait); left != c.left || calls() != len(c.results) {
			t.Errorf("%s: reap = %v after %d waits; want %v after %d", c.name, left, calls(), c.left, len(c.results))
		}
	}
}

func TestLauncherForwardsSignalsThenKills(t *testing.T) {
	t.Parallel()
	sigs := make(chan os.Signal, 2)
	sent := make(chan syscall.Signal, 8)
	sigs <- syscall.SIGTERM
	sigs <- syscall.SIGINT
	go forward(sigs, 50*time.Millisecond, func(s syscall.Signal) { sent <- s })
	defer close(sigs)
	var got []syscall.Signal
	timeout := time.After(runLimit)
	for len(got) < 3 {
		select {
		case s := <-sent:
			got = append(got, s)
		case <-timeout:
			t.Fatalf("forwarded %v in %s; want SIGTERM, SIGINT and then SIGKILL after the grace", got, runLimit)
		}
	}
	// SIGKILL is sent after the grace, so after SIGTERM; SIGINT may
	// race it on a loaded machine.
	if got[0] != syscall.SIGTERM || !slices.Contains(got, syscall.SIGINT) || !slices.Contains(got, syscall.SIGKILL) {
		t.Errorf("forwarded %v; want SIGTERM first, SIGINT, and SIGKILL", got)
	}
}

func sorted(pids []int) []int {
	out := slices.Clone(pids)
	slices.Sort(out)
	return out
}

// A box that a forwarded signal ended while Go's runtime was starting
// exits 2: that is the signal's end; any other status is the command's.
func TestBoxStatusTellsASignalsEndFromTheCommands(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		code  int
		inBox bool
		sig   syscall.Signal
		want  int
	}{
		{2, true, syscall.SIGTERM, 143},
		{2, true, 0, 2},
		{2, false, syscall.SIGTERM, 2},
		{1, true, syscall.SIGTERM, 1},
		{143, true, syscall.SIGTERM, 143},
	} {
		if got := boxStatus(c.code, c.inBox, c.sig); got != c.want {
			t.Errorf("boxStatus(%d, %v, %v) = %d, want %d", c.code, c.inBox, c.sig, got, c.want)
		}
	}
}
