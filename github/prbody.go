package github

import (
	"context"
	"fmt"
)

// Repo is the repository the client talks to, as owner/name.
func (c *Client) Repo() string { return c.owner + "/" + c.name }

// PRBody reads a pull request's state and description. The read is
// conditional like every GET of this client: a second read of an unchanged
// pull request (after GetPR, say) is a 304, free of rate limit.
func (c *Client) PRBody(ctx context.Context, number int) (*PR, string, error) {
	pr, body, err := c.getPR(ctx, number)
	if err != nil {
		return nil, "", fmt.Errorf("reading the description of #%d: %w", number, err)
	}
	return pr, body, nil
}
