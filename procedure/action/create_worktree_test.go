package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
)

func TestWorktreeCreateMakesAWorktreeGitAccepts(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	base := gittest.Run(t, h.Repo, "rev-parse", fixture.Base)
	out, err := h.run("create_worktree")
	if err != nil {
		t.Fatal(err)
	}
	list := fixture.Worktrees(t, h.Repo)
	if got, ok := list[h.Worktree]; !ok || got != "HEAD "+base+";detached;" {
		t.Fatalf("git worktree list: %v; want %s detached at %s", list, h.Worktree, base)
	}
	if got := fixture.ReadFile(t, filepath.Join(h.Worktree, "pkg/a.go")); got != fixture.BaseA {
		t.Errorf("pkg/a.go in the worktree is %q, want the base version", got)
	}
	if _, err := os.Stat(filepath.Join(h.Worktree, "foundation/new.go")); !os.IsNotExist(err) {
		t.Errorf("a file of the source branch is in the new worktree: %v", err)
	}
	if st := gittest.Run(t, h.Worktree, "status", "--porcelain"); st != "" {
		t.Errorf("git status in the new worktree is not clean:\n%s", st)
	}
	st := h.recorded(out)
	if st.WorktreePath == nil || *st.WorktreePath != h.Worktree || st.WorktreeName != fixture.Worktree {
		t.Errorf("recorded worktree_path %v worktree_name %q", st.WorktreePath, st.WorktreeName)
	}
	if want := "worktree " + h.Worktree + " created from " + fixture.Base + " (" + base[:12] + ")"; out.Note != want {
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
	fixture.WriteFile(t, filepath.Join(h.Worktree, "notes.txt"), "a person's file\n")
	second, err := h.run("create_worktree")
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if first.Note != second.Note {
		t.Errorf("rerun says %q, first run %q", second.Note, first.Note)
	}
	if list := fixture.Worktrees(t, h.Repo); len(list) != 2 {
		t.Errorf("git worktree list after two runs: %v", list)
	}
	// A complete worktree is left as it is.
	if got := fixture.ReadFile(t, filepath.Join(h.Worktree, "notes.txt")); got != "a person's file\n" {
		t.Errorf("the rerun touched the worktree: %q", got)
	}
}

func TestWorktreeCreateResumesFromTheRecordedBase(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	base := gittest.Run(t, h.Repo, "rev-parse", fixture.Base)
	h.must("create_worktree")
	// The crash: the worktree is gone, and the base branch moved meanwhile.
	gittest.Run(t, h.Repo, "worktree", "remove", h.Worktree)
	gittest.Run(t, h.Repo, "branch", "-f", fixture.Base, fixture.Source)
	if _, err := h.run("create_worktree"); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Run(t, h.Worktree, "rev-parse", "HEAD"); got != base {
		t.Errorf("the resumed worktree is at %s, want the recorded base %s", got, base)
	}
}

func TestWorktreeCreateStartsAtTheWorkOrdersOwnBranch(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	// An earlier run's branch, grown from the base.
	gittest.Run(t, h.Repo, "branch", fixture.Branch, fixture.Source)
	tip := gittest.Run(t, h.Repo, "rev-parse", fixture.Source)
	out, err := h.run("create_worktree")
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Run(t, h.Worktree, "rev-parse", "HEAD"); got != tip {
		t.Errorf("worktree at %s, want the branch's tip %s", got, tip)
	}
	if !strings.Contains(out.Note, "from the existing branch "+fixture.Branch+" ("+tip[:12]+")") {
		t.Errorf("note %q does not name the existing branch", out.Note)
	}
}

func TestWorktreeCreateRefusesSomebodyElsesBranch(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	// A branch of the same name that does not grow from the base.
	gittest.Run(t, h.Repo, "checkout", "-q", "--orphan", "other")
	gittest.Run(t, h.Repo, "commit", "-q", "-m", "unrelated history")
	gittest.Run(t, h.Repo, "branch", fixture.Branch)
	gittest.Run(t, h.Repo, "checkout", "-q", "main")
	_, err := h.run("create_worktree")
	fixture.ErrContains(t, err, "branch "+fixture.Branch, "does not descend from the base", "set inputs.branch_name to a new branch")
	if _, serr := os.Stat(h.Worktree); !os.IsNotExist(serr) {
		t.Errorf("a worktree was made anyway: %v", serr)
	}
}

func TestWorktreeCreateRefusesABranchCheckedOutElsewhere(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	other := filepath.Join(h.Root, "elsewhere")
	gittest.Run(t, h.Repo, "worktree", "add", "-q", "-b", fixture.Branch, other, fixture.Base)
	_, err := h.run("create_worktree")
	fixture.ErrContains(t, err, "creating worktree "+fixture.Worktree, "branch "+fixture.Branch+" is already checked out at "+other,
		"remove that worktree or choose another branch_name")
	fixture.ErrContains(t, h.check("create_worktree"), "branch "+fixture.Branch+" is already checked out at "+other)
	if list := fixture.Worktrees(t, h.Repo); len(list) != 2 {
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
		fixture.ErrContains(t, h.check("create_worktree"), "context.base_branch", "no-such-base")
		_, err := h.run("create_worktree")
		fixture.ErrContains(t, err, "context.base_branch", "no-such-base")
	})
	t.Run("a path that holds other files", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		fixture.WriteFile(t, filepath.Join(h.Worktree, "mine.txt"), "someone's\n")
		fixture.ErrContains(t, h.check("create_worktree"), "worktree path "+h.Worktree+" exists and holds other files")
		_, err := h.run("create_worktree")
		fixture.ErrContains(t, err, "worktree path "+h.Worktree+" exists and holds other files")
		if got := fixture.ReadFile(t, filepath.Join(h.Worktree, "mine.txt")); got != "someone's\n" {
			t.Errorf("the other file was changed: %q", got)
		}
	})
	t.Run("a worktree name taken by another worktree", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		other := filepath.Join(h.Root, "x", fixture.Worktree)
		gittest.Run(t, h.Repo, "worktree", "add", "-q", "--detach", other, fixture.Base)
		fixture.ErrContains(t, h.check("create_worktree"), "worktree name "+fixture.Worktree+" is already used by "+other)
	})
	t.Run("no worktree_root", func(t *testing.T) {
		h := newStepContext(t, stepOpts{Context: map[string]any{"worktree_root": nil}, Procedure: fixture.BareSteps("create_worktree")})
		fixture.ErrContains(t, h.check("create_worktree"), "task "+fixture.Key, "work_order.context.worktree_root is not set")
	})
}

func TestWorktreeCreatePlan(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	admin := filepath.Join(h.Repo, ".git", "worktrees", fixture.Worktree)
	if got, want := h.plan("create_worktree"), "create linked worktree "+h.Worktree+" (admin files "+admin+") at "+fixture.Base; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	h.must("create_worktree")
	if got, want := h.plan("create_worktree"), "worktree "+h.Worktree+" exists: nothing to do"; got != want {
		t.Errorf("plan after the run %q, want %q", got, want)
	}
	// wo validate refuses the name; the action refuses it too, for a
	// document another tool wrote.
	bad := newStepContext(t, stepOpts{Inputs: map[string]any{"worktree_name": "a/b"}, Invalid: true})
	if got := bad.plan("create_worktree"); !strings.HasPrefix(got, "cannot plan: worktree name \"a/b\"") {
		t.Errorf("plan with a bad name %q", got)
	}
}
