package arango

import (
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wo-runner/wo/store"
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

func TestGetReadsDocumentAndKeepsLargeNumbers(t *testing.T) {
	f := newFakeArango(t)
	f.expect("GET", db+"/_api/document/persephone_tasks/task_cr_01", 200,
		map[string]any{"_key": "task_cr_01", "_id": "persephone_tasks/task_cr_01", "_rev": "_hX1", "status": "open",
			"x_big": 9007199254740993, "work_order": map[string]any{"context": map[string]any{"x": "kept"}}},
		func(t *testing.T, r *http.Request, _ any) { basicAuth(t, r) })
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
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeArango(t)
			f.expect("PATCH", db+"/_api/document/persephone_tasks/task_a?keepNull=true&mergeObjects=true", tc.status,
				arangoError(tc.status, tc.num, "boom"), nil)
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
	f.expect("PATCH", db+"/_api/document/persephone_tasks/task_cr_01?keepNull=true&mergeObjects=true", 202,
		map[string]any{"_id": "persephone_tasks/task_cr_01", "_key": "task_cr_01", "_rev": "_r2", "_oldRev": "_r1"},
		func(t *testing.T, r *http.Request, body any) {
			if got := r.Header.Get("If-Match"); got != "_r1" {
				t.Errorf("If-Match = %q, want _r1", got)
			}
			wantJSON(t, "patch body", body, patch)
		})
	rev, err := open(t, f.url()).Update(context.Background(), "task_cr_01", "_r1", patch)
	if err != nil {
		t.Fatal(err)
	}
	if rev != "_r2" {
		t.Errorf("new revision %q, want _r2", rev)
	}
}

func TestCreateInsertsTasksAndEdgesInOneQuery(t *testing.T) {
	f := newFakeArango(t)
	docs := []map[string]any{
		{"_key": "task_b", "_rev": "stale", "status": "open", "work_order": map[string]any{"dependencies": map[string]any{"blocked_by": []any{"task_a"}}}},
		{"_key": "task_a", "status": "open"},
	}
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{"task_b__blocked_by__task_a"}, ""),
		query(`LET created = (FOR d IN @docs INSERT d INTO @@tasks OPTIONS { overwriteMode: "conflict" } RETURN NEW._key)
FOR e IN @edges INSERT e INTO @@edges OPTIONS { overwriteMode: "ignore" }
RETURN e._key`, map[string]any{
			"@tasks": "persephone_tasks", "@edges": "persephone_edges",
			"docs": []any{
				map[string]any{"_key": "task_b", "status": "open", "work_order": map[string]any{"dependencies": map[string]any{"blocked_by": []any{"task_a"}}}},
				map[string]any{"_key": "task_a", "status": "open"},
			},
			"edges": []any{map[string]any{"_key": "task_b__blocked_by__task_a", "_from": "persephone_tasks/task_b", "_to": "persephone_tasks/task_a", "type": "blocked_by"}},
		}))
	if err := open(t, f.url()).Create(context.Background(), docs...); err != nil {
		t.Fatal(err)
	}
}

func TestCreateExistingKeyNamesIt(t *testing.T) {
	f := newFakeArango(t)
	f.expect("POST", db+"/_api/cursor", 409, arangoError(409, 1210, "unique constraint violated - in index primary of type primary over '_key'; conflicting key: task_a"),
		query(`FOR d IN @docs INSERT d INTO @@tasks OPTIONS { overwriteMode: "conflict" } RETURN NEW._key`, map[string]any{"@tasks": "persephone_tasks", "docs": []any{map[string]any{"_key": "task_new"}, map[string]any{"_key": "task_a"}}}))
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{"task_a"}, ""),
		query(`FOR k IN @keys FILTER DOCUMENT(@@tasks, k) != null RETURN k`, map[string]any{"@tasks": "persephone_tasks", "keys": []any{"task_new", "task_a"}}))
	err := open(t, f.url()).Create(context.Background(), map[string]any{"_key": "task_new"}, map[string]any{"_key": "task_a"})
	if !store.IsExists(err) || !strings.Contains(err.Error(), "task_a") {
		t.Fatalf("want an exists error naming task_a, got %v", err)
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
			if s, _ := m["created_at"].(string); !strings.HasSuffix(s, "Z") {
				t.Errorf("created_at = %v, want RFC 3339 UTC", m["created_at"])
			}
		})
	err := open(t, f.url()).AppendLog(context.Background(), store.LogEntry{Action: "step_completed", TaskKey: "task_a", SessionKey: "me@host:1"})
	if err != nil {
		t.Fatal(err)
	}
}

