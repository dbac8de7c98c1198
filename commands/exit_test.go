package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/arango"
	"github.com/wo-runner/wo/store"
)

// arangoAnswering is a loopback server that answers every AQL cursor
// request of database db as ArangoDB's HTTP API answers with the given
// error, and fails the test on any other request.
func arangoAnswering(t *testing.T, db string, status, errorNum int, message string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/_db/"+db+"/_api/cursor" {
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			http.Error(w, "unexpected", http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":true,"code":%d,"errorNum":%d,"errorMessage":%q}`, status, errorNum, message)
	}))
	t.Cleanup(srv.Close)
	return "arangodb+" + srv.URL
}

// What ArangoDB answers becomes a store error kind in package arango, and
// commands maps the kind to the exit code and envelope code that DESIGN.md
// and docs/running.md promise: a database the server does not have is a
// mistake in the settings (exit 2, NO_DATABASE), which a rerun would not
// cure, unlike a server that is unavailable (exit 5).
func TestArangoServerErrorsMapThroughStoreKinds(t *testing.T) {
	for _, c := range []struct {
		name             string
		status, errorNum int
		message          string
		kind             func(error) bool
		exit             int
		code             string
	}{
		{"database not found", http.StatusNotFound, 1228, "database not found", store.IsNoDatabase, 2, "NO_DATABASE"},
		{"service unavailable", http.StatusServiceUnavailable, 503, "service unavailable", store.IsUnavailable, 5, "STORE_UNAVAILABLE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := arangoAnswering(t, "nope", c.status, c.errorNum, c.message)
			s, err := arango.Open(context.Background(), arango.Config{URL: url, Database: "nope", Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = s.Get(context.Background(), "task_a")
			if !c.kind(err) {
				t.Fatalf("the backend's error %v is not of the expected store kind", err)
			}
			for _, e := range []error{err, fmt.Errorf("showing task_a: %w", err)} {
				if exit, code := classify(e); exit != c.exit || code != c.code {
					t.Errorf("classify(%v) = %d %s, want %d %s", e, exit, code, c.exit, c.code)
				}
			}
		})
	}
}

// The same through the whole command line, as a script sees it: the exit
// code, and the envelope's code and message with --json.
func TestMissingArangoDatabaseExitsAndCodes(t *testing.T) {
	url := arangoAnswering(t, "nope", http.StatusNotFound, 1228, "database not found")
	for _, c := range []struct {
		database, says string
	}{
		{"nope", `ArangoDB at ` + url + ` has no database "nope": create it, or set --database / WO_DATABASE`},
		{"", "no database given: pass --database or set WO_DATABASE (or HADES_DATABASE)"},
	} {
		r := runWo(t, "", "", "show", "task_a", "--store", url, "--database", c.database, "--json")
		var env Envelope
		if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
			t.Fatalf("--database %q: stdout is no envelope: %v\n%s", c.database, err, r.stdout)
		}
		if r.code != 2 || env.Success || env.Error == nil || env.Error.Code != "NO_DATABASE" || !strings.Contains(env.Error.Message, c.says) {
			t.Errorf("--database %q: exit %d, envelope %+v; want exit 2, NO_DATABASE, %q", c.database, r.code, env.Error, c.says)
		}
	}
}
