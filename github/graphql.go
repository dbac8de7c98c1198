package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shurcooL/githubv4"
)

// GraphQLURL is the GraphQL endpoint beside a REST API base:
// https://api.github.com/graphql for github.com, https://HOST/api/graphql
// for GitHub Enterprise (whose REST base is https://HOST/api/v3/).
func GraphQLURL(api *url.URL) string {
	u := *api
	p := strings.TrimSuffix(u.Path, "/")
	if strings.HasSuffix(p, "/v3") {
		p = strings.TrimSuffix(p, "/v3")
	}
	u.Path = p + "/graphql"
	u.RawPath = ""
	return u.String()
}

// ReviewThread is one review thread of a pull request: a line of a file
// and the conversation about it.
type ReviewThread struct {
	ID       string // the thread's node ID, for replies and resolving
	Resolved bool   // someone marked it resolved
	Outdated bool   // the line it is about changed since
	Path     string // the file
	Line     int    // the line in the head version; 0 when outdated
	// StartLine is the first line of a comment on several lines, else 0;
	// Side is RIGHT (the head's lines) or LEFT (lines the change removed,
	// numbered as in the base).
	StartLine int
	Side      string
	Comments  []ThreadComment // oldest first
}

// ThreadComment is one comment of a review thread.
type ThreadComment struct {
	ID          string // node ID
	DatabaseID  int64  // the REST API's ID
	Author      string // the login as REST gives it: a bot's ends in [bot]
	Association string // authorAssociation: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, …
	Body        string
	URL         string
	CreatedAt   time.Time
}

// ThreadReview is one review as the GraphQL API lists it: who, the verdict,
// and the commit it reviewed.
type ThreadReview struct {
	Author      string // the login as REST gives it: a bot's ends in [bot]
	Association string // authorAssociation
	State       string // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING
	Commit      string
}

// ReviewState is what the review threads query answers: every thread and
// the latest reviews.
type ReviewState struct {
	Threads []ReviewThread
	Reviews []ThreadReview // oldest first
}

// maxThreadPages bounds the pages of 100 threads read from one PR.
const maxThreadPages = 10

// TooManyThreadsError says a pull request has more review threads than wo
// reads: it cannot tell whether those beyond are resolved, so it does not
// call the review clean.
type TooManyThreadsError struct {
	PR    int
	Pages int // pages read, each of up to 100 threads
	Read  int // threads on them
}

func (e *TooManyThreadsError) Error() string {
	return fmt.Sprintf("pull request #%d: GitHub still had more review threads after %d pages (%d threads read); wo reads no more and cannot tell whether the rest are resolved, so it does not call the review clean: judge the pull request on GitHub", e.PR, e.Pages, e.Read)
}

// threadComment is a comment as the threads query reads it.
type threadComment struct {
	ID                githubv4.ID
	DatabaseID        *int64 `graphql:"databaseId"`
	Author            actor
	AuthorAssociation string
	Body              string
	URL               string
	CreatedAt         time.Time
}

// actor is a comment's or review's author as GraphQL names it: an app's
// bot without the "[bot]" that the REST API puts after its login.
type actor struct {
	Login    string
	Typename string `graphql:"__typename"`
}

// restLogin is the login as the REST API gives it, so that one account has
// one name in wo whichever API it came from.
func (a actor) restLogin() string {
	if a.Typename == "Bot" && a.Login != "" && !strings.HasSuffix(a.Login, "[bot]") {
		return a.Login + "[bot]"
	}
	return a.Login
}

