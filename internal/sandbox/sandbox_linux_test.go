//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// runLimit bounds every sandboxed command of these tests: past it the
// command's group is killed and the test fails.
const runLimit = 30 * time.Second

// result is what a sandboxed command did.
type result struct {
	code           int
	stdout, stderr string
	launcher       int // the launcher's pid
}

// agentEnv is a small environment for the commands: a PATH, and nothing of
// the test process (its secret in particular).
func agentEnv(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}, extra...)
}

// start starts argv under spec, its output captured.
func start(t *testing.T, spec Spec, env []string, argv ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd, err := Command(spec, argv)
	if err != nil {
		t.Fatalf("Command(%+v, %q): %v", spec, argv, err)
	}
	var stdout, stderr bytes.Buffer
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %q: %v", argv, err)
	}
	return cmd, &stdout, &stderr
}

// wait waits for a started command, killing its group past runLimit.
func wait(t *testing.T, cmd *exec.Cmd, stdout, stderr *bytes.Buffer) result {
	t.Helper()
	timer := time.AfterFunc(runLimit, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err := cmd.Wait()
	if !timer.Stop() {
		t.Fatalf("%q ran longer than %s and was killed; stderr: %s", cmd.Args[4:], runLimit, stderr)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("waiting for %q: %v", cmd.Args[4:], err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String(), launcher: cmd.Process.Pid}
}

// run runs a shell script under spec; args are its $1, $2, ….
func run(t *testing.T, spec Spec, env []string, script string, args ...string) result {
	t.Helper()
	cmd, stdout, stderr := start(t, spec, env, append([]string{"/bin/sh", "-c", script, "sh"}, args...)...)
	return wait(t, cmd, stdout, stderr)
}

// needLandlock skips a test of confinement on a kernel without Landlock,
// saying so.
func needLandlock(t *testing.T) {
	t.Helper()
	if _, ok, why := Status(); !ok {
		t.Skipf("confinement cannot be tested here: %s", why)
	}
}

// alive reports whether pid is a live process running prog (not a
// zombie, and not a reused pid).
func alive(pid int, prog string) bool {
	state, _, ok := readStat(procFS(), pid)
	if !ok || state == 'Z' {
		return false
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return err == nil && strings.TrimSpace(string(comm)) == prog
}

// gone waits up to a second for pid (running prog) to be gone.
func gone(pid int, prog string) bool {
	for range 50 {
		if !alive(pid, prog) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// readPid reads a pid that a script wrote to a file.
func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the command did not write its child's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("pid file %s holds %q", path, b)
	}
	return pid
}

func TestConfinedCommandWritesOnlyBeneathWritablePaths(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	writable, other, files := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "readable"), []byte("read me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	single := filepath.Join(files, "single")
	if err := os.WriteFile(single, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Confine: true, Writable: []string{writable, single, "/nonexistent/wo-sandbox-test"}}
	res := run(t, spec, agentEnv(), `
		echo inside > "$1/inside" && echo "inside ok"
		mkdir "$1/sub" && echo deeper > "$1/sub/file" && mv "$1/sub/file" "$1/moved" && echo "subfolder ok"
		echo single > "$3" && echo "single ok"
		echo sibling > "$4/sibling" || echo "sibling refused"
		echo outside > "$2/outside" || echo "outside refused"
		rm -f "$2/readable" || echo "remove refused"
		cat "$2/readable"
		echo discarded > /dev/null && echo "dev null ok"
		exit 0`, writable, other, single, files)
	if res.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.code, res.stderr)
	}
	for _, want := range []string{"inside ok", "subfolder ok", "single ok", "sibling refused", "outside refused", "remove refused", "read me", "dev null ok"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s\nstderr:\n%s", want, res.stdout, res.stderr)
		}
	}
	if !strings.Contains(res.stderr, "Permission denied") {
		t.Errorf("refused writes should say Permission denied; stderr:\n%s", res.stderr)
	}
	for _, p := range []string{filepath.Join(other, "outside"), filepath.Join(files, "sibling")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was written outside the writable paths (stat: %v)", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(writable, "moved")); string(b) != "deeper\n" {
		t.Errorf("moved file holds %q", b)
	}
	if b, _ := os.ReadFile(single); string(b) != "single\n" {
		t.Errorf("the single writable file holds %q", b)
	}
}

