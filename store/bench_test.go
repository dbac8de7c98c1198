package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// benchDoc is the fixture's task_cr_01: a realistic work order.
func benchDoc(b *testing.B) map[string]any {
	data, err := os.ReadFile("../fixtures/hermes-review.json")
	if err != nil {
		b.Fatal(err)
	}
	docs, err := workorder.DecodeDocuments("fixture", data)
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range docs {
		if workorder.Key(d) == "task_cr_01" {
			return d
		}
	}
	b.Fatal("no task_cr_01 in the fixture")
	return nil
}

func openBench(b *testing.B) *store.SQLite {
	s, err := store.OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "wo.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.Create(context.Background(), benchDoc(b)); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkSQLiteStateWriteBack is what the engine does after every step:
// read the task, then one conditional merge of work_order.state.
func BenchmarkSQLiteStateWriteBack(b *testing.B) {
	ctx := context.Background()
	s := openBench(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		doc, err := s.Get(ctx, "task_cr_01")
		if err != nil {
			b.Fatal(err)
		}
		patch := store.Nest("work_order.state", map[string]any{
			"current_step": i%11 + 1, "completed_steps": []any{1, 2, 3}, "notes": []any{"step done"},
		})
		patch["updated_at"] = "2026-11-22T00:00:00Z"
		if _, err := s.Update(ctx, "task_cr_01", doc["_rev"].(string), patch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSQLiteRawRowWrite is the baseline: the same read and an
// immediate-transaction write of a body of the same size, with no JSON
// decoding or merging. The ratio of the two is wo's own overhead.
func BenchmarkSQLiteRawRowWrite(b *testing.B) {
	ctx := context.Background()
	s := openBench(b)
	db := store.DBOf(s)
	var body string
	if err := db.QueryRow(`SELECT body FROM persephone_tasks WHERE key = 'task_cr_01'`).Scan(&body); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var rev int64
		var got string
		if err := db.QueryRowContext(ctx, `SELECT rev, body FROM persephone_tasks WHERE key = 'task_cr_01'`).Scan(&rev, &got); err != nil {
			b.Fatal(err)
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE persephone_tasks SET rev = rev + 1, body = ? WHERE key = 'task_cr_01' AND rev = ?`, body, rev); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}
