package commands

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// wholeDocuments hides a store's ListSummaries, so wo status reads whole
// documents as it did before summaries: the baseline of the status
// benchmark.
type wholeDocuments struct{ store.Store }

// BenchmarkStatusEpic1000 is wo status on an epic of 1,000 children on the
// embedded store, in-process: open, read, render the table. Each pair
// runs it reading summaries (what wo does) and reading whole documents
// (the baseline: what it did before), alternating which goes first, and
// reports both medians and the median of the per-pair ratios. Target:
// wo-ms under 50.
func BenchmarkStatusEpic1000(b *testing.B) {
	db := filepath.Join(b.TempDir(), "wo.db")
	s, err := store.OpenSQLite(context.Background(), db)
	if err != nil {
		b.Fatal(err)
	}
	tmpl := fixtureDoc(b, "task_cr_01")
	docs := []map[string]any{{"_key": "task_big_epic", "type": "epic", "status": "open", "title": "A big epic",
		"description": "An epic with a thousand children"}}
	for i := 0; i < 1000; i++ {
		d := workorder.Clone(tmpl).(map[string]any)
		d["_key"] = fmt.Sprintf("task_big_%04d", i)
		d["parent_key"] = "task_big_epic"
		if i > 0 {
			d["work_order"].(map[string]any)["dependencies"] = map[string]any{"blocked_by": []any{fmt.Sprintf("task_big_%04d", i/2)}}
		}
		docs = append(docs, d)
	}
	if err := s.Create(context.Background(), docs...); err != nil {
		b.Fatal(err)
	}
	// A history for the estimates: the step_completed entries of 2,000
	// earlier steps.
	for i := 0; i < 2000; i++ {
		s.AppendLog(context.Background(), store.LogEntry{Action: "step_completed", TaskKey: fmt.Sprintf("task_old_%d", i/10),
			Details: map[string]any{"step": i%10 + 1, "action": "commit", "duration_ms": 40 + i%7}})
	}
	s.Close()
	status := func(whole bool) time.Duration {
		var out, errb bytes.Buffer
		f := NewFactory(strings.NewReader(""), &out, &errb)
		if whole {
			open := f.OpenStore
			f.OpenStore = func(ctx context.Context, cfg StoreConfig) (store.Store, error) {
				s, err := open(ctx, cfg)
				return wholeDocuments{s}, err
			}
		}
		start := time.Now()
		if code := Run(context.Background(), f, []string{"wo", "status", "task_big_epic", "--store", db}); code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
		d := time.Since(start)
		if !strings.Contains(out.String(), "1000 tasks") {
			b.Fatalf("output: %.300s", out.String())
		}
		return d
	}
	pairs := 7
	if n, err := strconv.Atoi(os.Getenv("WO_BENCH_PAIRS")); err == nil && n > 0 {
		pairs = n
	}
	status(false) // the first run warms the file cache for both
	b.ResetTimer()
	var ratios []float64
	var summaries, whole []time.Duration
	for n := 0; n < b.N; n++ {
		for i := 0; i < pairs; i++ {
			var s, w time.Duration
			if i%2 == 0 {
				w, s = status(true), status(false)
			} else {
				s, w = status(false), status(true)
			}
			summaries, whole = append(summaries, s), append(whole, w)
			ratios = append(ratios, float64(s)/float64(w))
		}
	}
	b.StopTimer()
	slices.Sort(ratios)
	slices.Sort(summaries)
	slices.Sort(whole)
	b.ReportMetric(float64(summaries[len(summaries)/2].Microseconds())/1000, "wo-ms")
	b.ReportMetric(float64(whole[len(whole)/2].Microseconds())/1000, "whole-docs-ms")
	b.ReportMetric(ratios[len(ratios)/2], "wo/whole-docs-median")
	b.ReportMetric(ratios[0], "wo/whole-docs-min")
	b.ReportMetric(ratios[len(ratios)-1], "wo/whole-docs-max")
	b.ReportMetric(float64(len(ratios)), "pairs")
}
