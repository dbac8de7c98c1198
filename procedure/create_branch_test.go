package procedure

import (
	"testing"
)

func TestBranchCreatePutsTheWorktreeOnTheBranch(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("create_branch")
	base := gitIn(t, h.Repo, "rev-parse", fixBase)
	out, err := h.run("create_branch")
	if err != nil {
		t.Fatal(err)
	}
	if got := gitIn(t, h.Worktree, "symbolic-ref", "HEAD"); got != "refs/heads/"+fixBranch {
		t.Errorf("the worktree's HEAD is %s", got)
	}
	if got := gitIn(t, h.Repo, "rev-parse", "refs/heads/"+fixBranch); got != base {
		t.Errorf("%s is at %s, want the base %s", fixBranch, got, base)
	}
	if st := h.recorded(out); st.Branch != fixBranch {
		t.Errorf("recorded branch %q", st.Branch)
	}
	if want := "on branch " + fixBranch + " at " + base[:12]; out.Note != want {
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
	if got := gitIn(t, h.Repo, "branch", "--list", "review/*"); got != "+ "+fixBranch {
		t.Errorf("branches after two runs: %q", got)
	}
}

func TestBranchCreateErrors(t *testing.T) {
	t.Run("no worktree", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		_, err := h.run("create_branch")
		errContains(t, err, "worktree "+h.Worktree+" does not exist: run the create_worktree step first (wo reset "+fixKey+" --to-step 0)")
		if _, err := gitTry(h.Repo, "rev-parse", "--verify", "refs/heads/"+fixBranch); err == nil {
			t.Error("the branch was created without a worktree")
		}
	})
	t.Run("the branch exists at another commit", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		h.upTo("create_branch")
		gitIn(t, h.Repo, "branch", fixBranch, fixSource)
		source := gitIn(t, h.Repo, "rev-parse", fixSource)
		_, err := h.run("create_branch")
		errContains(t, err, "branch "+fixBranch+" exists at "+source[:12]+", not at the worktree's commit", "set inputs.branch_name to a new branch")
		if got := gitIn(t, h.Repo, "rev-parse", fixBranch); got != source {
			t.Errorf("the existing branch moved to %s", got)
		}
	})
	t.Run("no branch_name", func(t *testing.T) {
		h := newStepContext(t, stepOpts{Inputs: map[string]any{"branch_name": nil}, Procedure: bareSteps("create_worktree", "create_branch")})
		_, err := h.run("create_branch")
		errContains(t, err, "task "+fixKey+": work_order.inputs.branch_name is not set")
		errContains(t, h.check("create_branch"), "work_order.inputs.branch_name is not set")
	})
}

func TestBranchCreateCheck(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	if err := h.check("create_branch"); err != nil {
		t.Errorf("a free branch: %v", err)
	}
	gitIn(t, h.Repo, "worktree", "add", "-q", "-b", fixBranch, h.Root+"/elsewhere", fixBase)
	errContains(t, h.check("create_branch"), "branch "+fixBranch+" is already checked out at "+h.Root+"/elsewhere")

	// Validation refuses such a name when the document loads; Check refuses
	// it too, for a task that reaches it otherwise.
	h.r.task.WorkOrder.Inputs["branch_name"] = "review..bad"
	errContains(t, h.check("create_branch"), "review..bad")
}

func TestBranchCreatePlan(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	if got, want := h.plan("create_branch"), "create branch "+fixBranch+" in the worktree and switch to it"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
}
