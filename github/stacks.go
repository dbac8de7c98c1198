package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	gh "github.com/google/go-github/v60/github"

	"github.com/wo-runner/wo/termtext"
)

// GitHub's own stacked pull requests (public preview since July 2026): a
// repository with stacks enabled answers the Stacks API (GET, POST
// /repos/{owner}/{repo}/stacks, …/{n}, …/{n}/add, …/{n}/unstack); a
// repository without answers 404. A stacked pull request is merged
// through the asynchronous merge API (PUT …/pulls/{n}/merge-async, then
// GET …/merge-async/{uuid}), which merges the stack from the bottom up to
// and including it; the synchronous merge refuses it. go-github does not
// know these operations yet, and their answers that matter are not all
// 2xx (a 409 carries the uuid of the merge already asked for), so they go
// through raw, below, on the same transport: the token only to the API
// host, every request counted, every read bounded.

// Stack is one of GitHub's stacks of pull requests.
type Stack struct {
	Number int    `json:"number"`
	Base   string `json:"base"`
	Open   bool   `json:"open"`
	// PRs are its pull requests, bottom first.
	PRs []StackPR `json:"pull_requests"`
}

// StackPR is a pull request as a stack lists it.
type StackPR struct {
	Number int    `json:"number"`
	State  string `json:"state"`
	Merged bool   `json:"merged"`
	Head   string `json:"head"`
}

// Numbers are the stack's pull request numbers, bottom first.
func (s *Stack) Numbers() []int {
	if s == nil {
		return nil
	}
	out := make([]int, len(s.PRs))
	for i, p := range s.PRs {
		out[i] = p.Number
	}
	return out
}

// PRStack is the stack object GitHub puts on a pull request in a stack:
// which stack, how many pull requests it holds, and where this one stands
// (1 is the bottom).
type PRStack struct {
	Number   int    `json:"number"`
	Size     int    `json:"size"`
	Position int    `json:"position"`
	Base     string `json:"base,omitempty"`
}

// MaxStack is the most pull requests GitHub takes in one stack, or in one
// request to create or extend one.
const MaxStack = 100

// stackJSON is the Stacks API's stack, full or minimal.
type stackJSON struct {
	Number int  `json:"number"`
	Open   bool `json:"open"`
	Base   struct {
		Ref string `json:"ref"`
	} `json:"base"`
	PullRequests []struct {
		Number   int     `json:"number"`
		State    string  `json:"state"`
		MergedAt *string `json:"merged_at"`
		Head     struct {
			Ref string `json:"ref"`
		} `json:"head"`
	} `json:"pull_requests"`
}

func (j *stackJSON) stack() *Stack {
	s := &Stack{Number: j.Number, Base: j.Base.Ref, Open: j.Open, PRs: []StackPR{}}
	for _, p := range j.PullRequests {
		s.PRs = append(s.PRs, StackPR{Number: p.Number, State: p.State, Merged: p.MergedAt != nil, Head: p.Head.Ref})
	}
	return s
}

// StackRefusedError is GitHub refusing a change to a stack (422: the pull
// requests cannot form, or join, the stack; 409: another request is
// changing it), with GitHub's reason.
type StackRefusedError struct {
	Status int
	Reason string
}

func (e *StackRefusedError) Error() string {
	return fmt.Sprintf("GitHub refused the stack change (%d): %s", e.Status, e.Reason)
}

// StacksEnabled asks whether the repository has stacked pull requests:
// its list of stacks answers (true) or is not found (false).
func (c *Client) StacksEnabled(ctx context.Context) (bool, error) {
	status, _, err := c.raw(ctx, http.MethodGet, c.repoPath("stacks")+"?per_page=1", nil, http.StatusOK, http.StatusNotFound)
	if err != nil {
		return false, fmt.Errorf("asking whether %s/%s has stacked pull requests: %w", c.owner, c.name, err)
	}
	return status == http.StatusOK, nil
}

