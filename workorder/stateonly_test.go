package workorder

import (
	"strings"
	"testing"
)

func TestAnEpicWithOnlyWosStateIsNoWorkOrder(t *testing.T) {
	epic := func(state any) Document {
		return Document{"_key": "task_ep", "type": "epic", "title": "The epic", "status": "open",
			"description": "An epic of stacked review pull requests", "work_order": map[string]any{"state": state}}
	}
	doc := epic(map[string]any{"github_stacks": map[string]any{"enabled": true, "checked_at": "2026-11-27T00:00:00Z", "stacks": []any{3}}})
	if IsWorkOrder(doc) {
		t.Error("a work_order holding only the state is taken for a work order")
	}
	if r := Validate(doc, Options{}); !r.Valid() {
		t.Errorf("an epic with wo's state is invalid: %+v", r.Problems)
	}
	bad := epic(map[string]any{"github_stacks": "yes"})
	r := Validate(bad, Options{})
	if r.Valid() || !strings.Contains(problemText(r), "work_order.state.github_stacks") {
		t.Errorf("a state of the wrong shape passes: %+v", r.Problems)
	}
	if r := Validate(epic("not a state"), Options{}); r.Valid() {
		t.Error("a state that is not an object passes")
	}
	for _, c := range []struct {
		wo   any
		want bool
	}{
		{map[string]any{"state": map[string]any{}, "procedure": []any{}}, true},
		{map[string]any{"version": "1.0"}, true},
		{map[string]any{}, false},
		{"a string", true}, // not an object: the work order's checks say so
	} {
		if got := IsWorkOrder(Document{"work_order": c.wo}); got != c.want {
			t.Errorf("IsWorkOrder(%v) = %v, want %v", c.wo, got, c.want)
		}
	}
	if IsWorkOrder(Document{"title": "a plain task"}) {
		t.Error("a task without work_order is a work order")
	}
}

func problemText(r Report) string {
	var b strings.Builder
	for _, p := range r.Problems {
		b.WriteString(p.Path + ": " + p.Message + "\n")
	}
	return b.String()
}
