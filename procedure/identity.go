package procedure

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
)

// Identity names this runner in leases and the activity log as
// user@host:pid, so that a lease left by a dead process on this host can be
// recognised and taken over at once.
func Identity() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	return fmt.Sprintf("%s@%s:%d", name, hostname(), os.Getpid())
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

// HolderGone reports whether a lease holder is a process on this host that
// no longer exists. Holders on other hosts, or in another form, are never
// called gone: their leases expire instead.
func HolderGone(holder string) bool {
	at := strings.LastIndexByte(holder, '@')
	colon := strings.LastIndexByte(holder, ':')
	if at < 0 || colon < at {
		return false
	}
	if holder[at+1:colon] != hostname() {
		return false
	}
	pid, err := strconv.Atoi(holder[colon+1:])
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return false
	}
	return processGone(pid)
}
