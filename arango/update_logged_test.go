package arango

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/store"
)

const wantUpdateLogged = `LET updated = (UPDATE { _key: @key, _rev: @rev } WITH @patch IN @@tasks OPTIONS { ignoreRevs: false, keepNull: true, mergeObjects: true } RETURN NEW._rev)
LET logged = (FOR e IN @entries INSERT e INTO @@logs RETURN 1)
RETURN FIRST(updated)`

// A step's state write-back and its step_completed entry are one request:
// one AQL query that updates the task on its revision and inserts the
// entry, so that a remote store costs one round trip for both. The fake
// fails the test on any other request.
func TestUpdateLoggedIsOneRequest(t *testing.T) {
	f := newFakeArango(t)
	patch := map[string]any{"work_order": map[string]any{"state": map[string]any{"current_step": 2}}}
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{"_r2"}, ""), func(t *testing.T, r *http.Request, body any) {
		m := body.(map[string]any)
		if m["query"] != wantUpdateLogged {
			t.Errorf("query:\n%s\nwant\n%s", m["query"], wantUpdateLogged)
		}
		bind := m["bindVars"].(map[string]any)
		if bind["@tasks"] != "persephone_tasks" || bind["@logs"] != "persephone_logs" || bind["key"] != "task_a" || bind["rev"] != "_r1" {
			t.Errorf("bind variables %v", bind)
		}
		entries, _ := bind["entries"].([]any)
		if len(entries) != 1 {
			t.Fatalf("entries %v, want one", bind["entries"])
		}
		e := entries[0].(map[string]any)
		if e["action"] != "step_completed" || e["task_key"] != "task_a" || e["created_at"] != "2026-01-02T03:04:05.000000000Z" {
			t.Errorf("entry %v", e)
		}
		if _, ok := e["details"].(map[string]any); !ok {
			t.Errorf("details must be an object: %v", e["details"])
		}
	})
	rev, err := open(t, f.url()).UpdateLogged(context.Background(), "task_a", "_r1", patch, []store.LogEntry{{
		Action: "step_completed", TaskKey: "task_a", SessionKey: "me@host:1", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	if rev != "_r2" {
		t.Errorf("revision %q, want _r2", rev)
	}
}

// A stale revision fails the one query, entries and all: the caller sees
// a conflict and rereads.
func TestUpdateLoggedConflictIsAConflict(t *testing.T) {
	f := newFakeArango(t)
	f.expect("POST", db+"/_api/cursor", 409, arangoError(409, 1200, "conflict"), func(t *testing.T, _ *http.Request, body any) {
		if q, _ := body.(map[string]any)["query"].(string); !strings.Contains(q, "INSERT e INTO @@logs") {
			t.Errorf("query %q does not write the entries", q)
		}
	})
	_, err := open(t, f.url()).UpdateLogged(context.Background(), "task_a", "_r1", map[string]any{"status": "in_progress"},
		[]store.LogEntry{{Action: "run_started", TaskKey: "task_a"}})
	if !store.IsConflict(err) {
		t.Fatalf("got %v, want a conflict", err)
	}
}
