// Package github is wo's GitHub client, over github.com/google/go-github/v60:
// pull requests, reviews and comments, with polling that costs nothing when
// nothing changed (ETag / If-None-Match, so GitHub answers 304), rate
// limits honoured, 5xx and connection errors retried, and every request
// counted. The token is sent as a header, only to the configured API host
// (over https, or plain http on loopback), and is removed from every error
// in every form, since a server may echo it back.
package github

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v60/github"
	"github.com/shurcooL/githubv4"

	"github.com/wo-runner/wo/redact"
)

// Config says which GitHub and repository to talk to.
type Config struct {
	BaseURL string // https://api.github.com/ when empty; https://HOST/api/v3/ for GitHub Enterprise
	Token   string
	Repo    string // owner/name
	// MaxWait is the longest a call waits for a rate limit to reset before
	// giving up with RateLimitedError (default 2 minutes).
	MaxWait time.Duration
	// Transport replaces the HTTP transport under the caching and retries.
	Transport http.RoundTripper
	// RequestTimeout bounds one call, its retries included (default 60s),
	// so that a server that accepts and never answers cannot hang a run.
	RequestTimeout time.Duration
	// Login is wo's own login, when known: GitHub does not tell an App's
	// installation token (GitHub Actions' GITHUB_TOKEN) who it is.
	Login string
	// AppLogin is the login to take when GitHub refuses to say (403 on
	// GET /user): github-actions[bot] inside GitHub Actions.
	AppLogin string
}

// DefaultRequestTimeout bounds one GitHub call when Config sets none.
const DefaultRequestTimeout = 60 * time.Second

// Client talks to one repository.
type Client struct {
	gh          *gh.Client
	gql         *githubv4.Client
	owner, name string
	tr          *transport
	maxWait     time.Duration
	login       string
	appLogin    string        // Config.AppLogin
	host        string        // the API host, for messages
	timeout     time.Duration // RequestTimeout
	secrets     *redact.Secrets
}

// MissingTokenError says no token is configured.
type MissingTokenError struct{}

func (MissingTokenError) Error() string {
	return "no GitHub token: set GITHUB_TOKEN (or GH_TOKEN) to a token that may read and write pull requests of the repository"
}

// AuthError is a 401 or 403 that is not a rate limit.
type AuthError struct {
	Status int
	Msg    string
}

func (e *AuthError) Error() string {
	if e.Status == http.StatusUnauthorized {
		return fmt.Sprintf("GitHub refused the token (401 %s): set GITHUB_TOKEN (or GH_TOKEN) to a valid token", e.Msg)
	}
	return fmt.Sprintf("GitHub denied access (%d %s): the token in GITHUB_TOKEN (or GH_TOKEN) needs access to the repository's pull requests", e.Status, e.Msg)
}

// RateLimitedError says the primary rate limit is used up until Reset,
// further than the caller is willing to wait.
type RateLimitedError struct{ Reset time.Time }

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("GitHub rate limit used up until %s", e.Reset.UTC().Format(time.RFC3339))
}

// Temporary marks the error as worth retrying later.
func (e *RateLimitedError) Temporary() bool { return true }

// ServerError is a failure on GitHub's side (5xx, a connection that broke,
// a secondary limit that outlasted the wait) that outlasted the retries.
type ServerError struct{ Err error }

func (e *ServerError) Error() string   { return "GitHub is not answering well: " + e.Err.Error() }
func (e *ServerError) Unwrap() error   { return e.Err }
func (e *ServerError) Temporary() bool { return true }

