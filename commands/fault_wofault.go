//go:build wofault

package commands

import (
	"os"
	"syscall"
)

// In test builds only: WO_FAULT=POINT kills this process with SIGKILL when
// the run reaches POINT (for example commit:after_commit), as a crash would.
func init() {
	want := os.Getenv("WO_FAULT")
	if want == "" {
		return
	}
	faultHook = func(point string) {
		if point == want {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // never returns
		}
	}
}
