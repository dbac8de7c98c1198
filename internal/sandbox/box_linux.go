//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The box: the command in namespaces of its own, made by the launcher
// with clone(2) (Go's SysProcAttr, no helper program):
//
//	launcher ──clone(user, mount, pid, net, ipc, uts)──> [self] __wo_agent_box   pid 1 of the box
//	                                                     └─> [self] __wo_agent_confine → argv
//
// The box's first process builds the view (a tmpfs root with the system
// folders bound read-only, the writable paths read-write, its own /tmp,
// /run, /dev and /proc), pivots into it, brings up its loopback, serves
// the proxy on it and starts the confine step, which adds Landlock and
// drops every capability before it executes the command. When the command
// exits, the box's first process exits with its status, and the kernel
// kills every process left in the PID namespace, at any depth.

const boxArg = "__wo_agent_box"

// boxCloneFlags are the namespaces of a box.
const boxCloneFlags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET |
	syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS

// testNoNamespacesEnv, in the environment, makes the probe act as on a
// system that refuses user namespaces (the package's tests).
const testNoNamespacesEnv = "WO_SANDBOX_TEST_NO_USERNS"

// boxAttr is how the launcher clones the box: the user's own uid and gid
// inside (files it writes are the user's), with the capabilities its
// first process needs to build the view kept across the exec; the confine
// step drops them all.
func boxAttr() *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Cloneflags:  boxCloneFlags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN},
		// If the launcher dies, the box goes with it, and with the box
		// every process in it.
		Pdeathsig: syscall.SIGKILL,
	}
}

// probeLimit bounds the trial box of Namespaces.
const probeLimit = 10 * time.Second

var namespaces struct {
	once sync.Once
	why  string
}

// Namespaces says whether this system lets wo make a box (user, mount,
// PID and network namespaces, and a private /proc in them), and why not
// when it does not. It asks once per process: a box is cloned, builds an
// empty view and exits.
func Namespaces() (ok bool, why string) {
	namespaces.once.Do(func() { namespaces.why = probeNamespaces() })
	return namespaces.why == "", namespaces.why
}

// refuseNamespaces plays a system without user namespaces: the tests'
// switch, and test builds of wo (WO_FAULT_NO_USERNS).
var refuseNamespaces = func() bool { return os.Getenv(testNoNamespacesEnv) != "" }

func probeNamespaces() string {
	if refuseNamespaces() {
		return "user namespaces are refused here (as the test switch says)"
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Sprintf("finding this program: %v", err)
	}
	root, err := os.MkdirTemp("", "wo-probe-")
	if err != nil {
		return fmt.Sprintf("making a folder to try a box in: %v", err)
	}
	defer os.RemoveAll(root)
	args, err := reexecArgs(boxArg, wireSpec{Spec: Spec{View: &View{Root: root}}, Parent: os.Getpid(), Probe: true}, []string{"true"})
	if err != nil {
		return err.Error()
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err.Error()
	}
	defer r.Close()
	pid, err := syscall.ForkExec(self, append([]string{self}, args...), &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, w.Fd(), w.Fd()}, Sys: boxAttr()})
	w.Close()
	if err != nil {
		return fmt.Sprintf("the kernel refused new user namespaces (%v): on Ubuntu 24.04, sysctl kernel.apparmor_restrict_unprivileged_userns=0 allows them", err)
	}
	// A trial that hangs (a mount that never returns) is not waited for.
	hung := time.AfterFunc(probeLimit, func() { syscall.Kill(pid, syscall.SIGKILL) })
	defer hung.Stop()
	said, _ := io.ReadAll(io.LimitReader(r, 4096))
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil || !ws.Exited() || ws.ExitStatus() != 0 {
		words := strings.TrimSpace(strings.TrimPrefix(string(said), refusal))
		if words == "" {
			words = fmt.Sprintf("the trial box ended with status %d", exitCode(ws))
		}
		return "a box could not be built here: " + words
	}
	return ""
}

