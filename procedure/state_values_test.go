package procedure

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wo-runner/wo/integration/ghstandin"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

// Regression tests for Outcome.State (a step's change of state as a whole
// state, where it was a closure the engine ran on the run's state): a
// copy taken before a checkpoint of the same step must not undo what
// that checkpoint brought into the run's state.

// A pull request of an epic is recorded at once, mid-step, so that the
// stack tables name it. When that write meets another writer's change (a
// note from a person's Persephone tool), the rebase brings their note
// into the run's state; the state create_pr then leaves must still hold
// it, or the step's own write deletes the note from the store.
func TestCreatePRInAnEpicKeepsWhatAnotherWriterChangedDuringTheStep(t *testing.T) {
	h := newStepContext(t, stepOpts{GitHub: true})
	h.r.task.ParentKey = "task_epic"
	sha := h.pushBranch()
	h.setState(func(s *stateT) { s.PushedSHA = sha })
	const theirs = "NOTE FROM PERSEPHONE"
	foreignWrite(t, h, map[string]any{"work_order": map[string]any{"state": map[string]any{"notes": []any{theirs}}}})

	out, err := h.run("create_pr")
	if err != nil {
		t.Fatal(err)
	}
	// The mid-step record met the other writer and kept their note.
	if st := h.stored(); st.PRNumber != 1 || !slices.Contains(st.Notes, theirs) {
		t.Fatalf("after create_pr's checkpoint the store has pr_number %d notes %q; want #1 and %q", st.PRNumber, st.Notes, theirs)
	}
	if st := h.recorded(out); !slices.Contains(st.Notes, theirs) {
		t.Errorf("create_pr leaves notes %q: the other writer's %q, which its own checkpoint brought in, is gone", st.Notes, theirs)
	}
	h.keep(out)
	if st := h.stored(); st.PRNumber != 1 || !slices.Contains(st.Notes, theirs) {
		t.Errorf("after create_pr completed the store has pr_number %d notes %q; the other writer's %q was deleted", st.PRNumber, st.Notes, theirs)
	}
}

// A review wait that asks a reviewer (Copilot, re-requested for the
// pushed head) records the ask at once, mid-step; when the review then
// arrives within the same wait, the state the step leaves still holds
// the ask, so a later wait never asks twice for the same head.
func TestReviewWaitLeavesTheAsksItRecordedOnTheWay(t *testing.T) {
	const copilot = "copilot-pull-request-reviewer[bot]"
	h := newStepContext(t, stepOpts{GitHub: true, Context: map[string]any{"reviewers": []any{copilot}},
		StandIn: func(gh *ghstandin.Server) { gh.Mode = ghstandin.ModeCopilot }})
	head := h.openPR()

	out, err := h.run("wait_for_review")
	if err != nil {
		t.Fatalf("the wait did not end with Copilot's review: %v", err)
	}
	if asked := h.GH.RequestedReviewers(); len(asked) != 1 || asked[0] != copilot {
		t.Fatalf("requested reviewers %q; want Copilot asked once", asked)
	}
	ask := func(st stateT) string {
		if len(st.ReviewAsks) != 1 {
			return fmt.Sprintf("%d asks %+v", len(st.ReviewAsks), st.ReviewAsks)
		}
		a := st.ReviewAsks[0]
		return fmt.Sprintf("%s %s %s", a.Reviewer, a.How, a.Head)
	}
	want := copilot + " re-request " + head
	if got := ask(h.stored()); got != want {
		t.Fatalf("mid-step the store records %s; want %s", got, want)
	}
	if got := ask(h.recorded(out)); got != want {
		t.Errorf("wait_for_review leaves %s; want %s (the ask it recorded on the way)", got, want)
	}
	h.keep(out)
	if got := ask(h.stored()); got != want {
		t.Errorf("after the step the store records %s; want %s", got, want)
	}
}

// A pass of the review loop records the fix's push mid-step (pushed_sha
// and the time of the push); the state the pass leaves keeps that time:
// the next review wait reads only signals since it.
func TestLoopPassLeavesTheTimeOfItsFixPush(t *testing.T) {
	h := loopReady(t, stepOpts{Agent: "printf 'package foundation\\n\\n// N is exported.\\nconst N = 0\\n' > foundation/new.go\n"})
	const before = "2020-01-02T03:04:05Z"
	h.setState(func(s *stateT) { s.PushedAt = before })
	started := time.Now().Add(-time.Second)

	out, err := h.run("conditional_loop")
	if err != nil {
		t.Fatal(err)
	}
	fix := gittest.Run(t, h.Remote, "rev-parse", fixture.Branch)
	pushedAt := func(st stateT) string {
		at, err := time.Parse(time.RFC3339Nano, st.PushedAt)
		if err != nil || at.Before(started) || st.PushedSHA != fix {
			return fmt.Sprintf("pushed_sha %s at %q", st.PushedSHA, st.PushedAt)
		}
		return "the fix, at its push"
	}
	if got := pushedAt(h.stored()); got != "the fix, at its push" {
		t.Fatalf("mid-step the store records %s; want %s at the push", got, fix)
	}
	if got := pushedAt(h.recorded(out)); got != "the fix, at its push" {
		t.Errorf("the loop pass leaves %s; want %s pushed now, not the earlier push's time %s", got, fix, before)
	}
}

// A left-over agent record of an earlier run (on another host) is cleared
// before the agent runs; an agent step that then stops for review must not
// leave that record behind again.
func TestAnAgentStepThatStopsForReviewLeavesNoAgentRecord(t *testing.T) {
	h := newStepContext(t, stepOpts{Procedure: fixture.AgentSteps("task_note"), Agent: "echo 'no tags here'\n"})
	h.setState(func(s *stateT) { s.Agent = &workorder.AgentProcess{PID: 4242, Host: "another-host.example", Step: 2} })
	out, err := h.run("agent")
	waiting(t, err)
	st := h.recorded(out)
	if st.Phase != workorder.PhaseNeedsReview || st.Agent != nil {
		t.Errorf("the agent step leaves phase %q agent %+v; want needs_review and no agent record", st.Phase, st.Agent)
	}
	h.keep(out)
	if a := h.stored().Agent; a != nil {
		t.Errorf("the store keeps the agent record %+v", a)
	}
}

// Likewise for the review loop's agent that changed nothing: the pass
// waits for a fix, with no agent record.
func TestLoopPassWithAnAgentThatChangedNothingLeavesNoAgentRecord(t *testing.T) {
	h := loopReady(t, stepOpts{Agent: "true\n"})
	h.setState(func(s *stateT) { s.Agent = &workorder.AgentProcess{PID: 4242, Host: "another-host.example", Step: 9} })
	out, err := h.run("conditional_loop")
	waiting(t, err)
	st := h.recorded(out)
	if st.Phase != workorder.PhaseNeedsFix || st.Agent != nil {
		t.Errorf("the loop pass leaves phase %q agent %+v; want needs_fix and no agent record", st.Phase, st.Agent)
	}
}
