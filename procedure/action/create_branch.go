package action

import (
	"context"
	"fmt"

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
