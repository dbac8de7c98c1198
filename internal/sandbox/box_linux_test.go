//go:build linux

package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// needBox skips a test of the box where the system refuses namespaces,
// saying so; where WO_TEST_REQUIRE_BOX is set (a CI that has them) that
// is a failure instead.
func needBox(t *testing.T) {
	t.Helper()
	needLandlock(t)
	if ok, why := Namespaces(); !ok {
		if os.Getenv("WO_TEST_REQUIRE_BOX") != "" {
			t.Fatalf("WO_TEST_REQUIRE_BOX is set, but the box cannot be built here: %s", why)
		}
		t.Skipf("the box cannot be tested here: %s", why)
	}
}

// Serial: it sets the environment. A system that refuses namespaces is
// told, by the probe, with the reason; one that has them is not.
func TestTheProbeSaysWhyABoxCannotBeBuilt(t *testing.T) {
	t.Setenv(testNoNamespacesEnv, "1")
	if why := probeNamespaces(); !strings.Contains(why, "user namespaces are refused here") {
		t.Errorf("refused: %q", why)
	}
	t.Setenv(testNoNamespacesEnv, "")
	needBox(t)
	if why := probeNamespaces(); why != "" {
		t.Errorf("where a box can be built, the probe says %q", why)
	}
}

// boxSpec is a confined spec in a view: the system folders, the test's
// working folder (where the commands start), and what the test names.
func boxSpec(t *testing.T, writable []string, readOnly ...string) Spec {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	readOnly = append(readOnly, wd)
	return Spec{Confine: true, Writable: writable, View: &View{Root: t.TempDir(), ReadOnly: append(append([]string(nil), SystemFolders...), readOnly...)}}
}

// What a command in a box sees of the file system: the system folders
// read-only, what it may write, what was lent read-only; none of the
// host's other folders (a HOME with secrets, the host's /tmp and /run),
// and a /proc with its own processes only.
func TestACommandInABoxSeesOnlyItsView(t *testing.T) {
	t.Parallel()
	needBox(t)
	work, lent, hidden := t.TempDir(), t.TempDir(), t.TempDir()
	for path, text := range map[string]string{filepath.Join(lent, "notes"): "lent\n", filepath.Join(hidden, "id_ed25519"): "PRIVATE KEY\n"} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hostTmp, err := os.CreateTemp("", "wo-box-host-")
	if err != nil {
		t.Fatal(err)
	}
	hostTmp.Close()
	defer os.Remove(hostTmp.Name())
	spec := boxSpec(t, []string{work}, lent)
	res := run(t, spec, agentEnv(), `
		cat "$2/notes" && echo "lent read"
		echo mine > "$1/mine" && echo "work written"
		echo x > "$2/x" 2>/dev/null || echo "lent not written"
		ls "$3" 2>/dev/null || echo "hidden unseen"
		cat "$4" 2>/dev/null || echo "host tmp unseen"
		ls /run | wc -l | sed 's/^/run entries /'
		echo "proc $(ls /proc | grep -c '^[0-9]')"
		echo "pid $$"
		touch /usr/wo-box-test 2>/dev/null || echo "usr read-only"
		echo ok > /dev/null && echo "dev null"
		echo "home $(ls / | tr '\n' ' ')"
		[ -s /etc/shadow ] && echo "shadow readable" || echo "shadow empty"
	`, work, lent, hidden, hostTmp.Name())
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, want := range []string{"lent\nlent read", "work written", "lent not written", "hidden unseen", "host tmp unseen", "run entries 0", "usr read-only", "dev null", "shadow empty"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("missing %q in:\n%s%s", want, res.stdout, res.stderr)
		}
	}
	// Its own processes only: the shell, ls and grep, wc and the box's first.
	var procs, pid int
	fmt.Sscanf(res.stdout[strings.Index(res.stdout, "proc "):], "proc %d\npid %d", &procs, &pid)
	if procs == 0 || procs > 8 || pid > 10 {
		t.Errorf("the box's /proc shows %d processes and the shell is pid %d: not a PID namespace of its own\n%s", procs, pid, res.stdout)
	}
	if b, err := os.ReadFile(filepath.Join(work, "mine")); err != nil || string(b) != "mine\n" {
		t.Errorf("the write in the box did not reach the folder: %q %v", b, err)
	}
	if strings.Contains(res.stdout, "root ") && strings.Contains(res.stdout, " home ") {
		t.Errorf("the box's root shows /root or /home: %s", res.stdout)
	}
}

