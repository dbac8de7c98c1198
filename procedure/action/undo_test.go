package action

import (
	"context"
	"strings"
	"testing"

	"github.com/wo-runner/wo/workorder"
)

// undoesOnly is an action of a test's own that makes one thing undo takes
// back.
type undoesOnly struct{ part UndoPart }

func (undoesOnly) Run(context.Context, *StepContext) (Outcome, error) { return Outcome{}, nil }
func (a undoesOnly) Undoes() []UndoPart                               { return []UndoPart{a.part} }

func partNames(parts []UndoPart) string {
	var names []string
	for _, p := range parts {
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}

// Undo asks the table's undoers newest first (the table is in procedure
// order), and a part goes before the parts it names in Before: wo's
// comments and pull request go before the branch it is from, the worktree
// before the branch checked out in it.
func TestUndoPartsGoNewestFirstAndBeforeWhatTheyName(t *testing.T) {
	t.Parallel()
	if got, want := partNames(DefaultActions().UndoParts()), "comments,pull_request,remote_branch,worktree,local_branch"; got != want {
		t.Errorf("this build's undo parts: %s, want %s", got, want)
	}
	tagger := func(name string, before ...string) Spec {
		part := UndoPart{Name: name, Before: before, Do: func(context.Context, Undo, bool) (*workorder.UndoStep, error) { return nil, nil }}
		return Spec{Name: name, New: func() Action { return undoesOnly{part} }}
	}
	newest := append(DefaultActions(), tagger("tag"))
	if got, want := partNames(newest.UndoParts()), "tag,comments,pull_request,remote_branch,worktree,local_branch"; got != want {
		t.Errorf("with an action after the others: %s, want %s", got, want)
	}
	// An action early in the table whose part must go before a later
	// action's moves up to just before it; a part named by none stays.
	first := append(Actions{tagger("label", "pull_request"), tagger("note")}, DefaultActions()...)
	if got, want := partNames(first.UndoParts()), "comments,label,pull_request,remote_branch,worktree,local_branch,note"; got != want {
		t.Errorf("with an early part that goes before the pull request: %s, want %s", got, want)
	}
	// The pull request goes before its branch, and the comments before the
	// pull request, wherever the table puts their actions.
	var reordered Actions
	for _, a := range DefaultActions() {
		if a.Name != "push" {
			reordered = append(reordered, a)
		}
	}
	push, _ := DefaultActions().Lookup("push")
	reordered = append(reordered, push)
	if got, want := partNames(reordered.UndoParts()), "comments,pull_request,remote_branch,worktree,local_branch"; got != want {
		t.Errorf("with push after create_pr in the table: %s, want %s", got, want)
	}
	// Parts that name each other end in some order instead of moving for
	// ever.
	if got := partNames(Actions{tagger("a", "b"), tagger("b", "a")}.UndoParts()); got != "a,b" && got != "b,a" {
		t.Errorf("a cycle: %q", got)
	}
	// An action this build knows by name but cannot run makes nothing.
	if got := partNames(Actions{{Name: "unknown"}}.UndoParts()); got != "" {
		t.Errorf("a table of an action without a runner: %q", got)
	}
}
