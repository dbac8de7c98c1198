package github

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v60/github"
)

// Repo is the repository the client talks to, as owner/name.
func (c *Client) Repo() string { return c.owner + "/" + c.name }

// PRBody reads a pull request's state and description. The read is
// conditional like every GET of this client: a second read of an unchanged
// pull request (after GetPR, say) is a 304, free of rate limit.
func (c *Client) PRBody(ctx context.Context, number int) (*PR, string, error) {
	var p *gh.PullRequest
	err := c.call(ctx, func() (resp *gh.Response, err error) {
		p, resp, err = c.gh.PullRequests.Get(ctx, c.owner, c.name, number)
		return resp, err
	})
	if err != nil {
		return nil, "", fmt.Errorf("reading the description of #%d: %w", number, err)
	}
	return toPR(p), p.GetBody(), nil
}
