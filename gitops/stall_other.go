//go:build !linux

package gitops

import "net"

// unsent is not known here: only reads and writes count as progress.
func unsent(net.Conn) (int, bool) { return 0, false }
