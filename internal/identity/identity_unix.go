//go:build unix

package identity

import "syscall"

// processGone reports whether no process has this pid. Signal 0 checks
// existence; EPERM means it exists under another user.
func processGone(pid int) bool {
	return syscall.Kill(pid, 0) == syscall.ESRCH
}
