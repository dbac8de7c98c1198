package procedure

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/store"
)

func TestEstimateFromSeededLog(t *testing.T) {
	ctx := context.Background()
	s, err := store.OpenSQLite(ctx, filepath.Join(t.TempDir(), "wo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	doc := map[string]any{"_key": "task_x", "work_order": map[string]any{
		"context":   map[string]any{"repo_path": "/src/app"},
		"procedure": []any{map[string]any{"step": 1, "action": "commit"}, map[string]any{"step": 2, "action": "push"}, map[string]any{"step": 3, "action": "wait_for_review"}},
		"state":     map[string]any{"current_step": 1}}}

	est, _ := NewEstimator(ctx, s)
	if e := est.Remaining(doc); e.Known || !strings.Contains(e.Basis, "no estimate yet") {
		t.Errorf("cold start: %+v", e)
	}

	seed := func(task, action, repo string, ms int) {
		s.AppendLog(ctx, store.LogEntry{Action: "step_completed", TaskKey: task, CreatedAt: time.Now(),
			Details: map[string]any{"action": action, "duration_ms": ms, "repo": repo}})
	}
	// push: 1s, 2s, 9s elsewhere (median 2s); wait_for_review: 60s, 70s, 80s
	// and 500s, 600s, 700s in /src/app (this repository's own: median 600s).
	for i, ms := range []int{1000, 2000, 9000} {
		seed("task_"+string(rune('a'+i)), "push", "/other", ms)
	}
	for i, ms := range []int{60000, 70000, 80000} {
		seed("task_"+string(rune('d'+i)), "wait_for_review", "/other", ms)
	}
	for i, ms := range []int{500000, 600000, 700000} {
		seed("task_"+string(rune('g'+i)), "wait_for_review", "/src/app", ms)
	}
	seed("task_z", "step_failed_is_not_counted", "/src/app", 1)
	est, _ = NewEstimator(ctx, s)
	e := est.Remaining(doc)
	if !e.Known || e.Remaining != 602*time.Second {
		t.Errorf("estimate %+v, want 602s (push 2s + this repository's review wait 600s)", e)
	}
	if e.Basis != "from 6 past run(s), low confidence" || e.Class != DurationLong || e.Confidence != "low" {
		t.Errorf("basis %q class %s confidence %s, want 6 runs, long (over 10 minutes), low (3 samples of a step)", e.Basis, e.Class, e.Confidence)
	}
	if cold := (&Estimator{byAction: map[string][]sample{}}).Remaining(doc); cold.Class != DurationUnknown {
		t.Errorf("no history: class %s, want unknown", cold.Class)
	}
	for d, want := range map[time.Duration]DurationClass{9 * time.Second: DurationInstant, 10 * time.Second: DurationShort,
		9 * time.Minute: DurationShort, 10 * time.Minute: DurationLong} {
		if got := classOf(d); got != want {
			t.Errorf("%s is %s, want %s", d, got, want)
		}
	}
	for n, want := range map[int]string{3: "low", 4: "low", 5: "medium", 19: "medium", 20: "high"} {
		if got := confidenceOf(n); got != want {
			t.Errorf("%d samples: %s confidence, want %s", n, got, want)
		}
	}
	// Re-estimated as steps complete.
	doc["work_order"].(map[string]any)["state"] = map[string]any{"current_step": 2}
	if e := est.Remaining(doc); e.Remaining != 600*time.Second {
		t.Errorf("after the push: %s", e.Remaining)
	}
}
