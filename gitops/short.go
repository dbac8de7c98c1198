package gitops

import "github.com/wo-runner/wo/internal/gitname"

// Short is gitname.Short, kept for the callers not yet moved to it
// (commands/status.go and procedure's restack, undo and GitHub-event code,
// which other work is changing at the same time). New code calls gitname.Short.
//
// Deprecated: use gitname.Short.
func Short(sha string) string { return gitname.Short(sha) }
