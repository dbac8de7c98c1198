package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/store/storetest"
	"github.com/wo-runner/wo/workorder"
)

// The summary column is wo's own: an older wo (which does not know it)
// or another tool that writes the body in SQLite leaves it as it was.
// wo status must then show the document as it is, not as it was.
func TestSummaryIsNotStaleAfterAWriteThatSkipsIt(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wo.db")
	s, err := store.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Create(ctx, storetest.Doc("task_a"), storetest.Doc("task_b")); err != nil {
		t.Fatal(err)
	}
	// Another writer: an older wo's UPDATE (rev bumped, body rewritten)
	// and a tool editing the body in place.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`UPDATE persephone_tasks SET rev = rev + 1, status = 'closed', body = json_set(body, '$.status', 'closed', '$.work_order.state.current_step', 3) WHERE key = 'task_a'`,
		`UPDATE persephone_tasks SET body = json_set(body, '$.status', 'in_progress') WHERE key = 'task_b'`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	got, err := store.ListSummaries(ctx, s, store.Filter{ParentKey: "task_epic"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"task_a": "closed", "task_b": "in_progress"}
	for _, d := range got {
		k := workorder.Key(d)
		if st := workorder.String(d, "status"); st != want[k] {
			t.Errorf("%s: the summary says status %q, the document %q", k, st, want[k])
		}
	}
	if step, _ := workorder.AsInt(workorder.Get(got[0], "work_order.state.current_step")); step != 3 {
		t.Errorf("task_a: the summary says step %d, the document 3", step)
	}
	// wo's own writes keep the summary column filled (the fast path).
	d, err := s.Get(ctx, "task_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "task_a", workorder.String(d, "_rev"), map[string]any{"status": "open"}); err != nil {
		t.Fatal(err)
	}
	var filled int
	if err := db.QueryRow(`SELECT count(*) FROM persephone_tasks WHERE key = 'task_a' AND summary IS NOT NULL`).Scan(&filled); err != nil || filled != 1 {
		t.Errorf("after wo's own update the summary column is empty (%v)", err)
	}
}
