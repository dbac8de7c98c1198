package gitops

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/internal/gittest"
)

// FetchBranch brings the remote's tip of a branch another clone moved into
// its remote-tracking branch, and names a branch the remote lacks.
func TestFetchBranchBringsTheRemoteTip(t *testing.T) {
	t.Parallel()
	repoPath, origin := fixtureRepo(t)
	other := filepath.Join(t.TempDir(), "other")
	gittest.Run(t, filepath.Dir(other), "clone", "-q", "-b", "code-review-base", origin, other)
	write(t, filepath.Join(other, "moved.txt"), "someone else's push\n")
	gittest.Run(t, other, "add", "-A")
	gittest.Run(t, other, "commit", "-q", "-m", "moved")
	gittest.Run(t, other, "push", "-q", "origin", "code-review-base")
	want := gittest.Run(t, origin, "rev-parse", "refs/heads/code-review-base")

	r, err := Open(repoPath)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.FetchBranch(context.Background(), RemoteOptions{Branch: "code-review-base"})
	if err != nil || got.String() != want {
		t.Fatalf("fetched %s, %v; the remote is at %s", got, err, want)
	}
	if tracking := gittest.Run(t, repoPath, "rev-parse", "refs/remotes/origin/code-review-base"); tracking != want {
		t.Errorf("origin/code-review-base is at %s, want %s", tracking, want)
	}
	if _, err := r.FetchBranch(context.Background(), RemoteOptions{Branch: "no-such-branch"}); err == nil ||
		!strings.Contains(err.Error(), "fetching branch no-such-branch on "+origin+": ") {
		t.Errorf("a branch the remote lacks: %v", err)
	}
	if _, err := r.FetchBranch(context.Background(), RemoteOptions{Remote: "upstream", Branch: "main"}); err == nil || !strings.Contains(err.Error(), `no remote "upstream"`) {
		t.Errorf("a remote the repository lacks: %v", err)
	}
}

// stackRepo is a repository whose base commit holds a.txt, b.txt and
// c.txt, a parent branch that changes a.txt, and a child branch on it
// that changes b.txt, deletes c.txt and adds d.txt.
func stackRepo(t *testing.T) (r *Repo, dir string, base, parent, child plumbing.Hash) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "repo")
	gittest.Run(t, filepath.Dir(dir), "init", "-q", "-b", "base", dir)
	commit := func(msg string) plumbing.Hash {
		gittest.Run(t, dir, "add", "-A")
		gittest.Run(t, dir, "commit", "-q", "-m", msg)
		return plumbing.NewHash(gittest.Run(t, dir, "rev-parse", "HEAD"))
	}
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	write(t, filepath.Join(dir, "b.txt"), "b\n")
	write(t, filepath.Join(dir, "c.txt"), "c\n")
	base = commit("base")
	gittest.Run(t, dir, "checkout", "-q", "-b", "parent")
	write(t, filepath.Join(dir, "a.txt"), "a, the parent's\n")
	parent = commit("parent")
	gittest.Run(t, dir, "checkout", "-q", "-b", "child")
	write(t, filepath.Join(dir, "b.txt"), "b, the child's\n")
	gittest.Run(t, dir, "rm", "-q", "c.txt")
	write(t, filepath.Join(dir, "d.txt"), "d, the child's\n")
	child = commit("child")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, dir, base, parent, child
}

// onBase commits the files on a new branch from the base commit: the
// parent squash-merged, and what else the base gained.
func onBase(t *testing.T, dir, branch string, files map[string]string) plumbing.Hash {
	t.Helper()
	gittest.Run(t, dir, "checkout", "-q", "-b", branch, "base")
	for name, content := range files {
		write(t, filepath.Join(dir, name), content)
	}
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-q", "-m", branch)
	return plumbing.NewHash(gittest.Run(t, dir, "rev-parse", "HEAD"))
}

