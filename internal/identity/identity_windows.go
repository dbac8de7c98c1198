//go:build windows

package identity

import (
	"errors"

	"golang.org/x/sys/windows"
)

// ProcessGone reports whether no process has this pid: it cannot be opened
// because there is none, or it has exited. A process wo may not open (of
// another user) is not called gone.
func ProcessGone(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_INVALID_PARAMETER)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	const stillActive = 259
	return code != stillActive
}