// box is the box's first process: it builds the view, serves the proxy,
// starts the confine step and exits with the command's status.
func box(args []string) int {
	// First of all: the first process of a PID namespace ignores a
	// signal it has no handler for, and Go's runtime, finding it alive
	// after such a signal, exits 2. Signals are taken from here on, and
	// one that comes before the command starts ends the box with it.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	// What the launcher was sent, also through the pipe on fd 3: a signal
	// it forwarded while this process started was lost (see launch).
	go func() {
		stop := os.NewFile(3, "stop")
		b := make([]byte, 1)
		for {
			if n, err := stop.Read(b); n == 1 {
				sigs <- syscall.Signal(b[0])
			} else if err != nil {
				return
			}
		}
	}()
	w, argv, err := parseReexec(args)
	if err != nil {
		return failed("box: %v", err)
	}
	if w.View == nil {
		return failed("box: no view to build")
	}
	wd, _ := os.Getwd()
	if err := buildView(*w.View, w.Writable); err != nil {
		return failed("%s was not started: building its box: %v", argv[0], err)
	}
	if wd != "" && !w.Probe {
		if err := os.Chdir(wd); err != nil {
			return failed("%s was not started: its working folder %s is not in its box: %v", argv[0], wd, err)
		}
	}
	if err := loopbackUp(); err != nil {
		return failed("%s was not started: bringing up the box's loopback: %v", argv[0], err)
	}
	if w.Probe {
		return 0
	}
	if v := w.View; v.ProxyPort != 0 {
		if err := serveProxy(v.ProxyPort, v.ProxySocket); err != nil {
			return failed("%s was not started: serving the proxy in its box: %v", argv[0], err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return failed("box: finding this program: %v", err)
	}
	cargs, err := reexecArgs(confineArg, w, argv)
	if err != nil {
		return failed("box: %v", err)
	}
	select {
	case sig := <-sigs:
		return 128 + int(sig.(syscall.Signal))
	default:
	}
	pid, err := syscall.ForkExec(self, append([]string{self}, cargs...), &syscall.ProcAttr{
		Env: os.Environ(), Files: []uintptr{0, 1, 2}, Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}})
	if err != nil {
		return failed("box: starting %s: %v", argv[0], err)
	}
	// A signal for the box is for every process in it (-1: all but this
	// one, in its PID namespace).
	go func() {
		for sig := range sigs {
			syscall.Kill(-1, sig.(syscall.Signal))
		}
	}()
	status, err := waitChild(waitAny, pid)
	if err != nil {
		return failed("box: waiting for %s: %v", argv[0], err)
	}
	// Returning ends this process, the PID namespace's first: the kernel
	// then kills every process left in it.
	return exitCode(status)
}

// mountPoint is one path of the view and how it is bound.
type mountPoint struct {
	path     string
	writable bool
	device   bool // a device node: nodev not set
}

// viewMounts orders the paths to bind: shallower first, so that a path
// beneath another is bound on top of it; a path beneath one bound the
// same way is left out (it is there already), and so is one that does
// not exist.
func viewMounts(readOnly, writable []string) []mountPoint {
	var all []mountPoint
	for _, p := range readOnly {
		all = append(all, mountPoint{path: filepath.Clean(p)})
	}
	for _, p := range writable {
		all = append(all, mountPoint{path: filepath.Clean(p), writable: true})
	}
	slices.SortStableFunc(all, func(a, b mountPoint) int {
		if d := strings.Count(a.path, "/") - strings.Count(b.path, "/"); d != 0 {
			return d
		}
		return strings.Compare(a.path, b.path)
	})
	var out []mountPoint
	for _, m := range all {
		// The deepest bound path that holds m says how m is seen now.
		var under *mountPoint
		for i := range out {
			if within(m.path, out[i].path) {
				under = &out[i]
			}
		}
		if under != nil && under.writable == m.writable {
			continue
		}
		if under != nil && under.path == m.path {
			// The same path asked both ways: writable wins, as in Landlock.
			under.writable = under.writable || m.writable
			continue
		}
		out = append(out, m)
	}
	return out
}

// within reports whether path is dir or beneath it.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// buildView makes the box's file system and pivots into it.
func buildView(v View, writable []string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	root := v.Root
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("mounting the view's root: %w", err)
	}
	// The box's own scratch folders, empty: other users' files and
	// sockets in the host's /tmp and /run are not in the view.
	for _, d := range []struct {
		path, mode string
	}{{"/tmp", "1777"}, {"/var/tmp", "1777"}, {"/run", "0755"}, {"/dev/shm", "1777"}} {
		if err := mountTmpfs(root, d.path, d.mode); err != nil {
			return err
		}
	}
	// The program itself, which re-executes itself in the box (the
	// confine step), wherever it was installed.
	readOnly := v.ReadOnly
	if self, err := os.Executable(); err == nil {
		readOnly = append(slices.Clip(readOnly), self)
	}
	for _, m := range viewMounts(readOnly, writable) {
		if err := bindInto(root, m); err != nil {
			return err
		}
	}
	if err := maskSecrets(root); err != nil {
		return err
	}
	if v.ProxySocket != "" {
		// The proxy's socket, read-only even inside a writable folder:
		// the command may connect to it, not replace it.
		if err := bindInto(root, mountPoint{path: filepath.Dir(v.ProxySocket)}); err != nil {
			return err
		}
	}
	if err := makeDevices(root); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
		return err
	}
	if err := unix.Mount("proc", filepath.Join(root, "proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting a /proc of the box's own: %w", err)
	}
	old := filepath.Join(root, ".oldroot")
	if err := os.Mkdir(old, 0o700); err != nil {
		return err
	}
	if err := unix.PivotRoot(root, old); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	if err := unix.Unmount("/.oldroot", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("leaving the host's file system: %w", err)
	}
	os.Remove("/.oldroot")
	return nil
}

