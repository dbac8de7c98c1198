package undo

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/workorder"
)

// undoLocalBranch deletes the task's local branch while it points at a
// commit this task's runs logged making, or where wo started it; a branch
// wo found existing, or one another task names or builds on, stays.
func undoLocalBranch(ctx context.Context, u *undo) (*workorder.UndoStep, error) {
	if u.st.Branch == "" && u.st.CommitSHA == "" && u.st.PushedSHA == "" {
		return nil, nil // wo never recorded switching to a branch or committing
	}
	branch := u.branch()
	if branch == "" {
		return nil, nil
	}
	out := &workorder.UndoStep{Step: "local_branch", Target: "branch " + branch}
	if why, err := u.foreignBranch(ctx); err != nil || why != "" {
		out.Outcome, out.Reason = Left, why
		return out, err
	}
	if why, err := u.stackedOn(ctx, branch); err != nil || why != "" {
		out.Outcome, out.Reason = Left, why
		return out, err
	}
	repo, err := u.sc.Repo()
	if err != nil {
		return nil, err
	}
	tip, ok, err := repo.BranchHash(branch)
	if err != nil {
		return nil, err
	}
	if !ok {
		out.Outcome, out.Reason = Gone, "there is no such branch"
		return out, nil
	}
	if why, err := u.adoptedBranch(ctx, branch, tip, fmt.Sprintf("git branch -f %s <start>", branch)); err != nil || why != "" {
		out.Outcome, out.Reason = Left, why
		return out, err
	}
	ours, err := u.madeByWo(ctx, branch, tip, true)
	if err != nil {
		return nil, err
	}
	if !ours {
		out.Outcome, out.Reason = Left, fmt.Sprintf("branch %s is at %s, which is not a commit this task's runs logged making: someone committed on it since, or it is not wo's, so wo keeps it; delete it yourself with git branch -D %s if it is not needed",
			branch, gitname.Short(tip.String()), branch)
		return out, nil
	}
	if u.dry {
		return u.wouldDeleteBranch(out, repo, branch, tip), nil
	}
	return u.deleteLocalBranch(out, repo, branch, tip)
}

// deleteLocalBranch deletes the branch while it is at tip and checked out
// nowhere.
func (u *undo) deleteLocalBranch(out *workorder.UndoStep, repo *gitops.Repo, branch string, tip plumbing.Hash) (*workorder.UndoStep, error) {
	deleted, err := repo.DeleteBranch(branch, []plumbing.Hash{tip})
	var moved *gitops.BranchMovedError
	var checkedOut *gitops.CheckedOutError
	switch {
	case errors.As(err, &moved):
		out.Outcome, out.Reason = Left, moved.Error()
	case errors.As(err, &checkedOut):
		out.Outcome, out.Reason = Left, checkedOut.Error()
		u.fixable = true
	case err != nil:
		return nil, err
	case deleted:
		out.Outcome, out.Reason = Done, fmt.Sprintf("deleted; it was at %s, which wo made", tip.String()[:12])
	default:
		out.Outcome, out.Reason = Gone, "there is no such branch"
	}
	return out, nil
}