// StackOf returns the stack that holds pull request number, or nil.
func (c *Client) StackOf(ctx context.Context, number int) (*Stack, error) {
	var list []stackJSON
	_, body, err := c.raw(ctx, http.MethodGet, c.repoPath("stacks")+"?pull_request="+strconv.Itoa(number), nil, http.StatusOK)
	if err == nil {
		err = decode(body, &list)
	}
	if err != nil {
		return nil, fmt.Errorf("looking for the stack of #%d: %w", number, err)
	}
	for i := range list {
		for _, p := range list[i].PullRequests {
			if p.Number == number {
				return list[i].stack(), nil
			}
		}
	}
	return nil, nil
}

// GetStack reads stack number n; nil when there is no such stack (it was
// dissolved).
func (c *Client) GetStack(ctx context.Context, n int) (*Stack, error) {
	status, body, err := c.raw(ctx, http.MethodGet, c.repoPath("stacks/"+strconv.Itoa(n)), nil, http.StatusOK, http.StatusNotFound)
	if err != nil || status == http.StatusNotFound {
		return nil, wrap(err, "reading stack %d", n)
	}
	var j stackJSON
	if err := decode(body, &j); err != nil {
		return nil, fmt.Errorf("reading stack %d: %w", n, err)
	}
	return j.stack(), nil
}

// CreateStack makes a stack of the pull requests, bottom first (2 to
// MaxStack, each based on the head of the one before).
func (c *Client) CreateStack(ctx context.Context, prs []int) (*Stack, error) {
	return c.changeStack(ctx, c.repoPath("stacks"), prs, "creating a stack of %v", prs)
}

// AddToStack puts the pull requests on top of stack n, bottom first.
func (c *Client) AddToStack(ctx context.Context, n int, prs []int) (*Stack, error) {
	return c.changeStack(ctx, c.repoPath("stacks/"+strconv.Itoa(n)+"/add"), prs, "adding %v to stack %d", prs, n)
}

func (c *Client) changeStack(ctx context.Context, path string, prs []int, what string, args ...any) (*Stack, error) {
	status, body, err := c.raw(ctx, http.MethodPost, path, map[string]any{"pull_requests": prs},
		http.StatusOK, http.StatusCreated, http.StatusConflict, http.StatusUnprocessableEntity)
	if err == nil && status >= 400 {
		err = &StackRefusedError{Status: status, Reason: c.secrets.String(reason(body))}
	}
	if err != nil {
		return nil, wrap(err, what, args...)
	}
	var j stackJSON
	if err := decode(body, &j); err != nil {
		return nil, wrap(err, what, args...)
	}
	return j.stack(), nil
}

// Unstack takes the unmerged pull requests out of stack n (GitHub keeps
// those queued for merge); with none left, the stack is dissolved. A
// stack that is gone already is not an error.
func (c *Client) Unstack(ctx context.Context, n int) error {
	status, body, err := c.raw(ctx, http.MethodPost, c.repoPath("stacks/"+strconv.Itoa(n)+"/unstack"), nil,
		http.StatusOK, http.StatusNoContent, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity)
	if err == nil && (status == http.StatusConflict || status == http.StatusUnprocessableEntity) {
		err = &StackRefusedError{Status: status, Reason: c.secrets.String(reason(body))}
	}
	return wrap(err, "unstacking stack %d", n)
}

// Merge methods GitHub offers.
const (
	MergeMerge  = "merge"
	MergeSquash = "squash"
	MergeRebase = "rebase"
)

// MergeRequest is what wo asks of a merge: the commit's title and message
// (so that nothing of wo's own, such as the stack table, lands in it), the
// head it must find, and the method.
type MergeRequest struct {
	Title string `json:"commit_title,omitempty"`
	// Message is always sent, "" included: left out, GitHub would take
	// the repository's default, which may be the whole description.
	Message string `json:"commit_message"`
	SHA     string `json:"sha,omitempty"`
	Method  string `json:"merge_method,omitempty"`
}

// Asynchronous merge results, as GitHub names them.
const (
	MergePending  = "pending"
	MergeEnqueued = "enqueued"
	MergeMerged   = "merged"
	MergeFailed   = "failed"
)

