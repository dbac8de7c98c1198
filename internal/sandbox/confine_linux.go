//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// testNoLandlockEnv, set in the confine step's environment, makes it act
// as on a kernel without Landlock: the tests check that it then refuses to
// run the command. It can only make the sandbox refuse, never confine less.
const testNoLandlockEnv = "WO_SANDBOX_TEST_NO_LANDLOCK"

// terminals may also be controlled (ioctl), not just read and written.
var terminals = map[string]bool{"/dev/ptmx": true, "/dev/pts": true}

// confine is the confine step: it restricts itself as the spec says and
// executes the command in its place. It never runs the command unconfined
// when the spec asks for confinement.
func confine(args []string) int {
	w, argv, err := parseReexec(args)
	if err != nil {
		return failed("%v", err)
	}
	abi := landlockABI()
	if os.Getenv(testNoLandlockEnv) != "" {
		abi = 0
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, refusal+"%v\n", err)
		return exitNotFound
	}
	// Landlock is enforced on this thread only (the others end at exec):
	// the command must be executed from it.
	runtime.LockOSThread()
	if w.Confine {
		if err := restrictSelf(w.Spec, abi); err != nil {
			return failed("%s was not started: %v", argv[0], err)
		}
	}
	// A session of its own: no controlling terminal (wo's), so /dev/tty
	// leads nowhere, and nothing it writes or asks of a terminal reaches
	// the person at wo's.
	if _, err := unix.Setsid(); err != nil && !errors.Is(err, unix.EPERM) {
		return failed("%s was not started: setsid: %v", argv[0], err)
	}
	err = syscall.Exec(path, argv, os.Environ())
	return failed("executing %s: %v", argv[0], err)
}

// landlockConfig is what the agent's Landlock domain handles: every file
// access, TCP connect (bind stays allowed), and signals and abstract unix
// sockets out of the domain, as far as the kernel's ABI goes.
var landlockConfig = landlock.Config{
	HandledAccessFS:  landlock.V7.HandledAccessFS,
	HandledAccessNet: llsys.AccessNetConnectTCP,
	Scoped:           landlock.V7.Scoped,
}.BestEffort()

// boxLandlockConfig is the domain of a command in a box: the same, but
// TCP is not handled, since the box's network has nothing but its own
// loopback and the proxy (a test's server in the box must be reachable).
var boxLandlockConfig = landlock.Config{
	HandledAccessFS: landlock.V7.HandledAccessFS,
	Scoped:          landlock.V7.Scoped,
}.BestEffort()

// restrictSelf puts the calling thread in a new Landlock domain with the
// rules of landlockRules: no signals or abstract unix sockets out of the
// domain, no capabilities. It asks for ABI 7 and takes what the kernel
// has (abi, landlockABI's answer), but an error or nothing enforced is an
// error.
func restrictSelf(spec Spec, abi int) error {
	if abi < 1 {
		return errors.New("the kernel has no Landlock, so it cannot be confined")
	}
	rules, err := landlockRules(spec, abi)
	if err != nil {
		return err
	}
	config := landlockConfig
	if spec.View != nil {
		config = boxLandlockConfig
	}
	fd, flags, err := config.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("building its Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("Landlock would enforce nothing on this kernel")
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	if err := installFilter(); err != nil {
		return err
	}
	return dropCapabilities()
}

// landlockRules are the rules of the agent's domain at Landlock ABI abi:
// read and execute everywhere, write beneath spec.Writable and the
// devices, TCP connect to spec.Ports only.
func landlockRules(spec Spec, abi int) ([]landlock.Rule, error) {
	rules := []landlock.Rule{landlock.RODirs("/")}
	for _, p := range append(append([]string(nil), spec.Writable...), devices...) {
		rule, ok, err := writeRule(p, abi)
		if err != nil {
			return nil, err
		}
		if ok {
			rules = append(rules, rule)
		}
	}
	if spec.View != nil {
		return rules, nil
	}
	for _, port := range spec.Ports {
		rules = append(rules, landlock.ConnectTCP(uint16(port)))
	}
	return rules, nil
}

// dropCapabilities leaves the command none: run by root it keeps uid 0 but
// not its privileges. Landlock alone does not hold a privileged process:
// on Linux 6.18, CAP_SYS_ADMIN or CAP_PERFMON still lets a confined
// process read /proc/PID/environ of processes outside its domain.
// Capabilities belong to the thread, like the Landlock domain: this one,
// which executes the command. An ordinary user has none to drop, may not
// change its bounding set, and gains none at exec (no_new_privs makes file
// capabilities and set-user-ID bits inert).
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	// Root gains its bounding set at exec: empty it.
	for c := 0; ; c++ {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		if err != nil {
			break // EINVAL: past the last capability
		}
		if in == 0 {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EPERM) && os.Geteuid() != 0 {
				break
			}
			return fmt.Errorf("dropping capability %d: %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("dropping capabilities: %w", err)
	}
	return nil
}

// writeRule is the rule that lets the command write beneath p: a folder's
// whole tree, or a single file. A path that does not exist gives no rule.
// Moving files between folders (refer) needs ABI 2: asked for below it,
// go-landlock would enforce nothing at all.
func writeRule(p string, abi int) (landlock.Rule, bool, error) {
	info, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("writable path %s: %w", p, err)
	}
	var rule landlock.FSRule
	if info.IsDir() {
		rule = landlock.RWDirs(p)
		if abi >= 2 {
			rule = rule.WithRefer()
		}
	} else {
		rule = landlock.RWFiles(p)
	}
	if terminals[p] {
		rule = rule.WithIoctlDev()
	}
	return rule, true, nil
}
