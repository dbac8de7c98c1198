package arango

import (
	"context"
	"testing"

	"github.com/wo-runner/wo/store"
)

// wo delete and wo import --replace: the task goes at its revision, then
// its edges, then the new documents come, in one stream transaction.
func TestReplaceRemovesAtTheRevisionThenCreatesInOneTransaction(t *testing.T) {
	f := newFakeArango(t)
	var steps trxSteps
	doc := map[string]any{"_key": "task_c", "_rev": "_old", "title": "Replaced",
		"work_order": map[string]any{"dependencies": map[string]any{"blocked_by": []any{"task_a"}}}}
	f.expect("POST", db+"/_api/transaction/begin", 201, trxReply(201, "running"), steps.step("begin", nil))
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{}, ""), steps.step("remove the task",
		query(`REMOVE { _key: @key, _rev: @rev } IN @@tasks OPTIONS { ignoreRevs: false }`,
			map[string]any{"@tasks": "persephone_tasks", "key": "task_c", "rev": "_r1"})))
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{}, ""), steps.step("remove its edges",
		query(`FOR e IN @@edges FILTER e._from == @from REMOVE e IN @@edges`,
			map[string]any{"@edges": "persephone_edges", "from": "persephone_tasks/task_c"})))
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{map[string]any{"_key": "task_c", "_rev": "_r2"}}, ""), steps.step("create",
		query(queryCreateWithEdges, map[string]any{
			"@tasks": "persephone_tasks", "@edges": "persephone_edges",
			"docs": []any{map[string]any{"_key": "task_c", "title": "Replaced",
				"work_order": map[string]any{"dependencies": map[string]any{"blocked_by": []any{"task_a"}}}}},
			"edges": []any{map[string]any{"_key": "task_c__blocked_by__task_a", "_from": "persephone_tasks/task_c", "_to": "persephone_tasks/task_a", "type": "blocked_by"}},
		})))
	f.expect("PUT", db+"/_api/transaction/"+trxID, 200, trxReply(200, "committed"), steps.step("commit", nil))
	if err := open(t, f.url()).Replace(context.Background(), map[string]string{"task_c": "_r1"}, []map[string]any{doc}); err != nil {
		t.Fatal(err)
	}
	steps.want(t, "begin", "remove the task", "remove its edges", "create", "commit")
}

// A moved revision is a conflict; the transaction is aborted and nothing
// else is sent.
func TestReplaceOfAMovedTaskIsAConflictAndAborts(t *testing.T) {
	f := newFakeArango(t)
	var steps trxSteps
	f.expect("POST", db+"/_api/transaction/begin", 201, trxReply(201, "running"), steps.step("begin", nil))
	f.expect("POST", db+"/_api/cursor", 409, arangoError(409, 1200, "AQL: conflict, _rev values do not match"), steps.step("remove the task", nil))
	f.expect("DELETE", db+"/_api/transaction/"+trxID, 200, trxReply(200, "aborted"), steps.step("abort", nil))
	err := open(t, f.url()).Replace(context.Background(), map[string]string{"task_c": "_r1"}, nil)
	if !store.IsConflict(err) {
		t.Fatalf("a moved revision: %v, want a conflict", err)
	}
	steps.want(t, "begin", "remove the task", "abort")
}
