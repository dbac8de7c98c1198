package procedure

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// Tests of what the engine does besides running steps (dry run, reset,
// approval, sync, the outcome of an error), over the step harness.

func TestPlanShowsEveryStepAndChangesNothing(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	before, _ := h.store.Get(h.ctx, fixture.Key)
	// Without a GitHub token the run would not start: the plan says so
	// with the run's own error, and is still the whole plan.
	p, err := h.engine().Plan(h.ctx, RunOptions{Key: fixture.Key})
	var pf *PreflightError
	if !errors.As(err, &pf) || len(pf.Steps) != 1 || pf.Steps[0] != 6 || !strings.Contains(err.Error(), "no GitHub token") {
		t.Fatalf("the plan of a run that cannot start: %v", err)
	}
	if len(p.Steps) != 11 || p.FromStep != 1 || p.LeaseHeld != "" || p.WaitsFor != "" {
		t.Fatalf("plan %+v", p)
	}
	first := p.Steps[0]
	if first.Command != "git worktree add "+h.WtRoot+"/"+fixture.Worktree+" "+fixture.Base || !strings.HasPrefix(first.Would, "create linked worktree "+h.Worktree) {
		t.Errorf("step 1: command %q would %q", first.Command, first.Would)
	}
	if p.Steps[4].Would != "push "+fixture.Branch+" to origin" || p.Steps[10].Would != (action.UpdateTask{}).Plan(nil) {
		t.Errorf("step 5 would %q, step 11 would %q", p.Steps[4].Would, p.Steps[10].Would)
	}
	after, _ := h.store.Get(h.ctx, fixture.Key)
	if before["_rev"] != after["_rev"] {
		t.Error("the dry run wrote to the store")
	}
	if _, err := os.Stat(h.Worktree); !os.IsNotExist(err) {
		t.Errorf("the dry run made the worktree: %v", err)
	}
	// From a later step, and up to one.
	p, err = h.engine().Plan(h.ctx, RunOptions{Key: fixture.Key, FromStep: 5, UntilStep: 6})
	if !errors.As(err, &pf) || len(p.Steps) != 2 || p.Steps[0].Action != "push" {
		t.Errorf("plan of steps 5..6: %+v, %v", p, err)
	}
	// Up to a step before the one that cannot run, the plan is whole.
	if p, err = h.engine().Plan(h.ctx, RunOptions{Key: fixture.Key, FromStep: 4, UntilStep: 5}); err != nil || len(p.Steps) != 2 {
		t.Errorf("plan of steps 4..5: %+v, %v", p, err)
	}
}

func TestResetForgetsWhatTheRewoundStepsRecorded(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.upTo("commit")
	h.setState(func(s *stateT) { s.CurrentStep, s.CompletedSteps = 3, []int{1, 2, 3} })
	res, err := h.engine().Reset(h.ctx, fixture.Key, 2)
	if err != nil {
		t.Fatal(err)
	}
	st := h.stored()
	if res.CurrentStep != 2 || fmt.Sprint(st.CompletedSteps) != "[1 2]" || st.SourceSHA != "" || st.BaseSHA == "" {
		t.Errorf("after reset to 2: current %d completed %v source_sha %q base_sha %q", res.CurrentStep, st.CompletedSteps, st.SourceSHA, st.BaseSHA)
	}
	if _, err := h.engine().Reset(h.ctx, fixture.Key, 0); err != nil {
		t.Fatal(err)
	}
	doc, _ := h.store.Get(h.ctx, fixture.Key)
	if doc["status"] != "open" || h.stored().BaseSHA != "" {
		t.Errorf("after reset to 0: status %v base_sha %q", doc["status"], h.stored().BaseSHA)
	}
	_, err = h.engine().Reset(h.ctx, fixture.Key, 12)
	fixture.ErrContains(t, err, "task "+fixture.Key+" has steps 1..11: --to-step must be 0..11")
}

