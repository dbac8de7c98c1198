package arango

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

const db = "/_db/hades"

func open(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(context.Background(), Config{URL: url, Database: "hades", User: "wo", Password: "s3cret-pw"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func basicAuth(t *testing.T, r *http.Request) {
	t.Helper()
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("wo:s3cret-pw"))
	if got := r.Header.Get("Authorization"); got != want {
		t.Errorf("Authorization = %q, want Basic auth of wo", got)
	}
}

// The AQL texts of Get and Update: by bind variable, never by URL.
const (
	wantGet    = `RETURN DOCUMENT(@@tasks, @key)`
	wantUpdate = `UPDATE { _key: @key, _rev: @rev } WITH @patch IN @@tasks OPTIONS { ignoreRevs: false, keepNull: true, mergeObjects: true } RETURN NEW._rev`
)

// getTask is the exchange of a Get of key answered with doc (nil: missing).
func getTask(f *fakeArango, key string, doc any) {
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{doc}, ""), func(t *testing.T, r *http.Request, body any) {
		basicAuth(t, r)
		query(wantGet, map[string]any{"@tasks": "persephone_tasks", "key": key})(t, r, body)
	})
}

func TestGetReadsDocumentAndKeepsLargeNumbers(t *testing.T) {
	f := newFakeArango(t)
	getTask(f, "task_cr_01", map[string]any{"_key": "task_cr_01", "_id": "persephone_tasks/task_cr_01", "_rev": "_hX1", "status": "open",
		"x_big": 9007199254740993, "work_order": map[string]any{"context": map[string]any{"x": "kept"}}})
	doc, err := open(t, f.url()).Get(context.Background(), "task_cr_01")
	if err != nil {
		t.Fatal(err)
	}
	if doc["_rev"] != "_hX1" || doc["status"] != "open" {
		t.Errorf("doc = %v", doc)
	}
	if got := doc["x_big"]; got == nil || got.(interface{ String() string }).String() != "9007199254740993" {
		t.Errorf("large integer read as %v", got)
	}
}

func TestErrorMapping(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		status int
		num    int
		check  func(error) bool
	}{
		{"404/1202 is not found", 404, 1202, store.IsNotFound},
		{"412/1200 is a conflict", 412, 1200, store.IsConflict},
		{"409/1200 write-write is a conflict", 409, 1200, store.IsConflict},
		{"503 is unavailable", 503, 503, store.IsUnavailable},
		{"403/1004 write concern not met is unavailable", 403, 1004, store.IsUnavailable},
		{"403/1429 write concern not fulfilled is unavailable", 403, 1429, store.IsUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeArango(t)
			f.expect("POST", db+"/_api/cursor", tc.status, arangoError(tc.status, tc.num, "boom"),
				query(wantUpdate, map[string]any{"@tasks": "persephone_tasks", "key": "task_a", "rev": "_r1", "patch": map[string]any{"status": "closed"}}))
			_, err := open(t, f.url()).Update(ctx, "task_a", "_r1", map[string]any{"status": "closed"})
			if !tc.check(err) {
				t.Fatalf("got %v", err)
			}
			if store.IsNotFound(err) && store.IsConflict(err) {
				t.Fatal("not-found and conflict must be distinguishable")
			}
		})
	}
}

func TestUpdateIsConditionalAndMerges(t *testing.T) {
	f := newFakeArango(t)
	patch := map[string]any{"updated_at": "2026-01-01T00:00:00Z",
		"work_order": map[string]any{"state": map[string]any{"current_step": 3, "worktree_path": nil}}}
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{"_r2"}, ""),
		query(wantUpdate, map[string]any{"@tasks": "persephone_tasks", "key": "task_cr_01", "rev": "_r1", "patch": patch}))
	rev, err := open(t, f.url()).Update(context.Background(), "task_cr_01", "_r1", patch)
	if err != nil {
		t.Fatal(err)
	}
	if rev != "_r2" {
		t.Errorf("new revision %q, want _r2", rev)
	}
}

