package arango

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/wo-runner/wo/store"
)

// The exact texts the store must send; a change to either is a change of
// what runs against users' databases and must show up here.
const (
	wantUpdateDropEdges = `LET updated = (UPDATE { _key: @key, _rev: @rev } WITH @patch IN @@tasks OPTIONS { ignoreRevs: false, keepNull: true, mergeObjects: true } RETURN NEW._rev)
LET dropped = (FOR e IN @@edges FILTER e._from == @from AND e.type == "blocked_by" AND PARSE_IDENTIFIER(e._to).key NOT IN @blockers REMOVE e IN @@edges RETURN 1)
RETURN updated[0]`
	wantAddEdges = `LET have = (FOR e IN @@edges FILTER e._from == @from AND e.type == "blocked_by" RETURN PARSE_IDENTIFIER(e._to).key)
FOR e IN @edges FILTER PARSE_IDENTIFIER(e._to).key NOT IN have INSERT e INTO @@edges OPTIONS { overwriteMode: "ignore" }`
)

const trxID = "68"

// trxSteps records the order of the transaction's requests.
type trxSteps struct{ seen []string }

// step checks a request of the transaction and records name. Begin must
// declare the collections it writes; a query must carry the transaction's
// id, or it would run (and commit) on its own. Commit and abort name the
// transaction in their path.
func (s *trxSteps) step(name string, more func(*testing.T, *http.Request, any)) func(*testing.T, *http.Request, any) {
	return func(t *testing.T, r *http.Request, body any) {
		t.Helper()
		basicAuth(t, r)
		switch {
		case name == "begin":
			m, _ := body.(map[string]any)
			wantJSON(t, "collections the transaction declares", m["collections"],
				map[string]any{"write": []any{"persephone_tasks", "persephone_edges"}})
		case strings.HasSuffix(r.URL.Path, "/_api/cursor"):
			if got := r.Header.Get("x-arango-trx-id"); got != trxID {
				t.Errorf("%s: x-arango-trx-id = %q, want %s: the query runs outside the transaction", name, got, trxID)
			}
		}
		if more != nil {
			more(t, r, body)
		}
		s.seen = append(s.seen, name)
	}
}

func (s *trxSteps) want(t *testing.T, order ...string) {
	t.Helper()
	if !reflect.DeepEqual(s.seen, order) {
		t.Errorf("requests in order %v, want %v", s.seen, order)
	}
}

func trxReply(code int, status string) map[string]any {
	return map[string]any{"code": code, "error": false, "result": map[string]any{"id": trxID, "status": status}}
}

func TestUpdateDependenciesRewritesEdgesInOneTransaction(t *testing.T) {
	f := newFakeArango(t)
	var steps trxSteps
	patch := map[string]any{"updated_at": "2026-01-01T00:00:00Z",
		"work_order": map[string]any{"dependencies": map[string]any{"blocked_by": []any{"task_b", "task_a", "task_b"}}}}
	f.expect("POST", db+"/_api/transaction/begin", 201, trxReply(201, "running"), steps.step("begin", nil))
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{"_r2"}, ""), steps.step("update and drop stale edges",
		query(wantUpdateDropEdges, map[string]any{
			"@tasks": "persephone_tasks", "@edges": "persephone_edges",
			"key": "task_c", "rev": "_r1", "patch": patch,
			"from": "persephone_tasks/task_c", "blockers": []any{"task_a", "task_b"},
		})))
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{}, ""), steps.step("add missing edges",
		query(wantAddEdges, map[string]any{
			"@edges": "persephone_edges", "from": "persephone_tasks/task_c",
			"edges": []any{
				map[string]any{"_key": "task_c__blocked_by__task_a", "_from": "persephone_tasks/task_c", "_to": "persephone_tasks/task_a", "type": "blocked_by"},
				map[string]any{"_key": "task_c__blocked_by__task_b", "_from": "persephone_tasks/task_c", "_to": "persephone_tasks/task_b", "type": "blocked_by"},
			},
		})))
	f.expect("PUT", db+"/_api/transaction/"+trxID, 200, trxReply(200, "committed"), steps.step("commit", nil))

	rev, err := open(t, f.url()).Update(context.Background(), "task_c", "_r1", patch)
	if err != nil {
		t.Fatal(err)
	}
	if rev != "_r2" {
		t.Errorf("new revision %q, want _r2", rev)
	}
	steps.want(t, "begin", "update and drop stale edges", "add missing edges", "commit")
}

