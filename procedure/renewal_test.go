package procedure

import (
	"errors"
	"slices"
	"testing"

	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// anotherWriter changes the task as a Persephone tool would while the run
// holds the lease: the patch at the document's current revision.
func anotherWriter(t *testing.T, h *stepHarness, patch map[string]any) {
	t.Helper()
	doc, err := h.store.Get(h.ctx, fixture.Key)
	if err != nil {
		t.Fatal(err)
	}
	rev, _ := doc["_rev"].(string)
	if _, err := h.store.Update(h.ctx, fixture.Key, rev, patch); err != nil {
		t.Fatal(err)
	}
}

// A lease renewal that meets another writer's change renews the lease on
// top of it; the run's next write must still see that change, not take the
// renewal's revision as its own and overwrite it.
func TestARenewalDoesNotHideAnotherWritersChangeFromTheRun(t *testing.T) {
	t.Run("the task was closed", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		anotherWriter(t, h, map[string]any{"status": "closed", "work_order": map[string]any{"state": map[string]any{"notes": []any{"theirs"}}}})
		if err := h.r.wb.Write(h.ctx, map[string]any{}); err != nil { // the renewal
			t.Fatal(err)
		}
		h.r.state.Notes = append(h.r.state.Notes, "ours")
		err := h.r.save(h.ctx, nil)
		var concurrent *ConcurrentChangeError
		if !errors.As(err, &concurrent) {
			t.Errorf("the run's write over a task closed meanwhile: %v, want a ConcurrentChangeError", err)
		}
		doc, _ := h.store.Get(h.ctx, fixture.Key)
		st, _ := workorder.StateOf(doc)
		if workorder.StatusOf(doc) != workorder.StatusClosed || !slices.Contains(st.Notes, "theirs") || slices.Contains(st.Notes, "ours") {
			t.Errorf("status %s, notes %q: the other writer's close and note must stand", workorder.StatusOf(doc), st.Notes)
		}
	})
	t.Run("a note was added", func(t *testing.T) {
		h := newStepContext(t, stepOpts{})
		anotherWriter(t, h, map[string]any{"work_order": map[string]any{"state": map[string]any{"notes": []any{"theirs"}}}})
		if err := h.r.wb.Write(h.ctx, map[string]any{}); err != nil {
			t.Fatal(err)
		}
		h.r.state.Notes = append(h.r.state.Notes, "ours")
		if err := h.r.save(h.ctx, nil); err != nil {
			t.Fatal(err)
		}
		doc, _ := h.store.Get(h.ctx, fixture.Key)
		st, _ := workorder.StateOf(doc)
		if !slices.Contains(st.Notes, "theirs") || !slices.Contains(st.Notes, "ours") {
			t.Errorf("notes %q: both the other writer's note and the run's", st.Notes)
		}
		if cur := store.Current(doc); cur == nil || cur.Holder != h.r.Runner {
			t.Errorf("the lease: %+v", cur)
		}
		// Once the run has written over what it saw, the next write
		// needs no reread.
		if h.r.wb.stale {
			t.Error("the write-back still thinks it has not seen the document")
		}
	})
}
