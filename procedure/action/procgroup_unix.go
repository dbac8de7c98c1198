//go:build unix

package action

import (
	"os/exec"
	"syscall"
)

// startInOwnGroup makes the agent the leader of a new process group, so
// that stopping it stops every process it started.
func startInOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup sends sig to every process of the group pgid (0: checks that
// one exists).
func killGroup(pgid int, sig syscall.Signal) error {
	return syscall.Kill(-pgid, sig)
}