// SameLogin reports whether two logins name one account: GitHub's logins
// are ASCII and not case-sensitive. Only ASCII letters fold, so that a
// lookalike (a long s, a Kelvin sign) from a hostile server is another
// login.
func SameLogin(a, b string) bool {
	if a == "" || len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// IsReviewer reports whether login is the reviewer a work order names:
// the same login, or the app's bot when the name leaves out "[bot]"
// (--reviewer coderabbitai waits for coderabbitai[bot]).
func IsReviewer(login, name string) bool {
	return SameLogin(login, name) || SameLogin(login, name+"[bot]")
}

// threadsQuery is the one query wo sends; its shape is checked against
// GitHub's schema by the stand-in.
type threadsQuery struct {
	Repository struct {
		PullRequest struct {
			ReviewThreads struct {
				Nodes []struct {
					ID         githubv4.ID
					IsResolved bool
					IsOutdated bool
					Path       string
					Line       *int
					StartLine  *int
					DiffSide   string
					// The first comments (the question) and the latest
					// (wo's reply, in a long thread): a thread of more
					// than 70 comments is read without its middle.
					Comments struct {
						Nodes []threadComment
					} `graphql:"comments(first: 50)"`
					Latest struct {
						Nodes []threadComment
					} `graphql:"latest: comments(last: 20)"`
				}
				PageInfo struct {
					HasNextPage bool
					EndCursor   string
				}
			} `graphql:"reviewThreads(first: 100, after: $cursor)"`
			Reviews struct {
				Nodes []struct {
					Author            actor
					AuthorAssociation string
					State             string
					Commit            struct{ Oid string }
				}
			} `graphql:"reviews(last: 50)"`
		} `graphql:"pullRequest(number: $number)"`
	} `graphql:"repository(owner: $owner, name: $name)"`
	RateLimit rateLimit
}

type rateLimit struct {
	Cost      int
	Remaining int
}

// ReviewThreads reads a pull request's review threads (every page, up to
// maxThreadPages: more is a *TooManyThreadsError) and its latest 50
// reviews through the GraphQL API.
func (c *Client) ReviewThreads(ctx context.Context, number int) (*ReviewState, error) {
	out := &ReviewState{}
	var cursor *githubv4.String
	for page := 0; ; page++ {
		var q threadsQuery
		vars := map[string]any{"owner": githubv4.String(c.owner), "name": githubv4.String(c.name),
			"number": githubv4.Int(number), "cursor": cursor}
		if err := c.graphql(ctx, false, func() (rateLimit, error) { err := c.gql.Query(ctx, &q, vars); return q.RateLimit, err }); err != nil {
			return nil, fmt.Errorf("reading the review threads of #%d: %w", number, err)
		}
		pr := q.Repository.PullRequest
		for _, t := range pr.ReviewThreads.Nodes {
			th := ReviewThread{ID: fmt.Sprint(t.ID), Resolved: t.IsResolved, Outdated: t.IsOutdated, Path: t.Path}
			if t.Line != nil {
				th.Line = *t.Line
			}
			if t.StartLine != nil {
				th.StartLine = *t.StartLine
			}
			th.Side = t.DiffSide
			seen := map[string]bool{}
			for _, cm := range append(t.Comments.Nodes, t.Latest.Nodes...) {
				tc := ThreadComment{ID: fmt.Sprint(cm.ID), Author: cm.Author.restLogin(), Association: cm.AuthorAssociation,
					Body: cm.Body, URL: cm.URL, CreatedAt: cm.CreatedAt}
				if cm.DatabaseID != nil {
					tc.DatabaseID = *cm.DatabaseID
				}
				if !seen[tc.ID] {
					seen[tc.ID] = true
					th.Comments = append(th.Comments, tc)
				}
			}
			out.Threads = append(out.Threads, th)
		}
		if page == 0 {
			for _, r := range pr.Reviews.Nodes {
				out.Reviews = append(out.Reviews, ThreadReview{Author: r.Author.restLogin(), Association: r.AuthorAssociation, State: r.State, Commit: r.Commit.Oid})
			}
		}
		if !pr.ReviewThreads.PageInfo.HasNextPage {
			return out, nil
		}
		if page+1 >= maxThreadPages {
			return nil, &TooManyThreadsError{PR: number, Pages: page + 1, Read: len(out.Threads)}
		}
		cursor = githubv4.NewString(githubv4.String(pr.ReviewThreads.PageInfo.EndCursor))
	}
}

// ReplyToThread adds a comment to a review thread.
func (c *Client) ReplyToThread(ctx context.Context, threadID, body string) error {
	var m struct {
		AddPullRequestReviewThreadReply struct {
			Comment struct{ ID githubv4.ID }
		} `graphql:"addPullRequestReviewThreadReply(input: $input)"`
	}
	in := githubv4.AddPullRequestReviewThreadReplyInput{PullRequestReviewThreadID: githubv4.ID(threadID), Body: githubv4.String(body)}
	err := c.graphql(ctx, true, func() (rateLimit, error) { return rateLimit{}, c.gql.Mutate(ctx, &m, in, nil) })
	if err != nil {
		return fmt.Errorf("replying in review thread %s: %w", threadID, err)
	}
	return nil
}

// ResolveThread marks a review thread resolved.
func (c *Client) ResolveThread(ctx context.Context, threadID string) error {
	var m struct {
		ResolveReviewThread struct {
			Thread struct {
				ID         githubv4.ID
				IsResolved bool
			}
		} `graphql:"resolveReviewThread(input: $input)"`
	}
	in := githubv4.ResolveReviewThreadInput{ThreadID: githubv4.ID(threadID)}
	err := c.graphql(ctx, true, func() (rateLimit, error) { return rateLimit{}, c.gql.Mutate(ctx, &m, in, nil) })
	if err != nil {
		return fmt.Errorf("resolving review thread %s: %w", threadID, err)
	}
	return nil
}

// DeleteReviewComment deletes a review comment (a reply in a review
// thread) by its node ID; one that is gone already is not an error.
func (c *Client) DeleteReviewComment(ctx context.Context, id string) error {
	var m struct {
		DeletePullRequestReviewComment struct {
			ClientMutationID *string `graphql:"clientMutationId"`
		} `graphql:"deletePullRequestReviewComment(input: $input)"`
	}
	in := githubv4.DeletePullRequestReviewCommentInput{ID: githubv4.ID(id)}
	err := c.graphql(ctx, true, func() (rateLimit, error) { return rateLimit{}, c.gql.Mutate(ctx, &m, in, nil) })
	if err != nil && strings.Contains(err.Error(), "Could not resolve to a node") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting review comment %s: %w", id, err)
	}
	return nil
}

