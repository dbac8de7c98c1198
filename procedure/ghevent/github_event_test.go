package ghevent

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/internal/epicworld"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/workorder"
)

func TestMain(m *testing.M) {
	code := m.Run()
	fixture.Cleanup()
	os.Exit(code)
}

func TestParseGitHubEventReadsWhatItNeeds(t *testing.T) {
	cases := []struct {
		name, payload string
		want          GitHubEvent
	}{
		{"pull_request_review", `{"action": "submitted", "review": {"commit_id": "abc", "state": "approved"},
			"pull_request": {"number": 7, "head": {"ref": "review/01-foundation", "repo": {"full_name": "Acme/Hermes"}}}, "repository": {"full_name": "acme/hermes"}}`,
			GitHubEvent{Name: "pull_request_review", Action: "submitted", Repo: "acme/hermes", PR: 7, Head: "review/01-foundation", HeadRepo: "Acme/Hermes"}},
		{"pull_request_review_comment", `{"action": "created", "pull_request": {"number": 7, "head": {"ref": "review/01-foundation", "repo": {"full_name": "mallory/hermes"}}},
			"repository": {"full_name": "acme/hermes"}}`,
			GitHubEvent{Name: "pull_request_review_comment", Action: "created", Repo: "acme/hermes", PR: 7, Head: "review/01-foundation", HeadRepo: "mallory/hermes", Fork: true}},
		{"pull_request_review", `{"action": "submitted", "pull_request": {"number": 7, "head": {"ref": "x", "repo": null}}, "repository": {"full_name": "acme/hermes"}}`,
			GitHubEvent{Name: "pull_request_review", Action: "submitted", Repo: "acme/hermes", PR: 7, Head: "x", Fork: true}},
		{"pull_request", `{"action": "closed", "number": 7, "pull_request": {"number": 7, "merged": true, "head": {"ref": "b", "repo": {"full_name": "acme/hermes"}}},
			"repository": {"full_name": "acme/hermes"}}`,
			GitHubEvent{Name: "pull_request", Action: "closed", Repo: "acme/hermes", PR: 7, Head: "b", Merged: true, HeadRepo: "acme/hermes"}},
		{"issue_comment", `{"action": "created", "issue": {"number": 9, "pull_request": {"url": "https://x"}}, "repository": {"full_name": "a/b"}}`,
			GitHubEvent{Name: "issue_comment", Action: "created", Repo: "a/b", PR: 9}},
	}
	for _, c := range cases {
		got, err := ParseGitHubEvent(c.name, []byte(c.payload))
		if err != nil || *got != c.want {
			t.Errorf("%s: %+v (%v), want %+v", c.name, got, err, c.want)
		}
	}
	bad := map[string][2]string{
		"a push event":          {"push", `{}`},
		"malformed JSON":        {"pull_request_review", `{"action": `},
		"a comment on an issue": {"issue_comment", `{"issue": {"number": 3}, "repository": {"full_name": "a/b"}}`},
		"no repository":         {"pull_request_review", `{"pull_request": {"number": 1}}`},
		"an odd repository":     {"pull_request_review", `{"pull_request": {"number": 1}, "repository": {"full_name": "a/b/c"}}`},
		"oversized":             {"pull_request_review", `{"x": "` + strings.Repeat("a", MaxEventSize) + `"}`},
	}
	for what, c := range bad {
		_, err := ParseGitHubEvent(c[0], []byte(c[1]))
		var ee *EventError
		if !errors.As(err, &ee) || procedure.Classify(err).Outcome != procedure.OutcomeInvalid {
			t.Errorf("%s: %v, want an EventError (exit 2)", what, err)
		}
	}
}

