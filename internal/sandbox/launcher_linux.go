//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// stopGrace is how long the launcher lets the agent's processes end after
// a forwarded signal before it kills them: shorter than wo's own grace
// (procedure/action's agentGrace, 5 s), so that the launcher, which can
// find setsid processes, kills them before wo kills the launcher's group.
const stopGrace = 3 * time.Second

// Sweeps after the agent exits: at most maxSweeps rounds, sweepPause
// apart, each killing the launcher's remaining children (a round per
// level of the agent's process tree). Bounded, so that a process the
// kernel cannot kill at once (stuck in a disk wait) never holds wo.
const (
	maxSweeps  = 100
	sweepPause = 20 * time.Millisecond
)

// launch is the launcher: it starts the confine step and exits with the
// agent's status once the agent and every process it left are gone. It
// prints nothing unless it fails: stdout and stderr are the agent's.
func launch(args []string) int {
	w, argv, err := parseLaunch(args, os.Getppid())
	if err != nil {
		return failed("launcher: %v", err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return failed("launcher: prctl(PR_SET_CHILD_SUBREAPER): %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		return failed("launcher: finding this program: %v", err)
	}
	// In a view, the box's first process builds it and starts the
	// confine step itself; else the launcher starts the confine step.
	next, sys := confineArg, &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if w.View != nil {
		next, sys = boxArg, boxAttr()
	}
	cargs, err := reexecArgs(next, w, argv)
	if err != nil {
		return failed("launcher: %v", err)
	}
	// Signals that arrive before the agent exists wait in the channel and
	// are forwarded once it does.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	files := []uintptr{0, 1, 2}
	// The first process of a PID namespace gets a signal from outside
	// only once it has a handler for it: one sent while it starts is lost.
	// So the box also hears of each signal through a pipe (its fd 3).
	var stopW *os.File
	if w.View != nil {
		stopR, sw, err := os.Pipe()
		if err != nil {
			return failed("launcher: %v", err)
		}
		defer stopR.Close()
		stopW = sw
		files = append(files, stopR.Fd())
	}
	pid, err := syscall.ForkExec(self, append([]string{self}, cargs...), &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: files,
		// If the launcher is killed outright, the agent goes with it.
		Sys: sys,
	})
	if err != nil {
		return failed("launcher: starting %s: %v", argv[0], err)
	}
	var first atomic.Int32 // the first signal forwarded
	go forward(sigs, stopGrace, func(sig syscall.Signal) {
		first.CompareAndSwap(0, int32(sig))
		if stopW != nil && sig != syscall.SIGKILL {
			stopW.Write([]byte{byte(sig)})
		}
		signalTree(sig)
	})
	status, err := waitChild(waitAny, pid)
	sweep()
	if err != nil {
		return failed("launcher: waiting for %s: %v", argv[0], err)
	}
	return boxStatus(exitCode(status), w.View != nil, syscall.Signal(first.Load()))
}

// boxStatus is the status to report for a box that ended with code after
// the launcher forwarded sig (0: none). A box's first process that a
// signal reaches while Go's runtime is still starting, before it can take
// the signal, exits 2 (the runtime cannot kill the first process of a
// PID namespace with its own signal): that is the signal's end, said as a
// shell says it.
func boxStatus(code int, inBox bool, sig syscall.Signal) int {
	if inBox && code == 2 && sig != 0 {
		return 128 + int(sig)
	}
	return code
}

// parseLaunch reads the launcher's arguments and checks that the process
// that started it is its parent (ppid): if not, that process died before
// the parent-death signal was armed, and nobody would stop the agent.
func parseLaunch(args []string, ppid int) (wireSpec, []string, error) {
	w, argv, err := parseReexec(args)
	if err != nil {
		return wireSpec{}, nil, err
	}
	if ppid != w.Parent {
		return wireSpec{}, nil, fmt.Errorf("the process that started %s (pid %d) has already exited", argv[0], w.Parent)
	}
	return w, argv, nil
}

// forward passes each signal the launcher receives to every process of
// the agent's tree (signal is signalTree): by pid, since they may be in
// other sessions, and the launcher's own group would send it back to the
// launcher. The first one arms the kill of the whole tree after grace;
// that also ends the agent when wo died (the parent-death signal is
// SIGTERM) and nobody is left to insist.
func forward(sigs <-chan os.Signal, grace time.Duration, signal func(syscall.Signal)) {
	armed := false
	for sig := range sigs {
		signal(sig.(syscall.Signal))
		if !armed {
			armed = true
			time.AfterFunc(grace, func() { signal(syscall.SIGKILL) })
		}
	}
}

// waitFunc waits for a child as wait4(-1, ws, options) does: waitAny in
// the launcher, a script in tests.
type waitFunc func(ws *syscall.WaitStatus, options int) (pid int, err error)

// waitAny waits for any child of the launcher.
func waitAny(ws *syscall.WaitStatus, options int) (int, error) {
	return syscall.Wait4(-1, ws, options, nil)
}

// waitChild reaps children until pid exits (orphans of the agent's tree
// that exit meanwhile are reaped too) and returns its status.
func waitChild(wait waitFunc, pid int) (syscall.WaitStatus, error) {
	for {
		var ws syscall.WaitStatus
		got, err := wait(&ws, 0)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if got == pid && (ws.Exited() || ws.Signaled()) {
			return ws, nil
		}
	}
}

// sweep kills every process left of the agent's tree: all have become the
// launcher's children (it is their subreaper) or will once their parent
// is killed. Only direct children are signalled: their pids cannot be
// reused before the launcher reaps them.
func sweep() {
	me := os.Getpid()
	for range maxSweeps {
		if !reap(waitAny) {
			return
		}
		for _, pid := range children(parents(procFS()))[me] {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(sweepPause)
	}
}

// reap collects the children that have exited and reports whether any
// child is left.
func reap(wait waitFunc) bool {
	for {
		var ws syscall.WaitStatus
		got, err := wait(&ws, syscall.WNOHANG)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil { // ECHILD: none left
			return false
		}
		if got == 0 { // some left, none exited
			return true
		}
	}
}

// signalTree sends sig to every descendant of the launcher.
func signalTree(sig syscall.Signal) {
	for _, pid := range descendants(parents(procFS()), os.Getpid()) {
		syscall.Kill(pid, sig)
	}
}

// procFS is /proc, where the launcher finds the agent's processes.
func procFS() fs.FS { return os.DirFS("/proc") }

// descendants lists the processes below root, given each process's
// parent.
func descendants(parents map[int]int, root int) []int {
	kids := children(parents)
	var out []int
	queue := kids[root]
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		out = append(out, pid)
		queue = append(queue, kids[pid]...)
	}
	return out
}

// children lists each process's children, given each process's parent.
// (Built without comparing pids: a mutant of a comparison that picked
// every other process would have the launcher kill the whole machine.)
func children(parents map[int]int) map[int][]int {
	kids := map[int][]int{}
	for pid, ppid := range parents {
		kids[ppid] = append(kids[ppid], pid)
	}
	return kids
}

// parents maps each live (not zombie) process to its parent, from the
// PID/stat files of proc (/proc).
func parents(proc fs.FS) map[int]int {
	out := map[int]int{}
	entries, err := fs.ReadDir(proc, ".")
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, ppid, ok := readStat(proc, pid); ok && state != 'Z' {
			out[pid] = ppid
		}
	}
	return out
}

// readStat reads a process's state and parent from PID/stat in proc.
func readStat(proc fs.FS, pid int) (state byte, ppid int, ok bool) {
	b, err := fs.ReadFile(proc, strconv.Itoa(pid)+"/stat")
	if err != nil {
		return 0, 0, false
	}
	return parseStat(b)
}

// parseStat reads the state and the parent's pid from a /proc/PID/stat
// line, "PID (COMMAND) STATE PPID …". The command may hold spaces and
// parentheses: the fields follow the last ")". A line without one is
// read from its start, where the pid and "(COMMAND" fail the checks.
func parseStat(b []byte) (state byte, ppid int, ok bool) {
	f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], ppid, true
}

// exitCode is the launcher's status for the agent's: its exit code, or
// 128 plus the signal that ended it, as a shell reports it.
func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// failed reports why the sandbox could not run a command, on stderr, and
// returns the status for it.
func failed(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, refusal+format+"\n", a...)
	return exitSandbox
}
