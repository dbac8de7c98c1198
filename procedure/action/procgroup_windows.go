//go:build windows

package action

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/wo-runner/wo/internal/identity"
)

// Windows has no process groups that a signal reaches. The agent is
// started in a new console process group, and stopping it terminates the
// agent's own process at once (there is no SIGTERM to ask it first); the
// processes it started itself may outlive it. Agents on Windows should
// therefore not leave children running.

func startInOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// killGroup terminates the agent process pid for any signal but 0, which
// checks that it still exists; syscall.ESRCH says it does not.
func killGroup(pid int, sig syscall.Signal) error {
	if identity.ProcessGone(pid) {
		return syscall.ESRCH
	}
	if sig == 0 {
		return nil
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return syscall.ESRCH
	}
	defer p.Release()
	return p.Kill()
}
