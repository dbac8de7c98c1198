package gitops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/wo-runner/wo/internal/gittest"
)

func write(t testing.TB, path, content string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixtureRepo makes a repository with a base branch and a main branch that
// has more files, and a bare origin.
func fixtureRepo(t *testing.T) (repo, origin string) {
	t.Helper()
	root := t.TempDir()
	repo, origin = filepath.Join(root, "repo"), filepath.Join(root, "origin.git")
	gittest.Run(t, root, "init", "-q", "-b", "main", repo)
	gittest.Run(t, repo, "config", "user.name", "Wo Test")
	gittest.Run(t, repo, "config", "user.email", "wo@example.com")
	write(t, filepath.Join(repo, "README.md"), "hello\n")
	write(t, filepath.Join(repo, "internal/a/a.go"), "package a\n")
	os.Symlink("README.md", filepath.Join(repo, "link"))
	write(t, filepath.Join(repo, "bin/run.sh"), "#!/bin/sh\n")
	os.Chmod(filepath.Join(repo, "bin/run.sh"), 0o755)
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "base")
	gittest.Run(t, repo, "branch", "code-review-base")
	write(t, filepath.Join(repo, "internal/a/a.go"), "package a\n\nfunc A() {}\n")
	write(t, filepath.Join(repo, "internal/b/b.go"), "package b\n")
	write(t, filepath.Join(repo, "docs/x.md"), "not in the manifest\n")
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "work")
	gittest.Run(t, root, "init", "-q", "--bare", origin)
	gittest.Run(t, repo, "remote", "add", "origin", origin)
	gittest.Run(t, repo, "push", "-q", "origin", "code-review-base")
	return repo, origin
}

