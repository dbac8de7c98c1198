package procedure

import (
	"path/filepath"
	"strings"
	"testing"
)

// advanceBase puts a new commit on the base branch and returns the commit
// it was at before.
func advanceBase(t *testing.T, h *stepHarness) (old, tip string) {
	t.Helper()
	old = gitIn(t, h.Repo, "rev-parse", fixBase)
	tree := gitIn(t, h.Repo, "rev-parse", fixBase+"^{tree}")
	tip = gitIn(t, h.Repo, "commit-tree", tree, "-p", old, "-m", "later on the base")
	gitIn(t, h.Repo, "update-ref", "refs/heads/"+fixBase, tip)
	return old, tip
}

func TestWorktreeStartsAtThePinnedBaseCommit(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	old, tip := advanceBase(t, h)
	h.r.task.WorkOrder.Context["base_commit"] = old
	if err := h.check("create_worktree"); err != nil {
		t.Fatalf("a base_commit on the base branch: %v", err)
	}
	h.must("create_worktree")
	if got := gitIn(t, h.Worktree, "rev-parse", "HEAD"); got != old {
		t.Errorf("the worktree starts at %s, want the pinned %s (the base is at %s)", got, old, tip)
	}
	if got := h.stored().BaseSHA; got != old {
		t.Errorf("recorded base_sha %s, want the pinned %s", got, old)
	}
}

func TestAPinnedBaseCommitMustExistAndBeOnTheBase(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.r.task.WorkOrder.Context["base_commit"] = "0123456789abcdef0123456789abcdef01234567"
	errContains(t, h.check("create_worktree"), "context.base_commit 0123456789abcdef0123456789abcdef01234567 does not exist")
	source := gitIn(t, h.Repo, "rev-parse", fixSource)
	h.r.task.WorkOrder.Context["base_commit"] = source
	errContains(t, h.check("create_worktree"), "is not on the base branch "+fixBase, "pin a commit of "+fixBase)
	if list := worktreeList(t, h.Repo); len(list) != 1 {
		t.Errorf("a refused check created a worktree: %v", list)
	}
}

func TestTheWorktreeIsWhereTheDocumentsCommandSays(t *testing.T) {
	steps := seedSteps()
	steps[0].(map[string]any)["command"] = "git worktree add <worktree_root>/pr-07-named <base_branch>"
	h := newStepContext(t, stepOpts{Inputs: map[string]any{"worktree_name": nil}, Procedure: steps})
	h.must("create_worktree")
	want := filepath.Join(h.WtRoot, "pr-07-named")
	if _, ok := worktreeList(t, h.Repo)[want]; !ok {
		t.Errorf("git worktree list %v has no %s, the path the document's command names", worktreeList(t, h.Repo), want)
	}
	// The dry run names the same place for the cleanup.
	if got := h.plan("cleanup_worktree"); !strings.Contains(got, want) {
		t.Errorf("cleanup plan %q does not name %s", got, want)
	}
}
