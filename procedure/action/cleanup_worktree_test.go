package action

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
)

func TestWorktreeCleanupRemovesTheWorktreeAndKeepsTheBranch(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("push")
	tip := gittest.Run(t, h.Repo, "rev-parse", fixture.Branch)
	out, err := h.run("cleanup_worktree")
	if err != nil {
		t.Fatal(err)
	}
	if list := fixture.Worktrees(t, h.Repo); len(list) != 1 {
		t.Errorf("git worktree list after the cleanup: %v", list)
	}
	if _, err := os.Stat(h.Worktree); !os.IsNotExist(err) {
		t.Errorf("the worktree directory is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.Repo, ".git", "worktrees", fixture.Worktree)); !os.IsNotExist(err) {
		t.Errorf("the admin files are still there: %v", err)
	}
	if got := gittest.Run(t, h.Repo, "rev-parse", fixture.Branch); got != tip {
		t.Errorf("the branch moved or went: %s, want %s", got, tip)
	}
	if want := "worktree " + h.Worktree + " removed"; out.Note != want {
		t.Errorf("note %q, want %q", out.Note, want)
	}
	if st := h.recorded(out); st.WorktreePath != nil {
		t.Errorf("worktree_path still recorded: %s", *st.WorktreePath)
	}
	if got := gittest.Run(t, h.Repo, "worktree", "prune", "--dry-run", "-v"); got != "" {
		t.Errorf("git would still prune: %s", got)
	}

	// Again, after a crash: the worktree is gone, which is fine.
	again, err := h.run("cleanup_worktree")
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if again.Note != out.Note {
		t.Errorf("rerun says %q", again.Note)
	}
}

func TestWorktreeCleanupRefusesUncommittedChanges(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("push")
	fixture.WriteFile(t, filepath.Join(h.Worktree, "pkg/a.go"), "package pkg // unsaved work\n")
	_, err := h.run("cleanup_worktree")
	fixture.ErrContains(t, err, "worktree "+h.Worktree+" has changes that are not committed (pkg/a.go)",
		"git worktree remove --force "+h.Worktree)
	if got := fixture.ReadFile(t, filepath.Join(h.Worktree, "pkg/a.go")); got != "package pkg // unsaved work\n" {
		t.Errorf("the change was lost: %q", got)
	}
	if list := fixture.Worktrees(t, h.Repo); len(list) != 2 {
		t.Errorf("git worktree list: %v", list)
	}
}

func TestWorktreeCleanupPlan(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	if got, want := h.plan("cleanup_worktree"), "remove worktree "+h.Worktree+" (refused if it has uncommitted changes); keep the branch"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	bad := newStepContext(t, stepOpts{Inputs: map[string]any{"worktree_name": ".."}, Invalid: true})
	if got := bad.plan("cleanup_worktree"); got != `cannot plan: worktree name "..": use a single path component such as pr-01-foundation` {
		t.Errorf("plan %q", got)
	}
	if _, err := bad.run("cleanup_worktree"); err == nil {
		t.Error("cleanup with a bad worktree name succeeded")
	}
}
