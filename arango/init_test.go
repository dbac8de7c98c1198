package arango

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/wo-runner/wo/store"
)

const (
	propsPath = db + "/_api/collection/"
	rolePath  = "/_admin/server/role"
)

func role(f *fakeArango, r string) {
	f.expect("GET", rolePath, 200, map[string]any{"error": false, "code": 200, "role": r, "mode": "default"}, nil)
}

// props is a GET /_api/collection/NAME/properties answer.
func props(name string, typ int, more map[string]any) map[string]any {
	p := map[string]any{"error": false, "code": 200, "name": name, "type": typ, "status": 3}
	for k, v := range more {
		p[k] = v
	}
	return p
}

// wantIndex checks an index request: persistent, on fields, named, built
// in the background.
func wantIndex(fields ...string) func(*testing.T, *http.Request, any) {
	return func(t *testing.T, _ *http.Request, body any) {
		m := body.(map[string]any)
		var fs []any
		for _, f := range fields {
			fs = append(fs, f)
		}
		wantJSON(t, "index", map[string]any{"type": m["type"], "fields": m["fields"], "name": m["name"], "inBackground": m["inBackground"]},
			map[string]any{"type": "persistent", "fields": fs, "name": "wo_" + strings.Join(fields, "_"), "inBackground": true})
	}
}

// indexes expects the indexes wo ensures on the tasks and logs collections.
func indexes(f *fakeArango, col string) {
	sets := map[string][][]string{
		"persephone_tasks": {{"parent_key"}, {"status"}},
		"persephone_logs":  {{"task_key", "created_at"}, {"action", "created_at"}},
	}[col]
	for _, fields := range sets {
		f.expect("POST", db+"/_api/index?collection="+col, 201, map[string]any{"id": col + "/1", "type": "persistent"}, wantIndex(fields...))
	}
}