// A unix socket by path (an ssh-agent's, docker's) outside the view
// cannot be reached; one in a folder the box holds can (so the first
// refusal is the view's doing).
func TestABoxReachesNoUnixSocketOutsideItsView(t *testing.T) {
	t.Parallel()
	needBox(t)
	hidden, work := t.TempDir(), t.TempDir()
	var accepted atomic.Int64
	listen := func(path string) {
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				c.Close()
			}
		}()
	}
	listen(filepath.Join(hidden, "agent.sock"))
	exe := testBinary(t)
	res := run(t, boxSpec(t, []string{work}), agentEnv(helperEnv+"=dial-unix"), `"$1" "$2" && echo reached || echo refused`, exe, filepath.Join(hidden, "agent.sock"))
	if !strings.Contains(res.stdout, "refused") || accepted.Load() != 0 {
		t.Errorf("a socket outside the view was reached (%d accepted): %s%s", accepted.Load(), res.stdout, res.stderr)
	}
	listen(filepath.Join(work, "mine.sock"))
	res = run(t, boxSpec(t, []string{work}), agentEnv(helperEnv+"=dial-unix"), `"$1" "$2" && echo reached || echo refused`, exe, filepath.Join(work, "mine.sock"))
	if !strings.Contains(res.stdout, "reached") || accepted.Load() != 1 {
		t.Errorf("a socket in the box's own folder was not reached: %s%s", res.stdout, res.stderr)
	}
}

// The box's network is its own loopback: the host's TCP services (on
// any port, 443 too) and UDP to the host's loopback see nothing, while a
// server the command starts in the box answers it.
func TestABoxHasNoNetworkButItsOwnLoopback(t *testing.T) {
	t.Parallel()
	needBox(t)
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	var datagrams atomic.Int64
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			datagrams.Add(1)
		}
	}()
	res := run(t, boxSpec(t, nil), agentEnv(helperEnv+"=net"), `"$1" "$2" "$3"`, testBinary(t), tcp.Addr().String(), udp.LocalAddr().String())
	time.Sleep(200 * time.Millisecond)
	if accepted.Load() != 0 || datagrams.Load() != 0 {
		t.Errorf("the host's loopback got %d connection(s) and %d datagram(s) from the box:\n%s%s", accepted.Load(), datagrams.Load(), res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "own server answered") {
		t.Errorf("a server in the box did not answer the box:\n%s%s", res.stdout, res.stderr)
	}
}

