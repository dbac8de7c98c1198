package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/store"
)

// The attacks of issue 10 through the wo binary, on real repositories:
// repository contents and documents are untrusted, and a run must never
// write, create or delete anything outside its own worktree.

// victim is a folder outside the repository and the worktrees, with one
// file whose bytes are checked after each attack.
type victim struct{ dir, file, content string }

func newVictim(t *testing.T) victim {
	t.Helper()
	v := victim{dir: t.TempDir(), content: "outside the worktree; keep me\n"}
	v.file = filepath.Join(v.dir, "victim.txt")
	writeFile(t, v.file, v.content)
	return v
}

func (v victim) assertUntouched(t *testing.T) {
	t.Helper()
	if b, err := os.ReadFile(v.file); err != nil || string(b) != v.content {
		t.Errorf("%s now holds %q (%v)", v.file, b, err)
	}
	entries, _ := os.ReadDir(v.dir)
	if len(entries) != 1 {
		t.Errorf("%s holds %d entries, want only victim.txt", v.dir, len(entries))
	}
}

// linkFixture is a repository whose base branch has cfg.txt -> the
// victim's file and evil -> the victim's folder, and whose main branch
// has a regular cfg.txt and a real directory evil/.
func linkFixture(t *testing.T, v victim) *fixture {
	t.Helper()
	f := emptyFixture(t)
	writeFile(t, filepath.Join(f.repo, "README.md"), "# fixture\n")
	os.Symlink(v.file, filepath.Join(f.repo, "cfg.txt"))
	os.Symlink(v.dir, filepath.Join(f.repo, "evil"))
	gittest.Run(t, f.repo, "add", "-A")
	gittest.Run(t, f.repo, "commit", "-q", "-m", "base with links")
	gittest.Run(t, f.repo, "branch", "code-review-base")
	os.Remove(filepath.Join(f.repo, "cfg.txt"))
	os.Remove(filepath.Join(f.repo, "evil"))
	writeFile(t, filepath.Join(f.repo, "cfg.txt"), "from the source branch\n")
	writeFile(t, filepath.Join(f.repo, "evil/sub/new.txt"), "new\n")
	gittest.Run(t, f.repo, "add", "-A")
	gittest.Run(t, f.repo, "commit", "-q", "-m", "the change")
	gittest.Run(t, f.root, "init", "-q", "--bare", f.origin)
	gittest.Run(t, f.repo, "remote", "add", "origin", f.origin)
	gittest.Run(t, f.repo, "push", "-q", "origin", "code-review-base")
	return f
}

func setInputs(doc map[string]any, inputs map[string]any) {
	in := doc["work_order"].(map[string]any)["inputs"].(map[string]any)
	for k, v := range inputs {
		in[k] = v
	}
}

// Attack 1: checkout_files wrote the source's cfg.txt through the base's
// link into the file it points to. Like git checkout main -- cfg.txt, wo
// replaces the link with the file.
func TestHostileLinkAtACheckedOutPathIsReplaced(t *testing.T) {
	t.Parallel()
	v := newVictim(t)
	f := linkFixture(t, v)
	f.importTask(f.task("task_link", gitProcedure(), func(doc map[string]any) {
		setInputs(doc, map[string]any{"file_manifest": []any{"cfg.txt"}})
	}))
	if r := f.wo(nil, "run", "task_link"); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	v.assertUntouched(t)
	if got := gittest.Run(t, f.repo, "ls-tree", "review/01-foundation", "cfg.txt"); !strings.HasPrefix(got, "100644 blob") {
		t.Errorf("committed cfg.txt: %s, want a regular file", got)
	}
	if got := gittest.Run(t, f.repo, "show", "review/01-foundation:cfg.txt"); got != "from the source branch" {
		t.Errorf("committed cfg.txt holds %q", got)
	}
}

