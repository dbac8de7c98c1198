package action

import (
	"context"
	"fmt"

	"github.com/wo-runner/wo/gitops"
)

// CleanupWorktree removes the worktree and its admin files; the branch
// stays.
type CleanupWorktree struct{}

func newCleanupWorktree() Action { return CleanupWorktree{} }

// Run removes the worktree; one that is gone already is fine.
func (CleanupWorktree) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	w, err := sc.Worktree()
	if err != nil {
		return Outcome{}, err
	}
	if err := CheckRemove(sc, w); err != nil {
		return Outcome{}, err
	}
	if err := w.Remove(); err != nil {
		return Outcome{}, err
	}
	sc.Fault("after_remove")
	note := fmt.Sprintf("worktree %s removed", w.Path)
	if err := removeTaskCaches(sc.Getenv, sc.Key()); err != nil {
		sc.Warn("the agent's build caches of task %s were not all removed: %v", sc.Key(), err)
	}
	st := sc.State()
	st.WorktreePath = nil
	return Outcome{Note: note, State: &st}, nil
}

// Check refuses, before anything changes, to remove what is not provably
// this task's worktree: a folder of the user's at its path, another
// task's worktree of the same name, a worktree on another branch.
func (CleanupWorktree) Check(ctx context.Context, sc *StepContext) error {
	w, err := sc.Worktree()
	if err != nil {
		return err
	}
	return CheckRemove(sc, w)
}

// CheckRemove expects the worktree on the task's branch, or on a detached
// HEAD while no create_branch step has switched it.
func CheckRemove(sc *StepContext, w *gitops.Worktree) error {
	branch := sc.State().Branch // what create_branch switched to
	if branch == "" {
		branch = sc.BranchName()
	}
	return w.CheckRemove(branch, sc.State().Branch == "")
}

// Plan names the worktree.
func (CleanupWorktree) Plan(sc *StepContext) string {
	w, err := sc.Worktree()
	if err != nil {
		return "cannot plan: " + err.Error()
	}
	return fmt.Sprintf("remove worktree %s (refused if it has uncommitted changes); keep the branch", w.Path)
}