func TestConfinedCommandConnectsOnlyToListedPorts(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	if abi, _, _ := Status(); abi < 4 {
		t.Skipf("Landlock ABI %d has no TCP rules (needs 4)", abi)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	addr := l.Addr().String()
	port := l.Addr().(*net.TCPAddr).Port
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dial := func(spec Spec) result {
		cmd, stdout, stderr := start(t, spec, agentEnv(helperEnv+"=dial"), exe, addr)
		return wait(t, cmd, stdout, stderr)
	}
	if res := dial(Spec{Confine: true}); res.code != 3 || !strings.Contains(res.stderr, "permission denied") {
		t.Errorf("with no ports, connecting to %s: exit %d (want 3, refused), stdout %q, stderr %q", addr, res.code, res.stdout, res.stderr)
	}
	if res := dial(Spec{Confine: true, Ports: []int{port + 1}}); res.code != 3 {
		t.Errorf("with another port listed, connecting to %s: exit %d (want 3, refused), stderr %q", addr, res.code, res.stderr)
	}
	if res := dial(Spec{Confine: true, Ports: []int{port}}); res.code != 0 || res.stdout != "connected\n" {
		t.Errorf("with port %d listed, connecting to %s: exit %d, stdout %q, stderr %q", port, addr, res.code, res.stdout, res.stderr)
	}
	// Landlock does not see Multipath TCP sockets: they are refused, and Go
	// falls back to plain TCP, which Landlock does see.
	mptcp := func(spec Spec) result {
		cmd, stdout, stderr := start(t, spec, agentEnv(helperEnv+"=dial-mptcp"), exe, addr)
		return wait(t, cmd, stdout, stderr)
	}
	if res := mptcp(Spec{Confine: true}); res.code != 3 || !strings.Contains(res.stderr, "permission denied") {
		t.Errorf("with no ports, connecting to %s over Multipath TCP: exit %d (want 3, refused), stdout %q, stderr %q", addr, res.code, res.stdout, res.stderr)
	}
	if res := mptcp(Spec{Confine: true, Ports: []int{port}}); res.code != 0 || res.stdout != "connected, multipath false\n" {
		t.Errorf("with port %d listed, connecting over Multipath TCP should fall back to TCP: exit %d, stdout %q, stderr %q", port, res.code, res.stdout, res.stderr)
	}
	cmd, stdout, stderr := start(t, Spec{Confine: true}, agentEnv(helperEnv+"=listen"), exe)
	if res := wait(t, cmd, stdout, stderr); res.code != 0 || res.stdout != "listening\n" {
		t.Errorf("listening on TCP should stay allowed: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
}

func TestConfinedCommandCannotReachProcessesOutsideIt(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	const mark = "wo-sandbox-launcher-mark-91d3"
	script := `
		cat /proc/$1/environ && echo; echo "tests rc=$?"
		cat /proc/$PPID/environ && echo; echo "launcher rc=$?"
		kill -0 $PPID; echo "signal rc=$?"
		echo "launcher pid $PPID"
		grep CapEff /proc/self/status`
	env := agentEnv("LAUNCHER_MARK=" + mark)
	me := strconv.Itoa(os.Getpid())

	// Unconfined, the same script reads both: the test can see a leak.
	open := run(t, Spec{}, env, script, me)
	if !strings.Contains(open.stdout, secret) || !strings.Contains(open.stdout, mark) || !strings.Contains(open.stdout, "signal rc=0") {
		t.Fatalf("unconfined, the script should read both environments and signal the launcher:\n%s\nstderr:\n%s", open.stdout, open.stderr)
	}

	res := run(t, Spec{Confine: true}, env, script, me)
	if strings.Contains(res.stdout, secret) || strings.Contains(res.stdout, mark) {
		t.Errorf("a confined command read another process's environment:\n%s", res.stdout)
	}
	for _, refused := range []string{"tests rc=0", "launcher rc=0", "signal rc=0"} {
		if strings.Contains(res.stdout, refused) {
			t.Errorf("confined: %s, want a refusal:\n%s\nstderr:\n%s", refused, res.stdout, res.stderr)
		}
	}
	if os.Geteuid() == 0 && !strings.Contains(res.stdout, "CapEff:\t0000000000000000") {
		t.Errorf("run by root, a confined command should have no capabilities:\n%s", res.stdout)
	}
	if want := fmt.Sprintf("launcher pid %d", res.launcher); !strings.Contains(res.stdout, want) {
		t.Errorf("the command's parent should be the launcher (%s):\n%s", want, res.stdout)
	}
}

// leftovers is a script that starts a setsid sleep and a double-forked
// one, writes their pids to $1/setsid.pid and $1/orphan.pid, and exits.
const leftovers = `
	setsid sh -c 'echo $$ > "$1/setsid.tmp"; mv "$1/setsid.tmp" "$1/setsid.pid"; exec sleep 300' sh "$1" </dev/null >/dev/null 2>&1 &
	(sh -c 'echo $$ > "$1/orphan.tmp"; mv "$1/orphan.tmp" "$1/orphan.pid"; exec sleep 300' sh "$1" </dev/null >/dev/null 2>&1 &)
	i=0
	while [ ! -e "$1/setsid.pid" ] || [ ! -e "$1/orphan.pid" ]; do
		i=$((i+1)); [ $i -gt 1000 ] && exit 99
		sleep 0.01
	done`

func TestProcessesLeftByTheCommandEndWithIt(t *testing.T) {
	t.Parallel()
	for _, confine := range []bool{true, false} {
		t.Run(fmt.Sprintf("confine=%v", confine), func(t *testing.T) {
			t.Parallel()
			if confine {
				needLandlock(t)
			}
			dir := t.TempDir()
			res := run(t, Spec{Confine: confine, Writable: []string{dir}}, agentEnv(), leftovers+"\nexit 0", dir)
			if res.code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", res.code, res.stderr)
			}
			for _, name := range []string{"setsid.pid", "orphan.pid"} {
				if pid := readPid(t, filepath.Join(dir, name)); !gone(pid, "sleep") {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Errorf("the sleep of %s (pid %d) outlived the command", name, pid)
				}
			}
		})
	}
}

func TestSignalToTheGroupEndsTheCommandAndItsSetsidChildren(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir := t.TempDir()
	cmd, stdout, stderr := start(t, Spec{Confine: true, Writable: []string{dir}}, agentEnv(),
		"/bin/sh", "-c", leftovers+"\ntouch \"$1/ready\"; sleep 300", "sh", dir)
	waitFile(t, filepath.Join(dir, "ready"), cmd.Process.Pid)
	sent := time.Now()
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	res := wait(t, cmd, stdout, stderr)
	if res.code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want %d (ended by SIGTERM); stderr:\n%s", res.code, 128+int(syscall.SIGTERM), res.stderr)
	}
	if took := time.Since(sent); took >= stopGrace {
		t.Errorf("the command took %s to end after SIGTERM: it was killed, not ended by the signal", took)
	}
	for _, name := range []string{"setsid.pid", "orphan.pid"} {
		if pid := readPid(t, filepath.Join(dir, name)); !gone(pid, "sleep") {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("the sleep of %s (pid %d) outlived SIGTERM to the group", name, pid)
		}
	}
}

func TestLauncherForwardsSignalsToTheCommand(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir := t.TempDir()
	// The command is in the launcher's group, but only the launcher is
	// signalled here: the command hears of it only if it is forwarded.
	cmd, stdout, stderr := start(t, Spec{Confine: true, Writable: []string{dir}}, agentEnv(),
		"/bin/sh", "-c", `trap 'exit 9' TERM; sleep 300 & touch "$1/ready"; wait`, "sh", dir)
	waitFile(t, filepath.Join(dir, "ready"), cmd.Process.Pid)
	if err := syscall.Kill(cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if res := wait(t, cmd, stdout, stderr); res.code != 9 {
		t.Errorf("exit %d, want 9 (the command's TERM trap); stderr:\n%s", res.code, res.stderr)
	}
}

func TestLauncherEndsTheCommandWhenItsCallerDies(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(Spec{Confine: true, Writable: []string{dir}})
	// The command ignores SIGTERM: the launcher must kill it.
	caller := exec.Command(exe, "/bin/sh", "-c", "trap '' TERM\n"+leftovers+"\ntouch \"$1/ready\"; sleep 300", "sh", dir)
	caller.Env = agentEnv(helperEnv+"=caller", "WO_SANDBOX_TEST_SPEC="+string(spec))
	out, err := caller.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	caller.Stderr = &stderr
	// The launcher holds the caller's stderr: without a delay, a launcher
	// that outlives its caller would hold caller.Wait (and the test) for
	// as long as it runs, rather than fail the test below.
	caller.WaitDelay = time.Second
	if err := caller.Start(); err != nil {
		t.Fatal(err)
	}
	defer caller.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	var launcher int
	if _, err2 := fmt.Sscanf(line, "launcher %d", &launcher); err != nil || err2 != nil {
		t.Fatalf("the caller did not start the launcher (%q, %v); stderr:\n%s", line, err, &stderr)
	}
	defer syscall.Kill(-launcher, syscall.SIGKILL)
	waitFile(t, filepath.Join(dir, "ready"), caller.Process.Pid)
	caller.Process.Kill()
	caller.Wait()

	exe = filepath.Base(exe)
	if len(exe) > 15 {
		exe = exe[:15] // /proc/PID/comm's length
	}
	deadline := time.Now().Add(stopGrace + 5*time.Second)
	for alive(launcher, exe) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(launcher, exe) {
		t.Fatalf("the launcher (pid %d) still runs %s after its caller died", launcher, stopGrace+5*time.Second)
	}
	for _, name := range []string{"setsid.pid", "orphan.pid"} {
		if pid := readPid(t, filepath.Join(dir, name)); !gone(pid, "sleep") {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("the sleep of %s (pid %d) outlived the caller", name, pid)
		}
	}
}

func TestExitStatusIsTheCommands(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		script string
		want   int
	}{
		{"exit 0", 0},
		{"exit 7", 7},
		{"kill -KILL $$", 128 + int(syscall.SIGKILL)},
	} {
		for _, confine := range []bool{false, true} {
			if confine {
				if _, ok, _ := Status(); !ok {
					continue
				}
			}
			if res := run(t, Spec{Confine: confine}, agentEnv(), c.script); res.code != c.want {
				t.Errorf("confine=%v, %q: exit %d, want %d; stderr:\n%s", confine, c.script, res.code, c.want, res.stderr)
			}
		}
	}
}

func TestCommandNotFoundExits127(t *testing.T) {
	t.Parallel()
	cmd, stdout, stderr := start(t, Spec{}, agentEnv(), "wo-sandbox-no-such-program")
	res := wait(t, cmd, stdout, stderr)
	if res.code != exitNotFound || !strings.Contains(res.stderr, "wo sandbox:") || !strings.Contains(res.stderr, "wo-sandbox-no-such-program") {
		t.Errorf("exit %d, stderr %q; want %d and a message naming the program", res.code, res.stderr, exitNotFound)
	}
}

func TestConfinementFailsClosedWithoutLandlock(t *testing.T) {
	t.Parallel()
	needLandlock(t) // Command itself refuses on such a kernel; here only the confine step is told so
	dir := t.TempDir()
	env := agentEnv(testNoLandlockEnv + "=1")
	script := `touch "$1/ran"`
	res := run(t, Spec{Confine: true, Writable: []string{dir}}, env, script, dir)
	if res.code != exitSandbox {
		t.Errorf("exit %d, want %d", res.code, exitSandbox)
	}
	if !strings.HasPrefix(res.stderr, "wo sandbox: ") || !strings.Contains(res.stderr, "no Landlock") || !strings.Contains(res.stderr, "was not started") {
		t.Errorf("stderr should say the command was not started for want of Landlock: %q", res.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the command ran unconfined (stat: %v)", err)
	}
	// Without confinement asked for, it runs: the marker can tell.
	if res := run(t, Spec{Writable: []string{dir}}, env, script, dir); res.code != 0 {
		t.Fatalf("unconfined: exit %d, stderr %q", res.code, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err != nil {
		t.Errorf("unconfined, the command did not run: %v", err)
	}
}

func TestLauncherRefusesWhenItsCallerIsGone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A launcher whose recorded caller is not its parent: the caller died
	// before the parent-death signal was armed.
	args, err := reexecArgs(launchArg, wireSpec{Parent: 1}, []string{"/bin/sh", "-c", `touch "$1/ran"`, "sh", dir})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(exe, args...).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitSandbox || !strings.Contains(string(out), "already exited") {
		t.Errorf("got %v, output %q; want exit %d saying the caller has exited", err, out, exitSandbox)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran (stat: %v)", err)
	}
}

func TestReexecsRefuseMalformedArguments(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{launchArg},
		{launchArg, "{}", "/bin/true"},
		{confineArg, "{not json", "--", "/bin/true"},
	} {
		out, err := exec.Command(exe, args...).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitSandbox || !strings.HasPrefix(string(out), "wo sandbox: ") {
			t.Errorf("%q: %v, output %q; want exit %d and a message", args, err, out, exitSandbox)
		}
	}
}

func TestStatusReportsLandlock(t *testing.T) {
	t.Parallel()
	abi, ok, why := Status()
	if !ok {
		if abi != 0 || why == "" {
			t.Errorf("Status() = %d, false, %q: an unavailable sandbox has ABI 0 and a reason", abi, why)
		}
		t.Skipf("no confinement on this machine: %s", why)
	}
	if abi < 4 {
		t.Errorf("Status() = ABI %d (%s); wo's machines have ABI 4 or later", abi, why)
	}
	if abi >= 6 && why != "" {
		t.Errorf("at ABI %d nothing should be missing, Status says %q", abi, why)
	}
}

func TestStatusSaysWhatEachLandlockABIConfines(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		abi  int
		ok   bool
		says string // in why; "" for nothing missing
	}{
		{0, false, "no Landlock"},
		{1, true, "network connections and signals are not"},
		{3, true, "network connections and signals are not"},
		{4, true, "scoping needs ABI 6"},
		{5, true, "scoping needs ABI 6"},
		{6, true, ""},
		{7, true, ""},
	} {
		ok, why := confinementAt(c.abi)
		if ok != c.ok || (c.says == "") != (why == "") || !strings.Contains(why, c.says) {
			t.Errorf("confinementAt(%d) = %v, %q; want %v and a reason saying %q", c.abi, ok, why, c.ok, c.says)
		}
	}
}

func TestStatusCountsSignalScopingOnlyWithItsFix(t *testing.T) {
	t.Parallel()
	errata := func(e int, err error) func() (int, error) {
		return func() (int, error) { return e, err }
	}
	for _, c := range []struct {
		version int
		errata  func() (int, error)
		want    int
	}{
		{-1, errata(0, nil), 0},
		{0, errata(0, nil), 0},
		{1, errata(0, nil), 1},
		{5, errata(0, nil), 5},
		{6, errata(0x2, nil), 6},
		{6, errata(0x1, nil), 5},
		{7, errata(0x3, nil), 7},
		{7, errata(0, nil), 5},
		{7, errata(-1, unix.EINVAL), 5},
	} {
		e, eerr := c.errata()
		if got := usableABI(c.version, c.errata); got != c.want {
			t.Errorf("usableABI(%d, errata %#x, %v) = %d; want %d", c.version, e, eerr, got, c.want)
		}
	}
}

func TestStatusFindsTheKernelsLandlock(t *testing.T) {
	t.Parallel()
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 1 {
		t.Skipf("the kernel has no Landlock (ABI version %d, %v)", v, err)
	}
	if abi, ok, why := Status(); !ok || abi < 1 || abi > v {
		t.Errorf("the kernel has Landlock ABI %d; Status() = %d, %v, %q", v, abi, ok, why)
	}
}

func TestHardenSelfMakesTheProcessUndumpable(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = agentEnv(helperEnv + "=harden")
	out, err := cmd.Output() // stderr may carry a coverage build's warnings
	if err != nil || string(out) != "dumpable 1 then 0\n" {
		t.Errorf("HardenSelf: %v, output %q; want dumpable 1 then 0", err, out)
	}
}

// waitFile waits for a command to create path, failing the test past
// runLimit or as soon as the process pid (the test's child, so a zombie
// until waited for) has exited without creating it.
func waitFile(t *testing.T, path string, pid int) {
	t.Helper()
	deadline := time.Now().Add(runLimit)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if state, _, ok := readStat(procFS(), pid); !ok || state == 'Z' {
			t.Fatalf("process %d exited before %s appeared", pid, path)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s did not appear within %s", path, runLimit)
}
