package stack

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

// patches counts the PATCH requests to pull requests the stand-in answered
// since from, by PR path.
func patches(h *stepHarness, from int) map[string]int {
	out := map[string]int{}
	for _, r := range h.GH.Requests()[from:] {
		if r.Method == http.MethodPatch {
			out[r.Path]++
		}
	}
	return out
}

func TestRefreshStackEditsOnlyDescriptionsWhoseSectionChanged(t *testing.T) {
	h := stackOnStandin(t)
	e := h.engine()
	ctx := context.Background()

	ups, _, err := e.RefreshStack(ctx, "task_ep")
	if err != nil {
		t.Fatal(err)
	}
	if got := action.StackSummary(ups); got != "stack tables: 3 updated, 0 unchanged" {
		t.Errorf("first refresh: %s", got)
	}
	bodies := map[int]string{}
	for _, p := range h.GH.PullRequests(fixture.Repo) {
		n, body := p["number"].(int), p["body"].(string)
		bodies[n] = body
		if !strings.HasPrefix(body, fmt.Sprintf("Author's text of part %d.\n\n"+action.StackBegin, n)) {
			t.Errorf("#%d lost its author's text or has no section:\n%s", n, body)
		}
		if !strings.Contains(body, fmt.Sprintf("### Stack: part %d of 3", n)) {
			t.Errorf("#%d does not say which part it is:\n%s", n, body)
		}
	}
	if !strings.Contains(bodies[2], "Depends on #1: ") || !strings.Contains(bodies[3], "Depends on #2: ") {
		t.Errorf("depends on:\n%s\n%s", bodies[2], bodies[3])
	}

	// Nothing changed: no edit; once the engine has read the edited
	// descriptions, reading them again is answered 304 (free).
	var from int
	for round := 1; round <= 2; round++ {
		from = len(h.GH.Requests())
		ups, _, err = e.RefreshStack(ctx, "task_ep")
		if err != nil {
			t.Fatal(err)
		}
		if got := action.StackSummary(ups); got != "stack tables: 0 updated, 3 unchanged" {
			t.Errorf("refresh %d of an unchanged stack: %s", round, got)
		}
		if p := patches(h, from); len(p) != 0 {
			t.Errorf("refresh %d edited an unchanged stack: %v", round, p)
		}
	}
	for _, r := range h.GH.Requests()[from:] {
		if r.Status != http.StatusNotModified {
			t.Errorf("an unchanged description was read at a cost: %s %s → %d", r.Method, r.Path, r.Status)
		}
	}

	// A person edits #3 outside the section; #1 is merged and synced.
	edited := "A reviewer's note on top.\r\n\r\n" + strings.ReplaceAll(bodies[3], "\n", "\r\n") + "\r\nAnd one below."
	client, _ := github.New(github.Config{BaseURL: h.GH.URL, Token: fixture.Token, Repo: fixture.Repo})
	if err := client.EditPRBody(ctx, 3, edited); err != nil {
		t.Fatal(err)
	}
	h.GH.Merge(fixture.Repo, 1)
	doc, err := h.store.Get(ctx, "task_ep_pr01")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.Update(ctx, "task_ep_pr01", doc["_rev"].(string), map[string]any{"status": "closed",
		"work_order": map[string]any{"state": map[string]any{"pr_state": "merged"}}}); err != nil {
		t.Fatal(err)
	}
	from = len(h.GH.Requests())
	ups, _, err = e.RefreshStack(ctx, "task_ep")
	if err != nil {
		t.Fatal(err)
	}
	if got := action.StackSummary(ups); got != "stack tables: 2 updated, 0 unchanged" {
		t.Errorf("after the merge: %s", got)
	}
	p := patches(h, from)
	if p["/repos/acme/hermes/pulls/1"] != 0 || p["/repos/acme/hermes/pulls/2"] != 1 || p["/repos/acme/hermes/pulls/3"] != 1 {
		t.Errorf("edits after the merge: %v (want #2 and #3 once, the merged #1 never)", p)
	}
	for _, pr := range h.GH.PullRequests(fixture.Repo) {
		n, body := pr["number"].(int), pr["body"].(string)
		if n == 3 {
			if !strings.HasPrefix(body, "A reviewer's note on top.\r\n\r\nAuthor's text of part 3.\r\n\r\n"+action.StackBegin) ||
				!strings.HasSuffix(body, action.StackEnd+"\r\nAnd one below.") {
				t.Errorf("#3's text outside the section changed:\n%q", body)
			}
		}
		if n > 1 && !strings.Contains(body, "| #1 |") || n > 1 && !strings.Contains(body, "| merged |") {
			t.Errorf("#%d does not show #1 merged:\n%s", n, body)
		}
	}
	if v := h.GH.Violations(); len(v) > 0 {
		t.Errorf("requests GitHub's OpenAPI description does not allow: %v", v)
	}
}

