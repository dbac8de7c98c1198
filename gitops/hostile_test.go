package gitops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
)

// The attacks of issue 10, each against real repositories made with git.

// outsideFile is a file outside every repository and worktree that an
// attack tries to change; its bytes are checked afterwards.
func outsideFile(t *testing.T, content string) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "victim.txt")
	write(t, path, content)
	return dir, path
}

func assertBytes(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Errorf("%s holds %q (%v), want %q untouched", path, got, err, want)
	}
}

func assertEntries(t *testing.T, dir string, want ...string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("%s holds %v, want %v", dir, names, want)
	}
}

// linkRepo makes a repository whose base branch has link -> target and
// whose main branch replaces it with the regular files of main.
func linkRepo(t *testing.T, link, target string, main map[string]string) (*Repo, *Worktree) {
	t.Helper()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	gittest.Run(t, root, "init", "-q", "-b", "main", repo)
	write(t, filepath.Join(repo, "README.md"), "hello\n")
	if err := os.Symlink(target, filepath.Join(repo, link)); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "base with a link")
	gittest.Run(t, repo, "branch", "base")
	os.Remove(filepath.Join(repo, link))
	for p, content := range main {
		write(t, filepath.Join(repo, p), content)
	}
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "source")
	r, err := Open(repo)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := r.Resolve("base")
	w, _ := r.Worktree("wt", filepath.Join(root, "wt"))
	if err := w.Create(context.Background(), base, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(w.Path, link)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the base's link was not checked out: %v", err)
	}
	return r, w
}

// Attack 1: checkout_files wrote through a link at the target path.
func TestCheckoutReplacesALinkAtTheTargetAsGitDoes(t *testing.T) {
	t.Parallel()
	_, victim := outsideFile(t, "outside, keep me\n")
	r, w := linkRepo(t, "cfg.txt", victim, map[string]string{"cfg.txt": "from the source\n"})
	main, _ := r.Resolve("main")
	if err := w.CheckoutFiles(context.Background(), main, "main", []string{"cfg.txt"}, nil); err != nil {
		t.Fatal(err)
	}
	assertBytes(t, victim, "outside, keep me\n")
	fi, err := os.Lstat(filepath.Join(w.Path, "cfg.txt"))
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("cfg.txt is %v (%v), want a regular file in place of the link", fi, err)
	}
	assertBytes(t, filepath.Join(w.Path, "cfg.txt"), "from the source\n")
	// What git checkout main -- cfg.txt leaves: a staged type change.
	if st := gittest.Run(t, w.Path, "status", "--porcelain"); st != "T  cfg.txt" {
		t.Errorf("git status:\n%s", st)
	}
}

// Attack 2: delete_manifest deleted through a linked directory, and a
// manifest entry below a linked directory made directories outside.
func TestNothingIsWrittenOrDeletedBelowALinkedDirectory(t *testing.T) {
	t.Parallel()
	outside, victim := outsideFile(t, "outside, keep me\n")
	r, w := linkRepo(t, "evil", outside, map[string]string{"evil/sub/new.txt": "new\n", "evil/victim.txt": "x\n"})

	err := w.RemoveFiles([]string{"evil/victim.txt"})
	var unsafe *UnsafePathError
	if !errors.As(err, &unsafe) || unsafe.At != "evil" || !strings.Contains(err.Error(), "symbolic link to \""+outside) {
		t.Fatalf("delete below a link: %v", err)
	}
	assertBytes(t, victim, "outside, keep me\n")

	main, _ := r.Resolve("main")
	err = w.CheckoutFiles(context.Background(), main, "main", []string{"README.md", "evil/sub/new.txt"}, nil)
	if !errors.As(err, &unsafe) || unsafe.Path != "evil/sub/new.txt" {
		t.Fatalf("write below a link: %v", err)
	}
	assertEntries(t, outside, "victim.txt") // no sub/ made outside
	if st := gittest.Run(t, w.Path, "status", "--porcelain"); st != "" {
		t.Errorf("a refused checkout changed the worktree:\n%s", st)
	}
	if err := w.CheckWriteFiles([]string{"evil/sub/new.txt"}); !errors.As(err, &unsafe) {
		t.Errorf("CheckWriteFiles: %v", err)
	}

	// The link itself is deleted as a file is, never what it points to.
	if err := w.RemoveFiles([]string{"evil"}); err != nil {
		t.Fatal(err)
	}
	assertBytes(t, victim, "outside, keep me\n")
	if st := gittest.Run(t, w.Path, "status", "--porcelain"); st != "D  evil" {
		t.Errorf("after deleting the link, status:\n%s", st)
	}
}

