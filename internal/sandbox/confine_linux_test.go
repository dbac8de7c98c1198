//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// These tests run the confine step's parts in the test process, where
// coverage (and so mutation testing) sees them: restrictSelf on a thread
// of its own, which ends with the test's goroutine, so that the test
// process stays unconfined. The tests in sandbox_linux_test.go confine
// real commands.

// onOwnThread runs f on an OS thread that exits when f returns: what f
// does to its thread (a Landlock domain, a seccomp filter, capabilities,
// its uid) is gone with it. The Go runtime starts no thread from a locked
// one, so nothing else inherits it either.
//
// The tests that use it do not run in parallel: the thread that exits may
// earlier have started another test's launcher, and a thread's exit sends
// the parent-death signal to the processes it started. Tests that are not
// parallel run while the parallel ones wait, before they start anything.
func onOwnThread(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		f()
	}()
	<-done
}

func TestLandlockRulesGrantWhatTheSpecSays(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "single")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	spec := Spec{Writable: []string{dir, file, missing}, Ports: []int{443, 8080}}
	for _, abi := range []int{1, 2, 7} {
		rules, err := landlockRules(spec, abi)
		if err != nil {
			t.Fatalf("ABI %d: %v", abi, err)
		}
		dirRule, pts := landlock.RWDirs(dir), landlock.RWDirs("/dev/pts")
		if abi >= 2 { // moving files between folders
			dirRule, pts = dirRule.WithRefer(), pts.WithRefer()
		}
		for _, want := range []landlock.Rule{
			landlock.RODirs("/"),
			dirRule,
			landlock.RWFiles(file),
			landlock.ConnectTCP(443),
			landlock.ConnectTCP(8080),
			landlock.RWFiles("/dev/null"),
			pts.WithIoctlDev(),
		} {
			if !slices.ContainsFunc(rules, func(r landlock.Rule) bool { return reflect.DeepEqual(r, want) }) {
				t.Errorf("ABI %d: the rules lack %v:\n%v", abi, want, rules)
			}
		}
		for _, r := range rules {
			if strings.Contains(fmt.Sprint(r), missing) {
				t.Errorf("ABI %d: a rule for a path that does not exist: %v", abi, r)
			}
		}
		if n := len(rules); n != 1+2+len(spec.Ports)+existing(devices) {
			t.Errorf("ABI %d: %d rules, want one for /, the 2 paths that exist, the ports and the devices:\n%v", abi, n, rules)
		}
	}
	if _, err := landlockRules(Spec{Writable: []string{filepath.Join(file, "below")}}, 7); err == nil || !strings.Contains(err.Error(), "writable path") {
		t.Errorf("a writable path that cannot be looked at: %v; want an error, not a rule left out", err)
	}
}

func existing(paths []string) int {
	n := 0
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			n++
		}
	}
	return n
}