// MergeResult is where an asynchronous merge stands.
type MergeResult struct {
	Status  string `json:"status"` // pending, enqueued, merged, failed
	UUID    string `json:"uuid,omitempty"`
	SHA     string `json:"sha,omitempty"`     // the merge commit, once merged
	Message string `json:"message,omitempty"` // GitHub's words: why it failed, …
}

// Done reports whether the merge has ended, merged or failed.
func (r *MergeResult) Done() bool { return r.Status == MergeMerged || r.Status == MergeFailed }

type mergeAsyncJSON struct {
	Status  string `json:"status"`
	Details struct {
		Message string `json:"message"`
		UUID    string `json:"uuid"`
		SHA     string `json:"sha"`
	} `json:"details"`
}

func (j *mergeAsyncJSON) result(s *Client) *MergeResult {
	return &MergeResult{Status: j.Status, UUID: j.Details.UUID, SHA: j.Details.SHA, Message: clipString(s.secrets.String(j.Details.Message))}
}

// MergeAsync asks GitHub to merge pull request number in the background.
// Asked again, GitHub answers with the merge it has already (409, the same
// uuid) or the merge done (200, merged): asking twice never merges twice.
// A pull request that cannot be merged (closed, a draft) fails at once.
func (c *Client) MergeAsync(ctx context.Context, number int, m MergeRequest) (*MergeResult, error) {
	var in any = m
	_, body, err := c.raw(ctx, http.MethodPut, c.repoPath("pulls/"+strconv.Itoa(number)+"/merge-async"), in,
		http.StatusOK, http.StatusAccepted, http.StatusConflict, http.StatusBadRequest)
	var j mergeAsyncJSON
	if err == nil {
		err = decode(body, &j)
	}
	if err != nil {
		return nil, fmt.Errorf("asking GitHub to merge #%d: %w", number, err)
	}
	return j.result(c), nil
}

// MergeAsyncResult reads where the asynchronous merge uuid of pull request
// number stands; nil when GitHub no longer knows it (results are kept 24
// hours).
func (c *Client) MergeAsyncResult(ctx context.Context, number int, uuid string) (*MergeResult, error) {
	status, body, err := c.raw(ctx, http.MethodGet, c.repoPath("pulls/"+strconv.Itoa(number)+"/merge-async/"+url.PathEscape(uuid)), nil,
		http.StatusOK, http.StatusNotFound)
	if err != nil || status == http.StatusNotFound {
		return nil, wrap(err, "reading the merge of #%d", number)
	}
	var j mergeAsyncJSON
	if err := decode(body, &j); err != nil {
		return nil, fmt.Errorf("reading the merge of #%d: %w", number, err)
	}
	return j.result(c), nil
}

// MergeRefusedError is GitHub refusing a merge, with its reason (a rule,
// a required check or review, a head that moved, a stacked pull request
// asked of the synchronous merge).
type MergeRefusedError struct {
	Number int
	Status int
	Reason string
}

func (e *MergeRefusedError) Error() string {
	return fmt.Sprintf("GitHub refused to merge #%d: %s", e.Number, e.Reason)
}

// Merge merges pull request number at once (the synchronous merge, for a
// repository without stacks) and returns the merge commit.
func (c *Client) Merge(ctx context.Context, number int, m MergeRequest) (string, error) {
	status, body, err := c.raw(ctx, http.MethodPut, c.repoPath("pulls/"+strconv.Itoa(number)+"/merge"), m,
		http.StatusOK, http.StatusMethodNotAllowed, http.StatusConflict, http.StatusUnprocessableEntity, http.StatusNotFound)
	if err != nil {
		return "", fmt.Errorf("merging #%d: %w", number, err)
	}
	if status != http.StatusOK {
		return "", &MergeRefusedError{Number: number, Status: status, Reason: c.secrets.String(reason(body))}
	}
	var out struct {
		SHA string `json:"sha"`
	}
	if err := decode(body, &out); err != nil {
		return "", fmt.Errorf("merging #%d: %w", number, err)
	}
	return out.SHA, nil
}

// maxRawAnswer bounds an answer of the raw calls.
const maxRawAnswer = 4 << 20