// maskSecrets shows empty, in the view's /etc, every file that not
// everyone may read and every folder that not everyone may enter (the
// shadow passwords, SSH host keys, /etc/ssl/private, a database's
// configuration): a run as root could read them otherwise, and a command
// that needs them is not an agent's.
func maskSecrets(root string) error {
	emptyFile, emptyDir := filepath.Join(root, ".wo-empty"), filepath.Join(root, ".wo-empty-dir")
	if err := os.WriteFile(emptyFile, nil, 0o444); err != nil {
		return err
	}
	if err := os.Mkdir(emptyDir, 0o555); err != nil {
		return err
	}
	etc := filepath.Join(root, "etc")
	return filepath.WalkDir(etc, func(at string, d fs.DirEntry, err error) error {
		if err != nil || at == etc {
			return nil // what cannot be read is not shown either
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		mask := ""
		switch {
		case info.IsDir() && info.Mode().Perm()&0o001 == 0:
			mask = emptyDir
		case info.Mode().IsRegular() && info.Mode().Perm()&0o004 == 0:
			mask = emptyFile
		default:
			return nil
		}
		if err := unix.Mount(mask, at, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("hiding %s in the box: %w", strings.TrimPrefix(at, root), err)
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, at, unix.AT_SYMLINK_NOFOLLOW, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("hiding %s in the box: %w", strings.TrimPrefix(at, root), err)
		}
		if info.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
}

// mountTmpfs mounts an empty tmpfs at path in root.
func mountTmpfs(root, path, mode string) error {
	at := filepath.Join(root, path)
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", at, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode="+mode); err != nil {
		return fmt.Errorf("mounting the box's %s: %w", path, err)
	}
	return nil
}

// bindInto binds m.path at the same path in root: read-only (recursively)
// or writable, never set-user-ID or a device. A symbolic link (/bin on a
// merged-/usr system) is made again as the same link; a path that does
// not exist is skipped.
func bindInto(root string, m mountPoint) error {
	info, err := os.Lstat(m.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	at := filepath.Join(root, m.path)
	if info.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(m.path)
		if err != nil {
			return err
		}
		if _, err := os.Lstat(at); err == nil {
			return nil // seen through a folder bound already
		}
		if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
			return err
		}
		return os.Symlink(target, at)
	}
	if err := mountTarget(at, info.IsDir()); err != nil {
		return fmt.Errorf("making room for %s in the box: %w", m.path, err)
	}
	if err := unix.Mount(m.path, at, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding %s into the box: %w", m.path, err)
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID}
	if !m.device {
		attr.Attr_set |= unix.MOUNT_ATTR_NODEV
	}
	if !m.writable {
		attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, at, unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW, attr); err != nil {
		return fmt.Errorf("making %s %s in the box: %w", m.path, map[bool]string{true: "writable only", false: "read-only"}[m.writable], err)
	}
	return nil
}

// mountTarget makes the folder or empty file a bind mount goes on, unless
// it is there (seen through a folder bound earlier).
func mountTarget(at string, dir bool) error {
	if _, err := os.Lstat(at); err == nil {
		return nil
	}
	if dir {
		return os.MkdirAll(at, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(at, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// boxDevices are the host's devices bound into the box's /dev.
var boxDevices = []string{"null", "zero", "full", "random", "urandom"}

// makeDevices makes the box's /dev: a tmpfs with the few devices programs
// expect, a pseudo-terminal instance of its own, and the usual links.
func makeDevices(root string) error {
	dev := filepath.Join(root, "dev")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		return err
	}
	for _, name := range boxDevices {
		if _, err := os.Stat("/dev/" + name); err != nil {
			continue
		}
		if err := bindInto(root, mountPoint{path: "/dev/" + name, writable: true, device: true}); err != nil {
			return err
		}
	}
	pts := filepath.Join(dev, "pts")
	if err := os.MkdirAll(pts, 0o755); err == nil {
		if unix.Mount("devpts", pts, "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620") == nil {
			os.Symlink("pts/ptmx", filepath.Join(dev, "ptmx"))
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		os.Symlink(target, filepath.Join(dev, name))
	}
	return nil
}

// loopbackUp brings up the box's loopback interface: the network
// namespace has it, down, and nothing else.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// serveProxy listens on the box's loopback at port and passes each
// connection to the proxy's unix socket, outside the box: the one way out.
func serveProxy(port int, socket string) error {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go relay(c, socket)
		}
	}()
	return nil
}

// relay copies between a connection in the box and a new one to the
// proxy's socket until either side ends.
func relay(c net.Conn, socket string) {
	defer c.Close()
	out, err := net.Dial("unix", socket)
	if err != nil {
		return
	}
	defer out.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(out, c); out.(*net.UnixConn).CloseWrite(); done <- struct{}{} }()
	go func() { io.Copy(c, out); c.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	<-done
	<-done
}
