package arango

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/wo-runner/wo/store"
)

// The AQL texts of Create and of its compensation.
const (
	wantCreate          = `FOR d IN @docs INSERT d INTO @@tasks OPTIONS { overwriteMode: "conflict" } RETURN { _key: NEW._key, _rev: NEW._rev }`
	wantCreateWithEdges = `LET created = (FOR d IN @docs INSERT d INTO @@tasks OPTIONS { overwriteMode: "conflict" } RETURN { _key: NEW._key, _rev: NEW._rev })
LET linked = (FOR e IN @edges INSERT e INTO @@edges OPTIONS { overwriteMode: "ignore" } RETURN 1)
FOR c IN created RETURN c`
	wantCompensate = `LET removed = (FOR d IN @created REMOVE d IN @@tasks OPTIONS { ignoreRevs: false, ignoreErrors: true } RETURN OLD._key)
FOR e IN @edges FILTER PARSE_IDENTIFIER(e._from).key IN removed REMOVE e._key IN @@edges OPTIONS { ignoreErrors: true }`
)

var (
	importDocs = []map[string]any{
		{"_key": "task_1", "status": "open"},
		{"_key": "task_2", "status": "open", "work_order": map[string]any{"dependencies": map[string]any{"blocked_by": []any{"task_1"}}}},
	}
	importEdges = []any{map[string]any{"_key": "task_2__blocked_by__task_1", "_from": "persephone_tasks/task_2", "_to": "persephone_tasks/task_1", "type": "blocked_by"}}
	importBind  = map[string]any{"@tasks": "persephone_tasks", "@edges": "persephone_edges", "docs": importDocs, "edges": importEdges}
)

// An import that fails in the middle of its query (here a DB-Server of a
// simulated cluster is lost while the tasks go in) is aborted: no commit,
// and the error says to retry later.
func TestCreateFailingMidImportAbortsAndCommitsNothing(t *testing.T) {
	f := newFakeArango(t)
	var steps trxSteps
	f.expect("POST", db+"/_api/transaction/begin", 201, trxReply(201, "running"), steps.step("begin", nil))
	f.expect("POST", db+"/_api/cursor", 503, arangoError(503, 1478, "cluster internal HTTP connection broken"),
		steps.step("insert", query(wantCreateWithEdges, importBind)))
	f.expect("DELETE", db+"/_api/transaction/"+trxID, 200, trxReply(200, "aborted"), steps.step("abort", nil))
	err := open(t, f.url()).Create(context.Background(), importDocs...)
	if !store.IsUnavailable(err) {
		t.Fatalf("want an unavailable error (retry later), got %v", err)
	}
	steps.want(t, "begin", "insert", "abort")
}

// A commit that fails in a sharded cluster may have written some shards:
// Create takes back every task it inserted, by key and the revision the
// insert gave it (so a task someone changed since stays), and their edges,
// then reports the failure.
func TestCreateFailedCommitIsCompensated(t *testing.T) {
	f := newFakeArango(t)
	var steps trxSteps
	created := []any{map[string]any{"_key": "task_1", "_rev": "_r1"}, map[string]any{"_key": "task_2", "_rev": "_r2"}}
	f.expect("POST", db+"/_api/transaction/begin", 201, trxReply(201, "running"), steps.step("begin", nil))
	f.expect("POST", db+"/_api/cursor", 201, cursorReply(created, ""), steps.step("insert", query(wantCreateWithEdges, importBind)))
	f.expect("PUT", db+"/_api/transaction/"+trxID, 500, arangoError(500, 1457, "timeout in cluster operation"), steps.step("commit", nil))
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{}, ""), func(t *testing.T, r *http.Request, body any) {
		steps.seen = append(steps.seen, "compensate")
		if id := r.Header.Get("x-arango-trx-id"); id != "" {
			t.Errorf("the compensation runs in the failed transaction %s", id)
		}
		query(wantCompensate, map[string]any{"@tasks": "persephone_tasks", "@edges": "persephone_edges", "created": created, "edges": importEdges})(t, r, body)
	})
	err := open(t, f.url()).Create(context.Background(), importDocs...)
	if err == nil || !strings.Contains(err.Error(), "committing the new tasks") {
		t.Fatalf("want the commit failure, got %v", err)
	}
	if strings.Contains(err.Error(), "taking back") {
		t.Errorf("a compensation that worked must not be reported as failed: %v", err)
	}
	steps.want(t, "begin", "insert", "commit", "compensate")
}

// When the compensation fails too, the error says so and what to check.
func TestCreateFailedCompensationIsReported(t *testing.T) {
	f := newFakeArango(t)
	created := []any{map[string]any{"_key": "task_1", "_rev": "_r1"}}
	docs := []map[string]any{{"_key": "task_1"}}
	f.expect("POST", db+"/_api/transaction/begin", 201, trxReply(201, "running"), nil)
	f.expect("POST", db+"/_api/cursor", 201, cursorReply(created, ""), query(wantCreate, map[string]any{"@tasks": "persephone_tasks", "docs": docs}))
	f.expect("PUT", db+"/_api/transaction/"+trxID, 503, arangoError(503, 503, "service unavailable"), nil)
	f.expect("POST", db+"/_api/cursor", 503, arangoError(503, 503, "service unavailable"),
		query(wantCompensate, map[string]any{"@tasks": "persephone_tasks", "@edges": "persephone_edges", "created": created, "edges": []any{}}))
	err := open(t, f.url()).Create(context.Background(), docs...)
	if !store.IsUnavailable(err) || !strings.Contains(err.Error(), "taking back the tasks of the failed create") || !strings.Contains(err.Error(), "wo show") {
		t.Fatalf("want the commit failure and the failed compensation, got %v", err)
	}
}
