package github

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

const stackJSONText = `{"id": 9, "number": 4, "node_id": "S_4", "url": "https://api.github.com/repos/acme/hermes/stacks/4",
 "base": {"ref": "main"}, "open": true, "created_at": "2026-07-01T00:00:00Z",
 "pull_requests": [{"number": 11, "state": "closed", "draft": false, "merged_at": "2026-07-02T00:00:00Z", "head": {"ref": "review/01", "sha": "a"}},
                   {"number": 12, "state": "open", "draft": false, "merged_at": null, "head": {"ref": "review/02", "sha": "b"}}]}`

// bodyOf decodes a request's JSON body.
func bodyOf(t *testing.T, r *http.Request) map[string]any {
	t.Helper()
	var v map[string]any
	b, _ := io.ReadAll(r.Body)
	if len(b) > 0 {
		if err := json.Unmarshal(b, &v); err != nil {
			t.Errorf("the body of %s %s is not JSON: %v", r.Method, r.URL.Path, err)
		}
	}
	return v
}

func TestStacksEnabledIsTheListAnsweringOrNotFound(t *testing.T) {
	s, c := newScripted(t,
		jsonReply(200, `[]`),
		jsonReply(404, `{"message": "Not Found"}`),
		jsonReply(401, `{"message": "Bad credentials `+token+`"}`),
	)
	for i := 0; i < maxAttempts; i++ { // a GET is retried after a 5xx
		s.answers = append(s.answers, jsonReply(502, `{"message": "bad gateway"}`))
	}
	ctx := context.Background()
	if on, err := c.StacksEnabled(ctx); err != nil || !on {
		t.Errorf("200: %v %v, want enabled", on, err)
	}
	if on, err := c.StacksEnabled(ctx); err != nil || on {
		t.Errorf("404: %v %v, want not enabled", on, err)
	}
	var auth *AuthError
	_, err := c.StacksEnabled(ctx)
	if !errors.As(err, &auth) || auth.Status != 401 || strings.Contains(err.Error(), token) {
		t.Errorf("401: %v, want an AuthError without the token", err)
	}
	var server *ServerError
	if _, err := c.StacksEnabled(ctx); !errors.As(err, &server) || !strings.Contains(err.Error(), "acme/hermes") {
		t.Errorf("502: %v, want a ServerError naming the repository", err)
	}
	if got := s.seen[0].URL; got.Path != "/api/v3/repos/acme/hermes/stacks" || got.Query().Get("per_page") != "1" {
		t.Errorf("the question was %s", got)
	}
}