// Attack 3: cleanup deleted a folder that was not this task's worktree.
func TestRemoveDeletesOnlyWhatItProvesIsThisWorktree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, base, other, _ := plannedWorktree(t, "wt")
	if err := other.Create(ctx, base, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := other.SwitchBranch("review/other"); err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(t.TempDir(), "wt")
	write(t, filepath.Join(user, "thesis.tex"), "years of work\n")
	mine, _ := r.Worktree("wt", user) // same name, the user's folder
	var notOwned *NotOwnedError
	if err := mine.CheckRemove("review/mine", false); !errors.As(err, &notOwned) || !strings.Contains(err.Error(), "no .git file") {
		t.Errorf("CheckRemove of a user's folder: %v", err)
	}
	if err := mine.Remove(); !errors.As(err, &notOwned) {
		t.Errorf("Remove of a user's folder: %v", err)
	}
	assertBytes(t, filepath.Join(user, "thesis.tex"), "years of work\n")
	if st := gittest.Run(t, other.Path, "status", "--porcelain"); st != "" {
		t.Errorf("the other worktree: %s", st)
	}

	// A copy of the other worktree (its .git file names the admin
	// directory, which names the original) is not ours either.
	cp := filepath.Join(t.TempDir(), "wt")
	write(t, filepath.Join(cp, "notes.txt"), "mine\n")
	b, _ := os.ReadFile(filepath.Join(other.Path, ".git"))
	write(t, filepath.Join(cp, ".git"), string(b))
	copyWT, _ := r.Worktree("wt", cp)
	if err := copyWT.Remove(); !errors.As(err, &notOwned) || !strings.Contains(err.Error(), other.Path) {
		t.Errorf("Remove of a copy: %v", err)
	}
	assertBytes(t, filepath.Join(cp, "notes.txt"), "mine\n")

	// The worktree itself, on another branch than the task's, is refused.
	if err := other.CheckRemove("review/mine", false); !errors.As(err, &notOwned) || !strings.Contains(err.Error(), "on branch review/other") {
		t.Errorf("CheckRemove on the wrong branch: %v", err)
	}
	// Somebody's folder where wo sets a worktree aside is left alone.
	trash := other.Path + ".wo-removing"
	write(t, filepath.Join(trash, "keep.txt"), "keep\n")
	if err := other.Remove(); !errors.As(err, &notOwned) || notOwned.Path != trash {
		t.Errorf("Remove with a foreign folder in the way: %v", err)
	}
	assertBytes(t, filepath.Join(trash, "keep.txt"), "keep\n")
	os.RemoveAll(trash)

	if err := other.CheckRemove("review/other", false); err != nil {
		t.Fatal(err)
	}
	if err := other.Remove(); err != nil {
		t.Fatal(err)
	}
	if list := gittest.Run(t, r.Path, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", list)
	}
	if err := mine.Remove(); !errors.As(err, &notOwned) { // the name is free now; the folder is still not ours
		t.Errorf("Remove of a user's folder with a free name: %v", err)
	}
	assertBytes(t, filepath.Join(user, "thesis.tex"), "years of work\n")
}

// craftedCommit makes a commit of the tree on branch name.
func craftedCommit(t *testing.T, repo, name, tree string) string {
	t.Helper()
	c := gittest.Run(t, repo, "commit-tree", "-m", "crafted", tree)
	gittest.Run(t, repo, "update-ref", "refs/heads/"+name, c)
	return c
}