func TestCreateInsertsTasksAndEdgesInOneQueryOfOneTransaction(t *testing.T) {
	f := newFakeArango(t)
	var steps trxSteps
	docs := []map[string]any{
		{"_key": "task_b", "_rev": "stale", "status": "open", "work_order": map[string]any{"dependencies": map[string]any{"blocked_by": []any{"task_a"}}}},
		{"_key": "task_a", "status": "open"},
	}
	f.expect("POST", db+"/_api/transaction/begin", 201, trxReply(201, "running"), steps.step("begin", nil))
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{map[string]any{"_key": "task_b", "_rev": "_b1"}, map[string]any{"_key": "task_a", "_rev": "_a1"}}, ""),
		steps.step("insert", query(wantCreateWithEdges, map[string]any{
			"@tasks": "persephone_tasks", "@edges": "persephone_edges",
			"docs": []any{
				map[string]any{"_key": "task_b", "status": "open", "work_order": map[string]any{"dependencies": map[string]any{"blocked_by": []any{"task_a"}}}},
				map[string]any{"_key": "task_a", "status": "open"},
			},
			"edges": []any{map[string]any{"_key": "task_b__blocked_by__task_a", "_from": "persephone_tasks/task_b", "_to": "persephone_tasks/task_a", "type": "blocked_by"}},
		})))
	f.expect("PUT", db+"/_api/transaction/"+trxID, 200, trxReply(200, "committed"), steps.step("commit", nil))
	if err := open(t, f.url()).Create(context.Background(), docs...); err != nil {
		t.Fatal(err)
	}
	steps.want(t, "begin", "insert", "commit")
}

// An existing key fails the insert: ArangoDB says 409 with 1210 (unique
// constraint) on a single server, and may say 409 with 1200 (conflict) in
// a cluster. Either way the transaction is aborted, nothing is written, and
// the error is "exists", naming the key.
func TestCreateExistingKeyNamesIt(t *testing.T) {
	for _, num := range []int{1210, 1200} {
		t.Run(fmt.Sprint(num), func(t *testing.T) {
			f := newFakeArango(t)
			var steps trxSteps
			f.expect("POST", db+"/_api/transaction/begin", 201, trxReply(201, "running"), steps.step("begin", nil))
			f.expect("POST", db+"/_api/cursor", 409, arangoError(409, num, "conflicting key: task_a"),
				steps.step("insert", query(wantCreate, map[string]any{"@tasks": "persephone_tasks", "docs": []any{map[string]any{"_key": "task_new"}, map[string]any{"_key": "task_a"}}})))
			f.expect("DELETE", db+"/_api/transaction/"+trxID, 200, trxReply(200, "aborted"), steps.step("abort", nil))
			f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{"task_a"}, ""),
				query(`FOR k IN @keys FILTER DOCUMENT(@@tasks, k) != null RETURN k`, map[string]any{"@tasks": "persephone_tasks", "keys": []any{"task_new", "task_a"}}))
			err := open(t, f.url()).Create(context.Background(), map[string]any{"_key": "task_new"}, map[string]any{"_key": "task_a"})
			if !store.IsExists(err) || store.IsConflict(err) || !strings.Contains(err.Error(), "task_a") {
				t.Fatalf("want an exists error naming task_a, got %v", err)
			}
			steps.want(t, "begin", "insert", "abort")
		})
	}
}

func TestListChildrenFollowsCursorBatches(t *testing.T) {
	f := newFakeArango(t)
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{map[string]any{"_key": "task_1", "parent_key": "task_epic"}}, "77"),
		query(`FOR d IN @@tasks FILTER d.parent_key == @parent SORT d._key RETURN d`, map[string]any{"@tasks": "persephone_tasks", "parent": "task_epic"}))
	f.expect("POST", db+"/_api/cursor/77", 200,
		map[string]any{"result": []any{map[string]any{"_key": "task_2", "parent_key": "task_epic"}}, "hasMore": false, "error": false, "code": 200}, nil)
	docs, err := open(t, f.url()).List(context.Background(), store.Filter{ParentKey: "task_epic"})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0]["_key"] != "task_1" || docs[1]["_key"] != "task_2" {
		t.Errorf("children = %v", docs)
	}
}