// The proxy is the one way out: the box's loopback port passes each
// connection to the proxy's socket outside.
func TestABoxReachesItsProxyOnItsLoopback(t *testing.T) {
	t.Parallel()
	needBox(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "proxy", "proxy.sock")
	os.Mkdir(filepath.Dir(sock), 0o700)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		line, _ := bufio.NewReader(c).ReadString('\n')
		io.WriteString(c, "pong\n")
		c.Close()
		got <- line
	}()
	spec := boxSpec(t, []string{dir})
	spec.View.ProxySocket, spec.View.ProxyPort = sock, 3128
	res := run(t, spec, agentEnv(helperEnv+"=say"), `"$1" 127.0.0.1:3128 ping; rm -f "$2" 2>/dev/null && echo "socket removed" || echo "socket kept"`, testBinary(t), sock)
	select {
	case line := <-got:
		if line != "ping\n" {
			t.Errorf("the proxy got %q", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the proxy got nothing from the box:\n%s%s", res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "pong") || !strings.Contains(res.stdout, "socket kept") {
		t.Errorf("the box's end: %s%s", res.stdout, res.stderr)
	}
}

// Nothing the command starts outlives it, at any depth of setsid: the
// box's PID namespace ends with its first process.
func TestNothingOutlivesABoxAtAnyDepth(t *testing.T) {
	t.Parallel()
	needBox(t)
	work := t.TempDir()
	marker := fmt.Sprintf("wo-box-chain-%d", time.Now().UnixNano())
	// Each level starts the next in a new session and exits; the deepest
	// says so and stays, writing into the folder.
	chain := filepath.Join(work, marker+".sh")
	if err := os.WriteFile(chain, []byte(`#!/bin/sh
if [ "$1" -gt 0 ]; then setsid /bin/sh "$0" $(($1 - 1)) </dev/null >/dev/null 2>&1 & exit 0; fi
touch "$(dirname "$0")/deepest"
while :; do date >> "$(dirname "$0")/beat"; sleep 0.1; done
`), 0o755); err != nil {
		t.Fatal(err)
	}
	res := run(t, boxSpec(t, []string{work}), agentEnv(), `
		/bin/sh "$1" 130
		for i in $(seq 100); do [ -e "$2/deepest" ] && break; sleep 0.1; done
		[ -e "$2/deepest" ] && echo "deepest started"
	`, chain, work)
	if res.code != 0 || !strings.Contains(res.stdout, "deepest started") {
		t.Fatalf("the chain did not reach its depth: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	time.Sleep(100 * time.Millisecond)
	if left := processesNamed(marker); len(left) != 0 {
		t.Errorf("%d process(es) of the box outlived it: %v", len(left), left)
	}
	before, _ := os.ReadFile(filepath.Join(work, "beat"))
	time.Sleep(300 * time.Millisecond)
	if after, _ := os.ReadFile(filepath.Join(work, "beat")); len(after) != len(before) {
		t.Error("something of the box still writes into its folder")
	}
}

// processesNamed are the live processes whose command line holds name.
func processesNamed(name string) []int {
	var out []int
	for pid := range parents(procFS()) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.Contains(string(b), name) {
			out = append(out, pid)
		}
	}
	return out
}

// testBinary is this test binary, the helper program, which the box
// holds as it holds every program it re-executes.
func testBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestViewMountsBindEachPathOnceInOrder(t *testing.T) {
	t.Parallel()
	got := viewMounts([]string{"/usr", "/usr/lib", "/repo/.git", "/tmp/box/proxy/", "/etc"}, []string{"/tmp/box", "/tmp/box/home", "/usr/local/cache", "/etc"})
	want := []mountPoint{{path: "/etc", writable: true}, {path: "/usr"}, {path: "/repo/.git"}, {path: "/tmp/box", writable: true},
		{path: "/tmp/box/proxy"}, {path: "/usr/local/cache", writable: true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("viewMounts:\n got %+v\nwant %+v", got, want)
	}
}

// openPTY opens a pseudo-terminal pair: the master, and the terminal.
func openPTY(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// An agent started from a terminal (wo run by a person) can neither open
// that terminal nor push input into it: what it typed there a shell
// outside the sandbox would run. In the box and under Landlock alone.
func TestACommandCannotTypeIntoTheTerminalItWasStartedFrom(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	if _, err := os.Stat("/usr/bin/perl"); err != nil {
		t.Skip("the probe is written in perl, which this machine lacks")
	}
	specs := map[string]Spec{"landlock": {Confine: true}}
	if ok, _ := Namespaces(); ok {
		specs["box"] = boxSpec(t, nil)
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			master, tty := openPTY(t)
			cmd, err := Command(spec, []string{"/bin/sh", "-c", `
				perl -e 'my $c = "X"; if (ioctl(STDIN, 0x5412, $c)) { print "injected\n" } else { print "refused: $!\n" }'
				if ( exec 3<>/dev/tty ) 2>/dev/null; then echo "tty opened"; else echo "no tty"; fi`})
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr strings.Builder
			cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = agentEnv(), tty, &stdout, &stderr
			// Started as a person's shell starts it: the terminal is its
			// controlling terminal.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGTERM}
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			if got := stdout.String(); !strings.Contains(got, "refused: Operation not permitted") || !strings.Contains(got, "no tty") {
				t.Errorf("in the terminal:\n%s%s", got, stderr.String())
			}
			// On a terminal it made its controlling one itself, the filter
			// still refuses.
			res := run(t, spec, agentEnv(helperEnv+"=tiocsti"), `"$1"`, testBinary(t))
			if !strings.Contains(res.stdout, "refused: operation not permitted") {
				t.Errorf("on its own terminal: %s%s", res.stdout, res.stderr)
			}
			master.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			buf := make([]byte, 64)
			if n, _ := master.Read(buf); strings.Contains(string(buf[:n]), "X") {
				t.Errorf("the terminal got input from the command: %q", buf[:n])
			}
		})
	}
}

// A signal that reaches a box while it starts ends it with that signal,
// whenever it comes: not with a status of Go's runtime, and not only
// when the launcher's kill follows after its grace.
func TestASignalWhileABoxStartsEndsIt(t *testing.T) {
	t.Parallel()
	needBox(t)
	for _, after := range []time.Duration{2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
		40 * time.Millisecond, 80 * time.Millisecond} {
		cmd, stdout, stderr := start(t, boxSpec(t, nil), agentEnv(), "sleep", "30")
		time.Sleep(after)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		res := wait(t, cmd, stdout, stderr)
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		// The launcher reports the box's end as a shell does (143); a
		// launcher not yet listening dies of the signal itself.
		if res.code != 128+int(syscall.SIGTERM) && !(ws.Signaled() && ws.Signal() == syscall.SIGTERM) {
			t.Errorf("SIGTERM %s after the start: exit %d (%v), want the signal's end: %s", after, res.code, ws, res.stderr)
		}
	}
}
