package store_test

import (
	"reflect"
	"testing"

	"github.com/wo-runner/wo/store"
)

// TestBlockersInPatch pins the rule by which Update decides whether a patch
// rewrites a task's blocked_by edges, and to what.
func TestBlockersInPatch(t *testing.T) {
	deps := func(v any) map[string]any {
		return map[string]any{"work_order": map[string]any{"dependencies": v}}
	}
	cases := []struct {
		name     string
		patch    map[string]any
		blockers []string
		decides  bool
	}{
		{"state only", map[string]any{"work_order": map[string]any{"state": map[string]any{"current_step": 2}}}, nil, false},
		{"no work_order", map[string]any{"status": "closed"}, nil, false},
		{"dependencies without blocked_by merge", deps(map[string]any{"blocks": []any{"task_x"}}), nil, false},
		{"new list, sorted, each once", deps(map[string]any{"blocked_by": []any{"task_b", "task_a", "task_b"}}), []string{"task_a", "task_b"}, true},
		{"list built in Go", deps(map[string]any{"blocked_by": []string{"task_c"}}), []string{"task_c"}, true},
		{"empty list", deps(map[string]any{"blocked_by": []any{}}), nil, true},
		{"null", deps(map[string]any{"blocked_by": nil}), nil, true},
		{"not an array", deps(map[string]any{"blocked_by": "task_a"}), nil, true},
		{"dependencies replaced by null", deps(nil), nil, true},
		{"work_order replaced by null", map[string]any{"work_order": nil}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, decides := store.BlockersInPatch(tc.patch)
			if decides != tc.decides || len(got)+len(tc.blockers) > 0 && !reflect.DeepEqual(got, tc.blockers) {
				t.Errorf("BlockersInPatch = %v, %v; want %v, %v", got, decides, tc.blockers, tc.decides)
			}
		})
	}
}