// A child branch rebuilt on its parent squash-merged is its own change on
// the new parent, with no phantom conflict on the parent's files; a file
// the new parent changed otherwise is a conflict, and no commit is made.
func TestRebuildMovesABranchsOwnChangeOntoANewParent(t *testing.T) {
	t.Parallel()
	r, dir, _, parent, child := stackRepo(t)
	squashed := onBase(t, dir, "squashed", map[string]string{"a.txt": "a, the parent's\n", "e.txt": "another change to the base\n"})
	sig := Signature{Name: "Wo Test", Email: "wo@example.com"}
	res, err := r.Rebuild(RebuildOptions{Head: child, OldParent: parent, NewParent: squashed, Message: "child, rebuilt", Author: sig, When: time.Now()})
	if err != nil || res.Unchanged || len(res.Conflicts) > 0 {
		t.Fatalf("rebuild: %+v %v", res, err)
	}
	h := res.Hash.String()
	if got := gittest.Run(t, dir, "rev-parse", h+"^"); got != squashed.String() {
		t.Errorf("the rebuilt commit's parent is %s, want %s", got, squashed)
	}
	if got := gittest.Run(t, dir, "diff", "--name-status", squashed.String(), h); got != "M\tb.txt\nD\tc.txt\nA\td.txt" {
		t.Errorf("the rebuilt commit changes\n%s\nwant the child's own change only", got)
	}
	if got := gittest.Run(t, dir, "diff", child.String(), h, "--", "a.txt", "b.txt", "c.txt", "d.txt"); got != "" {
		t.Errorf("the rebuilt files differ from the child's:\n%s", got)
	}
	if got := gittest.Run(t, dir, "log", "-1", "--format=%an <%ae> %s", h); got != "Wo Test <wo@example.com> child, rebuilt" {
		t.Errorf("the rebuilt commit is %q", got)
	}

	// A submodule of the new parent stays in the rebuilt tree.
	gittest.Run(t, dir, "checkout", "-q", "squashed")
	gittest.Run(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+parent.String()+",vendor/sub")
	gittest.Run(t, dir, "commit", "-q", "-m", "a submodule")
	withSub := plumbing.NewHash(gittest.Run(t, dir, "rev-parse", "HEAD"))
	sub, err := r.Rebuild(RebuildOptions{Head: child, OldParent: parent, NewParent: withSub, Author: sig, When: time.Now()})
	if err != nil || len(sub.Conflicts) > 0 {
		t.Fatalf("rebuild onto a parent with a submodule: %+v %v", sub, err)
	}
	if got := gittest.Run(t, dir, "ls-tree", sub.Hash.String(), "vendor/sub"); got != "160000 commit "+parent.String()+"\tvendor/sub" {
		t.Errorf("the submodule in the rebuilt tree: %q", got)
	}
	if got := gittest.Run(t, dir, "diff", "--name-status", withSub.String(), sub.Hash.String()); got != "M\tb.txt\nD\tc.txt\nA\td.txt" {
		t.Errorf("rebuilt onto a parent with a submodule, the commit changes\n%s", got)
	}

	// Built on what it is built on already: nothing to make.
	if again, err := r.Rebuild(RebuildOptions{Head: res.Hash, OldParent: squashed, NewParent: squashed}); err != nil || !again.Unchanged || again.Hash != res.Hash {
		t.Errorf("the same parent: %+v %v", again, err)
	}
	// A new parent that made the child's change already is no conflict.
	same := onBase(t, dir, "same", map[string]string{"b.txt": "b, the child's\n"})
	if res, err := r.Rebuild(RebuildOptions{Head: child, OldParent: parent, NewParent: same, Author: sig, When: time.Now()}); err != nil || len(res.Conflicts) > 0 {
		t.Errorf("a parent with the same change: %+v %v", res, err)
	}
	// One that changed the child's files otherwise is.
	other := onBase(t, dir, "other", map[string]string{"b.txt": "b, someone else's\n", "c.txt": "c, kept and changed\n", "a.txt": "a, changed again\n"})
	before := gittest.Run(t, dir, "count-objects", "-v")
	conflict, err := r.Rebuild(RebuildOptions{Head: child, OldParent: parent, NewParent: other, Author: sig, When: time.Now()})
	if err != nil || strings.Join(conflict.Conflicts, ",") != "b.txt,c.txt" || !conflict.Hash.IsZero() {
		t.Errorf("a parent that changed b.txt and c.txt otherwise: %+v %v", conflict, err)
	}
	if after := gittest.Run(t, dir, "count-objects", "-v"); after != before {
		t.Errorf("a conflict wrote objects:\n%s\n%s", before, after)
	}
}

// Overlap names the files both sides changed from a commit, a rename
// counting its old and new names.
func TestOverlapNamesTheFilesBothSidesChanged(t *testing.T) {
	t.Parallel()
	r, dir, base, parent, child := stackRepo(t)
	gittest.Run(t, dir, "checkout", "-q", "-b", "moved", "parent")
	write(t, filepath.Join(dir, "b.txt"), "b, moved on\n")
	gittest.Run(t, dir, "mv", "c.txt", "c2.txt")
	write(t, filepath.Join(dir, "e.txt"), "e\n")
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-q", "-m", "the base moved")
	moved := plumbing.NewHash(gittest.Run(t, dir, "rev-parse", "HEAD"))
	if got, err := r.Overlap(parent, moved, child); err != nil || strings.Join(got, ",") != "b.txt,c.txt" {
		t.Errorf("overlap from the parent: %v %v", got, err)
	}
	if got, err := r.Overlap(base, moved, child); err != nil || strings.Join(got, ",") != "a.txt,b.txt,c.txt" {
		t.Errorf("overlap from the base: %v %v", got, err)
	}
	if got, err := r.Overlap(parent, parent, child); err != nil || len(got) != 0 {
		t.Errorf("a side that changed nothing: %v %v", got, err)
	}
}
