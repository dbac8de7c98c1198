package gitops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/internal/gittest"
)

// lineRepo is a repository with one commit on main, whose hash it returns.
func lineRepo(t *testing.T) (*Repo, string, plumbing.Hash) {
	t.Helper()
	dir := t.TempDir()
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	write(t, filepath.Join(dir, "gone.txt"), "gone\n")
	write(t, filepath.Join(dir, "run.sh"), "#!/bin/sh\n")
	os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-q", "-m", "base")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	base, _ := r.Resolve("HEAD")
	return r, dir, base
}

func describeChanges(changes []PathChange, commits map[plumbing.Hash]string) string {
	var out []string
	for _, c := range changes {
		what := fmt.Sprintf("%s %s %o %d", commits[c.Commit], c.Path, uint32(c.Mode), c.Size)
		if c.Deleted {
			what += " deleted"
		}
		out = append(out, what)
	}
	return strings.Join(out, "\n")
}

func TestLineChangesListsEveryCommitsPathsOldestFirst(t *testing.T) {
	t.Parallel()
	r, dir, base := lineRepo(t)
	write(t, filepath.Join(dir, "a.txt"), "a, changed\n")
	write(t, filepath.Join(dir, "sub/new.txt"), "12345")
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-q", "-m", "one")
	one, _ := r.Resolve("HEAD")
	os.Remove(filepath.Join(dir, "gone.txt"))
	os.Chmod(filepath.Join(dir, "run.sh"), 0o644)
	os.Symlink("a.txt", filepath.Join(dir, "link"))
	gittest.Run(t, dir, "add", "-A")
	// A gitlink, as git submodule add leaves it.
	gittest.Run(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+base.String()+",vendor/sub")
	gittest.Run(t, dir, "commit", "-q", "-m", "two")
	two, _ := r.Resolve("HEAD")

	changes, err := r.LineChanges(base, two, 10)
	if err != nil {
		t.Fatal(err)
	}
	got := describeChanges(changes, map[plumbing.Hash]string{one: "one", two: "two"})
	want := strings.Join([]string{
		"one a.txt 100644 11",
		"one sub/new.txt 100644 5",
		"two gone.txt 100644 0 deleted",
		"two link 120000 5",
		"two run.sh 100644 10", // the mode alone changed
		"two vendor/sub 160000 0",
	}, "\n")
	if got != want {
		t.Errorf("changes:\n%s\nwant:\n%s", got, want)
	}
	if changes, err := r.LineChanges(base, base, 10); err != nil || len(changes) != 0 {
		t.Errorf("no commits: %v %v", changes, err)
	}
	// Exactly the bound is fine; one more is not.
	if _, err := r.LineChanges(base, two, 2); err != nil {
		t.Errorf("two commits with a bound of two: %v", err)
	}
	var notLine *NotALineError
	if _, err := r.LineChanges(base, two, 1); !errors.As(err, &notLine) || notLine.At != one ||
		!strings.Contains(err.Error(), "is more than 1 commits away") {
		t.Errorf("two commits with a bound of one: %v", err)
	}
}