// Attack 2: delete_manifest deleted the victim through the base's evil ->
// folder link; a manifest file below that link made folders outside
// before it was refused.
func TestHostileNothingIsDeletedOrMadeBelowALinkedFolder(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		inputs map[string]any
		want   string
	}{
		{"delete", map[string]any{"file_manifest": []any{"cfg.txt"}, "delete_manifest": []any{"evil/victim.txt"}}, "refusing to delete evil/victim.txt: evil is a symbolic link"},
		{"write", map[string]any{"file_manifest": []any{"cfg.txt", "evil/sub/new.txt"}}, "refusing to write evil/sub/new.txt: evil is a symbolic link"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v := newVictim(t)
			f := linkFixture(t, v)
			f.importTask(f.task("task_evil", gitProcedure(), func(doc map[string]any) { setInputs(doc, c.inputs) }))
			r := f.wo(nil, "run", "task_evil")
			if r.code != 1 || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("exit %d, want 1 saying %q:\n%s", r.code, c.want, r.stderr)
			}
			v.assertUntouched(t)
			wt := filepath.Join(f.wtRoot, "pr-01-foundation")
			if st := gittest.Run(t, wt, "status", "--porcelain"); st != "" {
				t.Errorf("the refused step changed the worktree:\n%s", st)
			}
			// The rerun finds the worktree and refuses before the run starts.
			if r := f.wo(nil, "run", "task_evil"); r.code != 2 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("rerun: exit %d, want 2 saying %q:\n%s", r.code, c.want, r.stderr)
			}
			v.assertUntouched(t)
		})
	}
}

// Attack 3: cleanup_worktree deleted a user's folder at the task's
// worktree path, and the admin files of another task's worktree of the
// same name.
func TestHostileCleanupLeavesWhatIsNotThisTasksWorktree(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 10)
	f.importTask(f.task("task_a", gitProcedure(), nil))
	if r := f.wo(nil, "run", "task_a", "--until-step", "5"); r.code != 0 {
		t.Fatalf("task_a: exit %d\n%s", r.code, r.stderr)
	}
	other := filepath.Join(f.wtRoot, "pr-01-foundation")

	userRoot := t.TempDir()
	user := filepath.Join(userRoot, "pr-01-foundation")
	writeFile(t, filepath.Join(user, "thesis.tex"), "years of work\n")
	writeFile(t, filepath.Join(user, "data/results.csv"), "1,2,3\n")
	f.importTask(f.task("task_b", []any{map[string]any{"step": 1, "action": "cleanup_worktree"}}, func(doc map[string]any) {
		doc["work_order"].(map[string]any)["context"].(map[string]any)["worktree_root"] = userRoot
		setInputs(doc, map[string]any{"branch_name": "review/02-other"})
	}))
	r := f.wo(nil, "run", "task_b")
	if r.code != 2 || !strings.Contains(r.stderr, "nothing was changed") || !strings.Contains(r.stderr, "no .git file") {
		t.Fatalf("cleanup of a user's folder: exit %d, want 2:\n%s", r.code, r.stderr)
	}
	for p, want := range map[string]string{"thesis.tex": "years of work\n", "data/results.csv": "1,2,3\n"} {
		if b, err := os.ReadFile(filepath.Join(user, p)); err != nil || string(b) != want {
			t.Errorf("the user's %s: %q %v", p, b, err)
		}
	}
	// The other task's worktree is whole, and its run finishes.
	if list := gittest.Run(t, f.repo, "worktree", "list", "--porcelain"); !strings.Contains(list, "worktree "+other+"\n") || strings.Contains(list, "prunable") {
		t.Errorf("git worktree list:\n%s", list)
	}
	if st := gittest.Run(t, other, "status", "--porcelain"); st != "" {
		t.Errorf("the other worktree: %s", st)
	}

	// A task on another branch pointed at that worktree is refused too.
	f.importTask(f.task("task_c", []any{map[string]any{"step": 1, "action": "cleanup_worktree"}}, func(doc map[string]any) {
		setInputs(doc, map[string]any{"branch_name": "review/03-third"})
	}))
	if r := f.wo(nil, "run", "task_c"); r.code != 2 || !strings.Contains(r.stderr, "on branch review/01-foundation, not this task's branch review/03-third") {
		t.Errorf("cleanup of another branch's worktree: exit %d, want 2:\n%s", r.code, r.stderr)
	}
	if r := f.wo(nil, "run", "task_a"); r.code != 0 {
		t.Fatalf("task_a to the end: exit %d\n%s", r.code, r.stderr)
	}
	f.assertGitDone("task_a")
}

