package procedure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// worktreeList is `git worktree list --porcelain` as path → HEAD lines.
func worktreeList(t testing.TB, repo string) map[string]string {
	t.Helper()
	out := map[string]string{}
	path := ""
	for _, line := range strings.Split(gitIn(t, repo, "worktree", "list", "--porcelain"), "\n") {
		switch {
		case strings.HasPrefix(line, "worktree "):
			path = strings.TrimPrefix(line, "worktree ")
			out[path] = ""
		case line != "" && path != "":
			out[path] += line + ";"
		}
	}
	return out
}

func TestWorktreeCreateMakesAWorktreeGitAccepts(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	base := gitIn(t, h.Repo, "rev-parse", fixBase)
	out, err := h.run("create_worktree")
	if err != nil {
		t.Fatal(err)
	}
	list := worktreeList(t, h.Repo)
	if got, ok := list[h.Worktree]; !ok || got != "HEAD "+base+";detached;" {
		t.Fatalf("git worktree list: %v; want %s detached at %s", list, h.Worktree, base)
	}
	if got := readTestFile(t, filepath.Join(h.Worktree, "pkg/a.go")); got != baseA {
		t.Errorf("pkg/a.go in the worktree is %q, want the base version", got)
	}
	if _, err := os.Stat(filepath.Join(h.Worktree, "foundation/new.go")); !os.IsNotExist(err) {
		t.Errorf("a file of the source branch is in the new worktree: %v", err)
	}
	if st := gitIn(t, h.Worktree, "status", "--porcelain"); st != "" {
		t.Errorf("git status in the new worktree is not clean:\n%s", st)
	}
	st := h.recorded(out)
	if st.WorktreePath == nil || *st.WorktreePath != h.Worktree || st.WorktreeName != fixWorktree {
		t.Errorf("recorded worktree_path %v worktree_name %q", st.WorktreePath, st.WorktreeName)
	}
	if want := "worktree " + h.Worktree + " created from " + fixBase + " (" + base[:12] + ")"; out.Note != want {
		t.Errorf("note %q, want %q", out.Note, want)
	}
	// The base commit is checkpointed at once, before the worktree exists.
	if got := h.stored().BaseSHA; got != base {
		t.Errorf("stored base_sha %q, want %s", got, base)
	}
}

func TestWorktreeCreateTwiceGivesOneWorktree(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	first := h.must("create_worktree")
	writeTestFile(t, filepath.Join(h.Worktree, "notes.txt"), "a person's file\n")
	second, err := h.run("create_worktree")
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if first.Note != second.Note {
		t.Errorf("rerun says %q, first run %q", second.Note, first.Note)
	}
	if list := worktreeList(t, h.Repo); len(list) != 2 {
		t.Errorf("git worktree list after two runs: %v", list)
	}
	// A complete worktree is left as it is.
	if got := readTestFile(t, filepath.Join(h.Worktree, "notes.txt")); got != "a person's file\n" {
		t.Errorf("the rerun touched the worktree: %q", got)
	}
}

func TestWorktreeCreateResumesFromTheRecordedBase(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	base := gitIn(t, h.Repo, "rev-parse", fixBase)
	h.must("create_worktree")
	// The crash: the worktree is gone, and the base branch moved meanwhile.
	gitIn(t, h.Repo, "worktree", "remove", h.Worktree)
	gitIn(t, h.Repo, "branch", "-f", fixBase, fixSource)
	if _, err := h.run("create_worktree"); err != nil {
		t.Fatal(err)
	}
	if got := gitIn(t, h.Worktree, "rev-parse", "HEAD"); got != base {
		t.Errorf("the resumed worktree is at %s, want the recorded base %s", got, base)
	}
}

func TestWorktreeCreateStartsAtTheWorkOrdersOwnBranch(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	// An earlier run's branch, grown from the base.
	gitIn(t, h.Repo, "branch", fixBranch, fixSource)
	tip := gitIn(t, h.Repo, "rev-parse", fixSource)
	out, err := h.run("create_worktree")
	if err != nil {
		t.Fatal(err)
	}
	if got := gitIn(t, h.Worktree, "rev-parse", "HEAD"); got != tip {
		t.Errorf("worktree at %s, want the branch's tip %s", got, tip)
	}
	if !strings.Contains(out.Note, "from the existing branch "+fixBranch+" ("+tip[:12]+")") {
		t.Errorf("note %q does not name the existing branch", out.Note)
	}
}