// plannedWorktree is the fixture repository, its base commit, a worktree
// of that name in a temporary folder that does not exist yet, and the bare
// origin.
func plannedWorktree(t *testing.T, name string) (*Repo, plumbing.Hash, *Worktree, string) {
	t.Helper()
	repoPath, origin := fixtureRepo(t)
	r, err := Open(repoPath)
	if err != nil {
		t.Fatal(err)
	}
	base, err := r.Resolve("code-review-base")
	if err != nil {
		t.Fatal(err)
	}
	w, err := r.Worktree(name, filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	return r, base, w, origin
}

func TestWorktreeBranchCheckoutCommitPush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, base, w, origin := plannedWorktree(t, "pr-01-foundation")
	repoPath, wtPath := r.Path, w.Path
	if err := w.Create(ctx, base, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Create(ctx, base, nil); err != nil { // again: a no-op
		t.Fatal(err)
	}
	if _, err := w.SwitchBranch("review/01-foundation"); err != nil {
		t.Fatal(err)
	}
	list := gittest.Run(t, repoPath, "worktree", "list", "--porcelain")
	if !strings.Contains(list, "worktree "+wtPath+"\nHEAD "+base.String()+"\nbranch refs/heads/review/01-foundation") {
		t.Fatalf("git worktree list:\n%s", list)
	}
	if st := gittest.Run(t, wtPath, "status", "--porcelain"); st != "" {
		t.Fatalf("fresh worktree not clean:\n%s", st)
	}
	if got := gittest.Run(t, wtPath, "ls-files", "-s", "bin/run.sh", "link"); !strings.Contains(got, "100755") || !strings.Contains(got, "120000") {
		t.Errorf("modes lost: %s", got)
	}

	main, _ := r.Resolve("main")
	err := w.CheckoutFiles(ctx, main, "main", []string{"internal/a/a.go", "internal/b/b.go", "nope.go"}, nil)
	var missing *MissingFilesError
	if !errors.As(err, &missing) || len(missing.Files) != 1 || missing.Files[0] != "nope.go" {
		t.Fatalf("missing file: %v", err)
	}
	if st := gittest.Run(t, wtPath, "status", "--porcelain"); st != "" {
		t.Fatalf("a refused checkout changed the worktree:\n%s", st)
	}
	if err := w.CheckoutFiles(ctx, main, "main", []string{"internal/a/a.go", "internal/b/b.go"}, nil); err != nil {
		t.Fatal(err)
	}
	if st := gittest.Run(t, wtPath, "status", "--porcelain"); st != "M  internal/a/a.go\nA  internal/b/b.go" {
		t.Fatalf("after checkout, status:\n%s", st)
	}

	res, err := w.Commit("PR #1: Foundation", Signature{"Wo Test", "wo@example.com"}, time.Unix(1700000000, 0))
	if err != nil || !res.Created {
		t.Fatalf("commit: %+v %v", res, err)
	}
	again, err := w.Commit("PR #1: Foundation", Signature{"Wo Test", "wo@example.com"}, time.Now())
	if err != nil || again.Created || again.Hash != res.Hash {
		t.Fatalf("second commit must be a no-op: %+v %v", again, err)
	}
	if st := gittest.Run(t, wtPath, "status", "--porcelain"); st != "" {
		t.Fatalf("after commit, status:\n%s", st)
	}
	if log := gittest.Run(t, wtPath, "log", "--format=%s", "code-review-base..HEAD"); log != "PR #1: Foundation" {
		t.Errorf("commits on the branch: %q", log)
	}
	if diff := gittest.Run(t, wtPath, "diff", "--name-only", "main", "HEAD", "--", "internal"); diff != "" {
		t.Errorf("committed files differ from main: %s", diff)
	}
	gittest.Run(t, repoPath, "fsck", "--strict")

	pushed, err := r.Push(ctx, PushOptions{Branch: "review/01-foundation"})
	if err != nil || pushed.UpToDate {
		t.Fatalf("push: %+v %v", pushed, err)
	}
	if got := gittest.Run(t, origin, "rev-parse", "refs/heads/review/01-foundation"); got != res.Hash.String() {
		t.Errorf("origin at %s, want %s", got, res.Hash)
	}
	if again, err := r.Push(ctx, PushOptions{Branch: "review/01-foundation"}); err != nil || !again.UpToDate {
		t.Errorf("re-push: %+v %v", again, err)
	}

	// Another worktree cannot take the same branch.
	other, _ := r.Worktree("other", filepath.Join(t.TempDir(), "other"))
	if err := other.Create(ctx, base, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := other.SwitchBranch("review/01-foundation"); err == nil || !strings.Contains(err.Error(), "already checked out at "+wtPath) {
		t.Errorf("second checkout of a branch: %v", err)
	}

	// git accepts our worktree for removal; Remove refuses a dirty one.
	write(t, filepath.Join(wtPath, "scratch.txt"), "x")
	if err := w.Remove(); err == nil || !strings.Contains(err.Error(), "scratch.txt") {
		t.Fatalf("dirty remove: %v", err)
	}
	os.Remove(filepath.Join(wtPath, "scratch.txt"))
	gittest.Run(t, repoPath, "worktree", "remove", wtPath)
	if err := w.Remove(); err != nil { // already gone: fine
		t.Fatal(err)
	}
	if err := other.Remove(); err != nil {
		t.Fatal(err)
	}
	if list := gittest.Run(t, repoPath, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", list)
	}
	if got := gittest.Run(t, repoPath, "rev-parse", "review/01-foundation"); got != res.Hash.String() {
		t.Errorf("the branch must stay after cleanup")
	}
}

func TestWorktreeRefusals(t *testing.T) {
	t.Parallel()
	repoPath, _ := fixtureRepo(t)
	r, err := Open(repoPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Worktree("x", filepath.Join(repoPath, ".git", "wt")); err == nil || !strings.Contains(err.Error(), "inside the repository's .git") {
		t.Errorf("worktree in .git: %v", err)
	}
	busy := t.TempDir()
	write(t, filepath.Join(busy, "important.txt"), "mine")
	w, _ := r.Worktree("busy", busy)
	base, _ := r.Resolve("code-review-base")
	if err := w.Create(context.Background(), base, nil); err == nil || !strings.Contains(err.Error(), "holds other files") {
		t.Errorf("non-empty target: %v", err)
	}
	if _, err := os.Stat(filepath.Join(busy, "important.txt")); err != nil {
		t.Error("a refused create deleted the user's file")
	}
	w2, _ := r.Worktree("w2", filepath.Join(t.TempDir(), "w2"))
	if err := w2.Create(context.Background(), base, nil); err != nil {
		t.Fatal(err)
	}
	if err := w2.CheckoutFiles(context.Background(), base, "base", []string{"../../etc/passwd"}, nil); err == nil {
		t.Error("a path outside the repository was accepted")
	}
	if _, err := Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no .git directory") {
		t.Errorf("not a repository: %v", err)
	}
}

func TestCreateResumesAfterPartialWorktree(t *testing.T) {
	t.Parallel()
	r, base, w, _ := plannedWorktree(t, "wt")
	repoPath, wtPath := r.Path, w.Path
	// A crash after the .git file and some files, before the index and gitdir.
	os.MkdirAll(w.AdminDir, 0o755)
	writeFile(filepath.Join(w.AdminDir, "HEAD"), base.String()+"\n")
	os.MkdirAll(wtPath, 0o755)
	writeFile(filepath.Join(wtPath, ".git"), "gitdir: "+w.AdminDir+"\n")
	write(t, filepath.Join(wtPath, "README.md"), "half-writ")
	if w.Complete() {
		t.Fatal("a partial worktree reported complete")
	}
	if err := w.Create(context.Background(), base, nil); err != nil {
		t.Fatal(err)
	}
	if st := gittest.Run(t, wtPath, "status", "--porcelain"); st != "" {
		t.Fatalf("status after resume:\n%s", st)
	}
	gittest.Run(t, repoPath, "worktree", "remove", wtPath)
}

func TestPushRewritesOnlyWithLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, base, w, origin := plannedWorktree(t, "wt")
	if err := w.Create(ctx, base, nil); err != nil {
		t.Fatal(err)
	}
	w.SwitchBranch("review/x")
	write(t, filepath.Join(w.Path, "a.txt"), "first\n")
	w.StageAll()
	first, _ := w.Commit("first", Signature{"T", "t@example.com"}, time.Now())
	if _, err := r.Push(ctx, PushOptions{Branch: "review/x"}); err != nil {
		t.Fatal(err)
	}
	// Rewrite the branch: a different commit on the base.
	gittest.Run(t, w.Path, "reset", "-q", "--hard", "code-review-base")
	write(t, filepath.Join(w.Path, "b.txt"), "second\n")
	gittest.Run(t, w.Path, "add", "-A")
	gittest.Run(t, w.Path, "commit", "-q", "-m", "second")
	var nff *NonFastForwardError
	if _, err := r.Push(ctx, PushOptions{Branch: "review/x"}); !errors.As(err, &nff) {
		t.Fatalf("a rewrite without a lease: %v", err)
	}
	if _, err := r.Push(ctx, PushOptions{Branch: "review/x", Lease: base}); err == nil {
		t.Fatal("a lease on the wrong commit was accepted")
	}
	if got := gittest.Run(t, origin, "rev-parse", "refs/heads/review/x"); got != first.Hash.String() {
		t.Fatalf("the remote moved: %s", got)
	}
	res, err := r.Push(ctx, PushOptions{Branch: "review/x", Lease: first.Hash})
	if err != nil {
		t.Fatalf("a rewrite with the right lease: %v", err)
	}
	if got := gittest.Run(t, origin, "rev-parse", "refs/heads/review/x"); got != res.Hash.String() || got == first.Hash.String() {
		t.Errorf("remote at %s after the leased rewrite", got)
	}
}

func TestAuthForEachKindOfRemote(t *testing.T) {
	a, err := authFor("https://github.com/acme/hermes.git", "ghs_token")
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := a.(*http.BasicAuth); !ok || b.Username != "x-access-token" || b.Password != "ghs_token" {
		t.Errorf("https: %#v", a)
	}
	if a, _ := authFor("https://github.com/acme/hermes.git", ""); a != nil {
		t.Errorf("https without a token: %#v", a)
	}
	if a, _ := authFor("/srv/git/hermes.git", "ghs_token"); a != nil {
		t.Errorf("a local path needs no auth: %#v", a)
	}
	if a, _ := authFor("file:///srv/git/hermes.git", "ghs_token"); a != nil {
		t.Errorf("file:// needs no auth: %#v", a)
	}
	t.Setenv("SSH_AUTH_SOCK", "")
	if _, err := authFor("git@github.com:acme/hermes.git", ""); err == nil || !strings.Contains(err.Error(), "SSH agent") {
		t.Errorf("ssh without an agent: %v", err)
	}
	if got := redactURL("https://user:s3cret@example.com/x.git"); strings.Contains(got, "s3cret") {
		t.Errorf("redactURL kept the password: %s", got)
	}
}

func TestCreateAfterACrashWritingTheGitFile(t *testing.T) {
	t.Parallel()
	r, base, w, _ := plannedWorktree(t, "wt")
	wtPath := w.Path
	// Killed between creating .git.tmp and renaming it to .git.
	os.MkdirAll(w.AdminDir, 0o755)
	os.MkdirAll(wtPath, 0o755)
	os.WriteFile(filepath.Join(wtPath, ".git.tmp"), []byte("gitdir: "+w.AdminDir[:5]), 0o644)
	if err := w.CheckFree(); err != nil {
		t.Fatalf("our own half-written .git file: %v", err)
	}
	if err := w.Create(context.Background(), base, nil); err != nil {
		t.Fatal(err)
	}
	if st := gittest.Run(t, wtPath, "status", "--porcelain"); st != "" {
		t.Errorf("status:\n%s", st)
	}
	// Somebody else's file of that name is not ours.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, ".git.tmp"), []byte("something else"), 0o644)
	w2, _ := r.Worktree("w2", other)
	if err := w2.CheckFree(); err == nil {
		t.Error("a foreign .git.tmp was taken for ours")
	}
}

// Concurrent big checkouts lower the collector's headroom once and put
// back what was there when the last one ends, in whatever order they end.
func TestTightHeapRestoresAfterTheLastOfSeveral(t *testing.T) {
	t.Parallel()
	before := debug.SetGCPercent(137)
	defer debug.SetGCPercent(before)
	a := tightHeap()
	b := tightHeap()
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("while two run: GC percent %d, want 50", got)
	}
	a()
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("while one runs: GC percent %d, want 50", got)
	}
	b()
	if got := debug.SetGCPercent(137); got != 137 {
		t.Errorf("after both: GC percent %d, want 137 as it was", got)
	}
}