func TestStacksAreReadMadeExtendedAndTakenApart(t *testing.T) {
	s, c := newScripted(t,
		jsonReply(200, `[`+stackJSONText+`]`),
		jsonReply(200, `[]`),
		jsonReply(200, stackJSONText),
		jsonReply(404, `{"message": "Not Found"}`),
		func(w http.ResponseWriter, r *http.Request) {
			if got := bodyOf(t, r)["pull_requests"]; len(got.([]any)) != 2 {
				t.Errorf("create sent %v", got)
			}
			jsonReply(201, stackJSONText)(w, r)
		},
		jsonReply(422, `{"message": "Validation Failed", "documentation_url": "https://docs.github.com", "errors": [{"resource": "PullRequestStack", "code": "custom", "message": "#13 is based on main, not on review/02"}]}`),
		jsonReply(409, `{"message": "The stack is being modified by another request"}`),
		jsonReply(204, ``),
		jsonReply(404, `{"message": "Not Found"}`),
		jsonReply(422, `{"message": "Validation Failed", "errors": [{"code": "custom", "message": "every pull request is locked"}]}`),
	)
	ctx := context.Background()
	got, err := c.StackOf(ctx, 12)
	if err != nil || got == nil || got.Number != 4 || got.Base != "main" || !got.Open || len(got.PRs) != 2 ||
		!got.PRs[0].Merged || got.PRs[1].Merged || got.PRs[1].Head != "review/02" || got.PRs[1].State != "open" {
		t.Fatalf("StackOf: %+v %v", got, err)
	}
	if got.Numbers()[0] != 11 || got.Numbers()[1] != 12 {
		t.Errorf("Numbers: %v", got.Numbers())
	}
	if s.seen[0].URL.Query().Get("pull_request") != "12" {
		t.Errorf("StackOf asked %s", s.seen[0].URL)
	}
	if none, err := c.StackOf(ctx, 12); err != nil || none != nil {
		t.Errorf("StackOf with no stack: %+v %v", none, err)
	}
	if got, err := c.GetStack(ctx, 4); err != nil || got.Number != 4 {
		t.Errorf("GetStack: %+v %v", got, err)
	}
	if gone, err := c.GetStack(ctx, 5); err != nil || gone != nil {
		t.Errorf("GetStack of a dissolved stack: %+v %v, want nil", gone, err)
	}
	if made, err := c.CreateStack(ctx, []int{11, 12}); err != nil || made.Number != 4 {
		t.Errorf("CreateStack: %+v %v", made, err)
	}
	var refused *StackRefusedError
	if _, err := c.AddToStack(ctx, 4, []int{13}); !errors.As(err, &refused) || refused.Status != 422 ||
		refused.Reason != "Validation Failed: #13 is based on main, not on review/02" || !strings.Contains(err.Error(), "adding [13] to stack 4") {
		t.Errorf("AddToStack refused: %v", err)
	}
	if _, err := c.AddToStack(ctx, 4, []int{13}); !errors.As(err, &refused) || refused.Status != 409 {
		t.Errorf("AddToStack while another request changes it: %v", err)
	}
	if err := c.Unstack(ctx, 4); err != nil {
		t.Errorf("Unstack (204): %v", err)
	}
	if err := c.Unstack(ctx, 4); err != nil {
		t.Errorf("Unstack of a stack gone: %v, want nothing to do", err)
	}
	if err := c.Unstack(ctx, 4); !errors.As(err, &refused) || !strings.Contains(err.Error(), "every pull request is locked") {
		t.Errorf("Unstack refused: %v", err)
	}
	if p := s.seen[7].URL.Path; p != "/api/v3/repos/acme/hermes/stacks/4/unstack" || s.seen[7].Method != http.MethodPost {
		t.Errorf("unstack went to %s %s", s.seen[7].Method, p)
	}
}

func TestMergesAsyncAndOrdinary(t *testing.T) {
	pending := `{"status": "pending", "details": {"message": "queued", "uuid": "u-1", "merge_method": "squash", "merge_action": "default", "expected_head_sha": "b"}}`
	s, c := newScripted(t,
		func(w http.ResponseWriter, r *http.Request) {
			got := bodyOf(t, r)
			if got["commit_title"] != "Part 2 (#12)" || got["commit_message"] != "Its summary." || got["sha"] != "b" || got["merge_method"] != "squash" {
				t.Errorf("merge-async sent %v", got)
			}
			jsonReply(202, pending)(w, r)
		},
		jsonReply(409, pending),
		jsonReply(400, `{"status": "failed", "details": {"message": "Pull request is a draft"}}`),
		jsonReply(200, `{"status": "merged", "details": {"message": "merged", "sha": "c0ffee"}}`),
		jsonReply(404, `{"message": "Not Found"}`),
		jsonReply(200, `{"sha": "beef", "merged": true, "message": "Pull Request successfully merged"}`),
		jsonReply(405, `{"message": "Pull request is part of a stack and must be merged with the merge-async API"}`),
		jsonReply(409, `{"message": "Head branch was modified. Review and try the merge again."}`),
	)
	ctx := context.Background()
	m := MergeRequest{Title: "Part 2 (#12)", Message: "Its summary.", SHA: "b", Method: MergeSquash}
	r, err := c.MergeAsync(ctx, 12, m)
	if err != nil || r.Status != MergePending || r.UUID != "u-1" || r.Done() {
		t.Fatalf("MergeAsync 202: %+v %v", r, err)
	}
	if r, err := c.MergeAsync(ctx, 12, m); err != nil || r.UUID != "u-1" {
		t.Errorf("MergeAsync asked again (409): %+v %v, want the first one's uuid", r, err)
	}
	if r, err := c.MergeAsync(ctx, 12, m); err != nil || r.Status != MergeFailed || r.Message != "Pull request is a draft" || !r.Done() {
		t.Errorf("MergeAsync of a draft (400): %+v %v", r, err)
	}
	if r, err := c.MergeAsyncResult(ctx, 12, "u-1"); err != nil || r.Status != MergeMerged || r.SHA != "c0ffee" || !r.Done() {
		t.Errorf("MergeAsyncResult: %+v %v", r, err)
	}
	if r, err := c.MergeAsyncResult(ctx, 12, "u/2"); err != nil || r != nil {
		t.Errorf("MergeAsyncResult of an expired merge: %+v %v, want nil", r, err)
	}
	if got := s.seen[4].URL.EscapedPath(); got != "/api/v3/repos/acme/hermes/pulls/12/merge-async/u%2F2" {
		t.Errorf("the uuid was not escaped: %s", got)
	}
	if sha, err := c.Merge(ctx, 12, m); err != nil || sha != "beef" {
		t.Errorf("Merge: %q %v", sha, err)
	}
	var refused *MergeRefusedError
	if _, err := c.Merge(ctx, 12, m); !errors.As(err, &refused) || refused.Status != 405 || !strings.Contains(err.Error(), "GitHub refused to merge #12: Pull request is part of a stack") {
		t.Errorf("Merge of a stacked pull request: %v", err)
	}
	if _, err := c.Merge(ctx, 12, m); !errors.As(err, &refused) || refused.Status != 409 {
		t.Errorf("Merge of a moved head: %v", err)
	}
}

