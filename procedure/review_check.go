package procedure

import (
	"context"
	"fmt"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/workorder"
)

// ReviewCheck gathers the review comments that are new since the
// watermark and not wo's own, and keeps them in state, so that an agent
// reading only the task document has them.
type ReviewCheck struct{}

func newReviewCheck() Action { return ReviewCheck{} }

// maxCommentBody bounds what one comment keeps in the document.
const maxCommentBody = 2000

// Run reads review comments, reviews and conversation comments.
func (ReviewCheck) Run(ctx context.Context, sc *StepContext) (Outcome, error) {
	client, n, me, err := prContext(ctx, sc)
	if err != nil {
		return Outcome{}, err
	}
	reviews, err := client.Reviews(ctx, n)
	if err != nil {
		return Outcome{}, err
	}
	inline, err := client.ReviewComments(ctx, n)
	if err != nil {
		return Outcome{}, err
	}
	conversation, err := client.IssueComments(ctx, n)
	if err != nil {
		return Outcome{}, err
	}
	wm := watermark(sc.State("review_watermark"))
	seen := watermark(sc.State("review_watermark")) // a copy: it moves, wm does not
	var found []any
	add := func(c github.Comment) {
		body := c.Body
		if len(body) > maxCommentBody {
			body = body[:maxCommentBody] + " […]"
		}
		found = append(found, map[string]any{"id": c.ID, "author": c.Author, "path": c.Path, "line": c.Line, "body": body, "url": c.URL})
	}
	for _, c := range inline {
		seen["review_comment"] = max(seen["review_comment"], c.ID)
		if c.ID > wm["review_comment"] && c.Author != me {
			add(c)
		}
	}
	for _, c := range conversation {
		seen["issue_comment"] = max(seen["issue_comment"], c.ID)
		if c.ID > wm["issue_comment"] && c.Author != me {
			add(c)
		}
	}
	inlineFound := len(found)
	for _, r := range reviews {
		seen["review"] = max(seen["review"], r.ID)
		// A review that asks for changes counts; its summary is kept only
		// when it came without inline comments, so nothing is counted twice.
		if r.ID > wm["review"] && r.Author != me && r.State == "CHANGES_REQUESTED" && r.Body != "" && inlineFound == 0 {
			add(github.Comment{ID: r.ID, Author: r.Author, Body: r.Body, URL: r.URL})
		}
	}
	if found == nil {
		found = []any{}
	}
	return Outcome{
		Note:  fmt.Sprintf("%d actionable review comment(s) on #%d", len(found), n),
		State: map[string]any{"review_comments": found, "review_seen": workorder.AnyMap(seen)},
	}, nil
}

// Plan names the PR.
func (ReviewCheck) Plan(sc *StepContext) string {
	return "read the review comments, reviews and conversation of the pull request; keep the new ones not written by wo"
}

// watermark reads {"review": id, "review_comment": id, "issue_comment": id}.
func watermark(v any) map[string]int64 {
	out := map[string]int64{"review": 0, "review_comment": 0, "issue_comment": 0}
	m, _ := v.(map[string]any)
	for k := range out {
		if n, ok := workorder.AsInt(m[k]); ok {
			out[k] = n
		}
	}
	return out
}

// prContext is what the review steps start from: the recorded PR, the
// client, and wo's own login (whose comments never count).
func prContext(ctx context.Context, sc *StepContext) (*github.Client, int, string, error) {
	n := sc.PRNumber()
	if n == 0 {
		return nil, 0, "", fmt.Errorf("task %s has no pull request yet: the create_pr step comes first", sc.Key())
	}
	client, err := sc.GitHub()
	if err != nil {
		return nil, 0, "", err
	}
	me, err := client.Login(ctx)
	if err != nil {
		return nil, 0, "", err
	}
	return client, n, me, nil
}
