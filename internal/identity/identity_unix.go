//go:build unix

package identity

import "syscall"

// ProcessGone reports whether no process has this pid. Signal 0 checks
// existence; EPERM means it exists under another user.
func ProcessGone(pid int) bool {
	return syscall.Kill(pid, 0) == syscall.ESRCH
}
