//go:build wofault

package sandbox

import "os"

// In test builds only (-tags wofault, as the integration tests build
// wo): WO_FAULT_NO_LANDLOCK=1 makes Status report a kernel without
// Landlock, and WO_FAULT_NO_USERNS=1 Namespaces a system that refuses
// user namespaces, so that the tests see what wo does on them.
func init() {
	if os.Getenv("WO_FAULT_NO_LANDLOCK") != "" {
		landlockABI = func() int { return 0 }
	}
	if os.Getenv("WO_FAULT_NO_USERNS") != "" {
		refuseNamespaces = func() bool { return true }
	}
}