// Attack 4: a tree with a link a and a directory a/ wrote a/pwn.txt
// through the link. Such trees, and other unsafe entries, are refused.
func TestCraftedTreesAreRefusedByName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	outside, victim := outsideFile(t, "outside, keep me\n")
	r, base, w, _ := plannedWorktree(t, "wt")
	repo := r.Path
	pwn := gittest.Input(t, repo, []byte("pwned\n"), "hash-object", "-w", "--stdin")
	link := gittest.Input(t, repo, []byte(outside), "hash-object", "-w", "--stdin")
	sub := gittest.RawTree(t, repo, [3]string{"100644", "pwn.txt", pwn})
	dup := gittest.RawTree(t, repo, [3]string{"120000", "a", link}, [3]string{"40000", "a", sub})
	evil := craftedCommit(t, repo, "evil", dup)
	if out, _ := gittest.Try(repo, "fsck", "--no-dangling"); !strings.Contains(out, "duplicateEntries") {
		t.Fatalf("git fsck does not see the crafted tree:\n%s", out)
	}
	h, _ := r.Resolve(evil)

	// On worktree creation: refused, nothing made.
	err := w.Create(ctx, h, nil)
	var unsafe *UnsafeTreeError
	if !errors.As(err, &unsafe) || unsafe.Path != "a" || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("Create from a tree with a duplicate: %v", err)
	}
	assertEntries(t, outside, "victim.txt")
	assertBytes(t, victim, "outside, keep me\n")
	if _, err := os.Stat(w.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused Create left %s: %v", w.Path, err)
	}
	if _, err := os.Stat(w.AdminDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused Create left %s: %v", w.AdminDir, err)
	}

	// On checkout: refused before anything is written.
	if err := w.Create(ctx, base, nil); err != nil {
		t.Fatal(err)
	}
	for _, manifest := range [][]string{{"a", "a/pwn.txt"}, {"a/pwn.txt"}} {
		if err := r.CheckFiles(h, "evil", manifest, nil); !errors.As(err, &unsafe) {
			t.Errorf("CheckFiles %v: %v", manifest, err)
		}
		if err := w.CheckoutFiles(ctx, h, "evil", manifest, nil); !errors.As(err, &unsafe) || !strings.Contains(err.Error(), `"a"`) {
			t.Errorf("CheckoutFiles %v: %v", manifest, err)
		}
	}
	assertEntries(t, outside, "victim.txt")
	if st := gittest.Run(t, w.Path, "status", "--porcelain"); st != "" {
		t.Errorf("a refused checkout changed the worktree:\n%s", st)
	}

	// Other names git will not check out, at the top and one level down.
	blob := pwn
	for _, name := range []string{"..", ".", ".git", ".GIT", ".Git", "git~1", ".git.", ".git ", ".g\u200cit", "x/y"} { // an empty name go-git refuses itself
		top := gittest.RawTree(t, repo, [3]string{"100644", name, blob})
		nested := gittest.RawTree(t, repo, [3]string{"40000", "dir", top})
		for _, tree := range []string{top, nested} {
			c, _ := r.Resolve(craftedCommit(t, repo, "bad", tree))
			fresh, _ := r.Worktree("bad", filepath.Join(t.TempDir(), "bad"))
			if err := fresh.Create(ctx, c, nil); !errors.As(err, &unsafe) || !strings.HasSuffix(unsafe.Path, name) {
				t.Errorf("entry %q in tree %s: %v", name, tree[:8], err)
			}
		}
	}
	// Names that only look alike are fine.
	ok := gittest.RawTree(t, repo, [3]string{"100644", ".github", blob}, [3]string{"100644", ".gitignore", blob}, [3]string{"100644", "git", blob})
	c, _ := r.Resolve(craftedCommit(t, repo, "fine", ok))
	fine, _ := r.Worktree("fine", filepath.Join(t.TempDir(), "fine"))
	if err := fine.Create(ctx, c, nil); err != nil {
		t.Errorf("a tree with .github, .gitignore and git: %v", err)
	}
}