func TestAnEventForAPullRequestWoDoesNotRecordResumesNothing(t *testing.T) {
	h := epicworld.New(t, fixture.Options{GitHub: true, ReviewDelay: time.Hour}) // the reviewer is slow
	h.Engine.NoReviewWait = true
	_, err := h.Engine.Run(h.Ctx, procedure.RunOptions{Key: fixture.Key})
	var waiting *action.WaitingError
	if !errors.As(err, &waiting) || h.StateOf(fixture.Key).PRNumber == 0 {
		t.Fatalf("the run up to the review wait: %v, want it waiting for a review of its pull request", err)
	}
	stored := func() workorder.State { return h.StateOf(fixture.Key) }

	// An event for a pull request nobody records changes nothing.
	res, err := OnGitHubEvent(h.Ctx, h.Engine, &GitHubEvent{Name: "pull_request_review", Repo: fixture.Repo, PR: 99}, procedure.RunOptions{})
	if err != nil || res.Action != "ignored" || !strings.Contains(res.Reason, "no work order records pull request #99") {
		t.Errorf("unknown PR: %+v %v", res, err)
	}
	res, err = OnGitHubEvent(h.Ctx, h.Engine, &GitHubEvent{Name: "pull_request_review", Repo: "someone/else", PR: stored().PRNumber}, procedure.RunOptions{})
	if err != nil || res.Action != "ignored" {
		t.Errorf("another repository's PR: %+v %v", res, err)
	}
	// A pull request from a fork is never wo's, whatever its number or
	// branch name say: it resumes nothing.
	before := stored()
	for _, from := range []string{"mallory/hermes", ""} {
		ev := &GitHubEvent{Name: "pull_request_review", Repo: fixture.Repo, PR: stored().PRNumber, Head: fixture.Branch, HeadRepo: from, Fork: true}
		res, err = OnGitHubEvent(h.Ctx, h.Engine, ev, procedure.RunOptions{})
		if err != nil || res.Action != "ignored" || res.Key != "" || !strings.Contains(res.Reason, "not from "+fixture.Repo+" itself") {
			t.Errorf("a fork's PR (%q): %+v %v", from, res, err)
		}
	}
	if after := stored(); !reflect.DeepEqual(after, before) {
		t.Errorf("a fork's event changed the state:\n%+v\nwas:\n%+v", after, before)
	}
}

