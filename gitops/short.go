package gitops

import "github.com/wo-runner/wo/internal/gitname"

// Short is gitname.Short, kept for the callers not yet moved to it, in
// files other work is changing at the same time: commands/status.go,
// procedure's restack.go, undo.go, undo_provenance.go and github_event.go,
// and procedure/action's push.go and create_pr.go. New code calls
// gitname.Short; once those land, this goes.
//
// Deprecated: use gitname.Short.
func Short(sha string) string { return gitname.Short(sha) }