func TestUpdateClearingDependenciesRemovesEdgesOnly(t *testing.T) {
	for name, value := range map[string]any{"empty list": []any{}, "null": nil} {
		t.Run(name, func(t *testing.T) {
			f := newFakeArango(t)
			var steps trxSteps
			patch := map[string]any{"work_order": map[string]any{"dependencies": map[string]any{"blocked_by": value}}}
			f.expect("POST", db+"/_api/transaction/begin", 201, trxReply(201, "running"), steps.step("begin", nil))
			f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{"_r2"}, ""), steps.step("update and drop every edge",
				query(wantUpdateDropEdges, map[string]any{
					"@tasks": "persephone_tasks", "@edges": "persephone_edges",
					"key": "task_c", "rev": "_r1", "patch": patch,
					"from": "persephone_tasks/task_c", "blockers": []any{},
				})))
			f.expect("PUT", db+"/_api/transaction/"+trxID, 200, trxReply(200, "committed"), steps.step("commit", nil))
			if _, err := open(t, f.url()).Update(context.Background(), "task_c", "_r1", patch); err != nil {
				t.Fatal(err)
			}
			steps.want(t, "begin", "update and drop every edge", "commit")
		})
	}
}

// A stale revision fails the first query; the transaction is aborted and no
// edge query follows, so a writer that read too early cannot drop a blocker.
func TestUpdateDependenciesConflictAbortsTheTransaction(t *testing.T) {
	cases := []struct {
		name        string
		abortStatus int
		abortReply  map[string]any
		wantInMsg   string // "" when the abort must not show in the error
	}{
		{"abort succeeds", 200, trxReply(200, "aborted"), ""},
		{"server already aborted it", 410, arangoError(410, 1654, "transaction aborted"), ""},
		{"abort fails", 500, arangoError(500, 4, "internal error"), "aborting ArangoDB transaction " + trxID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeArango(t)
			var steps trxSteps
			patch := map[string]any{"work_order": map[string]any{"dependencies": map[string]any{"blocked_by": []any{"task_a"}}}}
			f.expect("POST", db+"/_api/transaction/begin", 201, trxReply(201, "running"), steps.step("begin", nil))
			f.expect("POST", db+"/_api/cursor", 409, arangoError(409, 1200, "AQL: conflict, _rev values do not match (while executing)"),
				steps.step("update and drop stale edges", nil))
			f.expect("DELETE", db+"/_api/transaction/"+trxID, tc.abortStatus, tc.abortReply, steps.step("abort", nil))

			_, err := open(t, f.url()).Update(context.Background(), "task_c", "_stale", patch)
			if !store.IsConflict(err) || store.IsNotFound(err) {
				t.Fatalf("want a conflict, got %v", err)
			}
			if tc.wantInMsg == "" && strings.Contains(err.Error(), "abort") {
				t.Errorf("an abort that left nothing behind must not show in the error: %v", err)
			}
			if tc.wantInMsg != "" && !strings.Contains(err.Error(), tc.wantInMsg) {
				t.Errorf("a failed abort must be reported: %v", err)
			}
			steps.want(t, "begin", "update and drop stale edges", "abort")
		})
	}
}

// Patches that do not decide blocked_by stay one conditional UPDATE and
// touch no edge: a dependencies object without blocked_by merges, keeping
// the old array and its edges.
func TestUpdateWithoutBlockedByLeavesEdgesAlone(t *testing.T) {
	f := newFakeArango(t)
	patch := map[string]any{"work_order": map[string]any{"dependencies": map[string]any{"blocks": []any{"task_d"}}}}
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{"_r2"}, ""),
		query(wantUpdate, map[string]any{"@tasks": "persephone_tasks", "key": "task_c", "rev": "_r1", "patch": patch}))
	if rev, err := open(t, f.url()).Update(context.Background(), "task_c", "_r1", patch); err != nil || rev != "_r2" {
		t.Fatalf("rev %q, err %v", rev, err)
	}
}
