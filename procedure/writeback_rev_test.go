package procedure

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/wo-runner/wo/workorder"
)

// closedMeanwhile is a step during which a person closes the task (with a
// note of theirs) before the step's mid-step checkpoint, as a Persephone
// tool can at any time while a run holds the lease.
type closedMeanwhile struct{ h *stepHarness }

func (a closedMeanwhile) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	anotherWriter(a.h.t, a.h, map[string]any{"status": "closed",
		"work_order": map[string]any{"state": map[string]any{"notes": []any{"closed by a person"}}}})
	st := sc.State()
	st.Notes = append(st.Notes, "the step's checkpoint")
	if err := sc.Checkpoint(ctx, st); err != nil {
		return Outcome{}, err
	}
	return Outcome{State: &st}, nil
}

// A checkpoint that finds the task closed by someone else stops the step;
// the engine then records the step's failure. That write must not take
// the revision the checkpoint read (and refused to write over) as one the
// run has seen: the task stays closed, with the person's note, and is not
// moved to blocked over their close.
func TestAFailedRebaseDoesNotLetTheNextWriteOverwriteTheChangeItRefused(t *testing.T) {
	var h *stepHarness
	h = newStepContext(t, stepOpts{Procedure: bareSteps("closed_meanwhile"), Actions: append(DefaultActions(),
		ActionSpec{Name: "closed_meanwhile", Does: "let a person close the task, then checkpoint",
			New: func() Action { return closedMeanwhile{h} }})})
	_, err := h.engine().Run(h.ctx, RunOptions{Key: fixKey})
	var concurrent *ConcurrentChangeError
	if !errors.As(err, &concurrent) {
		t.Errorf("the run over a task closed meanwhile: %v, want a ConcurrentChangeError", err)
	}
	doc, gerr := h.store.Get(h.ctx, fixKey)
	if gerr != nil {
		t.Fatal(gerr)
	}
	st, _ := workorder.StateOf(doc)
	if workorder.StatusOf(doc) != workorder.StatusClosed || !slices.Contains(st.Notes, "closed by a person") {
		t.Errorf("status %s, notes %q: the person's close and note must stand", workorder.StatusOf(doc), st.Notes)
	}
}