// New builds a client. It fails when the token is missing or the
// repository is not owner/name.
func New(cfg Config) (*Client, error) {
	if cfg.Token == "" {
		return nil, MissingTokenError{}
	}
	owner, name, ok := strings.Cut(cfg.Repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("GitHub repository %q: set work_order.context.repo to owner/name", cfg.Repo)
	}
	if cfg.MaxWait == 0 {
		cfg.MaxWait = 2 * time.Minute
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	api, err := APIURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	base := cfg.Transport
	if base == nil {
		base = newHTTPTransport(cfg.RequestTimeout)
	}
	tr := newTransport(base, cfg.MaxWait, api)
	client := gh.NewClient(&http.Client{Transport: tr, Timeout: cfg.RequestTimeout}).WithAuthToken(cfg.Token)
	client.BaseURL = api
	// The GraphQL client shares the transport (the token only to the API
	// host, retries, counts) and the time limit; it adds the token itself.
	gql := githubv4.NewEnterpriseClient(GraphQLURL(api), &http.Client{Transport: bearer{tr, cfg.Token}, Timeout: cfg.RequestTimeout})
	return &Client{gh: client, gql: gql, owner: owner, name: name, tr: tr, maxWait: cfg.MaxWait, login: cfg.Login, appLogin: cfg.AppLogin,
		host: api.Host, timeout: cfg.RequestTimeout, secrets: redact.New().Token(cfg.Token)}, nil
}

// APIURL parses the API base URL (https://api.github.com/ when empty). The
// token goes only there, so it must be https, or plain http on loopback
// (the GitHub stand-in of the tests): a token sent in clear over a network
// is a token given away.
func APIURL(raw string) (*url.URL, error) {
	if raw == "" {
		raw = "https://api.github.com/"
	}
	if !strings.HasSuffix(raw, "/") {
		raw += "/"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("GitHub API URL %q: give it as https://HOST/api/v3/ (GITHUB_API_URL or --github-api)", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("GitHub API URL %s: do not put credentials in the URL; set GITHUB_TOKEN (or GH_TOKEN)", u.Redacted())
	}
	if u.Scheme == "http" && !IsLoopback(u.Hostname()) {
		return nil, fmt.Errorf("GitHub API URL %s is plain http: wo sends the token only over https (plain http only to loopback); use https://%s%s", raw, u.Host, u.Path)
	}
	return u, nil
}

// IsLoopback reports whether host names this machine: localhost or a
// loopback address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newHTTPTransport is the transport under the client: bounded dialling,
// TLS handshake and wait for the response headers.
func newHTTPTransport(timeout time.Duration) *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: min(timeout, 30*time.Second), KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   min(timeout, 10*time.Second),
		ResponseHeaderTimeout: timeout,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConns:          16,
		ForceAttemptHTTP2:     true,
	}
}

// Counts are the requests this client sent.
type Counts struct {
	Requests    int `json:"requests"`     // sent to GitHub, retries included
	NotModified int `json:"not_modified"` // answered 304: free of rate limit
	Retries     int `json:"retries"`
	// GraphQLCost is the rate-limit points GraphQL calls cost, as GitHub
	// reported them (rateLimit.cost); GraphQLRemaining what was left at the
	// last call.
	GraphQLCost      int `json:"graphql_cost,omitempty"`
	GraphQLRemaining int `json:"graphql_remaining,omitempty"`
	GraphQLMutations int `json:"graphql_mutations,omitempty"` // replies and resolutions sent
}

// Counts returns the requests sent so far.
func (c *Client) Counts() Counts { return c.tr.counts() }

// Pull request states: GitHub's open and closed, and merged, which is how
// wo names a closed pull request whose change was merged.
const (
	PROpen   = "open"
	PRClosed = "closed"
	PRMerged = "merged"
)

// Lifecycle is the pull request's state with merged told apart from closed.
func (p PR) Lifecycle() string {
	if p.Merged {
		return PRMerged
	}
	return p.State
}

// PR is the part of a pull request wo uses.
type PR struct {
	Number  int    `json:"number"`
	Title   string `json:"title,omitempty"`
	URL     string `json:"url"`
	State   string `json:"state"`
	Merged  bool   `json:"merged"`
	Head    string `json:"head"`
	HeadSHA string `json:"head_sha"`
	Base    string `json:"base"`
	Author  string `json:"author"` // the login that opened it
	// Stack is where it stands in one of GitHub's own stacks, when it
	// is in one (read from a single pull request, not from lists).
	Stack *PRStack `json:"stack,omitempty"`
}

// Review is a pull request review.
type Review struct {
	ID          int64
	Author      string
	Association string // author_association: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, …
	State       string // APPROVED, CHANGES_REQUESTED, COMMENTED
	Body        string
	CommitID    string
	URL         string
	SubmittedAt time.Time
}

// Comment is a review comment (Path set) or a conversation comment.
type Comment struct {
	ID          int64
	Author      string
	Association string // author_association, as on Review
	Path        string
	Line        int
	Body        string
	URL         string
	CreatedAt   time.Time
	// UpdatedAt moves when the comment is edited: a review bot that keeps
	// one summary comment edits it in place, so its news is here.
	UpdatedAt time.Time
}

// Writer reports whether an author_association is that of someone who can
// push to the repository: its owner, a member of its organization, or a
// collaborator. Anyone else (a contributor, a first-timer, anyone at all
// on a public repository) is an outsider to wo.
func Writer(association string) bool {
	switch strings.ToUpper(association) {
	case "OWNER", "MEMBER", "COLLABORATOR":
		return true
	}
	return false
}