func (c *Client) repoPath(rest string) string {
	return "repos/" + url.PathEscape(c.owner) + "/" + url.PathEscape(c.name) + "/" + rest
}

// raw sends one request through the client's transport and returns the
// status and body when the status is one of want; any other is an error
// as call gives it (401 and 403 an AuthError, 429 and 5xx a ServerError).
func (c *Client) raw(ctx context.Context, method, path string, in any, want ...int) (int, []byte, error) {
	req, err := c.gh.NewRequest(method, path, in)
	if err != nil {
		return 0, nil, err
	}
	if in == nil && method != http.MethodGet {
		req.Header.Del("Content-Type")
	}
	resp, err := c.gh.Client().Do(req.WithContext(ctx))
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, ctx.Err()
		}
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			return 0, nil, &ServerError{Err: fmt.Errorf("GitHub at %s did not answer within %s; check the server (or --github-api / GITHUB_API_URL) and rerun", c.host, c.timeout)}
		}
		return 0, nil, clip(c.secrets.Error(&ServerError{Err: err}))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRawAnswer+1))
	if err != nil {
		return 0, nil, clip(c.secrets.Error(&ServerError{Err: err}))
	}
	if len(body) > maxRawAnswer {
		return 0, nil, &ServerError{Err: fmt.Errorf("the answer to %s %s is over %d bytes", method, path, maxRawAnswer)}
	}
	for _, w := range want {
		if resp.StatusCode == w {
			return resp.StatusCode, body, nil
		}
	}
	msg := c.secrets.String(reason(body))
	switch s := resp.StatusCode; {
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return 0, nil, &AuthError{Status: s, Msg: msg}
	case s >= 500 || s == http.StatusTooManyRequests:
		return 0, nil, clip(&ServerError{Err: fmt.Errorf("%d %s", s, msg)})
	}
	return 0, nil, clip(fmt.Errorf("GitHub answered %d: %s", resp.StatusCode, msg))
}

// reason is the message of a GitHub error body (and of the first of its
// errors, which says what was wrong), or the body's start.
func reason(body []byte) string {
	var e struct {
		Message string `json:"message"`
		Errors  []struct {
			Message string `json:"message"`
		} `json:"errors"`
		Details struct {
			Message string `json:"message"`
		} `json:"details"`
	}
	if json.Unmarshal(body, &e) != nil {
		return clipString(string(body))
	}
	msg := e.Message
	if msg == "" {
		msg = e.Details.Message
	}
	if len(e.Errors) > 0 && e.Errors[0].Message != "" && e.Errors[0].Message != msg {
		msg += ": " + e.Errors[0].Message
	}
	return clipString(msg)
}

func clipString(s string) string { return termtext.Clip(s, 500) }

func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GitHub's answer is not what its API describes: %w", err)
	}
	return nil
}

// wrap adds what was being done to a non-nil error.
func wrap(err error, what string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(what+": %w", append(args, err)...)
}

// PollMergeEvery is how often wo reads an asynchronous merge's result.
var PollMergeEvery = 2 * time.Second

// prJSON is a pull request with the stack object that go-github does not
// know yet.
type prJSON struct {
	gh.PullRequest
	Stack *struct {
		Number   int `json:"number"`
		Size     int `json:"size"`
		Position int `json:"position"`
		Base     struct {
			Ref string `json:"ref"`
		} `json:"base"`
	} `json:"stack"`
}

// getPR reads one pull request, its stack object included.
func (c *Client) getPR(ctx context.Context, number int) (*PR, string, error) {
	var p prJSON
	err := c.call(ctx, func() (*gh.Response, error) {
		req, err := c.gh.NewRequest(http.MethodGet, c.repoPath("pulls/"+strconv.Itoa(number)), nil)
		if err != nil {
			return nil, err
		}
		return c.gh.Do(ctx, req, &p)
	})
	if err != nil {
		return nil, "", err
	}
	pr := toPR(&p.PullRequest)
	if s := p.Stack; s != nil && s.Number > 0 {
		pr.Stack = &PRStack{Number: s.Number, Size: s.Size, Position: s.Position, Base: s.Base.Ref}
	}
	return pr, p.GetBody(), nil
}