func TestInitCreatesCollectionsAndIndexes(t *testing.T) {
	f := newFakeArango(t)
	f.expect("GET", db+"/_api/collection/persephone_tasks", 404, arangoError(404, 1203, "collection or view not found"), nil)
	f.expect("POST", db+"/_api/collection", 200, map[string]any{"name": "persephone_tasks", "type": 2},
		func(t *testing.T, _ *http.Request, body any) {
			wantJSON(t, "create tasks", map[string]any{"name": body.(map[string]any)["name"], "type": body.(map[string]any)["type"]},
				map[string]any{"name": "persephone_tasks", "type": 2})
		})
	for _, field := range []string{"parent_key", "status"} {
		field := field
		f.expect("POST", db+"/_api/index?collection=persephone_tasks", 201, map[string]any{"id": "persephone_tasks/1", "type": "persistent"},
			func(t *testing.T, _ *http.Request, body any) {
				m := body.(map[string]any)
				wantJSON(t, "index", map[string]any{"type": m["type"], "fields": m["fields"]},
					map[string]any{"type": "persistent", "fields": []any{field}})
			})
	}
	f.expect("GET", db+"/_api/collection/persephone_edges", 200, map[string]any{"name": "persephone_edges", "type": 3}, nil)
	f.expect("POST", db+"/_api/index?collection=persephone_edges", 200, map[string]any{"id": "persephone_edges/2"}, nil)
	f.expect("GET", db+"/_api/collection/persephone_logs", 200, map[string]any{"name": "persephone_logs", "type": 2}, nil)
	f.expect("POST", db+"/_api/index?collection=persephone_logs", 200, map[string]any{"id": "persephone_logs/3"}, nil)
	f.expect("POST", db+"/_api/index?collection=persephone_logs", 200, map[string]any{"id": "persephone_logs/4"}, nil)
	if err := open(t, f.url()).Init(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestUnixSocketEndpoint(t *testing.T) {
	f := newFakeArango(t)
	sock := filepath.Join(t.TempDir(), "arango.sock")
	f.listenUnix(t, sock)
	f.expect("GET", db+"/_api/document/persephone_tasks/task_u", 200, map[string]any{"_key": "task_u", "_rev": "_1"}, nil)
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
	f.expect("GET", db+"/_api/document/persephone_tasks/task_x", 401, arangoError(401, 11, "not authorized to execute this request"), nil)
	f.expect("GET", db+"/_api/document/persephone_tasks/task_y", 404, arangoError(404, 1228, "database not found"), nil)
	s := open(t, f.url())
	_, err := s.Get(context.Background(), "task_x")
	if err == nil || !strings.Contains(err.Error(), "ARANGO_PASSWORD") || strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("401: %v", err)
	}
	_, err = s.Get(context.Background(), "task_y")
	if err == nil || store.IsNotFound(err) || !strings.Contains(err.Error(), `no database "hades"`) {
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
	if _, err := Open(context.Background(), Config{URL: "arangodb+http://h:8529"}); err == nil || !strings.Contains(err.Error(), "WO_DATABASE") {
		t.Errorf("missing database: %v", err)
	}
}

func TestLogsByActionQuery(t *testing.T) {
	f := newFakeArango(t)
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{
		map[string]any{"action": "step_completed", "task_key": "task_a", "session_key": "r", "details": map[string]any{"duration_ms": 12}, "created_at": "2026-01-02T03:04:05Z"},
	}, ""), query(`FOR l IN @@logs FILTER l.action == @action SORT l.created_at DESC LIMIT @limit RETURN l`,
		map[string]any{"@logs": "persephone_logs", "action": "step_completed", "limit": 500}))
	got, err := open(t, f.url()).LogsByAction(context.Background(), "step_completed", 500)
	if err != nil || len(got) != 1 || got[0].TaskKey != "task_a" || got[0].CreatedAt.Year() != 2026 {
		t.Fatalf("%+v %v", got, err)
	}
}
