package arango

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeArango is a loopback HTTP server that answers as ArangoDB's documented
// HTTP API does, for the exchanges a test registers. An unexpected request
// fails the test, and so does a registered exchange left unused.
type fakeArango struct {
	t         *testing.T
	mu        sync.Mutex
	exchanges []*exchange
	server    *httptest.Server
	conns     atomic.Int64 // client connections open now
}

type exchange struct {
	method string
	path   string // with the query string, parameters sorted
	// check inspects the request; body is its JSON body decoded.
	check  func(t *testing.T, r *http.Request, body any)
	status int
	reply  any
	used   bool
}

func newFakeArango(t *testing.T) *fakeArango {
	f := &fakeArango{t: t}
	f.server = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.server.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		switch state {
		case http.StateNew:
			f.conns.Add(1)
		case http.StateClosed, http.StateHijacked:
			f.conns.Add(-1)
		}
	}
	f.server.Start()
	t.Cleanup(func() {
		f.server.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, e := range f.exchanges {
			if !e.used {
				t.Errorf("expected request never came: %s %s", e.method, e.path)
			}
		}
	})
	return f
}

// listenUnix serves the same exchanges on a Unix socket as well.
func (f *fakeArango) listenUnix(t *testing.T, path string) {
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(f.serve)}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
}

func (f *fakeArango) expect(method, path string, status int, reply any, check func(*testing.T, *http.Request, any)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.exchanges = append(f.exchanges, &exchange{method: method, path: path, status: status, reply: reply, check: check})
}

// url is the store URL of the fake.
func (f *fakeArango) url() string {
	return "arangodb+" + f.server.URL
}

func (f *fakeArango) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body any
	if len(raw) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.UseNumber()
		if err := dec.Decode(&body); err != nil {
			f.t.Errorf("%s %s: body is not JSON: %v", r.Method, r.URL, err)
		}
	}
	path := r.URL.Path
	if q := r.URL.Query().Encode(); q != "" {
		path += "?" + q
	}
	f.mu.Lock()
	var found *exchange
	for _, e := range f.exchanges {
		if !e.used && e.method == r.Method && e.path == path {
			found = e
			e.used = true
			break
		}
	}
	f.mu.Unlock()
	if found == nil {
		f.t.Errorf("unexpected request: %s %s %s", r.Method, path, raw)
		writeJSON(w, http.StatusNotImplemented, arangoError(501, 9, "not expected by the test"))
		return
	}
	if found.check != nil {
		found.check(f.t, r, body)
	}
	writeJSON(w, found.status, found.reply)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// arangoError is the error body ArangoDB sends.
func arangoError(code, num int, msg string) map[string]any {
	return map[string]any{"error": true, "code": code, "errorNum": num, "errorMessage": msg}
}

// cursorReply is a POST /_api/cursor answer.
func cursorReply(result []any, id string) map[string]any {
	r := map[string]any{"result": result, "hasMore": id != "", "error": false, "code": 201, "cached": false}
	if id != "" {
		r["id"] = id
	}
	return r
}

// wantJSON fails unless got and want encode to the same JSON value.
func wantJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	norm := func(v any) any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var out any
		json.Unmarshal(b, &out)
		return out
	}
	if !reflect.DeepEqual(norm(got), norm(want)) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// query checks a cursor request: the exact AQL text and bind variables.
func query(aql string, bind map[string]any) func(*testing.T, *http.Request, any) {
	return func(t *testing.T, r *http.Request, body any) {
		t.Helper()
		m, _ := body.(map[string]any)
		if m["query"] != aql {
			t.Errorf("AQL:\n got %v\nwant %s", m["query"], aql)
		}
		wantJSON(t, "bind variables", m["bindVars"], bind)
		if q := fmt.Sprint(m["query"]); strings.Contains(q, `"task_`) || strings.Contains(q, "'task_") {
			t.Errorf("a value was written into the AQL text: %v", m["query"])
		}
	}
}
