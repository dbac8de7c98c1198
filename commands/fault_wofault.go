//go:build wofault

package commands

import (
	"os"
	"strings"
	"syscall"
	"time"
)

// In test builds only:
//   - WO_FAULT=POINT kills this process with SIGKILL when the run reaches
//     POINT (for example commit:after_commit), as a crash would;
//   - WO_FAULT_PAUSE=POINT=DURATION sleeps there, to hold a lease while
//     another runner tries; with WO_FAULT_SIGNAL=FILE it first creates
//     FILE, so a test knows the pause began and can act inside it.
func init() {
	crashAt := os.Getenv("WO_FAULT")
	pauseAt, pauseFor := "", time.Duration(0)
	if p := os.Getenv("WO_FAULT_PAUSE"); p != "" {
		if i := strings.LastIndexByte(p, '='); i > 0 {
			pauseAt = p[:i]
			pauseFor, _ = time.ParseDuration(p[i+1:])
		}
	}
	signal := os.Getenv("WO_FAULT_SIGNAL")
	if crashAt == "" && pauseAt == "" {
		return
	}
	faultHook = func(point string) {
		if point == pauseAt {
			if signal != "" {
				os.WriteFile(signal, []byte(point+"\n"), 0o600)
			}
			time.Sleep(pauseFor)
		}
		if point == crashAt {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // never returns
		}
	}
}
