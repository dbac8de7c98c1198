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
	wm := sc.State().ReviewWatermark
	seen := wm // it moves, wm does not
	found := []workorder.ReviewComment{}
	add := func(c github.Comment) {
		body := c.Body
		if len(body) > maxCommentBody {
			body = body[:maxCommentBody] + " […]"
		}
		found = append(found, workorder.ReviewComment{ID: c.ID, Author: c.Author, Path: c.Path, Line: c.Line, Body: body, URL: c.URL})
	}
	for _, c := range inline {
		seen.ReviewComment = max(seen.ReviewComment, c.ID)
		if c.ID > wm.ReviewComment && c.Author != me {
			add(c)
		}
	}
	for _, c := range conversation {
		seen.IssueComment = max(seen.IssueComment, c.ID)
		if c.ID > wm.IssueComment && c.Author != me {
			add(c)
		}
	}
	inlineFound := len(found)
	for _, r := range reviews {
		seen.Review = max(seen.Review, r.ID)
		// A review that asks for changes counts; its summary is kept only
		// when it came without inline comments, so nothing is counted twice.
		if r.ID > wm.Review && r.Author != me && r.State == "CHANGES_REQUESTED" && r.Body != "" && inlineFound == 0 {
			add(github.Comment{ID: r.ID, Author: r.Author, Body: r.Body, URL: r.URL})
		}
	}
	return Outcome{
		Note:   fmt.Sprintf("%d actionable review comment(s) on #%d", len(found), n),
		Record: func(s *workorder.State) { s.ReviewComments, s.ReviewSeen = found, seen },
	}, nil
}

// Plan names the PR.
func (ReviewCheck) Plan(sc *StepContext) string {
	return "read the review comments, reviews and conversation of the pull request; keep the new ones not written by wo"
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
