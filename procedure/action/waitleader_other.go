//go:build !linux

package action

import "os/exec"

// waitLeader waits for the agent's process and reaps it: outside Linux
// there is no waiting without reaping, and the group is stopped just
// after, as close as wo can.
func waitLeader(cmd *exec.Cmd) (reap func() error) {
	err := cmd.Wait()
	return func() error { return err }
}
