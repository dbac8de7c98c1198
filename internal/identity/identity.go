// Package identity names this runner, and tells whether the holder of a
// lease is a process of this host that no longer exists.
package identity

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
)

// Runner names this runner in leases and the activity log as
// user@host:pid, so that a lease left by a dead process on this host can be
// recognised and taken over at once.
func Runner() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	return fmt.Sprintf("%s@%s:%d", name, Host(), os.Getpid())
}

// Host is this machine's name, "localhost" when it has none.
func Host() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

// Gone reports whether a lease holder is a process on this host that
// no longer exists. Holders on other hosts, or in another form, are never
// called gone: their leases expire instead.
func Gone(holder string) bool {
	at := strings.LastIndexByte(holder, '@')
	colon := strings.LastIndexByte(holder, ':')
	if at < 0 || colon < at {
		return false
	}
	if holder[at+1:colon] != Host() {
		return false
	}
	pid, err := strconv.Atoi(holder[colon+1:])
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return false
	}
	return ProcessGone(pid)
}
