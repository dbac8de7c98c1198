package procedure

import (
	"errors"
	"fmt"
	"testing"

	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

// another writer (a person's Persephone tool) changes the stored task
// behind the run's back.
func foreignWrite(t *testing.T, h *stepHarness, patch map[string]any) {
	t.Helper()
	d, err := h.store.Get(h.ctx, fixture.Key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.Update(h.ctx, fixture.Key, d["_rev"].(string), patch); err != nil {
		t.Fatal(err)
	}
}

func TestAConcurrentWriterIsKeptNotOverwritten(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	h.must("create_worktree")
	foreignWrite(t, h, map[string]any{"x_reviewer": "ann", "work_order": map[string]any{"state": map[string]any{
		"notes": []any{"NOTE FROM PERSEPHONE"}, "x_tool": map[string]any{"seen": true}}}})

	h.r.state.Notes = append(h.r.state.Notes, "this run's note")
	h.must("create_branch")
	d, _ := h.store.Get(h.ctx, fixture.Key)
	st, _ := workorder.StateOf(d)
	got := fmt.Sprint(st.Notes)
	if got != "[NOTE FROM PERSEPHONE this run's note]" || st.Branch != fixture.Branch {
		t.Errorf("after a write that met another writer: notes %s branch %q; want theirs kept and this run's branch recorded", got, st.Branch)
	}
	if d["x_reviewer"] != "ann" || workorder.Get(d, "work_order.state.x_tool.seen") != true {
		t.Errorf("the other writer's fields were lost: %v", d)
	}

	// They close the task: the run stops and leaves it closed.
	foreignWrite(t, h, map[string]any{"status": "closed"})
	h.r.state.Notes = append(h.r.state.Notes, "this run's next note")
	top := map[string]any{}
	if err := h.r.setStatus(top, workorder.StatusBlocked, "a step failed"); err != nil {
		t.Fatal(err)
	}
	err := h.r.save(h.ctx, top)
	var changed *ConcurrentChangeError
	if !errors.As(err, &changed) || changed.Status != workorder.StatusClosed || Classify(err).Outcome != OutcomeWaiting {
		t.Fatalf("a write over a task someone closed: %v", err)
	}
	if d, _ := h.store.Get(h.ctx, fixture.Key); workorder.StatusOf(d) != workorder.StatusClosed {
		t.Errorf("the closed status was overwritten with %s", workorder.StatusOf(d))
	}
}
