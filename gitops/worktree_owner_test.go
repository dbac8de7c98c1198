package gitops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
)

// Create names the task that made the worktree in its admin files, which
// git ignores and deletes with them; a worktree that git made has no name.
func TestCreateMarksTheWorktreeWithItsOwner(t *testing.T) {
	t.Parallel()
	repoPath, _ := fixtureRepo(t)
	r, err := Open(repoPath)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := r.Resolve("code-review-base")
	path := filepath.Join(t.TempDir(), "wt")
	w, _ := r.Worktree("wt", path)
	w.Owner = "task_cr_01"
	if err := w.Create(context.Background(), base, nil); err != nil {
		t.Fatal(err)
	}
	if owner, marked := w.CreatedFor(); !marked || owner != "task_cr_01" {
		t.Errorf("CreatedFor: %q, %v; want task_cr_01", owner, marked)
	}
	// A fresh description of the same worktree reads it back.
	again, _ := r.Worktree("wt", path)
	if owner, _ := again.CreatedFor(); owner != "task_cr_01" {
		t.Errorf("read back: %q", owner)
	}
	gittest.Run(t, repoPath, "fsck", "--strict", "--no-progress")
	if list := gittest.Run(t, repoPath, "worktree", "list", "--porcelain"); !strings.Contains(list, "worktree "+path) {
		t.Errorf("git does not list the marked worktree:\n%s", list)
	}
	gittest.Run(t, repoPath, "worktree", "remove", path)
	if _, err := os.Stat(w.AdminDir); !os.IsNotExist(err) {
		t.Errorf("git worktree remove left the admin files: %v", err)
	}

	// git's own worktree, and one whose marker is a link, are nobody's.
	theirs := filepath.Join(t.TempDir(), "theirs")
	gittest.Run(t, repoPath, "worktree", "add", "-q", "--detach", theirs, "code-review-base")
	g, _ := r.Worktree("theirs", theirs)
	if owner, marked := g.CreatedFor(); marked || owner != "" {
		t.Errorf("git's worktree: %q, %v; want no owner", owner, marked)
	}
	target := filepath.Join(t.TempDir(), "owner")
	write(t, target, "task_cr_01\n")
	if err := os.Symlink(target, filepath.Join(g.AdminDir, OwnerFile)); err != nil {
		t.Fatal(err)
	}
	if owner, marked := g.CreatedFor(); marked {
		t.Errorf("a marker that is a link counts: %q", owner)
	}
}