func TestAnEpicRunRefreshesTheStackOnlyWhenAPullRequestOpened(t *testing.T) {
	h := stackOnStandin(t)
	e := h.engine()
	ctx := context.Background()
	if e.StackDeferred("task_ep") {
		t.Fatal("a stack is the epic run's to refresh before any epic run began")
	}
	e.DeferStack("task_ep")

	from := len(h.GH.Requests())
	if w := e.RefreshDeferred(ctx, "task_ep", false); w != nil || len(h.GH.Requests()) != from {
		t.Fatalf("nothing opened, yet the refresh said %v and sent %d request(s)", w, len(h.GH.Requests())-from)
	}
	if !e.StackDeferred("task_ep") || e.StackDeferred("task_other") {
		t.Fatal("create_pr of the epic's child must leave the refresh to the run, and of another epic's must not")
	}
	if w := e.RefreshDeferred(ctx, "task_ep", false); w != nil {
		t.Fatalf("warnings: %v", w)
	}
	if p := patches(h, from); len(p) != 3 {
		t.Errorf("the run's refresh edited %v, want each of the 3 descriptions once", p)
	}

	// Interrupted: no request, a warning that says how to catch up.
	e.StackDeferred("task_ep")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	from = len(h.GH.Requests())
	w := e.RefreshDeferred(cancelled, "task_ep", true)
	if len(w) != 1 || !strings.Contains(w[0], "wo sync task_ep") || len(h.GH.Requests()) != from {
		t.Errorf("interrupted refresh: warnings %q, %d request(s)", w, len(h.GH.Requests())-from)
	}
	if e.StackDeferred("task_ep") {
		t.Error("the deferral outlived its epic run")
	}
}

func TestSyncClosesATaskWhosePRWasMerged(t *testing.T) {
	h := newStepContext(t, fixture.Options{GitHub: true})
	h.openPR()
	res, err := h.engine().Sync(h.ctx, fixture.Key)
	if err != nil || res.Changed || res.PRState != "open" {
		t.Fatalf("an open PR: %+v, %v", res, err)
	}
	h.GH.Merge(fixture.Repo, 1)
	res, err = h.engine().Sync(h.ctx, fixture.Key)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := h.store.Get(h.ctx, fixture.Key)
	if !res.Changed || res.Status != workorder.StatusClosed || doc["status"] != "closed" || h.stored().PRState != "merged" {
		t.Errorf("after the merge: %+v, status %v pr_state %q", res, doc["status"], h.stored().PRState)
	}
	// Again: nothing more to do.
	if res, err := h.engine().Sync(h.ctx, fixture.Key); err != nil || res.Changed {
		t.Errorf("second sync: %+v, %v", res, err)
	}
}

func TestSyncBlocksATaskWhosePRWasClosedAndUnblocksItWhenItMerges(t *testing.T) {
	h := newStepContext(t, fixture.Options{GitHub: true})
	h.openPR()
	if _, err := h.Client().ClosePR(h.ctx, 1); err != nil {
		t.Fatal(err)
	}
	res, err := h.engine().Sync(h.ctx, fixture.Key)
	if err != nil || !res.Changed || res.Status != workorder.StatusBlocked || res.PRState != "closed" {
		t.Fatalf("a PR closed without merging: %+v, %v", res, err)
	}
	doc, _ := h.store.Get(h.ctx, fixture.Key)
	if reason, _ := doc["block_reason"].(string); !strings.Contains(reason, "pull request #1 was closed without merging") {
		t.Errorf("block reason %q", reason)
	}
	h.GH.Merge(fixture.Repo, 1)
	if res, err = h.engine().Sync(h.ctx, fixture.Key); err != nil || res.Status != workorder.StatusClosed || res.Warning != "" {
		t.Fatalf("merged after all: %+v, %v", res, err)
	}
	doc, _ = h.store.Get(h.ctx, fixture.Key)
	if doc["block_reason"] != nil || doc["status"] != "closed" || h.stored().PRState != "merged" {
		t.Errorf("after the merge: status %v, block reason %v, pr_state %q", doc["status"], doc["block_reason"], h.stored().PRState)
	}
	logs, err := h.store.Logs(h.ctx, fixture.Key)
	if err != nil {
		t.Fatal(err)
	}
	var synced []string
	for _, l := range logs {
		if l.Action == "synced" {
			synced = append(synced, fmt.Sprint(l.Details["pr_state"], " ", l.Details["status"]))
		}
	}
	if got := strings.Join(synced, ", "); got != "closed blocked, merged closed" {
		t.Errorf("the activity log's syncs: %q", got)
	}
}

func TestSamePlaceInGitHubsStacks(t *testing.T) {
	a, b := &workorder.PRStack{Number: 4, Position: 2, Size: 3}, &workorder.PRStack{Number: 4, Position: 2, Size: 3}
	for _, c := range []struct {
		x, y *workorder.PRStack
		want bool
	}{
		{nil, nil, true},
		{a, nil, false},
		{nil, a, false},
		{a, b, true},
		{a, &workorder.PRStack{Number: 4, Position: 3, Size: 3}, false},
	} {
		if got := SamePlace(c.x, c.y); got != c.want {
			t.Errorf("SamePlace(%+v, %+v) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
}