func TestListByStatusAndBoth(t *testing.T) {
	f := newFakeArango(t)
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{}, ""),
		query(`FOR d IN @@tasks FILTER d.status == @status SORT d._key RETURN d`, map[string]any{"@tasks": "persephone_tasks", "status": "blocked"}))
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{}, ""),
		query(`FOR d IN @@tasks FILTER d.parent_key == @parent AND d.status == @status SORT d._key RETURN d`, map[string]any{"@tasks": "persephone_tasks", "status": "open", "parent": "task_e"}))
	s := open(t, f.url())
	if _, err := s.List(context.Background(), store.Filter{Status: "blocked"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(context.Background(), store.Filter{Status: "open", ParentKey: "task_e"}); err != nil {
		t.Fatal(err)
	}
}

func TestBlockedByReadsEdges(t *testing.T) {
	f := newFakeArango(t)
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{"task_a", "task_b"}, ""),
		query(`FOR e IN @@edges FILTER e._from == @from AND e.type == "blocked_by" SORT e._to RETURN PARSE_IDENTIFIER(e._to).key`, map[string]any{"@edges": "persephone_edges", "from": "persephone_tasks/task_c"}))
	deps, err := open(t, f.url()).BlockedBy(context.Background(), "task_c")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(deps, ",") != "task_a,task_b" {
		t.Errorf("deps = %v", deps)
	}
}

func TestAppendLogWritesPersephoneShape(t *testing.T) {
	f := newFakeArango(t)
	f.expect("POST", db+"/_api/document/persephone_logs", 201, map[string]any{"_key": "1", "_id": "persephone_logs/1", "_rev": "_a"},
		func(t *testing.T, _ *http.Request, body any) {
			m := body.(map[string]any)
			if m["action"] != "step_completed" || m["task_key"] != "task_a" || m["session_key"] != "me@host:1" {
				t.Errorf("log body = %v", m)
			}
			if _, ok := m["details"].(map[string]any); !ok {
				t.Errorf("details must be an object: %v", m["details"])
			}
			if s, _ := m["created_at"].(string); s != "2026-01-02T03:04:05.100000000Z" {
				t.Errorf("created_at = %v, want UTC with nine fraction digits", m["created_at"])
			}
			if _, err := m["seq"].(json.Number).Int64(); err != nil {
				t.Errorf("seq = %v, want an integer", m["seq"])
			}
		})
	err := open(t, f.url()).AppendLog(context.Background(), store.LogEntry{Action: "step_completed", TaskKey: "task_a", SessionKey: "me@host:1",
		CreatedAt: time.Date(2026, 1, 2, 4, 4, 5, 1e8, time.FixedZone("CET", 3600))})
	if err != nil {
		t.Fatal(err)
	}
}

func TestUnixSocketEndpoint(t *testing.T) {
	f := newFakeArango(t)
	sock := filepath.Join(t.TempDir(), "arango.sock")
	f.listenUnix(t, sock)
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{map[string]any{"_key": "task_u", "_rev": "_1"}}, ""), nil)
	doc, err := open(t, "arangodb+unix://"+sock).Get(context.Background(), "task_u")
	if err != nil {
		t.Fatal(err)
	}
	if doc["_key"] != "task_u" {
		t.Errorf("doc = %v", doc)
	}
}

