package arango

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/wo-runner/wo/store"
)

func TestURLWithoutPortUses8529(t *testing.T) {
	for raw, want := range map[string]string{
		"arangodb+http://arangodb.internal":       "http://arangodb.internal:8529",
		"arangodb+https://arangodb.internal":      "https://arangodb.internal:8529",
		"http://arangodb.internal":                "http://arangodb.internal:8529",
		"arangodb+http://arangodb.internal:18529": "http://arangodb.internal:18529",
		"arangodb+http://[::1]":                   "http://[::1]:8529",
	} {
		got, _, err := Endpoint(raw, nil)
		if err != nil || got != want {
			t.Errorf("Endpoint(%s) = %q, %v; want %q", raw, got, err, want)
		}
	}
}

// The store reaches ArangoDB through the proxy that HTTP_PROXY names, and a
// URL without a port goes to 8529. It runs in a child process, because
// net/http reads the proxy variables once per process.
func TestProxyFromEnvironmentAndDefaultPort(t *testing.T) {
	if os.Getenv("WO_ARANGO_PROXY_CHILD") != "" {
		s, err := Open(context.Background(), Config{URL: "arangodb+http://arangodb.invalid", Database: "hades", User: "wo", Password: "s3cret-pw", Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(context.Background(), "task_p"); err != nil {
			t.Fatalf("Get through the proxy: %v", err)
		}
		return
	}
	f := newFakeArango(t) // the proxy: it answers as ArangoDB would behind it
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{map[string]any{"_key": "task_p", "_rev": "_1"}}, ""),
		func(t *testing.T, r *http.Request, _ any) {
			if r.Host != "arangodb.invalid:8529" {
				t.Errorf("request for %q, want arangodb.invalid:8529 (the default port, through the proxy)", r.Host)
			}
		})
	cmd := exec.Command(os.Args[0], "-test.run=^TestProxyFromEnvironmentAndDefaultPort$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "WO_ARANGO_PROXY_CHILD=1",
		"HTTP_PROXY="+f.server.URL, "http_proxy="+f.server.URL, "NO_PROXY=", "no_proxy=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// Close leaves no connection open on the server.
func TestCloseClosesIdleConnections(t *testing.T) {
	f := newFakeArango(t)
	getTask(f, "task_c", map[string]any{"_key": "task_c", "_rev": "_1"})
	s := open(t, f.url())
	if _, err := s.Get(context.Background(), "task_c"); err != nil {
		t.Fatal(err)
	}
	if f.conns.Load() == 0 {
		t.Fatal("no connection was kept alive: the test proves nothing")
	}
	s.Close()
	for deadline := time.Now().Add(5 * time.Second); f.conns.Load() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still open after Close", f.conns.Load())
		}
	}
}

// A cursor the server no longer has (it expired, or another coordinator
// answered the next batch) is a reason to run again, never "no such task".
func TestExpiredCursorIsNotMissingTask(t *testing.T) {
	for name, reply := range map[string]map[string]any{
		"404/1600 cursor not found": arangoError(404, 1600, "cursor not found"),
		"404 without error number":  {"error": true, "code": 404},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFakeArango(t)
			f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{"task_a"}, "91"), nil)
			f.expect("POST", db+"/_api/cursor/91", 404, reply, nil)
			f.expect("DELETE", db+"/_api/cursor/91", 404, arangoError(404, 1600, "cursor not found"), nil)
			_, err := open(t, f.url()).BlockedBy(context.Background(), "task_c")
			if err == nil || store.IsNotFound(err) {
				t.Fatalf("an expired cursor must not read as a missing task: %v", err)
			}
			if !store.IsUnavailable(err) {
				t.Errorf("want unavailable (run again), got %v", err)
			}
		})
	}
}

// An Update without a revision is a conflict, and sends nothing: ArangoDB
// would take an empty revision as "any".
func TestUpdateWithEmptyRevisionIsConflict(t *testing.T) {
	f := newFakeArango(t) // fails on any request
	_, err := open(t, f.url()).Update(context.Background(), "task_a", "", map[string]any{"status": "closed"})
	if !store.IsConflict(err) {
		t.Fatalf("want a conflict, got %v", err)
	}
}

// Keys may hold '+' and '%' (the key check allows them). They travel as
// bind variables, never in a URL, where the server would decode them.
func TestKeysWithPlusAndPercent(t *testing.T) {
	for _, key := range []string{"task_a+b", "task_50%25", "task_%2F"} {
		t.Run(key, func(t *testing.T) {
			f := newFakeArango(t)
			getTask(f, key, map[string]any{"_key": key, "_rev": "_1"})
			patch := map[string]any{"status": "closed"}
			f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{"_2"}, ""),
				query(wantUpdate, map[string]any{"@tasks": "persephone_tasks", "key": key, "rev": "_1", "patch": patch}))
			s := open(t, f.url())
			doc, err := s.Get(context.Background(), key)
			if err != nil || doc["_key"] != key {
				t.Fatalf("Get(%s) = %v, %v", key, doc, err)
			}
			if rev, err := s.Update(context.Background(), key, "_1", patch); err != nil || rev != "_2" {
				t.Fatalf("Update(%s) = %q, %v", key, rev, err)
			}
		})
	}
}

// A missing task is "not found": DOCUMENT gives null.
func TestGetMissingTaskIsNotFound(t *testing.T) {
	f := newFakeArango(t)
	getTask(f, "task_gone", nil)
	if _, err := open(t, f.url()).Get(context.Background(), "task_gone"); !store.IsNotFound(err) {
		t.Fatalf("want not found, got %v", err)
	}
}

// A Unix socket is on this machine: never reached through a proxy.
func TestUnixSocketBypassesProxy(t *testing.T) {
	_, tr, err := Endpoint("arangodb+unix:///run/arangodb.sock", newHTTPTransport(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if ht, ok := tr.(*http.Transport); !ok || ht.Proxy != nil {
		t.Errorf("the socket's transport uses a proxy")
	}
}
