package procedure

import (
	"fmt"
	"slices"
	"testing"

	"github.com/wo-runner/wo/integration/ghstandin"
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
