package stack

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// mergeServer answers the asynchronous merge API from a script: the PUT's
// answer, then one answer a poll.
func mergeServer(t *testing.T, put string, polls ...string) (*github.Client, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		answer := put
		if r.Method == http.MethodGet {
			if len(polls) == 0 {
				t.Errorf("a poll past the script: %s", r.URL.Path)
				w.WriteHeader(500)
				return
			}
			answer, polls = polls[0], polls[1:]
		}
		status, body, _ := strings.Cut(answer, " ")
		var code int
		fmt.Sscan(status, &code)
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := github.New(github.Config{BaseURL: srv.URL + "/", Token: "t0ken", Repo: "acme/hermes", MaxWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c, &seen
}

func TestAnAsynchronousMergeIsFollowedToItsEnd(t *testing.T) {
	pending := `{"status": "pending", "details": {"message": "queued", "uuid": "u-1", "merge_method": "squash", "merge_action": "default", "expected_head_sha": "b"}}`
	ctx := context.Background()
	for _, c := range []struct {
		name               string
		put                string
		polls              []string
		outcome, sha, says string
	}{
		{"merged after two polls", "202 " + pending, []string{"200 " + pending, `200 {"status": "merged", "details": {"message": "done", "sha": "c0ffee"}}`}, "merged", "c0ffee", ""},
		{"merged at once", `200 {"status": "merged", "details": {"message": "already", "sha": "beef"}}`, nil, "merged", "beef", ""},
		{"a 502 on the way is waited out", "202 " + pending, []string{`502 {"message": "bad gateway"}`, `502 {"message": "bad gateway"}`, `502 {"message": "bad gateway"}`, `502 {"message": "bad gateway"}`,
			`200 {"status": "merged", "details": {"message": "done", "sha": "c0ffee"}}`}, "merged", "c0ffee", ""},
		{"refused by a rule", "202 " + pending, []string{`200 {"status": "failed", "details": {"message": "Repository rule violations found"}}`}, "refused", "", "Repository rule violations found"},
		{"in the merge queue", `200 {"status": "enqueued", "details": {"message": "queued"}}`, nil, "queued", "", "is in the merge queue"},
		{"still pending when the wait ends", "202 " + pending, []string{"200 " + pending, "200 " + pending, "200 " + pending, "200 " + pending, "200 " + pending, "200 " + pending}, "pending", "", "still pending after"},
	} {
		t.Run(c.name, func(t *testing.T) {
			client, seen := mergeServer(t, c.put, c.polls...)
			s, err := store.OpenSQLite(ctx, t.TempDir()+"/wo.db")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Create(ctx, workorder.Document{"_key": "task_ep", "type": "epic", "title": "The epic", "status": "open",
				"work_order": map[string]any{"state": map[string]any{"land": map[string]any{"started": "2026-11-27T00:00:00Z", "method": "squash"}}}}); err != nil {
				t.Fatal(err)
			}
			e := New(&procedure.Engine{Store: s})
			e.e.FillDefaults()
			land := &workorder.Land{Started: workorder.Timestamp(time.Now())}
			timeout := 5 * time.Second
			if c.outcome == "pending" {
				timeout = 20 * time.Millisecond
			}
			o := LandOptions{Epic: "task_ep", PollEvery: 5 * time.Millisecond, Timeout: timeout}
			sha, outcome, reason, err := e.mergeOne(ctx, client, o, true, 12, github.MergeRequest{Title: "Part 2 (#12)", SHA: "b", Method: "squash"}, land)
			if err != nil || outcome != c.outcome || sha != c.sha || !strings.Contains(reason, c.says) {
				t.Errorf("got %q %q %q %v, want %q %q %q (requests %v)", sha, outcome, reason, err, c.sha, c.outcome, c.says, *seen)
			}
			doc, _ := s.Get(ctx, "task_ep")
			st, _ := workorder.StateOf(doc)
			if c.put[:3] == "202" && c.outcome != "refused" && (st.Land == nil || st.Land.Pending == nil || st.Land.Pending.UUID != "u-1") {
				t.Errorf("the merge asked for was not recorded before the wait: %+v", st.Land)
			}
		})
	}
}
