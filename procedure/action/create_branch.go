package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/workorder"
)

// CreateBranch puts the worktree on inputs.branch_name, creating the
// branch at the worktree's commit.
type CreateBranch struct{}

func newCreateBranch() Action { return CreateBranch{} }

// Run creates or reuses the branch.
func (CreateBranch) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	branch, err := sc.Branch()
	if err != nil {
		return Outcome{}, err
	}
	w, err := sc.Worktree()
	if err != nil {
		return Outcome{}, err
	}
	if !w.Complete() {
		return Outcome{}, fmt.Errorf("worktree %s does not exist: run the create_worktree step first (wo reset %s --to-step 0)", w.Path, sc.Key())
	}
	sc.Fault("before_switch")
	tip, err := w.SwitchBranch(branch)
	if err != nil {
		return Outcome{}, err
	}
	st := sc.State()
	st.Branch = branch
	return Outcome{
		Note:  fmt.Sprintf("on branch %s at %s", branch, tip.String()[:12]),
		Facts: []Fact{{Kind: FactBranch, Branch: branch, SHA: tip.String()}},
		State: &st,
	}, nil
}

// Check refuses a name git would not take for a branch, the base or the
// source branch (the change would go onto them unreviewed), and a branch
// that another worktree has checked out.
func (CreateBranch) Check(ctx context.Context, sc *StepContext) error {
	branch, err := sc.Branch()
	if err != nil {
		return inDocument(err)
	}
	if err := workorder.CheckRefName(branch); err != nil {
		return inDocument(err)
	}
	if err := workorder.CheckBranchName(branch); err != nil {
		return inDocument(err)
	}
	if err := workorder.CheckWorkBranch(branch, sc.BaseBranch(), sc.Context("source_branch"), sc.Remote()); err != nil {
		return inDocument(err)
	}
	repo, err := sc.Repo()
	if err != nil {
		return err
	}
	w, err := sc.Worktree()
	if err != nil {
		return err
	}
	if where, ok := repo.CheckedOutAt(branch); ok && where != w.Path {
		return fmt.Errorf("branch %s is already checked out at %s", branch, where)
	}
	return nil
}

// Plan names the branch.
func (CreateBranch) Plan(sc *StepContext) string {
	return fmt.Sprintf("create branch %s in the worktree and switch to it", sc.BranchName())
}

func undoLocalBranch(ctx context.Context, u Undo, dry bool) (*workorder.UndoStep, error) {
	if u.Found().Branch == "" && u.Found().CommitSHA == "" && u.Found().PushedSHA == "" {
		return nil, nil // wo never recorded switching to a branch or committing
	}
	branch := u.Branch()
	if branch == "" {
		return nil, nil
	}
	out := &workorder.UndoStep{Step: "local_branch", Target: "branch " + branch}
	if why, err := u.ForeignBranch(ctx); err != nil || why != "" {
		out.Outcome, out.Reason = UndoLeft, why
		return out, err
	}
	if why, err := u.StackedOn(ctx, branch); err != nil || why != "" {
		out.Outcome, out.Reason = UndoLeft, why
		return out, err
	}
	repo, err := u.StepContext().Repo()
	if err != nil {
		return nil, err
	}
	tip, ok, err := repo.BranchHash(branch)
	if err != nil {
		return nil, err
	}
	if !ok {
		out.Outcome, out.Reason = UndoGone, "there is no such branch"
		return out, nil
	}
	if why, err := u.AdoptedBranch(ctx, branch, tip, fmt.Sprintf("git branch -f %s <start>", branch)); err != nil || why != "" {
		out.Outcome, out.Reason = UndoLeft, why
		return out, err
	}
	ours, err := u.MadeByWo(ctx, branch, tip, true)
	if err != nil {
		return nil, err
	}
	if !ours {
		out.Outcome, out.Reason = UndoLeft, fmt.Sprintf("branch %s is at %s, which is not a commit this task's runs logged making: someone committed on it since, or it is not wo's, so wo keeps it; delete it yourself with git branch -D %s if it is not needed",
			branch, gitname.Short(tip.String()), branch)
		return out, nil
	}
	if dry {
		if where, on := repo.CheckedOutAt(branch); on && where != u.Removing() {
			out.Outcome, out.Reason = UndoLeft, (&gitops.CheckedOutError{Branch: branch, Where: where}).Error()
			u.Fixable()
			return out, nil
		}
		out.Outcome, out.Reason = UndoWould, fmt.Sprintf("delete it: it is at %s, which wo made", tip.String()[:12])
		return out, nil
	}
	deleted, err := repo.DeleteBranch(branch, []plumbing.Hash{tip})
	var moved *gitops.BranchMovedError
	var checkedOut *gitops.CheckedOutError
	switch {
	case errors.As(err, &moved):
		out.Outcome, out.Reason = UndoLeft, moved.Error()
	case errors.As(err, &checkedOut):
		out.Outcome, out.Reason = UndoLeft, checkedOut.Error()
		u.Fixable()
	case err != nil:
		return nil, err
	case deleted:
		out.Outcome, out.Reason = UndoDone, fmt.Sprintf("deleted; it was at %s, which wo made", tip.String()[:12])
	default:
		out.Outcome, out.Reason = UndoGone, "there is no such branch"
	}
	return out, nil
}

// Undoes: the local branch, while it points at a commit wo made.
func (CreateBranch) Undoes() []UndoPart {
	return []UndoPart{{Name: "local_branch", Do: undoLocalBranch}}
}
