package commands

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// BenchmarkStatusEpic1000 is wo status on an epic of 1,000 children on the
// embedded store: open, two queries, render the table. Target: under 200 ms.
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
	s.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var out, errb bytes.Buffer
		f := NewFactory(strings.NewReader(""), &out, &errb)
		if code := Run(context.Background(), f, []string{"wo", "status", "task_big_epic", "--store", db}); code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
		if !strings.Contains(out.String(), "1000 tasks") {
			b.Fatalf("output: %.300s", out.String())
		}
	}
}