func TestWorktreeCreateRefusesSomebodyElsesBranch(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	// A branch of the same name that does not grow from the base.
	gitIn(t, h.Repo, "checkout", "-q", "--orphan", "other")
	gitIn(t, h.Repo, "commit", "-q", "-m", "unrelated history")
	gitIn(t, h.Repo, "branch", fixBranch)
	gitIn(t, h.Repo, "checkout", "-q", "main")
	_, err := h.run("create_worktree")
	errContains(t, err, "branch "+fixBranch, "does not descend from the base", "set inputs.branch_name to a new branch")
	if _, serr := os.Stat(h.Worktree); !os.IsNotExist(serr) {
		t.Errorf("a worktree was made anyway: %v", serr)
	}
}

func TestWorktreeCreateRefusesABranchCheckedOutElsewhere(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	other := filepath.Join(h.Root, "elsewhere")
	gitIn(t, h.Repo, "worktree", "add", "-q", "-b", fixBranch, other, fixBase)
	_, err := h.run("create_worktree")
	errContains(t, err, "creating worktree "+fixWorktree, "branch "+fixBranch+" is already checked out at "+other,
		"remove that worktree or choose another branch_name")
	errContains(t, h.check("create_worktree"), "branch "+fixBranch+" is already checked out at "+other)
	if list := worktreeList(t, h.Repo); len(list) != 2 {
		t.Errorf("worktrees after the refusal: %v", list)
	}
}

func TestWorktreeCreateCheck(t *testing.T) {
	t.Run("a usable work order passes", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		if err := h.check("create_worktree"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(h.Worktree); !os.IsNotExist(err) {
			t.Errorf("Check created something: %v", err)
		}
	})
	t.Run("a base branch that does not exist", func(t *testing.T) {
		h := newStepContext(t, stepOpts{Context: map[string]any{"base_branch": "no-such-base"}})
		errContains(t, h.check("create_worktree"), "context.base_branch", "no-such-base")
		_, err := h.run("create_worktree")
		errContains(t, err, "context.base_branch", "no-such-base")
	})
	t.Run("a path that holds other files", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		writeTestFile(t, filepath.Join(h.Worktree, "mine.txt"), "someone's\n")
		errContains(t, h.check("create_worktree"), "worktree path "+h.Worktree+" exists and holds other files")
		_, err := h.run("create_worktree")
		errContains(t, err, "worktree path "+h.Worktree+" exists and holds other files")
		if got := readTestFile(t, filepath.Join(h.Worktree, "mine.txt")); got != "someone's\n" {
			t.Errorf("the other file was changed: %q", got)
		}
	})
	t.Run("a worktree name taken by another worktree", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		other := filepath.Join(h.Root, "x", fixWorktree)
		gitIn(t, h.Repo, "worktree", "add", "-q", "--detach", other, fixBase)
		errContains(t, h.check("create_worktree"), "worktree name "+fixWorktree+" is already used by "+other)
	})
	t.Run("no worktree_root", func(t *testing.T) {
		h := newStepContext(t, stepOpts{Context: map[string]any{"worktree_root": nil}, Procedure: bareSteps("create_worktree")})
		errContains(t, h.check("create_worktree"), "task "+fixKey, "work_order.context.worktree_root is not set")
	})
	t.Run("no repository", func(t *testing.T) {
		h := newStepContext(t, stepOpts{Context: map[string]any{"repo_path": nil}})
		errContains(t, h.check("create_worktree"), "no repository: set work_order.context.repo_path or pass --repo")
		_, err := h.run("create_worktree")
		errContains(t, err, "no repository")
	})
}

func TestWorktreeCreatePlan(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	admin := filepath.Join(h.Repo, ".git", "worktrees", fixWorktree)
	if got, want := h.plan("create_worktree"), "create linked worktree "+h.Worktree+" (admin files "+admin+") at "+fixBase; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	h.must("create_worktree")
	if got, want := h.plan("create_worktree"), "worktree "+h.Worktree+" exists: nothing to do"; got != want {
		t.Errorf("plan after the run %q, want %q", got, want)
	}
	bad := newStepContext(t, stepOpts{Inputs: map[string]any{"worktree_name": "a/b"}})
	if got := bad.plan("create_worktree"); !strings.HasPrefix(got, "cannot plan: worktree name \"a/b\"") {
		t.Errorf("plan with a bad name %q", got)
	}
}
