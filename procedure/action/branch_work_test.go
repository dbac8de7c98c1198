package action

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
)

// checkout_files run again on a branch that moved on: its result there
// already is nothing to do; a later commit that changed its files stops
// it, named, with nothing written; --discard-commits writes over it.
func TestCheckoutFilesRunAgainKeepsTheBranchsWork(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("checkout_files")
	h.must("checkout_files")
	h.must("commit")
	ours := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")

	out := h.must("checkout_files")
	if !strings.Contains(out.Note, "are on branch "+fixture.Branch+" at "+ours[:12]+" already: nothing to write") {
		t.Errorf("run again on wo's own commit: note %q", out.Note)
	}
	fixed := "package pkg\n\n// A is fixed.\nconst A = 1\n"
	fixture.WriteFile(t, filepath.Join(h.Worktree, "pkg/a.go"), fixed)
	gittest.Run(t, h.Worktree, "commit", "-q", "-am", "A review fix")
	fix := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")

	_, err := h.run("checkout_files")
	var waiting *WaitingError
	if !errors.As(err, &waiting) {
		t.Fatalf("err %v, want a wait", err)
	}
	for _, want := range []string{"step 3 (checkout_files) would undo work on branch " + fixture.Branch, `1 commit(s)`, fix[:12] + ` "A review fix" (pkg/a.go)`,
		"nothing was changed", "wo run " + fixture.Key + " --from-step 5", "wo undo " + fixture.Key, "--discard-commits"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the reason lacks %q:\n%s", want, err)
		}
	}
	if strings.Contains(err.Error(), ours[:12]) {
		t.Errorf("wo's own commit is named as work to lose:\n%s", err)
	}
	if got := fixture.ReadFile(t, filepath.Join(h.Worktree, "pkg/a.go")); got != fixed {
		t.Errorf("the fix was overwritten: %q", got)
	}
	h.settings().DiscardCommits = true
	h.must("checkout_files")
	if got := fixture.ReadFile(t, filepath.Join(h.Worktree, "pkg/a.go")); got == fixed {
		t.Error("--discard-commits did not write the step's files")
	}
	if discarded := h.logged("commits_discarded"); len(discarded) != 1 {
		t.Errorf("commits_discarded entries: %v", discarded)
	}
}

// A step that needs the worktree finds it gone (cleaned up, then a reset
// to a step after it was made): made again at the branch.
func TestAStepRemakesAWorktreeThatWasCleanedUp(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("checkout_files")
	h.must("checkout_files")
	h.must("commit")
	head := gittest.Run(t, h.Worktree, "rev-parse", "HEAD")
	gittest.Run(t, h.Repo, "worktree", "remove", "--force", h.Worktree)
	out := h.must("checkout_files")
	if !strings.HasPrefix(out.Note, "worktree "+h.Worktree+" made again at branch "+fixture.Branch+" ("+head[:12]+")") {
		t.Errorf("note %q", out.Note)
	}
	if got := gittest.Run(t, h.Worktree, "rev-parse", "HEAD"); got != head {
		t.Errorf("the worktree is at %s, want the branch's %s", got, head)
	}
	gittest.Run(t, h.Repo, "worktree", "remove", "--force", h.Worktree)
	gittest.Run(t, h.Repo, "branch", "-D", fixture.Branch)
	_, err := h.run("commit")
	fixture.ErrContains(t, err, "worktree "+h.Worktree+" does not exist: run the create_worktree step first (wo reset "+fixture.Key+" --to-step 0)")
}
