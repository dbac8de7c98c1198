//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

func init() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case launchArg:
		os.Exit(launch(os.Args[1:]))
	case confineArg:
		os.Exit(confine(os.Args[1:]))
	case boxArg:
		os.Exit(box(os.Args[1:]))
	}
}

// landlockABI is the Landlock ABI this kernel offers, 0 for none.
var landlockABI = func() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return usableABI(v, llsys.LandlockGetErrata)
}

// usableABI is the ABI to count on when the kernel reports version. Like
// go-landlock, it calls ABI 6+ without the signal-scoping fix (erratum 2,
// asked of errata) ABI 5, so that Status and the enforced ruleset agree.
func usableABI(version int, errata func() (int, error)) int {
	if version < 1 {
		return 0
	}
	if version >= 6 {
		if e, err := errata(); err != nil || e&0x2 == 0 {
			return 5
		}
	}
	return version
}

// Status says whether confinement is available here: the kernel's Landlock
// ABI, whether a Spec with Confine can run, and — when it cannot, or can
// only in part — why.
func Status() (abi int, ok bool, why string) {
	abi = landlockABI()
	ok, why = confinementAt(abi)
	return abi, ok, why
}

// confinementAt says whether a kernel with Landlock ABI abi can confine a
// command, and what it leaves out.
func confinementAt(abi int) (ok bool, why string) {
	// Ifs, not a switch: coverage (and so mutation testing) does not see
	// a case's expression run.
	if abi < 1 {
		return false, "the kernel has no Landlock (Linux 5.13+ with landlock among its LSMs, e.g. lsm=landlock,…)"
	}
	if abi < 4 {
		return true, fmt.Sprintf("Landlock ABI %d: files are confined, but network connections and signals are not (TCP rules need ABI 4, signal scoping ABI 6)", abi)
	}
	if abi < 6 {
		return true, fmt.Sprintf("Landlock ABI %d: files and TCP are confined, but the agent may signal wo's other processes and use their abstract unix sockets (scoping needs ABI 6)", abi)
	}
	return true, ""
}

// Command returns a command that runs argv through the launcher under
// spec. The caller sets Dir, Env, Stdin, Stdout and Stderr (ExtraFiles do
// not reach argv) and may Start and Wait it as usual; argv[0] is looked up
// in the PATH of Env. The launcher leads its own process group, so a
// signal to the group reaches the agent's processes that stayed in it, and
// the launcher forwards it to the others; if the caller dies, the launcher
// (parent-death signal) ends the agent's processes and exits.
//
// The parent-death signal is tied to the OS thread that starts the
// command: a caller that starts it from a goroutine locked to a thread
// (runtime.LockOSThread) must keep that thread until the command ends.
//
// Command refuses a spec with a writable path that is empty, relative or
// "/", and a spec asking for confinement on a kernel without Landlock.
func Command(spec Spec, argv []string) (*exec.Cmd, error) {
	spec, err := checkCommand(spec, argv)
	if err != nil {
		return nil, err
	}
	if spec.Confine {
		if _, ok, why := Status(); !ok {
			return nil, fmt.Errorf("sandbox: cannot confine %s: %s", argv[0], why)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: finding this program to launch %s: %w", argv[0], err)
	}
	args, err := reexecArgs(launchArg, wireSpec{Spec: spec, Parent: os.Getpid()}, argv)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	cmd := exec.Command(self, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	return cmd, nil
}

// HardenSelf makes the calling process non-dumpable, so that processes of
// the same user (without CAP_SYS_PTRACE) can neither ptrace it nor read
// its /proc/PID/environ, mem or fd. Programs it executes are dumpable
// again.
func HardenSelf() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return nil
}
