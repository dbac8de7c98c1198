package undo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/workorder"
)

// undoWorktree removes the task's worktree when wo can prove it made it
// (its admin files carry this task's mark, or the log records making it),
// with the ownership checks of cleanup_worktree; one with changes not
// committed stays until the person deals with them.
func undoWorktree(ctx context.Context, u *undo) (*workorder.UndoStep, error) {
	if !u.procedureMakes(action.FactWorktree) {
		return nil, nil
	}
	if _, err := u.sc.Repo(); err != nil {
		return nil, err
	}
	// The repository opens, so what Worktree refuses is the document's
	// word for where the worktree is (outside worktree_root, an odd
	// name): wo never made a worktree there, so it leaves whatever is.
	w, err := u.sc.Worktree()
	if err != nil {
		out := &workorder.UndoStep{Step: "worktree", Target: "worktree " + cmp.Or(deref(u.st.WorktreePath), u.st.WorktreeName), Outcome: Left,
			Reason: err.Error() + "; wo removes only a worktree it could have made, so it leaves what is there; remove it yourself if it is stale"}
		return out, nil
	}
	out := &workorder.UndoStep{Step: "worktree", Target: "worktree " + w.Path}
	if !exists(w.Path) && !exists(w.AdminDir) && !exists(w.Path+".wo-removing") {
		out.Outcome, out.Reason = Gone, "nothing is there"
		return out, nil
	}
	if why, err := u.worktreeStays(ctx, w); err != nil || why != "" {
		out.Outcome, out.Reason = Left, why
		return out, err
	}
	if w.Complete() {
		changed, err := w.Changes()
		if err != nil {
			return nil, err
		}
		if len(changed) > 0 {
			out.Outcome, out.Reason = Left, fmt.Sprintf("it has changes that are not committed (%s): commit or discard them, or remove it yourself with git worktree remove --force %s; then run wo undo %s again",
				strings.Join(changed[:min(len(changed), 5)], ", "), w.Path, u.sc.Key())
			u.fixable = true
			return out, nil
		}
	}
	if u.dry {
		out.Outcome, out.Reason = Would, "remove it"
		u.wouldRemove = w.Path
		return out, nil
	}
	if err := w.Remove(); err != nil {
		return nil, err
	}
	u.ed.Fault("undo:worktree:after_remove")
	out.Outcome, out.Reason = Done, "removed"
	return out, nil
}

// worktreeStays says why the worktree is not provably this task's, ""
// when it is.
func (u *undo) worktreeStays(ctx context.Context, w *gitops.Worktree) (string, error) {
	// A worktree on a branch that may be another task's, or that another
	// task records, may be that task's, running in it now.
	if why, err := u.sharedBranch(ctx); err != nil || why != "" {
		return why, err
	}
	other, err := u.worktreeOfAnotherTask(ctx, w.Path)
	if err != nil || other != "" {
		return fmt.Sprintf("task %s records this worktree as its own, so wo keeps it", other), err
	}
	if why, err := u.worktreeNotMade(ctx, w); err != nil || why != "" {
		return why, err
	}
	// The checks of cleanup_worktree: only a worktree provably this
	// task's, on its branch.
	var notOwned *gitops.NotOwnedError
	if err := action.CheckRemove(u.sc, w); errors.As(err, &notOwned) {
		return notOwned.Error(), nil
	} else if err != nil {
		return "", err
	}
	return "", nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