func TestAPullRequestEventRecordsItsPlaceInGitHubsStack(t *testing.T) {
	h := epicworld.StackOnStandin(t, 3, nil)
	ctx := context.Background()
	event := func(stack string) *GitHubEvent {
		t.Helper()
		payload := `{"action": "edited", "number": 2, "pull_request": {"number": 2, "head": {"ref": "review/02-part", "repo": {"full_name": "acme/hermes"}}`
		if stack != "" {
			payload += `, "stack": ` + stack
		}
		ev, err := ParseGitHubEvent("pull_request", []byte(payload+`}, "repository": {"full_name": "acme/hermes"}}`))
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	place := func() *workorder.PRStack {
		doc, err := h.Store.Get(ctx, "task_ep_pr02")
		if err != nil {
			t.Fatal(err)
		}
		st, _ := workorder.StateOf(doc)
		return st.PRStack
	}
	in := `{"id": 40, "number": 4, "size": 3, "position": 2, "base": {"ref": "main", "sha": "a"}}`
	res, err := OnGitHubEvent(ctx, h.Engine, event(in), procedure.RunOptions{})
	if err != nil || res.Action != "recorded" || res.Key != "task_ep_pr02" || res.Reason != "pull request #2 is 2 of 3 in GitHub stack 4" {
		t.Fatalf("an event with the stack object: %+v %v", res, err)
	}
	if got := place(); got == nil || *got != (workorder.PRStack{Number: 4, Position: 2, Size: 3}) {
		t.Errorf("recorded %+v", got)
	}
	if res, err = OnGitHubEvent(ctx, h.Engine, event(in), procedure.RunOptions{}); err != nil || res.Action != "ignored" || !strings.Contains(res.Reason, "nothing to do") {
		t.Errorf("the same place again: %+v %v", res, err)
	}
	if res, err = OnGitHubEvent(ctx, h.Engine, event("null"), procedure.RunOptions{}); err != nil || res.Action != "recorded" || place() != nil ||
		res.Reason != "pull request #2 is in no GitHub stack now" {
		t.Errorf("an event with stack null: %+v %v, place %+v", res, err, place())
	}
	if res, err = OnGitHubEvent(ctx, h.Engine, event(""), procedure.RunOptions{}); err != nil || res.Action != "ignored" || !strings.Contains(res.Reason, "changes nothing wo waits for") {
		t.Errorf("an event without a stack object: %+v %v", res, err)
	}
	for _, bad := range []string{`{"number": 4, "size": 3, "position": 0}`, `{"number": 4, "size": 1, "position": 2}`, `{"number": 0, "size": 3, "position": 1}`, `"four"`} {
		_, err := ParseGitHubEvent("pull_request", []byte(`{"action": "edited", "pull_request": {"number": 2, "stack": `+bad+`}, "repository": {"full_name": "acme/hermes"}}`))
		var ee *EventError
		if !errors.As(err, &ee) {
			t.Errorf("stack %s: %v, want an EventError", bad, err)
		}
	}
}

func TestParseGitHubEventAtItsLimits(t *testing.T) {
	pr := func(extra string) string {
		return `{"action": "submitted", "pull_request": {"number": 7` + extra + `}, "repository": {"full_name": "acme/hermes"}}`
	}
	long := strings.Repeat("o", 70) + "/" + strings.Repeat("n", 69) // 140 characters
	good := map[string]struct {
		name, payload string
		pr            int
	}{
		"a payload of exactly the limit": {"pull_request_review", pr("") + strings.Repeat(" ", MaxEventSize-len(pr(""))), 7},
		"the number at the top":          {"pull_request_review", `{"action": "submitted", "number": 5, "repository": {"full_name": "acme/hermes"}}`, 5},
		"the pull request's own number":  {"pull_request_review", `{"number": 9, "pull_request": {"number": 7}, "repository": {"full_name": "acme/hermes"}}`, 7},
		"the top of a stack":             {"pull_request", pr(`, "stack": {"number": 4, "size": 3, "position": 3}`), 7},
		"a repository of 140 characters": {"pull_request_review", `{"pull_request": {"number": 7}, "repository": {"full_name": "` + long + `"}}`, 7},
	}
	for what, c := range good {
		ev, err := ParseGitHubEvent(c.name, []byte(c.payload))
		if err != nil || ev.PR != c.pr {
			t.Errorf("%s: %+v %v, want pull request %d", what, ev, err, c.pr)
		}
	}
	bad := map[string]string{
		"one byte over the limit":           pr("") + strings.Repeat(" ", MaxEventSize-len(pr(""))+1),
		"pull request 0":                    `{"pull_request": {"number": 0}, "repository": {"full_name": "acme/hermes"}}`,
		"a repository of 141 characters":    `{"pull_request": {"number": 7}, "repository": {"full_name": "` + long + `x"}}`,
		"a stack's size under its position": pr(`, "stack": {"number": 4, "size": 2, "position": 3}`),
	}
	for what, payload := range bad {
		name := "pull_request_review"
		if strings.Contains(payload, "stack") {
			name = "pull_request"
		}
		var ee *EventError
		if _, err := ParseGitHubEvent(name, []byte(payload)); !errors.As(err, &ee) {
			t.Errorf("%s: %v, want an EventError", what, err)
		}
	}
}

func TestAForksEventNamesWhereItComesFrom(t *testing.T) {
	e := &procedure.Engine{}
	for from, want := range map[string]string{"mallory/hermes": "comes from mallory/hermes, not from acme/hermes itself",
		"": "comes from a repository GitHub no longer names, not from acme/hermes itself"} {
		res, err := OnGitHubEvent(context.Background(), e, &GitHubEvent{Name: "pull_request_review", Repo: "acme/hermes", PR: 7, HeadRepo: from, Fork: true}, procedure.RunOptions{})
		if err != nil || res.Action != "ignored" || !strings.Contains(res.Reason, want) {
			t.Errorf("a fork's event from %q: %+v %v, want %q", from, res, err, want)
		}
	}
}
