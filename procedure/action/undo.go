package action

import (
	"context"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/workorder"
)

// Undoer is an action that makes something wo undo takes back: a pull
// request, a pushed branch, a worktree, a branch. Undoes lists what, each
// part with how. The engine's undo of a task asks its table's undoers
// newest first (the table is in procedure order, so the reverse of it),
// a part that must go before another (UndoPart.Before) going first, and
// records each part as it finishes, so that a rerun goes on where it
// stopped.
type Undoer interface {
	Undoes() []UndoPart
}

// UndoPart is one kind of thing an action makes that wo undo takes back.
type UndoPart struct {
	// Name is the part's step in the record of an undo; a rerun finds
	// what an earlier attempt did by it, so it stays once released.
	Name string
	// Before names parts (of other actions) to take back only after this
	// one: a worktree goes before the branch checked out in it.
	Before []string
	// Do looks at the world and takes the thing back, or, dry, says what
	// it would do; nil and no error when the task never made such a thing.
	Do func(ctx context.Context, u Undo, dry bool) (*workorder.UndoStep, error)
}

// What an undo part found and did.
const (
	UndoDone  = "undone" // wo took it back
	UndoGone  = "gone"   // nothing there to take back
	UndoLeft  = "left"   // wo may not take it back; the reason says why
	UndoWould = "would"  // a dry run: it would be taken back
)

// Undo is the engine's undo of one task as an UndoPart sees it: the task,
// the state as the undo found it, wo's pull request, and the checks that
// prove a thing this task's own (the facts of its activity log) and no
// other task's (the other work orders in the store). The engine
// implements it; every check is read once per undo.
type Undo interface {
	// StepContext is the task's context: its repository, worktree,
	// GitHub client and names, as its steps saw them.
	StepContext() *StepContext
	// Found is the task's state as the undo found it.
	Found() workorder.State
	// Comments says the undo deletes wo's comments too; Reason is what
	// the comment that closes the pull request says.
	Comments() bool
	Reason() string
	// PullRequest is wo's pull request, the recorded one or one a run
	// opened and did not record; nil when none. NotOurs is an open pull
	// request from the task's branch that is not wo's, with why;
	// FoundUnrecorded how an unrecorded one was proven wo's. Merged says
	// wo's pull request was merged.
	PullRequest(ctx context.Context) (*github.PR, error)
	NotOurs() (*github.PR, string)
	FoundUnrecorded() string
	Merged() bool
	// ConfirmClosed checks a pull request that reads as closed against the
	// list of open ones from its branch.
	ConfirmClosed(ctx context.Context, pr *github.PR) error
	// Branch is the task's branch: the recorded one, else the one it names.
	Branch() string
	// ProcedureMakes says the procedure has a step that may make things of
	// the kind; ProcedurePushesBranch one that publishes the branch;
	// StartedPushing that the task's runs pushed, or started a step that
	// pushes.
	ProcedureMakes(kind FactKind) bool
	ProcedurePushesBranch() bool
	StartedPushing(ctx context.Context) (bool, error)
	// The checks: each says why the thing stays, "" when it may go.
	ForeignPR(ctx context.Context) (string, error)
	ForeignBranch(ctx context.Context) (string, error)
	SharedBranch(ctx context.Context) (string, error)
	StackedOn(ctx context.Context, branch string) (string, error)
	WorktreeOfAnotherTask(ctx context.Context, path string) (string, error)
	WorktreeNotMade(ctx context.Context, w *gitops.Worktree) (string, error)
	AdoptedBranch(ctx context.Context, branch string, tip plumbing.Hash, reset string) (string, error)
	NotPushedByWo(ctx context.Context, branch, remote string, tip plumbing.Hash) (string, error)
	// PushedByWo says why the remote tip is wo's to delete, "" when it is
	// not; MadeByWo whether the commit is one the task's runs made (with
	// base, or where create_branch started the branch).
	PushedByWo(ctx context.Context, tip plumbing.Hash) (string, error)
	MadeByWo(ctx context.Context, branch string, tip plumbing.Hash, base bool) (bool, error)
	// Fixable says a part left something a person can deal with; the
	// undo then keeps the state until a rerun finishes. Removing is the
	// worktree a dry run would remove (WillRemove says so).
	Fixable()
	WillRemove(path string)
	Removing() string
	// Fault marks a point where tests may crash the undo.
	Fault(point string)
}

// UndoParts lists the table's undo parts in the order an undo takes them
// back: newest first, and each part before those it names in Before.
func (t Actions) UndoParts() []UndoPart {
	var parts []UndoPart
	for _, a := range slices.Backward(t) {
		if a.New == nil {
			continue
		}
		if u, ok := a.New().(Undoer); ok {
			parts = append(parts, u.Undoes()...)
		}
	}
	// A part that must go before an earlier one moves up to just before
	// it; the table is small and its constraints few. Constraints that
	// contradict each other (a before b before a) would move parts for
	// ever: the moves are bounded, and such a table keeps the order the
	// bound leaves.
	for moved, moves := true, 0; moved && moves < len(parts)*len(parts); moves++ {
		moved = false
		for i := range parts {
			j := slices.IndexFunc(parts[i+1:], func(p UndoPart) bool { return slices.Contains(p.Before, parts[i].Name) })
			if j < 0 {
				continue
			}
			j += i + 1
			p := parts[j]
			parts = slices.Insert(slices.Delete(parts, j, j+1), i, p)
			moved = true
			break
		}
	}
	return parts
}
