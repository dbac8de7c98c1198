package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/store/storetest"
)

// A store made by a wo that had no summary column: opening it adds the
// column, and its rows (summary still empty) are summarised from their
// bodies, so wo status shows them as before.
func TestSummariesOfRowsWrittenBeforeTheColumn(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wo.db")
	s, err := store.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	child := storetest.Doc("task_old_child")
	child["parent_key"] = "task_old_epic"
	if err := s.Create(ctx, storetest.Doc("task_old_epic"), child); err != nil {
		t.Fatal(err)
	}
	want, err := s.List(ctx, store.Filter{ParentKey: "task_old_epic"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// What an older wo left: no summary column at all (nor its trigger).
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DROP TRIGGER persephone_tasks_summary_stale; ALTER TABLE persephone_tasks DROP COLUMN summary`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := store.OpenSQLiteReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.ListSummaries(ctx, ro, store.Filter{ParentKey: "task_old_epic"})
	ro.Close()
	if err != nil {
		t.Fatalf("a read-only store without the column: %v", err)
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0], store.Summary(want[0])) {
		t.Errorf("read-only, no column: %v, want %v", got, store.Summary(want[0]))
	}
	s, err = store.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err = store.ListSummaries(ctx, s, store.Filter{ParentKey: "task_old_epic"})
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], store.Summary(want[0])) {
		t.Errorf("after reopening (column added, row not yet rewritten): %v %v", got, err)
	}
}