func TestInitCreatesCollectionsAndIndexes(t *testing.T) {
	f := newFakeArango(t)
	role(f, "SINGLE")
	f.expect("GET", propsPath+"persephone_tasks/properties", 404, arangoError(404, 1203, "collection or view not found"), nil)
	f.expect("POST", db+"/_api/collection", 200, map[string]any{"name": "persephone_tasks", "type": 2},
		func(t *testing.T, _ *http.Request, body any) {
			m := body.(map[string]any)
			wantJSON(t, "create tasks", m, map[string]any{"name": "persephone_tasks", "type": 2})
		})
	f.expect("GET", propsPath+"persephone_tasks/properties", 200, props("persephone_tasks", 2, nil), nil)
	indexes(f, "persephone_tasks")
	// No index on the edges: the automatic edge index serves wo's queries.
	f.expect("GET", propsPath+"persephone_edges/properties", 200, props("persephone_edges", 3, nil), nil)
	f.expect("GET", propsPath+"persephone_logs/properties", 200, props("persephone_logs", 2, nil), nil)
	indexes(f, "persephone_logs")
	if err := open(t, f.url()).Init(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Two wo init at once: ours is refused with 409 (the other created the
// collection), and this coordinator does not see it yet (404). Init waits
// for it rather than failing.
func TestInitConcurrentCreationRetries409Then404(t *testing.T) {
	f := newFakeArango(t)
	role(f, "SINGLE")
	f.expect("GET", propsPath+"persephone_tasks/properties", 404, arangoError(404, 1203, "collection or view not found"), nil)
	f.expect("POST", db+"/_api/collection", 409, arangoError(409, 1207, "duplicate name"), nil)
	f.expect("GET", propsPath+"persephone_tasks/properties", 404, arangoError(404, 1203, "collection or view not found"), nil)
	f.expect("GET", propsPath+"persephone_tasks/properties", 200, props("persephone_tasks", 2, nil), nil)
	indexes(f, "persephone_tasks")
	f.expect("GET", propsPath+"persephone_edges/properties", 200, props("persephone_edges", 3, nil), nil)
	f.expect("GET", propsPath+"persephone_logs/properties", 200, props("persephone_logs", 2, nil), nil)
	indexes(f, "persephone_logs")
	if err := open(t, f.url()).Init(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A persephone_edges that is a document collection cannot hold edges:
// Init says which collection and what to do, before any index is made.
func TestInitRefusesEdgesOfTheWrongType(t *testing.T) {
	f := newFakeArango(t)
	role(f, "SINGLE")
	f.expect("GET", propsPath+"persephone_tasks/properties", 200, props("persephone_tasks", 2, nil), nil)
	indexes(f, "persephone_tasks")
	f.expect("GET", propsPath+"persephone_edges/properties", 200, props("persephone_edges", 2, nil), nil)
	err := open(t, f.url()).Init(context.Background())
	if err == nil {
		t.Fatal("Init accepted a document collection for the edges")
	}
	for _, want := range []string{"persephone_edges", "a document collection", "an edge collection", `db._drop("persephone_edges")`, "wo init"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error should mention %q: %v", want, err)
		}
	}
	if store.IsWarning(err) {
		t.Errorf("a wrong collection type is an error, not a warning: %v", err)
	}
}

// clusterInit expects Init's requests on a coordinator, with the database's
// sharding and the three collections' properties.
func clusterInit(f *fakeArango, sharding string, tasks, edges, logs map[string]any) {
	role(f, "COORDINATOR")
	f.expect("GET", db+"/_api/database/current", 200, map[string]any{"error": false, "code": 200,
		"result": map[string]any{"name": "hades", "id": "1", "isSystem": false, "sharding": sharding}}, nil)
	f.expect("GET", propsPath+"persephone_tasks/properties", 200, props("persephone_tasks", 2, tasks), nil)
	indexes(f, "persephone_tasks")
	f.expect("GET", propsPath+"persephone_edges/properties", 200, props("persephone_edges", 3, edges), nil)
	f.expect("GET", propsPath+"persephone_logs/properties", 200, props("persephone_logs", 2, logs), nil)
	indexes(f, "persephone_logs")
}

func TestInitOnClusterChecksSharding(t *testing.T) {
	t.Run("OneShard database: no warning", func(t *testing.T) {
		f := newFakeArango(t)
		clusterInit(f, "single", map[string]any{"numberOfShards": 1}, map[string]any{"numberOfShards": 1, "distributeShardsLike": "_graphs"}, nil)
		if err := open(t, f.url()).Init(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("one shard, edges and logs follow tasks: no warning", func(t *testing.T) {
		f := newFakeArango(t)
		follow := map[string]any{"numberOfShards": 1, "distributeShardsLike": "persephone_tasks"}
		clusterInit(f, "", map[string]any{"numberOfShards": 1}, follow, follow)
		if err := open(t, f.url()).Init(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("sharded apart: a warning naming the fix", func(t *testing.T) {
		f := newFakeArango(t)
		clusterInit(f, "", map[string]any{"numberOfShards": 3}, map[string]any{"numberOfShards": 3}, map[string]any{"numberOfShards": 3})
		err := open(t, f.url()).Init(context.Background())
		if !store.IsWarning(err) {
			t.Fatalf("want a warning, got %v", err)
		}
		for _, want := range []string{"not OneShard", "persephone_tasks has 3 shards", "persephone_edges does not follow", "persephone_logs does not follow", `sharding "single"`, "distributeShardsLike"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("warning should mention %q: %v", want, err)
			}
		}
		var got []string
		if store.Warned(err, func(m string) { got = append(got, m) }) != nil || len(got) != 1 {
			t.Errorf("Warned must pass the warning on and return nil: %v", got)
		}
	})
}

// On a cluster that is not OneShard, the collections wo creates are made
// to share one shard's placement: tasks with one shard, edges and logs
// following it.
func TestInitOnClusterCreatesCollectionsTogether(t *testing.T) {
	f := newFakeArango(t)
	role(f, "COORDINATOR")
	f.expect("GET", db+"/_api/database/current", 200, map[string]any{"error": false, "code": 200, "result": map[string]any{"name": "hades", "sharding": ""}}, nil)
	created := func(name string, typ int, more map[string]any) {
		f.expect("GET", propsPath+name+"/properties", 404, arangoError(404, 1203, "collection or view not found"), nil)
		f.expect("POST", db+"/_api/collection", 200, map[string]any{"name": name, "type": typ}, func(t *testing.T, _ *http.Request, body any) {
			want := map[string]any{"name": name, "type": typ}
			for k, v := range more {
				want[k] = v
			}
			wantJSON(t, "create "+name, body, want)
		})
		p := map[string]any{"numberOfShards": 1}
		if name != "persephone_tasks" {
			p["distributeShardsLike"] = "persephone_tasks"
		}
		f.expect("GET", propsPath+name+"/properties", 200, props(name, typ, p), nil)
		indexes(f, name)
	}
	created("persephone_tasks", 2, map[string]any{"numberOfShards": 1})
	created("persephone_edges", 3, map[string]any{"distributeShardsLike": "persephone_tasks"})
	created("persephone_logs", 2, map[string]any{"distributeShardsLike": "persephone_tasks"})
	if err := open(t, f.url()).Init(context.Background()); err != nil {
		t.Fatalf("collections created together must not warn: %v", err)
	}
}