// Attack 4: a tree holding a link a -> the victim's folder and a
// directory a/ with pwn.txt wrote pwn.txt outside. git fsck calls it
// duplicateEntries; wo refuses it, naming the entry.
func TestHostileTreeWithDuplicateEntriesIsRefused(t *testing.T) {
	t.Parallel()
	v := newVictim(t)
	f := newFixture(t, 5)
	pwn := gittest.Input(t, f.repo, []byte("pwned\n"), "hash-object", "-w", "--stdin")
	link := gittest.Input(t, f.repo, []byte(v.dir), "hash-object", "-w", "--stdin")
	sub := gittest.RawTree(t, f.repo, [3]string{"100644", "pwn.txt", pwn})
	readme := gittest.Run(t, f.repo, "rev-parse", "main:README.md")
	tree := gittest.RawTree(t, f.repo, [3]string{"100644", "README.md", readme}, [3]string{"120000", "a", link}, [3]string{"40000", "a", sub})
	commit := gittest.Run(t, f.repo, "commit-tree", "-m", "crafted", tree)
	gittest.Run(t, f.repo, "update-ref", "refs/heads/crafted", commit)

	// As the source: refused before the run starts.
	f.importTask(f.task("task_src", gitProcedure(), func(doc map[string]any) {
		doc["work_order"].(map[string]any)["context"].(map[string]any)["source_branch"] = "crafted"
		setInputs(doc, map[string]any{"file_manifest": []any{"a", "a/pwn.txt"}})
	}))
	r := f.wo(nil, "run", "task_src")
	if r.code != 2 || !strings.Contains(r.stderr, `"a" appears twice in one directory`) {
		t.Fatalf("crafted source: exit %d, want 2:\n%s", r.code, r.stderr)
	}
	v.assertUntouched(t)

	// As the base: the worktree is refused before anything is made, as
	// bad input (exit 2), and the task is not blocked.
	f.importTask(f.task("task_base", gitProcedure(), func(doc map[string]any) {
		doc["work_order"].(map[string]any)["context"].(map[string]any)["base_branch"] = "crafted"
		setInputs(doc, map[string]any{"branch_name": "review/02-crafted", "worktree_name": "crafted"})
	}))
	r = f.wo(nil, "run", "task_base")
	if r.code != 2 || !strings.Contains(r.stderr, `"a" appears twice in one directory`) {
		t.Fatalf("crafted base: exit %d, want 2:\n%s", r.code, r.stderr)
	}
	if doc := f.doc("task_base"); doc["status"] != "open" {
		t.Errorf("a refused run changed the task to %v", doc["status"])
	}
	v.assertUntouched(t)
	if _, err := os.Stat(filepath.Join(f.wtRoot, "crafted")); !os.IsNotExist(err) {
		t.Errorf("a refused worktree was made: %v", err)
	}
	if list := gittest.Run(t, f.repo, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees:\n%s", list)
	}
}

// Attack 5: branch_name equal to the base branch committed the change
// onto the base and pushed it to origin with no review; HEAD was taken for
// a branch name. The document is refused, and so is a run of one that
// another tool changed in the store after validation.
func TestHostileWorkBranchMustNotBeTheBase(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 5)
	baseBefore := gittest.Run(t, f.origin, "rev-parse", "refs/heads/code-review-base")
	for _, branch := range []string{"code-review-base", "main", "HEAD"} {
		doc := f.task("task_x", gitProcedure(), func(doc map[string]any) { setInputs(doc, map[string]any{"branch_name": branch}) })
		b, _ := json.Marshal([]any{doc})
		path := filepath.Join(f.root, "bad.json")
		os.WriteFile(path, b, 0o644)
		if r := f.wo(nil, "import", path); r.code != 2 || !strings.Contains(r.stderr, "branch_name") {
			t.Errorf("import with branch_name %q: exit %d, want 2:\n%s", branch, r.code, r.stderr)
		}
	}

	f.importTask(f.task("task_sneaky", gitProcedure(), nil))
	ctx := context.Background()
	s, err := store.OpenSQLite(ctx, f.store)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := s.Get(ctx, "task_sneaky")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "task_sneaky", doc["_rev"].(string), store.Nest("work_order.inputs", map[string]any{"branch_name": "code-review-base"})); err != nil {
		t.Fatal(err)
	}
	s.Close()
	r := f.wo(nil, "run", "task_sneaky")
	if r.code != 2 || !strings.Contains(r.stderr, `branch_name "code-review-base" is the base_branch`) {
		t.Errorf("run with the base as branch_name: exit %d, want 2:\n%s", r.code, r.stderr)
	}
	if got := gittest.Run(t, f.origin, "rev-parse", "refs/heads/code-review-base"); got != baseBefore {
		t.Errorf("origin's base branch moved to %s", got)
	}
	if got := gittest.Run(t, f.repo, "rev-parse", "code-review-base"); got != baseBefore {
		t.Errorf("the local base branch moved to %s", got)
	}
}
