package gitops

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// unsent is how many bytes c has written that the remote has not taken
// yet (the socket's send queue).
func unsent(c net.Conn) (int, bool) {
	sc, ok := c.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return 0, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	n, qerr := 0, error(nil)
	if err := raw.Control(func(fd uintptr) { n, qerr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) }); err != nil || qerr != nil {
		return 0, false
	}
	return n, true
}
