package action

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gitname"
	"github.com/wo-runner/wo/workorder"
)

// CreateWorktree makes the work order's linked worktree at the base branch.
type CreateWorktree struct{}

func newCreateWorktree() Action { return CreateWorktree{} }

// Run creates the worktree, or finds it complete from an earlier run.
func (CreateWorktree) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	repo, err := sc.Repo()
	if err != nil {
		return Outcome{}, err
	}
	w, err := sc.Worktree()
	if err != nil {
		return Outcome{}, err
	}
	if branch := sc.BranchName(); branch != "" {
		if where, ok := repo.CheckedOutAt(branch); ok && where != w.Path {
			return Outcome{}, fmt.Errorf("creating worktree %s: branch %s is already checked out at %s; remove that worktree or choose another branch_name", w.Name, branch, where)
		}
	}
	ref, what := baseRef(sc)
	base, err := recordedCommit(ctx, sc, baseSHA, ref, what)
	if err != nil {
		return Outcome{}, err
	}
	start := base
	if branch := sc.BranchName(); branch != "" {
		if start, err = repo.StartPoint(branch, base); err != nil {
			return Outcome{}, err
		}
	}
	sc.Fault("before_create")
	// A complete worktree is left as it is, with no mark of wo's: it is
	// someone's (a person's git worktree add), or wo's from an attempt that
	// stopped before logging this step, which its mark already proves.
	owner, marked := w.CreatedFor()
	found := w.Complete() && (!marked || owner != sc.Key())
	w.Owner = sc.Key() // what wo undo takes as proof that this task made it
	err = w.Create(ctx, start, func(done, total int) {
		sc.Progress(done, total)
		if done == total {
			sc.Fault("files_written")
		}
	})
	if err != nil {
		return Outcome{}, fmt.Errorf("creating worktree %s: %w", w.Path, err)
	}
	from := fmt.Sprintf("%s (%s)", sc.BaseBranch(), base.String()[:12])
	if start != base {
		from = fmt.Sprintf("the existing branch %s (%s)", sc.BranchName(), start.String()[:12])
	}
	note, facts := fmt.Sprintf("worktree %s created from %s", w.Path, from), []Fact{{Kind: FactWorktree, Path: w.Path}}
	if found {
		note, facts = fmt.Sprintf("found worktree %s already there, at %s: wo did not create it", w.Path, from), nil
	}
	if start != base {
		facts = append(facts, Fact{Kind: FactAdopted, Branch: sc.BranchName(), SHA: start.String()})
	}
	st := sc.State()
	st.WorktreePath, st.WorktreeName = &w.Path, w.Name
	return Outcome{Note: note, Facts: facts, State: &st}, nil
}

// Check makes sure the repository, the base branch and the worktree path
// are usable before anything changes.
func (CreateWorktree) Check(ctx context.Context, sc *StepContext) error {
	repo, err := sc.Repo()
	if err != nil {
		return err
	}
	if !plumbing.IsHash(sc.State().BaseSHA) {
		if err := checkBase(sc, repo); err != nil {
			return err
		}
	}
	// A crafted base tree is refused now, before anything is created.
	ref, _ := baseRef(sc)
	if s := sc.State().BaseSHA; plumbing.IsHash(s) {
		ref = s
	}
	if h, err := repo.Resolve(ref); err == nil {
		if err := repo.CheckCommitTree(h); err != nil {
			return err
		}
	}
	w, err := sc.Worktree()
	if err != nil {
		return err
	}
	if branch := sc.BranchName(); branch != "" {
		if where, ok := repo.CheckedOutAt(branch); ok && where != w.Path {
			return fmt.Errorf("branch %s is already checked out at %s", branch, where)
		}
	}
	return w.CheckFree()
}

// Plan says where the worktree would go.
func (CreateWorktree) Plan(sc *StepContext) string {
	w, err := sc.Worktree()
	if err != nil {
		return "cannot plan: " + err.Error()
	}
	if w.Complete() {
		return fmt.Sprintf("worktree %s exists: nothing to do", w.Path)
	}
	return fmt.Sprintf("create linked worktree %s (admin files %s) at %s", w.Path, w.AdminDir, sc.BaseBranch())
}

// baseRef is where the worktree starts: context.base_commit when the
// document pins one, else the base branch.
func baseRef(sc *StepContext) (ref, what string) {
	if c := sc.Context("base_commit"); c != "" {
		return c, "base_commit"
	}
	return sc.BaseBranch(), "base_branch"
}

// checkBase makes sure the base resolves and that a pinned base_commit is
// on the base branch: a commit from elsewhere would make a pull request
// against the base carry changes nobody asked to review.
func checkBase(sc *StepContext, repo *gitops.Repo) error {
	branch := sc.BaseBranch()
	tip, err := repo.Resolve(branch)
	if err != nil {
		return fmt.Errorf("context.base_branch: %w", err)
	}
	pinned := sc.Context("base_commit")
	if pinned == "" {
		return nil
	}
	h, err := repo.Resolve(pinned)
	if err != nil {
		return fmt.Errorf("context.base_commit %s does not exist in %s: fetch it, or correct base_commit", pinned, repo.Path)
	}
	c, err := repo.Commit(h)
	if err != nil {
		return err
	}
	t, err := repo.Commit(tip)
	if err != nil {
		return err
	}
	if h != tip {
		if ok, err := c.IsAncestor(t); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("context.base_commit %s is not on the base branch %s (at %s): the pull request would carry changes from elsewhere; pin a commit of %s, or change base_branch",
				gitname.Short(pinned), branch, gitname.Short(tip.String()), branch)
		}
	}
	return nil
}

// recordedCommit resolves a branch to a commit once and keeps the answer in
// state, so that a resumed run uses the same commit even if the branch has
// moved since.
func recordedCommit(ctx context.Context, sc *StepContext, field func(*workorder.State) *string, ref, what string) (plumbing.Hash, error) {
	st := sc.State()
	if s := *field(&st); plumbing.IsHash(s) {
		return plumbing.NewHash(s), nil
	}
	if ref == "" {
		return plumbing.ZeroHash, fmt.Errorf("task %s: work_order.context.%s is not set", sc.Key(), what)
	}
	repo, err := sc.Repo()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := repo.Resolve(ref)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("context.%s: %w", what, err)
	}
	rec := sc.State()
	*field(&rec) = h.String()
	if err := sc.Checkpoint(ctx, rec); err != nil {
		return plumbing.ZeroHash, err
	}
	sc.Fault("after_checkpoint")
	return h, nil
}

// The commits a run resolves once: the base a worktree starts from, the
// source files are checked out from.
func baseSHA(s *workorder.State) *string   { return &s.BaseSHA }
func sourceSHA(s *workorder.State) *string { return &s.SourceSHA }