func TestRawAnswersAreBoundedAndUnexpectedOnesSaid(t *testing.T) {
	_, c := newScripted(t,
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("[" + strings.Repeat(" ", maxRawAnswer) + "]"))
		},
		jsonReply(418, `{"message": "I'm a teapot, token `+token+`"}`),
		jsonReply(200, `not json`),
	)
	ctx := context.Background()
	if _, err := c.StackOf(ctx, 1); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("an answer over the bound: %v", err)
	}
	_, err := c.StackOf(ctx, 1)
	if err == nil || !strings.Contains(err.Error(), "GitHub answered 418: I'm a teapot") || strings.Contains(err.Error(), token) {
		t.Errorf("an unexpected status: %v", err)
	}
	if _, err := c.StackOf(ctx, 1); err == nil || !strings.Contains(err.Error(), "not what its API describes") {
		t.Errorf("an answer that is not JSON: %v", err)
	}
}

func TestGetPRReadsTheStackObject(t *testing.T) {
	_, c := newScripted(t,
		jsonReply(200, `{"number": 12, "title": "Part 2", "state": "open", "head": {"ref": "review/02", "sha": "b"}, "base": {"ref": "review/01"},
			"stack": {"id": 9, "number": 4, "size": 3, "position": 2, "base": {"ref": "main", "sha": "a"}}}`),
		jsonReply(200, `{"number": 13, "state": "open", "head": {"ref": "x", "sha": "c"}, "base": {"ref": "main"}, "stack": null}`),
	)
	ctx := context.Background()
	pr, err := c.GetPR(ctx, 12)
	if err != nil || pr.Title != "Part 2" || pr.Stack == nil || *pr.Stack != (PRStack{Number: 4, Size: 3, Position: 2, Base: "main"}) {
		t.Errorf("GetPR with a stack: %+v %v", pr, err)
	}
	if pr, err := c.GetPR(ctx, 13); err != nil || pr.Stack != nil {
		t.Errorf("GetPR in no stack: %+v %v", pr, err)
	}
}

func TestReasonReadsGitHubsErrorBodies(t *testing.T) {
	for body, want := range map[string]string{
		`{"message": "Validation Failed", "errors": [{"message": "no"}]}`: "Validation Failed: no",
		`{"message": "Same", "errors": [{"message": "Same"}]}`:            "Same",
		`{"status": "failed", "details": {"message": "a rule"}}`:          "a rule",
		`plain words`: "plain words",
	} {
		if got := reason([]byte(body)); got != want {
			t.Errorf("reason(%s) = %q, want %q", body, got, want)
		}
	}
	if got := reason([]byte(strings.Repeat("é", 600))); len([]rune(got)) > 501 {
		t.Errorf("a long body is not clipped: %d runes", len([]rune(got)))
	}
}
