//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The test binary is also the tests' helper program: with helperEnv set
// it does one small thing and exits instead of running the tests.
const helperEnv = "WO_SANDBOX_TEST_HELPER"

// secret is put in the test process's initial environment (the one
// /proc/PID/environ shows), which a confined command must not read.
const (
	secretEnv = "WO_SANDBOX_TEST_SECRET"
	secret    = "wo-sandbox-secret-5f0c2e"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == launchArg || os.Args[1] == confineArg || os.Args[1] == boxArg) {
		// The package's init takes these and never returns. Had it let one
		// through, every launcher would run the whole suite again, and
		// each of those more launchers.
		fmt.Fprintf(os.Stderr, "wo sandbox test: re-executed as %s, but the package's init did not take it\n", os.Args[1])
		os.Exit(2)
	}
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode, os.Args[1:]))
	}
	if os.Getenv(secretEnv) != secret {
		// os.Setenv would not show in /proc/PID/environ: start afresh.
		exe, err := os.Executable()
		if err == nil {
			err = syscall.Exec(exe, os.Args, append(os.Environ(), secretEnv+"="+secret))
		}
		fmt.Fprintf(os.Stderr, "re-executing the tests with %s set: %v\n", secretEnv, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// helper runs one helper mode: exit 0 when it did what it was asked, 3
// when that was refused.
func helper(mode string, args []string) int {
	switch mode {
	case "dial": // args: address
		c, err := net.DialTimeout("tcp", args[0], 5*time.Second)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		c.Close()
		fmt.Println("connected")
		return 0
	case "dial-mptcp": // args: address
		var d net.Dialer
		d.SetMultipathTCP(true)
		d.Timeout = 5 * time.Second
		c, err := d.Dial("tcp", args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		mp, _ := c.(*net.TCPConn).MultipathTCP()
		c.Close()
		fmt.Println("connected, multipath", mp)
		return 0
	case "listen": // plain TCP: Go listens with Multipath TCP by default, which Landlock does not see
		var lc net.ListenConfig
		lc.SetMultipathTCP(false)
		l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		l.Close()
		fmt.Println("listening")
		return 0
	case "dial-unix": // args: socket path
		c, err := net.DialTimeout("unix", args[0], 5*time.Second)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		c.Close()
		return 0
	case "net": // args: a host TCP address, a host UDP address; then a server of the box's own
		if c, err := net.DialTimeout("tcp", args[0], 2*time.Second); err == nil {
			fmt.Println("host tcp reached")
			c.Close()
		}
		if c, err := net.Dial("udp", args[1]); err == nil {
			c.Write([]byte("exfiltrated"))
			c.Close()
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		go func() {
			if c, err := l.Accept(); err == nil {
				c.Write([]byte("hi"))
				c.Close()
			}
		}()
		c, err := net.DialTimeout("tcp", l.Addr().String(), 2*time.Second)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		b := make([]byte, 2)
		if n, _ := c.Read(b); n == 2 {
			fmt.Println("own server answered")
		}
		return 0
	case "say": // args: address, line: sends the line and prints the answer
		c, err := net.DialTimeout("tcp", args[0], 5*time.Second)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		fmt.Fprintln(c, args[1])
		b, _ := io.ReadAll(c)
		fmt.Print(string(b))
		return 0
	case "tiocsti": // on a terminal of its own, made its controlling one: push a byte into its input
		m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0)
		n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		unix.Setsid()
		tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR, 0) // a session leader's first terminal: its controlling one
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		b := byte('X')
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, tty.Fd(), unix.TIOCSTI, uintptr(unsafe.Pointer(&b))); errno != 0 {
			fmt.Println("refused:", errno)
			return 3
		}
		fmt.Println("injected")
		return 0
	case "harden":
		before, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		if err := HardenSelf(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		after, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		fmt.Printf("dumpable %d then %d\n", before, after)
		return 0
	case "caller": // stands in for wo: starts args under the spec in $WO_SANDBOX_TEST_SPEC, then waits
		var spec Spec
		if err := json.Unmarshal([]byte(os.Getenv("WO_SANDBOX_TEST_SPEC")), &spec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		cmd, err := Command(spec, args)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		cmd.Env = withoutHelper(os.Environ())
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		fmt.Printf("launcher %d\n", cmd.Process.Pid)
		cmd.Wait()
		return 0
	}
	fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
	return 2
}

func withoutHelper(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, helperEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}
