package undo

import (
	"fmt"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/workorder"
)

// A dry run (Options.DryRun, wo undo --dry-run) asks every question an
// undo asks and changes nothing: it takes no lease, records nothing, and
// each part says what it would do (Would) where it would act. What one
// part would do changes what a later one would find, so the dry run
// carries it along: the worktree it would remove (wouldRemove), so that
// the branch checked out there would not stay checked out; and, in an
// epic's plan, the children it would reset whole (plannedUndone), so that
// none of theirs would still stack on this task's branch.

// wouldDeleteBranch is the local branch's step of a dry run: the branch
// would be deleted, unless it is checked out in a worktree the undo would
// not remove.
func (u *undo) wouldDeleteBranch(out *workorder.UndoStep, repo *gitops.Repo, branch string, tip plumbing.Hash) *workorder.UndoStep {
	if where, on := repo.CheckedOutAt(branch); on && where != u.wouldRemove {
		out.Outcome, out.Reason = Left, (&gitops.CheckedOutError{Branch: branch, Where: where}).Error()
		u.fixable = true
		return out
	}
	out.Outcome, out.Reason = Would, fmt.Sprintf("delete it: it is at %s, which wo made", tip.String()[:12])
	return out
}

// resets reports whether an undo (or its plan) resets the task's state,
// so that no task stacks on its branch afterwards.
func resets(u *Result) bool {
	return u != nil && (u.NothingToUndo || slices.ContainsFunc(u.Steps, func(s workorder.UndoStep) bool {
		return s.Step == stateStep && s.Outcome != Left
	}))
}
