package github

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wo-runner/wo/termtext"
)

// transport sits under go-github. It
//   - makes GETs conditional (If-None-Match with the last ETag) and turns a
//     304 back into the cached answer, marked X-From-Cache so that go-github
//     does not take its rate headers as fresh: an unchanged poll is free;
//   - retries GETs after 5xx and broken connections, with jittered backoff;
//   - waits out secondary limits (429 or 403 with Retry-After) for any
//     method, since GitHub did not process such a request;
//   - counts what it sends;
//   - sends the Authorization header only to the API host it was made for,
//     so a redirect or a page link elsewhere never carries the token;
//   - reads no answer past MaxResponseBytes, so a server cannot make wo
//     hold gigabytes (the request time limit alone would let it try).
type transport struct {
	base    http.RoundTripper
	maxWait time.Duration
	api     *url.URL

	mu    sync.Mutex
	cache map[string]cached
	n     Counts
}

type cached struct {
	etag   string
	header http.Header
	body   []byte
}

const maxAttempts = 4

// MaxResponseBytes bounds one answer's body. GitHub's largest answers to
// what wo asks (a page of 100 review threads with their comments, a page
// of 100 comments) are a few megabytes.
const MaxResponseBytes = 32 << 20

// maxErrorBytes bounds an error answer's body, which ends up in messages.
const maxErrorBytes = 64 << 10

// maxErrorMessage bounds the text of an error wo reports from GitHub's
// answer: it lands in the document's last_error and on the terminal.
const maxErrorMessage = 2000

// clippedError is an error whose message is cut to maxErrorMessage; it
// unwraps to the whole error, so errors.As still finds wo's kinds.
type clippedError struct {
	msg string
	err error
}

func (e *clippedError) Error() string { return e.msg }
func (e *clippedError) Unwrap() error { return e.err }

// clip cuts an error's message, keeping what it wraps.
func clip(err error) error {
	if err == nil || len(err.Error()) <= maxErrorMessage {
		return err
	}
	return &clippedError{msg: termtext.Clip(err.Error(), maxErrorMessage), err: err}
}

// boundedBody fails a read past its limit instead of reading on.
type boundedBody struct {
	io.ReadCloser
	left int64
	what string
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.tooLarge()
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte past the limit tells a body that is too large
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		// Closed here, not left to the reader: go-github swaps an error
		// answer's body for a copy and never closes the one it read, which
		// would keep the connection (and the server's writes) open.
		b.ReadCloser.Close()
		return n + int(b.left), b.tooLarge()
	}
	return n, err
}

func (b *boundedBody) tooLarge() error {
	return fmt.Errorf("GitHub's answer to %s is larger than %d MiB; wo reads no more (is --github-api / GITHUB_API_URL GitHub?)", b.what, MaxResponseBytes>>20)
}

func newTransport(base http.RoundTripper, maxWait time.Duration, api *url.URL) *transport {
	return &transport{base: base, maxWait: maxWait, api: api, cache: map[string]cached{}}
}

// mayAuthenticate reports whether a request may carry the token: only to
// the configured API host, with its scheme.
func (t *transport) mayAuthenticate(u *url.URL) bool {
	return t.api == nil || (strings.EqualFold(u.Host, t.api.Host) && u.Scheme == t.api.Scheme)
}

// addGraphQL counts what a GraphQL call cost.
func (t *transport) addGraphQL(mutation bool, cost, remaining int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if mutation {
		t.n.GraphQLMutations++
		return
	}
	t.n.GraphQLCost += cost
	t.n.GraphQLRemaining = remaining
}

// bearer adds the token to the GraphQL client's requests; the transport
// under it removes it again from any request not to the API host.
type bearer struct {
	base  http.RoundTripper
	token string
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func (t *transport) counts() Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	idempotent := req.Method == http.MethodGet || req.Method == http.MethodHead
	var hit cached
	var haveHit bool
	if req.Method == http.MethodGet {
		t.mu.Lock()
		hit, haveHit = t.cache[req.URL.String()]
		t.mu.Unlock()
	}
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	for attempt := 1; ; attempt++ {
		r := req.Clone(req.Context())
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		if haveHit {
			r.Header.Set("If-None-Match", hit.etag)
		}
		resp, err := t.send(r, attempt)
		if wait, again := t.retry(req, resp, err, idempotent, attempt); again {
			if resp != nil {
				drain(resp)
			}
			if werr := t.pause(req, wait); werr != nil {
				return nil, werr
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusNotModified && haveHit {
			drain(resp)
			t.mu.Lock()
			t.n.NotModified++
			t.mu.Unlock()
			return fromCache(req, hit), nil
		}
		return t.keep(req, resp)
	}
}

// send makes one attempt of a request: without the token when it goes
// elsewhere than the API, counted, and its answer's body bounded.
func (t *transport) send(r *http.Request, attempt int) (*http.Response, error) {
	if !t.mayAuthenticate(r.URL) {
		r.Header.Del("Authorization")
	}
	t.mu.Lock()
	t.n.Requests++
	if attempt > 1 {
		t.n.Retries++
	}
	t.mu.Unlock()
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	limit := int64(MaxResponseBytes)
	if resp.StatusCode >= 400 {
		limit = maxErrorBytes // GitHub's error answers are a message and a link
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: limit, what: r.Method + " " + r.URL.Path}
	return resp, nil
}

// retry says whether an attempt's outcome is worth another and how long
// to wait first: a failure to connect or a server error of a request
// safe to repeat, or a secondary rate limit that asks for a wait wo takes.
func (t *transport) retry(req *http.Request, resp *http.Response, err error, idempotent bool, attempt int) (time.Duration, bool) {
	switch {
	case attempt >= maxAttempts:
		return 0, false
	case err != nil:
		if idempotent && req.Context().Err() == nil {
			return backoff(attempt), true
		}
		return 0, false
	}
	if wait, ok := retryAfter(resp); ok && wait <= t.maxWait {
		return wait, true
	}
	if resp.StatusCode >= 500 && idempotent {
		return backoff(attempt), true
	}
	return 0, false
}

// keep caches a GET's answer that has an ETag, so that the next asks
// only whether it changed.
func (t *transport) keep(req *http.Request, resp *http.Response) (*http.Response, error) {
	if req.Method != http.MethodGet || resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == "" {
		return resp, nil
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.cache[req.URL.String()] = cached{etag: resp.Header.Get("ETag"), header: resp.Header.Clone(), body: b}
	t.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

// retryAfter reports a secondary rate limit and how long it asks to wait.
func retryAfter(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusForbidden {
		return 0, false
	}
	s := resp.Header.Get("Retry-After")
	if s == "" {
		return 0, false
	}
	secs, err := strconv.Atoi(s)
	if err != nil || secs < 0 {
		return 0, false
	}
	return time.Duration(secs) * time.Second, true
}

// backoff is 250ms, 500ms, 1s … with up to half again of jitter.
func backoff(attempt int) time.Duration {
	d := 250 * time.Millisecond << (attempt - 1)
	return d + time.Duration(rand.Int64N(int64(d)/2+1))
}

func (t *transport) pause(req *http.Request, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-req.Context().Done():
		return req.Context().Err()
	}
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}

func fromCache(req *http.Request, c cached) *http.Response {
	h := c.header.Clone()
	h.Set("X-From-Cache", "1")
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(c.body)), ContentLength: int64(len(c.body)), Request: req,
	}
}
