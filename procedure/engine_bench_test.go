package procedure

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// BenchmarkEngineStepOverhead is the engine's own cost per step on the
// embedded store: load, lease, a no-op action, the state write-back and the
// activity log entry. Target: under 5 ms a step.
func BenchmarkEngineStepOverhead(b *testing.B) {
	const steps = 20
	noop := func(context.Context, *action.StepContext) (action.Outcome, error) { return action.Outcome{}, nil }
	acts := scriptedActions(map[string]func(context.Context, *action.StepContext) (action.Outcome, error){"commit": noop})
	s, err := store.OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "wo.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	proc := make([]any, steps)
	for i := range proc {
		proc[i] = map[string]any{"step": i + 1, "action": "commit"}
	}
	for i := 0; i < b.N; i++ {
		doc := map[string]any{"_key": fmt.Sprintf("task_b%d", i), "title": "bench", "status": "open",
			"work_order": map[string]any{"version": "1.0", "objective": "Measure the engine overhead", "procedure": proc}}
		workorder.ApplyDefaults(doc)
		if err := s.Create(context.Background(), doc); err != nil {
			b.Fatal(err)
		}
	}
	e := &Engine{Store: s, Runner: "bench@host:1", Actions: acts}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := e.Run(context.Background(), RunOptions{Key: fmt.Sprintf("task_b%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N*steps)/1000, "ms/step")
}