func TestApprovalGateAndDecisions(t *testing.T) {
	h := newStepContext(t, stepOpts{Approval: true})
	err := h.r.gate(h.step("create_worktree"))
	var approval *ApprovalRequiredError
	if !errors.As(err, &approval) {
		t.Fatalf("gate: %v", err)
	}
	if approval.Step != 1 || len(approval.Summary) != 8 || approval.Summary[4] != "5 push: git push -u origin "+fixture.Branch {
		t.Errorf("summary %q", approval.Summary)
	}
	fixture.ErrContains(t, err, "task "+fixture.Key+" needs approval before step 1", "approve with: wo approve "+fixture.Key)
	if err := h.r.gate(h.step("wait_for_review")); err != nil {
		t.Errorf("a step that changes nothing waited for approval: %v", err)
	}

	e := h.engine()
	if _, err := e.Decide(h.ctx, fixture.Key, workorder.DecisionRevise, "split the manifest"); err != nil {
		t.Fatal(err)
	}
	if a := h.stored().Approval; a == nil || a.Decision != workorder.DecisionRevise || a.Note != "split the manifest" || a.By != e.Runner {
		t.Errorf("stored approval %+v", a)
	}
	h.r.state.Approval = h.stored().Approval
	fixture.ErrContains(t, h.r.gate(h.step("create_worktree")), "was sent back for revision (split the manifest)")

	if _, err := e.Decide(h.ctx, fixture.Key, workorder.DecisionApproved, ""); err != nil {
		t.Fatal(err)
	}
	h.r.state.Approval = h.stored().Approval
	if err := h.r.gate(h.step("create_worktree")); err != nil {
		t.Errorf("approved, yet: %v", err)
	}
	if _, err := e.Decide(h.ctx, fixture.Key, workorder.DecisionCancelled, "not needed"); err != nil {
		t.Fatal(err)
	}
	doc, _ := h.store.Get(h.ctx, fixture.Key)
	if doc["status"] != "closed" {
		t.Errorf("cancelled task has status %v", doc["status"])
	}
	_, err = e.Decide(h.ctx, fixture.Key, workorder.DecisionApproved, "")
	fixture.ErrContains(t, err, "task "+fixture.Key+" is closed already")
	_, err = e.Decide(h.ctx, fixture.Key, "maybe", "")
	fixture.ErrContains(t, err, `unknown decision "maybe"`)

	plain := newStepContext(t, stepOpts{})
	_, err = plain.engine().Decide(plain.ctx, fixture.Key, workorder.DecisionApproved, "")
	fixture.ErrContains(t, err, "does not ask for approval")
}

func TestClassifyMapsErrorsToOutcomes(t *testing.T) {
	cases := []struct {
		err  error
		want Classification
	}{
		{nil, Classification{OutcomeDone, ""}},
		{&action.WaitingError{Key: "k", Reason: "r"}, Classification{OutcomeWaiting, "WAITING"}},
		{fmt.Errorf("wrapped: %w", &PreflightError{Key: "k"}), Classification{OutcomeInvalid, "INVALID_INPUT"}},
		{&store.LeaseHeldError{Key: "k"}, Classification{OutcomeLeaseHeld, "LEASE_HELD"}},
		{&RetriesExhaustedError{Key: "k", Err: errors.New("x")}, Classification{OutcomeRetryLater, "RETRY_LATER"}},
		{&StepFailedError{Key: "k", Err: errors.New("x")}, Classification{OutcomeFailed, "STEP_FAILED"}},
		{&ApprovalRequiredError{Key: "k"}, Classification{OutcomeWaiting, "APPROVAL_REQUIRED"}},
		{fmt.Errorf("child task_b: %w", store.NoDatabase("no database \"wo\" on the server")), Classification{OutcomeInvalid, "NO_DATABASE"}},
		{errors.New("something else"), Classification{OutcomeFailed, "FAILED"}},
		{&EpicError{Result: &EpicResult{Worst: OutcomeWaiting}}, Classification{OutcomeWaiting, "EPIC_WAITING"}},
	}
	for _, tc := range cases {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %+v, want %+v", tc.err, got, tc.want)
		}
	}
	if !OutcomeFailed.Worse(OutcomeWaiting) || OutcomeDone.Worse(OutcomeWaiting) {
		t.Error("outcome ranks")
	}
}

func TestPromptViewNamesTheNextStep(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.setState(func(s *stateT) { s.CurrentStep = 4 })
	doc, _ := h.store.Get(h.ctx, fixture.Key)
	v, err := action.Prompt(doc)
	if err != nil {
		t.Fatal(err)
	}
	if v.CurrentStep != "5. push" || len(v.Remaining) != 6 || !strings.Contains(v.Text, "Current step: 5. push") {
		t.Errorf("prompt view %+v", v)
	}
	h.setState(func(s *stateT) { s.CurrentStep = 11 })
	doc, _ = h.store.Get(h.ctx, fixture.Key)
	if v, _ := action.Prompt(doc); !strings.Contains(v.Text, "Every step is done.") {
		t.Errorf("prompt of a finished task: %q", v.Text)
	}
}

func TestWavesOrderAnEpicsChildren(t *testing.T) {
	child := func(key string, blockedBy ...any) map[string]any {
		return map[string]any{"_key": key, "work_order": map[string]any{"dependencies": map[string]any{"blocked_by": blockedBy}}}
	}
	waves, _, err := Waves([]map[string]any{child("c", "b"), child("a"), child("b", "a"), child("d", "a")})
	if err != nil || fmt.Sprint(waves) != "[[a] [b d] [c]]" {
		t.Errorf("waves %v, %v", waves, err)
	}
	_, _, err = Waves([]map[string]any{child("a", "b"), child("b", "a")})
	fixture.ErrContains(t, err, "the epic's dependencies have a cycle through")
}