// call runs a go-github call, waiting out rate limits that reset soon
// enough, and maps errors to wo's, with the token removed from them.
func (c *Client) call(ctx context.Context, fn func() (*gh.Response, error)) error {
	return clip(c.secrets.Error(c.call1(ctx, fn)))
}

func (c *Client) call1(ctx context.Context, fn func() (*gh.Response, error)) error {
	for {
		_, err := fn()
		if err == nil {
			return nil
		}
		var rl *gh.RateLimitError
		var abuse *gh.AbuseRateLimitError
		var er *gh.ErrorResponse
		var ue *url.Error
		var ne net.Error
		switch {
		case errors.As(err, &rl):
			wait := time.Until(rl.Rate.Reset.Time) + time.Second
			if wait > c.maxWait {
				return &RateLimitedError{Reset: rl.Rate.Reset.Time}
			}
			if err := sleep(ctx, wait); err != nil {
				return err
			}
		case errors.As(err, &abuse):
			wait := abuse.GetRetryAfter()
			if wait > c.maxWait || wait <= 0 {
				return &ServerError{Err: errors.New("secondary rate limit: " + c.secrets.String(abuse.Message))}
			}
			if err := sleep(ctx, wait); err != nil {
				return err
			}
		case errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusUnauthorized:
			return &AuthError{Status: http.StatusUnauthorized, Msg: c.secrets.String(er.Message)}
		case errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusForbidden:
			return &AuthError{Status: http.StatusForbidden, Msg: c.secrets.String(er.Message)}
		case errors.As(err, &er) && er.Response != nil && (er.Response.StatusCode >= 500 || er.Response.StatusCode == http.StatusTooManyRequests):
			return &ServerError{Err: fmt.Errorf("%d %s", er.Response.StatusCode, c.secrets.String(er.Message))}
		case errors.As(err, &ue) || errors.As(err, &ne):
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if (errors.As(err, &ne) && ne.Timeout()) || errors.Is(err, context.DeadlineExceeded) {
				return &ServerError{Err: fmt.Errorf("GitHub at %s did not answer within %s; check the server (or --github-api / GITHUB_API_URL) and rerun", c.host, c.timeout)}
			}
			return &ServerError{Err: c.secrets.Error(err)}
		default:
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Login is the user the token belongs to: wo's own identity, whose
// comments are never taken as review comments.
func (c *Client) Login(ctx context.Context) (string, error) {
	if c.login != "" {
		return c.login, nil
	}
	var u *gh.User
	err := c.call(ctx, func() (resp *gh.Response, err error) {
		u, resp, err = c.gh.Users.Get(ctx, "")
		return resp, err
	})
	var denied *AuthError
	switch {
	case errors.As(err, &denied) && denied.Status == http.StatusForbidden && c.appLogin != "":
		c.login = c.appLogin
		return c.login, nil
	case errors.As(err, &denied) && denied.Status == http.StatusForbidden:
		return "", fmt.Errorf("learning wo's own login (GET /user): %w; an App's installation token cannot say who it is: set WO_GITHUB_LOGIN to the login wo's comments appear under (NAME[bot])", err)
	case err != nil:
		return "", err
	}
	c.login = u.GetLogin()
	return c.login, nil
}

// FindOpenPR returns the open pull request from head into base, or nil.
func (c *Client) FindOpenPR(ctx context.Context, head, base string) (*PR, error) {
	prs, err := c.prsFrom(ctx, head, base, PROpen)
	if err != nil || len(prs) == 0 {
		return nil, err
	}
	return prs[0], nil
}

// PRsFrom lists every pull request, open, closed or merged, from head into
// base, newest first.
func (c *Client) PRsFrom(ctx context.Context, head, base string) ([]*PR, error) {
	return c.prsFrom(ctx, head, base, "all")
}

func (c *Client) prsFrom(ctx context.Context, head, base, state string) ([]*PR, error) {
	opts := &gh.PullRequestListOptions{State: state, Head: c.owner + ":" + head, Base: base, ListOptions: gh.ListOptions{PerPage: 100}}
	var prs []*gh.PullRequest
	err := c.call(ctx, func() (resp *gh.Response, err error) {
		prs, resp, err = c.gh.PullRequests.List(ctx, c.owner, c.name, opts)
		return resp, err
	})
	if err != nil {
		if state == PROpen {
			return nil, fmt.Errorf("looking for an open pull request %s → %s: %w", head, base, err)
		}
		return nil, fmt.Errorf("looking for pull requests %s → %s: %w", head, base, err)
	}
	var out []*PR
	for _, p := range prs {
		if p.GetHead().GetRef() == head && p.GetBase().GetRef() == base {
			out = append(out, toPR(p))
		}
	}
	return out, nil
}

// CreatePR opens a pull request; if GitHub says one exists already, it
// returns that one.
func (c *Client) CreatePR(ctx context.Context, head, base, title, body string) (*PR, error) {
	var p *gh.PullRequest
	err := c.call(ctx, func() (resp *gh.Response, err error) {
		p, resp, err = c.gh.PullRequests.Create(ctx, c.owner, c.name, &gh.NewPullRequest{
			Title: gh.String(title), Head: gh.String(head), Base: gh.String(base), Body: gh.String(body)})
		return resp, err
	})
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusUnprocessableEntity && strings.Contains(fmt.Sprint(er.Errors), "already exists") {
		if existing, ferr := c.FindOpenPR(ctx, head, base); ferr == nil && existing != nil {
			return existing, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("creating the pull request %s → %s: %w", head, base, err)
	}
	return toPR(p), nil
}

// GetPR reads one pull request.
func (c *Client) GetPR(ctx context.Context, number int) (*PR, error) {
	pr, _, err := c.getPR(ctx, number)
	if err != nil {
		return nil, fmt.Errorf("reading pull request #%d: %w", number, err)
	}
	return pr, nil
}

// toPR reads a pull request, full or as a list gives it: a list's items
// carry merged_at but not merged.
func toPR(p *gh.PullRequest) *PR {
	return &PR{Number: p.GetNumber(), Title: p.GetTitle(), URL: p.GetHTMLURL(), State: p.GetState(), Merged: p.GetMerged() || p.MergedAt != nil,
		Head: p.GetHead().GetRef(), HeadSHA: p.GetHead().GetSHA(), Base: p.GetBase().GetRef(), Author: p.GetUser().GetLogin()}
}

// maxListPages bounds the pages of 100 that wo reads of one list: past
// it, GitHub (or something that answers for it) is not ending the list.
const maxListPages = 30

// TooManyPagesError says a list went on past maxListPages pages, or named
// as its next page one it had given already.
type TooManyPagesError struct {
	What string // the reviews of #12, …
	Back int    // the page named again, when that was the trouble
}

func (e *TooManyPagesError) Error() string {
	if e.Back > 0 {
		return fmt.Sprintf("%s: GitHub named page %d as the next page again; wo reads no more and cannot tell what the rest says (is --github-api / GITHUB_API_URL GitHub?)", e.What, e.Back)
	}
	return fmt.Sprintf("%s went on past %d pages of 100; wo reads no more and cannot tell what the rest says (is --github-api / GITHUB_API_URL GitHub?)", e.What, maxListPages)
}

// allPages reads every page of a list, at most maxListPages, following
// the next page GitHub names, which must move on.
func allPages[T any](ctx context.Context, c *Client, what string, fetch func(page int) ([]T, *gh.Response, error)) ([]T, error) {
	var out []T
	page := 0
	for n := 0; ; n++ {
		if n == maxListPages {
			return nil, &TooManyPagesError{What: what}
		}
		var items []T
		var resp *gh.Response
		err := c.call(ctx, func() (r *gh.Response, err error) {
			items, resp, err = fetch(page)
			return resp, err
		})
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", what, err)
		}
		out = append(out, items...)
		switch {
		case resp.NextPage == 0:
			return out, nil
		case resp.NextPage <= max(page, 1):
			return nil, &TooManyPagesError{What: what, Back: resp.NextPage}
		}
		page = resp.NextPage
	}
}

// Reviews lists a pull request's reviews, every page.
func (c *Client) Reviews(ctx context.Context, number int) ([]Review, error) {
	reviews, err := allPages(ctx, c, fmt.Sprintf("the reviews of #%d", number), func(page int) ([]*gh.PullRequestReview, *gh.Response, error) {
		return c.gh.PullRequests.ListReviews(ctx, c.owner, c.name, number, &gh.ListOptions{PerPage: 100, Page: page})
	})
	if err != nil {
		return nil, err
	}
	out := make([]Review, 0, len(reviews))
	for _, r := range reviews {
		out = append(out, Review{ID: r.GetID(), Author: r.GetUser().GetLogin(), Association: r.GetAuthorAssociation(), State: r.GetState(),
			Body: r.GetBody(), CommitID: r.GetCommitID(), URL: r.GetHTMLURL(), SubmittedAt: r.GetSubmittedAt().Time})
	}
	return out, nil
}

// ReviewComments lists a pull request's review comments, every page.
func (c *Client) ReviewComments(ctx context.Context, number int) ([]Comment, error) {
	comments, err := allPages(ctx, c, fmt.Sprintf("the review comments of #%d", number), func(page int) ([]*gh.PullRequestComment, *gh.Response, error) {
		return c.gh.PullRequests.ListComments(ctx, c.owner, c.name, number, &gh.PullRequestListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100, Page: page}})
	})
	if err != nil {
		return nil, err
	}
	out := make([]Comment, 0, len(comments))
	for _, r := range comments {
		out = append(out, Comment{ID: r.GetID(), Author: r.GetUser().GetLogin(), Association: r.GetAuthorAssociation(), Path: r.GetPath(),
			Line: r.GetLine(), Body: r.GetBody(), URL: r.GetHTMLURL(), CreatedAt: r.GetCreatedAt().Time, UpdatedAt: r.GetUpdatedAt().Time})
	}
	return out, nil
}

// IssueComments lists a pull request's conversation comments, every page.
func (c *Client) IssueComments(ctx context.Context, number int) ([]Comment, error) {
	comments, err := allPages(ctx, c, fmt.Sprintf("the comments of #%d", number), func(page int) ([]*gh.IssueComment, *gh.Response, error) {
		return c.gh.Issues.ListComments(ctx, c.owner, c.name, number, &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100, Page: page}})
	})
	if err != nil {
		return nil, err
	}
	out := make([]Comment, 0, len(comments))
	for _, r := range comments {
		out = append(out, Comment{ID: r.GetID(), Author: r.GetUser().GetLogin(), Association: r.GetAuthorAssociation(), Body: r.GetBody(),
			URL: r.GetHTMLURL(), CreatedAt: r.GetCreatedAt().Time, UpdatedAt: r.GetUpdatedAt().Time})
	}
	return out, nil
}

