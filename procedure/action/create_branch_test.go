package action

import (
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
)

func TestBranchCreatePutsTheWorktreeOnTheBranch(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("create_branch")
	base := gittest.Run(t, h.Repo, "rev-parse", fixture.Base)
	out, err := h.run("create_branch")
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Run(t, h.Worktree, "symbolic-ref", "HEAD"); got != "refs/heads/"+fixture.Branch {
		t.Errorf("the worktree's HEAD is %s", got)
	}
	if got := gittest.Run(t, h.Repo, "rev-parse", "refs/heads/"+fixture.Branch); got != base {
		t.Errorf("%s is at %s, want the base %s", fixture.Branch, got, base)
	}
	if st := h.recorded(out); st.Branch != fixture.Branch {
		t.Errorf("recorded branch %q", st.Branch)
	}
	if want := "on branch " + fixture.Branch + " at " + base[:12]; out.Note != want {
		t.Errorf("note %q, want %q", out.Note, want)
	}

	// Again: the same branch, nothing new.
	again, err := h.run("create_branch")
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if again.Note != out.Note {
		t.Errorf("rerun says %q", again.Note)
	}
	if got := gittest.Run(t, h.Repo, "branch", "--list", "review/*"); got != "+ "+fixture.Branch {
		t.Errorf("branches after two runs: %q", got)
	}
}

func TestBranchCreateErrors(t *testing.T) {
	t.Run("no worktree", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		_, err := h.run("create_branch")
		fixture.ErrContains(t, err, "worktree "+h.Worktree+" does not exist: run the create_worktree step first (wo reset "+fixture.Key+" --to-step 0)")
		if _, err := gittest.Try(h.Repo, "rev-parse", "--verify", "refs/heads/"+fixture.Branch); err == nil {
			t.Error("the branch was created without a worktree")
		}
	})
	t.Run("the branch exists at another commit", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		h.upTo("create_branch")
		gittest.Run(t, h.Repo, "branch", fixture.Branch, fixture.Source)
		source := gittest.Run(t, h.Repo, "rev-parse", fixture.Source)
		_, err := h.run("create_branch")
		fixture.ErrContains(t, err, "branch "+fixture.Branch+" exists at "+source[:12]+", not at the worktree's commit", "set inputs.branch_name to a new branch")
		if got := gittest.Run(t, h.Repo, "rev-parse", fixture.Branch); got != source {
			t.Errorf("the existing branch moved to %s", got)
		}
	})
	t.Run("no branch_name", func(t *testing.T) {
		h := newStepContext(t, stepOpts{Inputs: map[string]any{"branch_name": nil}, Procedure: fixture.BareSteps("create_worktree", "create_branch")})
		_, err := h.run("create_branch")
		fixture.ErrContains(t, err, "task "+fixture.Key+": work_order.inputs.branch_name is not set")
		fixture.ErrContains(t, h.check("create_branch"), "work_order.inputs.branch_name is not set")
	})
}

func TestBranchCreateCheck(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	if err := h.check("create_branch"); err != nil {
		t.Errorf("a free branch: %v", err)
	}
	gittest.Run(t, h.Repo, "worktree", "add", "-q", "-b", fixture.Branch, h.Root+"/elsewhere", fixture.Base)
	fixture.ErrContains(t, h.check("create_branch"), "branch "+fixture.Branch+" is already checked out at "+h.Root+"/elsewhere")

	// Validation refuses such a name when the document loads; Check refuses
	// it too, for a task that reaches it otherwise.
	h.r.task.WorkOrder.Inputs["branch_name"] = "review..bad"
	fixture.ErrContains(t, h.check("create_branch"), "review..bad")
}

func TestBranchCreatePlan(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	if got, want := h.plan("create_branch"), "create branch "+fixture.Branch+" in the worktree and switch to it"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
}