func TestCustomCollectionNames(t *testing.T) {
	c := CollectionsFor("team_tasks")
	if c != (Collections{"team_tasks", "team_edges", "team_logs"}) {
		t.Errorf("CollectionsFor(team_tasks) = %+v", c)
	}
	if c := CollectionsFor("work"); c != (Collections{"work", "work_edges", "work_logs"}) {
		t.Errorf("CollectionsFor(work) = %+v", c)
	}
}

func TestUnreachableServerNamesURLWithoutPassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	_, err = open(t, "arangodb+http://"+addr).Get(context.Background(), "task_x")
	if !store.IsUnavailable(err) {
		t.Fatalf("want unavailable, got %v", err)
	}
	if !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("message must name %s and never the password: %v", addr, err)
	}
}

func TestUnauthorizedAndMissingDatabase(t *testing.T) {
	f := newFakeArango(t)
	f.expect("POST", db+"/_api/cursor", 401, arangoError(401, 11, "not authorized to execute this request"), nil)
	f.expect("POST", db+"/_api/cursor", 404, arangoError(404, 1228, "database not found"), nil)
	s := open(t, f.url())
	_, err := s.Get(context.Background(), "task_x")
	if err == nil || store.IsNoDatabase(err) || !strings.Contains(err.Error(), "ARANGO_PASSWORD") || strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("401: %v", err)
	}
	_, err = s.Get(context.Background(), "task_y")
	if !store.IsNoDatabase(err) || store.IsNotFound(err) || store.IsUnavailable(err) || !strings.Contains(err.Error(), `no database "hades"`) {
		t.Errorf("missing database must not look like a missing task: %v", err)
	}
}

func TestBadStoreURLs(t *testing.T) {
	for _, u := range []string{"arangodb+ftp://h", "arangodb+http://", "arangodb+unix://", "arangodb+http://root:pw@h:8529"} {
		_, err := Open(context.Background(), Config{URL: u, Database: "d"})
		if err == nil {
			t.Errorf("%s: accepted", u)
		} else if strings.Contains(err.Error(), ":pw@") {
			t.Errorf("%s: error shows the password: %v", u, err)
		}
	}
	if _, err := Open(context.Background(), Config{URL: "arangodb+http://h:8529"}); !store.IsNoDatabase(err) || !strings.Contains(err.Error(), "WO_DATABASE") {
		t.Errorf("missing database: %v", err)
	}
}

func TestLogDetailsQuery(t *testing.T) {
	f := newFakeArango(t)
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{
		map[string]any{"action": "step_completed", "task_key": "task_a", "session_key": "r", "details": map[string]any{"duration_ms": 12}, "created_at": "2026-01-02T03:04:05Z"},
	}, ""), query(wantLogDetails,
		map[string]any{"@logs": "persephone_logs", "action": "step_completed", "limit": 500, "keys": []any{"action", "duration_ms"}}))
	got, err := store.LogDetails(context.Background(), open(t, f.url()), "step_completed", 500, "action", "duration_ms")
	if err != nil || len(got) != 1 || got[0].TaskKey != "task_a" || got[0].CreatedAt.Year() != 2026 {
		t.Fatalf("%+v %v", got, err)
	}
	if n, _ := workorder.AsInt(got[0].Details["duration_ms"]); n != 12 {
		t.Errorf("details %v", got[0].Details)
	}
}

func TestLogsByActionQuery(t *testing.T) {
	f := newFakeArango(t)
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{
		map[string]any{"action": "step_completed", "task_key": "task_a", "session_key": "r", "details": map[string]any{"duration_ms": 12}, "created_at": "2026-01-02T03:04:05Z"},
	}, ""), query(wantLogsByAction,
		map[string]any{"@logs": "persephone_logs", "action": "step_completed", "limit": 500}))
	got, err := open(t, f.url()).LogsByAction(context.Background(), "step_completed", 500)
	if err != nil || len(got) != 1 || got[0].TaskKey != "task_a" || got[0].CreatedAt.Year() != 2026 {
		t.Fatalf("%+v %v", got, err)
	}
}