func TestRestrictSelfRefusesWithoutLandlock(t *testing.T) {
	// Not parallel: see onOwnThread.
	dir := t.TempDir()
	onOwnThread(func() {
		err := restrictSelf(Spec{Confine: true}, 0)
		if err == nil || !strings.Contains(err.Error(), "no Landlock") {
			t.Errorf("restrictSelf at ABI 0: %v; want an error saying there is no Landlock", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
			t.Errorf("refusing, restrictSelf still restricted the thread: %v", err)
		}
	})
}

func TestRestrictSelfConfinesItsThread(t *testing.T) {
	// Not parallel: see onOwnThread.
	needLandlock(t)
	abi, _, _ := Status()
	writable, other := t.TempDir(), t.TempDir()
	for _, d := range []string{"from", "to"} {
		if err := os.Mkdir(filepath.Join(writable, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(writable, "from", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	listed, unlisted := listenTCP(t), listenTCP(t)
	spec := Spec{Confine: true, Writable: []string{writable}, Ports: []int{listed}}
	// What the thread could do before, so that a refusal below is the
	// sandbox's and not the machine's.
	for _, port := range []int{listed, unlisted} {
		if err := connectTCP(port); err != nil {
			t.Fatalf("unconfined, connecting to port %d: %v", port, err)
		}
	}
	_, filtered := auditArch[runtime.GOARCH]
	mptcp := filtered && socketMPTCP() == nil
	if uringSetup() == unix.ENOSYS {
		t.Fatalf("unconfined, io_uring_setup gives ENOSYS: the test could not see the filter")
	}
	if err := unix.Kill(os.Getppid(), 0); err != nil {
		t.Fatalf("unconfined, signalling the parent: %v", err)
	}
	root := os.Geteuid() == 0

	onOwnThread(func() {
		if err := restrictSelf(spec, abi); err != nil {
			t.Errorf("restrictSelf: %v", err)
			return
		}
		expect := func(what string, got, want error) {
			t.Helper()
			if !errors.Is(got, want) && !(got == nil && want == nil) {
				t.Errorf("confined, %s: %v; want %v", what, got, want)
			}
		}
		expect("writing beneath a writable folder", os.WriteFile(filepath.Join(writable, "inside"), nil, 0o644), nil)
		expect("writing elsewhere", os.WriteFile(filepath.Join(other, "outside"), nil, 0o644), fs.ErrPermission)
		expect("moving a file between writable folders",
			os.Rename(filepath.Join(writable, "from", "f"), filepath.Join(writable, "to", "f")), nil)
		if abi >= 4 {
			expect("connecting to a listed port", connectTCP(listed), nil)
			expect("connecting to another port", connectTCP(unlisted), unix.EACCES)
		}
		if mptcp {
			expect("opening a Multipath TCP socket", socketMPTCP(), unix.EPROTONOSUPPORT)
		}
		if filtered {
			expect("setting up io_uring", uringSetup(), unix.ENOSYS)
		}
		if abi >= 6 {
			expect("signalling a process outside the domain", unix.Kill(os.Getppid(), 0), unix.EPERM)
		}
		if nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || nnp != 1 {
			t.Errorf("confined, no_new_privs = %d, %v; want 1 (setuid programs must not elevate)", nnp, err)
		}
		if caps := threadCaps(t); root && caps != "CapInh=0 CapPrm=0 CapEff=0 CapBnd=0 CapAmb=0" {
			t.Errorf("confined as root, the thread keeps capabilities: %s", caps)
		}
	})
	if _, err := os.Stat(filepath.Join(other, "outside")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a file was written outside the writable folder (stat: %v)", err)
	}
}

func TestRestrictSelfConfinesAtLandlockABI1(t *testing.T) {
	// Not parallel: see onOwnThread.
	needLandlock(t)
	writable, other := t.TempDir(), t.TempDir()
	onOwnThread(func() {
		// A kernel with only ABI 1 still confines files: the rules leave
		// out what ABI 1 lacks rather than giving up.
		if err := restrictSelf(Spec{Confine: true, Writable: []string{writable}}, 1); err != nil {
			t.Errorf("restrictSelf at ABI 1: %v", err)
			return
		}
		if err := os.WriteFile(filepath.Join(writable, "inside"), nil, 0o644); err != nil {
			t.Errorf("confined at ABI 1, writing beneath the writable folder: %v", err)
		}
		if err := os.WriteFile(filepath.Join(other, "outside"), nil, 0o644); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("confined at ABI 1, writing elsewhere: %v; want permission denied", err)
		}
	})
}

func TestDropCapabilitiesFailsClosedForRootWithoutSetpcap(t *testing.T) {
	// Not parallel: see onOwnThread.
	if os.Geteuid() != 0 {
		t.Skip("needs root: an ordinary user has no bounding set to fail to empty")
	}
	onOwnThread(func() {
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			t.Errorf("capget: %v", err)
			return
		}
		if data[0].Effective&(1<<unix.CAP_SETPCAP) == 0 {
			t.Errorf("root without CAP_SETPCAP to start with: the test cannot take it away")
			return
		}
		data[0].Effective &^= 1 << unix.CAP_SETPCAP
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			t.Errorf("capset: %v", err)
			return
		}
		// Root that cannot empty its bounding set would regain it at exec
		// (without no_new_privs): the confine step must refuse.
		if err := dropCapabilities(); err == nil || !strings.Contains(err.Error(), "dropping capability") {
			t.Errorf("dropCapabilities as root without CAP_SETPCAP: %v; want an error", err)
		}
	})
}

func TestDropCapabilitiesAsAnOrdinaryUser(t *testing.T) {
	// Not parallel: see onOwnThread.
	if os.Geteuid() != 0 {
		t.Skip("needs root to become an ordinary user on one thread")
	}
	onOwnThread(func() {
		// setresuid on this thread only (Go's Setresuid changes them all).
		if _, _, errno := unix.RawSyscall(unix.SYS_SETRESUID, 65534, 65534, 65534); errno != 0 {
			t.Errorf("setresuid: %v", errno)
			return
		}
		// It may not change its bounding set, and has nothing to drop.
		if err := dropCapabilities(); err != nil {
			t.Errorf("dropCapabilities as an ordinary user: %v; want none, as it has no capabilities", err)
		}
		if caps := threadCaps(t); !strings.Contains(caps, "CapEff=0 ") || strings.Contains(caps, "CapBnd=0 ") {
			t.Errorf("an ordinary user's thread: %s; want no effective capabilities and its bounding set untouched", caps)
		}
	})
}

// threadCaps reads the calling thread's capability sets.
func threadCaps(t *testing.T) string {
	f, err := os.Open("/proc/thread-self/status")
	if err != nil {
		t.Errorf("reading the thread's capabilities: %v", err)
		return ""
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, value, ok := strings.Cut(sc.Text(), ":"); ok && strings.HasPrefix(name, "Cap") {
			value = strings.TrimLeft(strings.TrimSpace(value), "0")
			if value == "" {
				value = "0"
			}
			out = append(out, name+"="+value)
		}
	}
	return strings.Join(out, " ")
}

// listenTCP listens on a port of 127.0.0.1 (connections wait in the
// backlog) and returns it.
func listenTCP(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// connectTCP connects to a port of 127.0.0.1 from the calling thread.
func connectTCP(port int) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
}

// socketMPTCP opens a Multipath TCP socket from the calling thread.
func socketMPTCP() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_MPTCP)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// uringSetup calls io_uring_setup with no parameters: an error either way,
// ENOSYS only where a filter refuses the call.
func uringSetup() error {
	_, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 0, 0, 0)
	return errno
}
