//go:build !linux

package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"
)

// Status says whether confinement is available here: never, without Linux.
func Status() (abi int, ok bool, why string) {
	return 0, false, "no Landlock on " + runtime.GOOS
}

// Command returns a command that runs argv directly, in its own process
// group where the system has them: there is neither confinement nor a
// launcher here, so processes the command leaves may outlive it. argv[0]
// is looked up in this process's PATH. A spec asking for confinement is
// refused.
func Command(spec Spec, argv []string) (*exec.Cmd, error) {
	spec, err := checkCommand(spec, argv)
	if err != nil {
		return nil, err
	}
	if spec.Confine {
		_, _, why := Status()
		return nil, fmt.Errorf("sandbox: cannot confine %s: %s", argv[0], why)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	ownGroup(cmd)
	return cmd, nil
}

// HardenSelf does nothing outside Linux.
func HardenSelf() error { return nil }

// Namespaces says no box can be built: without Linux there are none.
func Namespaces() (ok bool, why string) {
	return false, "no user namespaces on " + runtime.GOOS
}