// EditPRBody replaces a pull request's description.
func (c *Client) EditPRBody(ctx context.Context, number int, body string) error {
	err := c.call(ctx, func() (resp *gh.Response, err error) {
		_, resp, err = c.gh.PullRequests.Edit(ctx, c.owner, c.name, number, &gh.PullRequest{Body: gh.String(body)})
		return resp, err
	})
	if err != nil {
		return fmt.Errorf("updating the description of #%d: %w", number, err)
	}
	return nil
}

// CommentOnce posts a comment on a pull request unless wo's own comment
// containing marker is there already, so that a rerun never posts twice.
func (c *Client) CommentOnce(ctx context.Context, number int, body, marker string) error {
	comments, err := c.IssueComments(ctx, number)
	if err != nil {
		return err
	}
	me, err := c.Login(ctx)
	if err != nil {
		return err
	}
	// Only wo's own comment counts: anyone can quote the marker.
	for _, cm := range comments {
		if SameLogin(cm.Author, me) && strings.Contains(cm.Body, marker) {
			return nil
		}
	}
	_, err = c.Comment(ctx, number, body)
	return err
}

// ClosePR closes a pull request without merging it.
func (c *Client) ClosePR(ctx context.Context, number int) (*PR, error) {
	var p *gh.PullRequest
	err := c.call(ctx, func() (resp *gh.Response, err error) {
		p, resp, err = c.gh.PullRequests.Edit(ctx, c.owner, c.name, number, &gh.PullRequest{State: gh.String(PRClosed)})
		return resp, err
	})
	if err != nil {
		return nil, fmt.Errorf("closing pull request #%d: %w", number, err)
	}
	return toPR(p), nil
}

// DeleteIssueComment deletes a conversation comment; one that is gone
// already (404) is not an error.
func (c *Client) DeleteIssueComment(ctx context.Context, id int64) error {
	err := c.call(ctx, func() (resp *gh.Response, err error) {
		return c.gh.Issues.DeleteComment(ctx, c.owner, c.name, id)
	})
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting comment %d: %w", id, err)
	}
	return nil
}

// Token is GITHUB_TOKEN, then GH_TOKEN.
func Token(getenv func(string) string) string {
	if t := getenv("GITHUB_TOKEN"); t != "" {
		return t
	}
	return getenv("GH_TOKEN")
}
