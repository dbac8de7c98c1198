//go:build linux

package action

import (
	"errors"
	"os/exec"

	"golang.org/x/sys/unix"
)

// waitLeader returns once the agent's process has exited, leaving it
// unreaped: until reap (cmd.Wait) is called its pid, which is its process
// group's id, cannot go to another process, so stopping the group's
// leftover children can never signal someone else's group.
func waitLeader(cmd *exec.Cmd) (reap func() error) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	return cmd.Wait
}