// graphql runs one GraphQL call, counts its cost (a query asks for it;
// GitHub's Mutation type has no rateLimit, so mutations are counted), retries a query (never a
// mutation, which GitHub may have carried out) after a failure on GitHub's
// side, and maps errors to wo's, with the token removed from them.
func (c *Client) graphql(ctx context.Context, mutation bool, fn func() (rateLimit, error)) error {
	return clip(c.graphql1(ctx, mutation, fn))
}

func (c *Client) graphql1(ctx context.Context, mutation bool, fn func() (rateLimit, error)) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		rl, err := fn()
		if err == nil {
			c.tr.addGraphQL(mutation, rl.Cost, rl.Remaining)
			return nil
		}
		err = c.secrets.Error(err)
		msg := err.Error()
		switch {
		case strings.Contains(msg, "non-200 OK status code: 401"):
			return &AuthError{Status: http.StatusUnauthorized, Msg: "Bad credentials"}
		case strings.Contains(msg, "non-200 OK status code: 403") && !strings.Contains(msg, "rate limit"):
			return &AuthError{Status: http.StatusForbidden, Msg: "the GraphQL API refused the token"}
		case strings.Contains(msg, "RATE_LIMITED") || strings.Contains(msg, "rate limit"):
			return &ServerError{Err: errors.New("GraphQL rate limit: " + msg)}
		case strings.Contains(msg, "non-200 OK status code: 5") || errors.Is(err, context.DeadlineExceeded):
			if ctx.Err() != nil {
				return &ServerError{Err: fmt.Errorf("GitHub at %s did not answer within %s; check the server (or --github-api / GITHUB_API_URL) and rerun", c.host, c.timeout)}
			}
			if mutation || attempt >= maxAttempts {
				return &ServerError{Err: err}
			}
			if werr := sleep(ctx, backoff(attempt)); werr != nil {
				return werr
			}
		default:
			return err
		}
	}
}
