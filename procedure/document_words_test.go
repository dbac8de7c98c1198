package procedure

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// advanceBase puts a new commit on the base branch and returns the commit
// it was at before.
func advanceBase(t *testing.T, h *stepHarness) (old, tip string) {
	t.Helper()
	old = gittest.Run(t, h.Repo, "rev-parse", fixture.Base)
	tree := gittest.Run(t, h.Repo, "rev-parse", fixture.Base+"^{tree}")
	tip = gittest.Run(t, h.Repo, "commit-tree", tree, "-p", old, "-m", "later on the base")
	gittest.Run(t, h.Repo, "update-ref", "refs/heads/"+fixture.Base, tip)
	return old, tip
}

func TestWorktreeStartsAtThePinnedBaseCommit(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	old, tip := advanceBase(t, h)
	h.r.task.WorkOrder.Context["base_commit"] = old
	if err := h.check("create_worktree"); err != nil {
		t.Fatalf("a base_commit on the base branch: %v", err)
	}
	h.must("create_worktree")
	if got := gittest.Run(t, h.Worktree, "rev-parse", "HEAD"); got != old {
		t.Errorf("the worktree starts at %s, want the pinned %s (the base is at %s)", got, old, tip)
	}
	if got := h.stored().BaseSHA; got != old {
		t.Errorf("recorded base_sha %s, want the pinned %s", got, old)
	}
}

func TestAPinnedBaseCommitMustExistAndBeOnTheBase(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.r.task.WorkOrder.Context["base_commit"] = "0123456789abcdef0123456789abcdef01234567"
	fixture.ErrContains(t, h.check("create_worktree"), "context.base_commit 0123456789abcdef0123456789abcdef01234567 does not exist")
	source := gittest.Run(t, h.Repo, "rev-parse", fixture.Source)
	h.r.task.WorkOrder.Context["base_commit"] = source
	fixture.ErrContains(t, h.check("create_worktree"), "is not on the base branch "+fixture.Base, "pin a commit of "+fixture.Base)
	if list := fixture.Worktrees(t, h.Repo); len(list) != 1 {
		t.Errorf("a refused check created a worktree: %v", list)
	}
}

func TestTheWorktreeIsWhereTheDocumentsCommandSays(t *testing.T) {
	steps := fixture.Steps()
	steps[0].(map[string]any)["command"] = "git worktree add <worktree_root>/pr-07-named <base_branch>"
	h := newStepContext(t, stepOpts{Inputs: map[string]any{"worktree_name": nil}, Procedure: steps})
	h.must("create_worktree")
	want := filepath.Join(h.WtRoot, "pr-07-named")
	if _, ok := fixture.Worktrees(t, h.Repo)[want]; !ok {
		t.Errorf("git worktree list %v has no %s, the path the document's command names", fixture.Worktrees(t, h.Repo), want)
	}
	// The dry run names the same place for the cleanup.
	if got := h.plan("cleanup_worktree"); !strings.Contains(got, want) {
		t.Errorf("cleanup plan %q does not name %s", got, want)
	}
}

func TestTheApprovalRequestShowsSummaryConfidenceEvidenceAndRollback(t *testing.T) {
	h := newStepContext(t, stepOpts{Approval: true})
	wo := h.r.task.WorkOrder
	conf := 0.72
	wo.Approval.Summary, wo.Approval.Confidence = "Put the foundation packages up for review", &conf
	wo.Approval.Evidence = []workorder.Evidence{{Claim: "the base branch builds", Status: "validated",
		Sources: []workorder.Source{{Title: "CI", URL: "https://ci.example/1", RetrievedAt: "2026-11-01T00:00:00Z"}}}}
	wo.RollbackHints = []string{"close the pull request and delete review/01-foundation"}
	err := h.r.gate(wo.Procedure[0])
	var req *ApprovalRequiredError
	if !errors.As(err, &req) {
		t.Fatalf("gate: %v", err)
	}
	for _, want := range []string{"summary: Put the foundation packages up for review", "confidence: 72%",
		"evidence (validated): the base branch builds (1 source(s))", "to roll back: close the pull request and delete review/01-foundation"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the approval request lacks %q:\n%s", want, err)
		}
	}
	// The dry run shows them too, from the stored work order.
	d, _ := h.store.Get(h.ctx, fixture.Key)
	if _, err := h.store.Update(h.ctx, fixture.Key, d["_rev"].(string), store.Nest("work_order.rollback_hints", []any{"git push origin :review/01-foundation"})); err != nil {
		t.Fatal(err)
	}
	p, perr := h.engine().Plan(h.ctx, RunOptions{Key: fixture.Key})
	var pf *PreflightError
	if perr != nil && !errors.As(perr, &pf) || strings.Join(p.RollbackHints, ";") != "git push origin :review/01-foundation" {
		t.Errorf("the plan's rollback hints: %q (%v)", p.RollbackHints, perr)
	}
}

func TestABranchNamedOnlyByTheCommandIsCleanedUpAsTheTasks(t *testing.T) {
	steps := fixture.BareSteps("create_worktree", "create_branch", "checkout_files", "commit", "cleanup_worktree")
	steps[1].(map[string]any)["command"] = "git checkout -b rev/cmdbranch"
	h := newStepContext(t, stepOpts{Inputs: map[string]any{"branch_name": nil}, Procedure: steps})
	h.upTo("cleanup_worktree")
	if err := h.check("cleanup_worktree"); err != nil {
		t.Fatalf("cleanup refuses the task's own worktree: %v", err)
	}
	h.must("cleanup_worktree")
	if _, ok := fixture.Worktrees(t, h.Repo)[h.Worktree]; ok {
		t.Error("the worktree is still there")
	}
	if got := gittest.Run(t, h.Repo, "rev-parse", "--verify", "refs/heads/rev/cmdbranch"); got == "" {
		t.Error("the branch the command names was not made")
	}
}

func TestAWorktreeNeverGoesOutsideItsRoot(t *testing.T) {
	for name, place := range map[string]func(h *stepHarness) string{
		"named by the command": func(h *stepHarness) string {
			h.r.task.WorkOrder.Procedure[0].Command = "git worktree add " + h.Root + "/elsewhere code-review-base"
			h.r.doc["work_order"].(map[string]any)["procedure"].([]any)[0].(map[string]any)["command"] = h.r.task.WorkOrder.Procedure[0].Command
			h.r.facts = nil
			return h.Root + "/elsewhere"
		},
		"forged in the state": func(h *stepHarness) string {
			p := h.Root + "/forged"
			h.r.state.WorktreePath = &p
			return p
		},
	} {
		h := newStepContext(t, stepOpts{Inputs: map[string]any{"worktree_name": nil}})
		where := place(h)
		fixture.ErrContains(t, h.check("create_worktree"), "is not inside work_order.context.worktree_root")
		if _, err := h.run("create_worktree"); err == nil {
			t.Errorf("%s: a worktree was made at %s", name, where)
		}
		if _, err := h.run("cleanup_worktree"); err == nil {
			t.Errorf("%s: cleanup went ahead at %s", name, where)
		}
	}
}

func TestNoPullRequestForABranchWithNothingToReview(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true})
	h.upTo("create_pr")
	st := h.stored()
	h.setState(func(s *workorder.State) { s.PushedSHA = st.BaseSHA }) // as if the manifest changed nothing
	_, err := h.run("create_pr")
	fixture.ErrContains(t, err, "has no commits on top of", "nothing to review")
	if n := len(h.GH.PullRequests(fixture.Repo)); n != 0 {
		t.Errorf("%d pull request(s) opened for a branch with nothing to review", n)
	}
}
