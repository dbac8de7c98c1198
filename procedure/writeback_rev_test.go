package procedure

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

// closedMeanwhile is a step during which a person closes the task (with a
// note of theirs) before the step's mid-step checkpoint, as a Persephone
// tool can at any time while a run holds the lease.
type closedMeanwhile struct{ h *stepHarness }

func (a closedMeanwhile) Run(ctx context.Context, sc *action.StepContext) (action.Outcome, error) {
	anotherWriter(a.h.t, a.h, map[string]any{"status": "closed",
		"work_order": map[string]any{"state": map[string]any{"notes": []any{"closed by a person"}}}})
	st := sc.State()
	st.Notes = append(st.Notes, "the step's checkpoint")
	if err := sc.Checkpoint(ctx, st); err != nil {
		return action.Outcome{}, err
	}
	return action.Outcome{State: &st}, nil
}

// A checkpoint that finds the task closed by someone else stops the step;
// the engine then records the step's failure. That write must not take
// the revision the checkpoint read (and refused to write over) as one the
// run has seen: the task stays closed, with the person's note, and is not
// moved to blocked over their close.
func TestAFailedRebaseDoesNotLetTheNextWriteOverwriteTheChangeItRefused(t *testing.T) {
	var h *stepHarness
	h = newStepContextWith(t, stepOpts{Procedure: fixture.BareSteps("closed_meanwhile")}, append(action.DefaultActions(),
		action.Spec{Name: "closed_meanwhile", Does: "let a person close the task, then checkpoint",
			New: func() action.Action { return closedMeanwhile{h} }}))
	_, err := h.engine().Run(h.ctx, RunOptions{Key: fixture.Key})
	var concurrent *ConcurrentChangeError
	if !errors.As(err, &concurrent) {
		t.Errorf("the run over a task closed meanwhile: %v, want a ConcurrentChangeError", err)
	}
	doc, gerr := h.store.Get(h.ctx, fixture.Key)
	if gerr != nil {
		t.Fatal(gerr)
	}
	st, _ := workorder.StateOf(doc)
	if workorder.StatusOf(doc) != workorder.StatusClosed || !slices.Contains(st.Notes, "closed by a person") {
		t.Errorf("status %s, notes %q: the person's close and note must stand", workorder.StatusOf(doc), st.Notes)
	}
}

// An edit outside a run (wo reset, an approval decision, wo undo, a
// restack) reads the task, then takes its lease: a change another writer
// made between the two is in the revision the lease write produced, but
// not in what the edit read. The edit's write must keep that change, as
// a run's does (resumeFrom), not write over it unseen.
func TestAnEditOutsideARunKeepsAChangeMadeBeforeItTookTheLease(t *testing.T) {
	t.Run("a note was added", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		e := h.engine()
		doc, task, err := e.Load(h.ctx, fixture.Key)
		if err != nil {
			t.Fatal(err)
		}
		anotherWriter(t, h, map[string]any{"work_order": map[string]any{"state": map[string]any{"notes": []any{"theirs"}}}})
		r, release, err := e.hold(h.ctx, doc, task)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		r.state.Notes = append(r.state.Notes, "ours")
		if err := r.save(h.ctx, nil); err != nil {
			t.Fatal(err)
		}
		st := h.stored()
		if !slices.Contains(st.Notes, "theirs") || !slices.Contains(st.Notes, "ours") {
			t.Errorf("notes %q: both the other writer's note and the edit's", st.Notes)
		}
	})
	t.Run("the task was closed", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		e := h.engine()
		doc, task, err := e.Load(h.ctx, fixture.Key)
		if err != nil {
			t.Fatal(err)
		}
		anotherWriter(t, h, map[string]any{"status": "closed"})
		r, release, err := e.hold(h.ctx, doc, task)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		top := map[string]any{}
		if err := r.setStatus(top, workorder.StatusBlocked, "an edit"); err != nil {
			t.Fatal(err)
		}
		err = r.save(h.ctx, top)
		var concurrent *ConcurrentChangeError
		if !errors.As(err, &concurrent) {
			t.Errorf("an edit's status move over a task closed meanwhile: %v, want a ConcurrentChangeError", err)
		}
		if d, _ := h.store.Get(h.ctx, fixture.Key); workorder.StatusOf(d) != workorder.StatusClosed {
			t.Errorf("the close was overwritten with %s", workorder.StatusOf(d))
		}
	})
}