func TestLineChangesRefusesARewriteAMergeAndAnotherHistory(t *testing.T) {
	t.Parallel()
	r, dir, base := lineRepo(t)
	write(t, filepath.Join(dir, "a.txt"), "pushed\n")
	gittest.Run(t, dir, "commit", "-qam", "pushed")
	pushed, _ := r.Resolve("HEAD")

	// The agent amends what wo pushed: the new commit does not descend
	// from it, and the walk reaches the root.
	write(t, filepath.Join(dir, "a.txt"), "rewritten\n")
	gittest.Run(t, dir, "commit", "-qa", "--amend", "-m", "rewritten")
	amended, _ := r.Resolve("HEAD")
	var notLine *NotALineError
	_, err := r.LineChanges(pushed, amended, 100)
	if !errors.As(err, &notLine) || notLine.At != base || !strings.Contains(err.Error(), "is a root commit: the branch does not descend from "+pushed.String()[:12]) {
		t.Errorf("an amended commit: %v", err)
	}

	// A merge brings in commits from elsewhere.
	gittest.Run(t, dir, "reset", "-q", "--hard", pushed.String())
	gittest.Run(t, dir, "checkout", "-q", "-b", "side", base.String())
	write(t, filepath.Join(dir, "side.txt"), "side\n")
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-qm", "side")
	gittest.Run(t, dir, "checkout", "-q", "main")
	gittest.Run(t, dir, "merge", "-q", "--no-edit", "side")
	merge, _ := r.Resolve("HEAD")
	if _, err := r.LineChanges(pushed, merge, 100); !errors.As(err, &notLine) || notLine.At != merge || !strings.Contains(err.Error(), "is a merge") {
		t.Errorf("a merge: %v", err)
	}
	if _, err := r.LineChanges(pushed, plumbing.NewHash(strings.Repeat("1", 40)), 100); err == nil || errors.As(err, &notLine) {
		t.Errorf("a commit that does not exist: %v", err)
	}
}

func TestLineChangesRefusesACraftedTreeOnTheWayToAPath(t *testing.T) {
	t.Parallel()
	r, dir, base := lineRepo(t)
	blob := gittest.Input(t, dir, []byte("[core]\n"), "hash-object", "-w", "--stdin")
	for name, entries := range map[string][][3]string{
		"names .git": {{"100644", ".git", blob}},
		"has a '/'":  {{"100644", "x/../../y", blob}},
	} {
		sub := gittest.RawTree(t, dir, entries...)
		baseTree := gittest.Run(t, dir, "rev-parse", base.String()+"^{tree}")
		top := gittest.Run(t, dir, "ls-tree", baseTree)
		var list [][3]string
		for _, line := range strings.Split(top, "\n") {
			meta, file, _ := strings.Cut(line, "\t")
			f := strings.Fields(meta)
			list = append(list, [3]string{f[0], file, f[2]})
		}
		list = append(list, [3]string{"40000", "vendor", sub})
		tree := gittest.RawTree(t, dir, list...)
		c := gittest.Run(t, dir, "commit-tree", "-p", base.String(), "-m", "crafted", tree)
		var unsafe *UnsafeTreeError
		if _, err := r.LineChanges(base, plumbing.NewHash(c), 10); !errors.As(err, &unsafe) || !strings.HasPrefix(unsafe.Path, "vendor/") {
			t.Errorf("a tree that %s: %v", name, err)
		}
	}
}

// A push with Expect sends the commit that was checked, or nothing: a
// branch moved since the check is refused.
func TestPushWithExpectRefusesABranchThatMoved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, base, w, origin := plannedWorktree(t, "wt")
	if err := w.Create(ctx, base, nil); err != nil {
		t.Fatal(err)
	}
	w.SwitchBranch("review/x")
	write(t, filepath.Join(w.Path, "a.txt"), "checked\n")
	w.StageAll()
	checked, _ := w.Commit("checked", Signature{"T", "t@example.com"}, time.Now())
	write(t, filepath.Join(w.Path, "a.txt"), "slipped in after the check\n")
	w.StageAll()
	later, _ := w.Commit("later", Signature{"T", "t@example.com"}, time.Now())
	_, err := r.Push(ctx, PushOptions{Branch: "review/x", Expect: checked.Hash})
	if err == nil || !strings.Contains(err.Error(), "the branch is at "+later.Hash.String()[:12]+", not at "+checked.Hash.String()[:12]+" as it was when checked; nothing was pushed") {
		t.Errorf("err %v", err)
	}
	if refs := gittest.Run(t, origin, "for-each-ref", "refs/heads/review"); refs != "" {
		t.Errorf("pushed: %s", refs)
	}
	if res, err := r.Push(ctx, PushOptions{Branch: "review/x", Expect: later.Hash}); err != nil || res.Hash != later.Hash {
		t.Errorf("the expected commit: %+v %v", res, err)
	}
}
