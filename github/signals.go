package github

import (
	"context"
	"fmt"
	"time"

	gh "github.com/google/go-github/v60/github"
)

// Status is what a commit status or a check run of one commit says: a
// review bot reports its review of a head there ("Review completed",
// "Review skipped", "Review rate limited", …).
type Status struct {
	Context     string // the status's context, or the check run's name
	State       string // pending, success, failure or error (a check run's status and conclusion mapped to these)
	Description string // the status's description, or the check run's title
	// Creator is who posted it: the status's creator, or the check run's
	// app as its bot ("coderabbitai[bot]"). Anyone who can push can post a
	// status with any context, so a profile checks who did.
	Creator   string
	UpdatedAt time.Time
}

// Statuses are the commit statuses of ref, newest first (one page of 100:
// a head carries a few), each with who posted it.
func (c *Client) Statuses(ctx context.Context, ref string) ([]Status, error) {
	var list []*gh.RepoStatus
	err := c.call(ctx, func() (resp *gh.Response, err error) {
		list, resp, err = c.gh.Repositories.ListStatuses(ctx, c.owner, c.name, ref, &gh.ListOptions{PerPage: 100})
		return resp, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the commit statuses of %s: %w", ref, err)
	}
	out := make([]Status, 0, len(list))
	for _, s := range list {
		out = append(out, Status{Context: s.GetContext(), State: s.GetState(), Description: s.GetDescription(),
			Creator: s.GetCreator().GetLogin(), UpdatedAt: s.GetUpdatedAt().Time})
	}
	return out, nil
}

// CheckRuns are the check runs of ref (up to 100), each as a Status: a
// run not completed is pending; a completed one is its conclusion
// (success, or failure for anything else).
func (c *Client) CheckRuns(ctx context.Context, ref string) ([]Status, error) {
	var runs *gh.ListCheckRunsResults
	err := c.call(ctx, func() (resp *gh.Response, err error) {
		runs, resp, err = c.gh.Checks.ListCheckRunsForRef(ctx, c.owner, c.name, ref, &gh.ListCheckRunsOptions{ListOptions: gh.ListOptions{PerPage: 100}})
		return resp, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the check runs of %s: %w", ref, err)
	}
	out := make([]Status, 0, len(runs.CheckRuns))
	for _, r := range runs.CheckRuns {
		st := "pending"
		if r.GetStatus() == "completed" {
			st = "failure"
			switch r.GetConclusion() {
			case "success", "neutral", "skipped":
				st = "success"
			}
		}
		at := r.GetCompletedAt().Time
		if at.IsZero() {
			at = r.GetStartedAt().Time
		}
		creator := ""
		if slug := r.GetApp().GetSlug(); slug != "" {
			creator = slug + "[bot]" // the app's bot, as its comments name it
		}
		out = append(out, Status{Context: r.GetName(), State: st, Description: r.GetOutput().GetTitle(), Creator: creator, UpdatedAt: at})
	}
	return out, nil
}

// RequestReviewers asks GitHub for a review of a pull request by logins
// (a bot's with its "[bot]"): a reviewer already asked is asked again,
// which is how a reviewer that reviews only when asked is made to look at
// a new head.
func (c *Client) RequestReviewers(ctx context.Context, number int, logins []string) error {
	err := c.call(ctx, func() (resp *gh.Response, err error) {
		_, resp, err = c.gh.PullRequests.RequestReviewers(ctx, c.owner, c.name, number, gh.ReviewersRequest{Reviewers: logins})
		return resp, err
	})
	if err != nil {
		return fmt.Errorf("asking %v to review #%d: %w", logins, number, err)
	}
	return nil
}

// Comment posts a conversation comment on a pull request and returns it.
// Callers that must not post twice look for their marker first (see
// CommentOnce).
func (c *Client) Comment(ctx context.Context, number int, body string) (Comment, error) {
	var made *gh.IssueComment
	err := c.call(ctx, func() (resp *gh.Response, err error) {
		made, resp, err = c.gh.Issues.CreateComment(ctx, c.owner, c.name, number, &gh.IssueComment{Body: gh.String(body)})
		return resp, err
	})
	if err != nil {
		return Comment{}, fmt.Errorf("commenting on #%d: %w", number, err)
	}
	return Comment{ID: made.GetID(), Author: made.GetUser().GetLogin(), Association: made.GetAuthorAssociation(), Body: made.GetBody(),
		URL: made.GetHTMLURL(), CreatedAt: made.GetCreatedAt().Time, UpdatedAt: made.GetUpdatedAt().Time}, nil
}

// EditPRBase changes the branch a pull request targets: a stacked pull
// request whose base was merged moves to the merged one's base.
func (c *Client) EditPRBase(ctx context.Context, number int, base string) error {
	err := c.call(ctx, func() (resp *gh.Response, err error) {
		_, resp, err = c.gh.PullRequests.Edit(ctx, c.owner, c.name, number, &gh.PullRequest{Base: &gh.PullRequestBranch{Ref: gh.String(base)}})
		return resp, err
	})
	if err != nil {
		return fmt.Errorf("retargeting #%d onto %s: %w", number, base, err)
	}
	return nil
}