// A directory replaced by a link to outside files (an agent's work, say)
// is staged as git add -A stages it: the link, never the files it leads
// to, which would be committed and pushed.
func TestStageAllStagesALinkNotWhatItLeadsTo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, base, w, _ := plannedWorktree(t, "wt")
	if err := w.Create(ctx, base, nil); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	write(t, filepath.Join(outside, "a.go"), "SECRET\n")
	os.RemoveAll(filepath.Join(w.Path, "internal/a"))
	if err := os.Symlink(outside, filepath.Join(w.Path, "internal/a")); err != nil {
		t.Fatal(err)
	}
	if changed, err := w.StageAll(); err != nil || !changed {
		t.Fatalf("StageAll: %v %v", changed, err)
	}
	if st := gittest.Run(t, w.Path, "status", "--porcelain"); st != "A  internal/a\nD  internal/a/a.go" {
		t.Errorf("status after StageAll:\n%s", st)
	}
	res, err := w.Commit("link", Signature{"T", "t@example.com"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Run(t, w.Path, "ls-tree", "-r", res.Hash.String(), "internal"); !strings.HasPrefix(got, "120000 blob") || strings.Contains(got, "a.go") {
		t.Errorf("committed internal/:\n%s", got)
	}
	if got := gittest.Run(t, w.Path, "show", res.Hash.String()+":internal/a"); got != outside {
		t.Errorf("the committed link holds %q, want %q", got, outside)
	}
}

// A PR of a split may bring part of a file: those lines are written and
// staged, what the step wants is that blob (so that a rerun finds it
// done), a link at the path is replaced as for a whole file, and a part
// of a link or past the file's end is refused with nothing written.
func TestCheckoutWritesThePartOfAFileItIsAskedFor(t *testing.T) {
	t.Parallel()
	_, victim := outsideFile(t, "outside, keep me\n")
	src := "package p\n\nimport \"fmt\"\n\nfunc A() { fmt.Println() }\n\nfunc B() {}\n"
	r, w := linkRepo(t, "p.go", victim, map[string]string{"p.go": src, "q.txt": "q\n"})
	main, _ := r.Resolve("main")
	parts := map[string]string{"p.go": "1-2,7-7"}
	if err := r.CheckFiles(main, "main", []string{"p.go"}, map[string]string{"p.go": "1-9"}); err == nil || !strings.Contains(err.Error(), "file_parts") {
		t.Fatalf("a part past the file's end: %v; want a refusal that names inputs.file_parts", err)
	}
	if err := w.CheckoutFiles(context.Background(), main, "main", []string{"p.go", "q.txt"}, parts); err != nil {
		t.Fatal(err)
	}
	assertBytes(t, victim, "outside, keep me\n")
	want := "package p\n\nfunc B() {}\n"
	assertBytes(t, filepath.Join(w.Path, "p.go"), want)
	assertBytes(t, filepath.Join(w.Path, "q.txt"), "q\n")
	staged := gittest.Run(t, w.Path, "ls-files", "-s", "p.go")
	blob := gittest.Run(t, w.Path, "hash-object", "p.go")
	if !strings.Contains(staged, blob) {
		t.Errorf("the index has %q, not the part's blob %s", staged, blob)
	}
	hash, _, err := r.WantedFile(main, "p.go", parts["p.go"])
	if err != nil || hash.String() != blob {
		t.Errorf("WantedFile = %s, %v; want the part's blob %s", hash, err, blob)
	}
	whole, _, err := r.WantedFile(main, "p.go", "")
	if err != nil || whole.String() != gittest.Run(t, w.Path, "rev-parse", "main:p.go") {
		t.Errorf("WantedFile of the whole file = %s, %v", whole, err)
	}
}
