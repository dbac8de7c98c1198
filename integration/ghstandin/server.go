// Package ghstandin is a TEST DOUBLE for GitHub's REST API: a stateful
// server on loopback that answers the calls wo makes (pull requests, reviews,
// review comments, issue comments, the authenticated user, stacked pull
// requests, the asynchronous and the legacy merge) with GitHub's
// documented field names, status codes, ETag/304, pagination links and
// rate-limit headers. Tests drive it through knobs: a scripted reviewer
// that comments after a delay, 5xx bursts, primary and secondary rate
// limits, a bad token, merges that rules refuse. It is not GitHub and
// never talks to GitHub.
package ghstandin

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// Comment is what the scripted reviewer says in one review round: a
// comment on a line opens a review thread; a comment without a Path is the
// body of a review that requests changes with no inline comment.
//
// In the CodeRabbit mode, Kind places a finding in the review body instead
// of a thread: "outside" (outside the diff range), "nitpick" or
// "duplicate"; StartLine makes a comment span lines StartLine..Line, and
// Suggestion adds a suggestion block that replaces those lines.
type Comment struct {
	Path       string `json:"path"`
	Line       int    `json:"line"`
	Body       string `json:"body"`
	Kind       string `json:"kind,omitempty"`
	StartLine  int    `json:"start_line,omitempty"`
	Suggestion string `json:"suggestion,omitempty"`
}

// Server is the stand-in. Create it with New, then Start it.
type Server struct {
	mu sync.Mutex

	// Token is the one token accepted; its user is Login.
	Token string
	Login string
	// Remotes maps "owner/name" to the bare repository that plays the
	// GitHub remote, so that a PR's head commit is the branch's real tip.
	Remotes map[string]string

	// The scripted reviewer: after a PR's head changes, wait ReviewDelay,
	// then post the next round: comments (a CHANGES_REQUESTED review) or,
	// when the round is empty or the rounds are used up, an APPROVED review.
	ReviewerLogin string
	ReviewRounds  [][]Comment
	ReviewDelay   time.Duration
	// ResolveFixed makes the reviewer, at each review, resolve its open
	// threads whose lines changed since the thread was opened (the fix
	// touched them); the others stay open, as a reviewer that checks would
	// leave them.
	ResolveFixed bool
	// Mode is how the reviewer behaves: ModeIdealised (the default),
	// ModeCodeRabbit or ModeCopilot (bots.go), configured by CodeRabbit
	// and Copilot.
	Mode       string
	CodeRabbit CodeRabbitBot
	Copilot    CopilotBot
	// Writers are the logins that can push to the repositories besides
	// the token's user: their author_association is MEMBER; everyone
	// else's (the bots' too) is NONE, as an outsider's on a public
	// repository.
	Writers          map[string]bool
	statuses         map[string][]map[string]any // by repo@sha
	requestedReviews []string
	hold             bool // reviews wait (HoldReviews)
	crReviews        int  // CodeRabbit's reviews in its rate-limit window
	crLimitedUntil   time.Time
	graphqlCost      int
	gql              GraphQLCalls
	gqlErrors        []map[string]any // the errors of the GraphQL answer being built

	// Rate limits: RateLimit requests per window; 304s are free.
	RateLimit   int
	remaining   int
	resetAt     time.Time
	RateWindow  time.Duration
	faults      []fault
	nextID      int64
	prs         map[string][]*pr
	requests    []Request
	listener    net.Listener
	httpServer  *http.Server
	URL         string // base URL, ending in "/"
	stopReviews chan struct{}

	// Contract, when set, checks every request and answer against GitHub's
	// OpenAPI description. A request GitHub does not document is answered
	// 422; an answer GitHub does not document is replaced by a 500. Both
	// are kept in Violations and printed to stderr, so that a test through
	// the stand-in fails when the double drifts from GitHub.
	Contract *Contract
	// ExpectViolations keeps the violations the Contract finds off
	// stderr: a test that sends them on purpose asserts them through
	// Violations, and a passing run's log has no line that reads as a
	// failure.
	ExpectViolations bool
	violations       []error

	// Stacks enables stacked pull requests on every repository (stacks.go):
	// without it the /stacks operations answer 404, as GitHub's do on a
	// repository that has not enabled them.
	Stacks bool
	// MergeDelay is how long an asynchronous merge waits before it runs
	// (mergeasync.go); New sets 50ms.
	MergeDelay time.Duration
	// SquashMessageFromBody is the repository's default squash commit
	// message "Pull request title and description": a squash's message is
	// "TITLE (#N)", a blank line and the pull request's description. Off,
	// it is the title alone ("Pull request title"). New sets it.
	SquashMessageFromBody bool
	stacks                map[string][]*stack // by repo, in number order
	asyncOrder            []*asyncMerge       // every asynchronous merge, oldest first
	refusals              map[string]string   // by repo#number (RefuseMerge)
	merges                map[string][]MergeRecord
}

// DefaultContract is the Contract that New gives every server: test
// packages that want every stand-in strict set it once (in an init).
var DefaultContract *Contract

// Request is one request the stand-in answered, for counting.
type Request struct {
	Method, Path string
	Query        string // the raw query, without "?"
	Status       int
}

type fault struct {
	kind  string // "5xx", "secondary", "primary", "unauthorized"
	count int
	arg   time.Duration
}

// ReplyAs replies in a pull request's review thread (0 is the oldest) as
// login, as a person would.
func (s *Server) ReplyAs(repo string, number, thread int, login, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.find(repo, strconv.Itoa(number)); p != nil && thread < len(p.threads) {
		s.nextID++
		t := p.threads[thread]
		t.comments = append(t.comments, threadComment{id: s.nextID, login: login, body: body, at: time.Now()})
	}
}

type pr struct {
	Number       int
	Title, Body  string
	Head, Base   string
	State        string
	Merged       bool
	User         string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	reviewedSHA  string
	round        int
	pendingSince time.Time
	pendingSHA   string
	reviews      []map[string]any
	comments     []map[string]any
	issueComms   []map[string]any
	threads      []*thread
	headSeen     string // the head the threads were last compared with
	baseSeen     bool   // the base branch was seen in the remote
	bot          botState
	mergeSHA     string // the commit its merge made
	Draft        bool
}

// New returns a stand-in with a token and the defaults of github.com:
// 5,000 requests an hour.
func New(token string) *Server {
	return &Server{
		Token: token, Login: "wo-bot", ReviewerLogin: "coderabbitai[bot]",
		RateLimit: 5000, RateWindow: time.Hour, Remotes: map[string]string{}, Writers: map[string]bool{},
		prs: map[string][]*pr{}, nextID: 1000, Contract: DefaultContract,
		gql:        GraphQLCalls{Mutations: map[string]int{}},
		MergeDelay: 50 * time.Millisecond, SquashMessageFromBody: true,
		stacks: map[string][]*stack{}, refusals: map[string]string{}, merges: map[string][]MergeRecord{},
	}
}

// Start listens on a loopback port.
func (s *Server) Start() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	return s.Serve(l)
}

// Serve answers on l until Close.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	s.listener = l
	s.remaining = s.RateLimit
	s.resetAt = time.Now().Add(s.RateWindow)
	s.URL = "http://" + l.Addr().String() + "/"
	s.stopReviews = make(chan struct{})
	s.httpServer = &http.Server{Handler: http.HandlerFunc(s.serve)}
	s.mu.Unlock()
	go s.httpServer.Serve(l)
	go s.reviewLoop()
	return nil
}

// Close stops the server.
func (s *Server) Close() {
	close(s.stopReviews)
	s.httpServer.Close()
}

// Requests returns the requests answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Inject5xx makes the next n requests fail with 502.
func (s *Server) Inject5xx(n int) { s.addFault(fault{kind: "5xx", count: n}) }

// InjectSecondaryLimit makes the next n requests answer 429 with
// Retry-After.
func (s *Server) InjectSecondaryLimit(n int, retryAfter time.Duration) {
	s.addFault(fault{kind: "secondary", count: n, arg: retryAfter})
}

// ExhaustPrimaryLimit uses up the primary rate limit until reset from now.
func (s *Server) ExhaustPrimaryLimit(reset time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remaining = 0
	s.resetAt = time.Now().Add(reset)
}

// BreakToken makes every request answer 401 Bad credentials until
// FixToken, as when a token is revoked.
func (s *Server) BreakToken() { s.mu.Lock(); s.Token += "-revoked"; s.mu.Unlock() }

// FixToken undoes BreakToken.
func (s *Server) FixToken() {
	s.mu.Lock()
	s.Token = strings.TrimSuffix(s.Token, "-revoked")
	s.mu.Unlock()
}

// RestoreLimit gives the full rate limit back, as a reset would.
func (s *Server) RestoreLimit() {
	s.mu.Lock()
	s.remaining, s.resetAt = s.RateLimit, time.Now().Add(s.RateWindow)
	s.mu.Unlock()
}

func (s *Server) addFault(f fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

// PullRequests returns the PRs of a repository as GitHub would list them
// with state=all.
func (s *Server) PullRequests(repo string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, p := range s.prs[repo] {
		out = append(out, s.prJSON(repo, p))
	}
	return out
}

// IssueComment is one conversation comment of a pull request, as a test
// reads it back.
type IssueComment struct {
	ID     int64
	Author string
	Body   string
}

// IssueComments returns a pull request's conversation comments, oldest
// first.
func (s *Server) IssueComments(repo string, number int) []IssueComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(repo, strconv.Itoa(number))
	if p == nil {
		return nil
	}
	var out []IssueComment
	for _, c := range p.issueComms {
		out = append(out, IssueComment{ID: c["id"].(int64), Author: c["user"].(map[string]any)["login"].(string), Body: c["body"].(string)})
	}
	return out
}

// CommentAs posts a conversation comment on a pull request as login (a
// person, not the token's user).
func (s *Server) CommentAs(repo string, number int, login, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.find(repo, strconv.Itoa(number)); p != nil {
		s.nextID++
		p.issueComms = append(p.issueComms, s.issueCommentJSON(repo, p, s.nextID, login, body))
		s.botCommand(repo, p, body)
	}
}

// deleteIssueComment deletes a conversation comment, as GitHub does: 204,
// or 404 when there is no such comment. Only its author may (GitHub lets
// maintainers too; the stand-in's token user is its only author).
func (s *Server) deleteIssueComment(w http.ResponseWriter, repo, id string) int {
	n, _ := strconv.ParseInt(id, 10, 64)
	for _, p := range s.prs[repo] {
		for i, c := range p.issueComms {
			if c["id"].(int64) != n {
				continue
			}
			if c["user"].(map[string]any)["login"] != s.Login {
				return s.errorJSON(w, http.StatusForbidden, "Must have admin rights to Repository.")
			}
			p.issueComms = append(p.issueComms[:i:i], p.issueComms[i+1:]...)
			s.remaining--
			w.WriteHeader(http.StatusNoContent)
			return http.StatusNoContent
		}
	}
	return s.errorJSON(w, http.StatusNotFound, "Not Found")
}

// Merge marks a PR merged (and closed), as a person merging it would.
func (s *Server) Merge(repo string, number int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.prs[repo] {
		if p.Number == number {
			if !p.Merged {
				if s.merges == nil {
					s.merges = map[string][]MergeRecord{}
				}
				s.merges[repo] = append(s.merges[repo], MergeRecord{Number: number})
			}
			p.State, p.Merged, p.UpdatedAt = "closed", true, time.Now().UTC()
		}
	}
}

// OpenPRAs opens a pull request from head into base as login (a person,
// not the token's user), and returns its number.
func (s *Server) OpenPRAs(repo, head, base, login, title string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC()
	p := &pr{Number: len(s.prs[repo]) + 1, Title: title, Head: head, Base: base, State: "open", User: login, CreatedAt: now, UpdatedAt: now}
	s.baseGone(repo, p) // a base that exists now is seen at once, as GitHub sees it
	s.prs[repo] = append(s.prs[repo], p)
	return p.Number
}

var (
	rePulls      = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls$`)
	rePull       = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/(\d+)$`)
	rePullComms  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/(\d+)/comments$`)
	rePullRevs   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/(\d+)/reviews$`)
	reIssueComms = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/(\d+)/comments$`)
	reIssueComm  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/comments/(\d+)$`)
	reStatuses   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/commits/([^/]+)/statuses$`)
	reCheckRuns  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/commits/([^/]+)/check-runs$`)
	reRequested  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/(\d+)/requested_reviewers$`)
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	status := s.checked(w, r)
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Status: status})
}

// Violations returns what the Contract found wrong so far.
func (s *Server) Violations() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.violations...)
}

func (s *Server) violation(err error) {
	s.violations = append(s.violations, err)
	if !s.ExpectViolations {
		fmt.Fprintln(os.Stderr, "ghstandin: OpenAPI contract violation:", err)
	}
}

// checked answers through handle, holding request and answer to the
// Contract when there is one.
func (s *Server) checked(w http.ResponseWriter, r *http.Request) int {
	if s.Contract == nil || isGraphQL(r.URL.Path) {
		return s.handle(w, r) // GraphQL is checked against GitHub's GraphQL schema instead

	}
	reqBody, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	if err := s.Contract.CheckRequest(r, reqBody); err != nil {
		s.violation(err)
		return s.errorJSON(w, http.StatusUnprocessableEntity, "the GitHub stand-in: GitHub's OpenAPI description does not allow this request: "+err.Error())
	}
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	rec := &recorder{header: http.Header{}}
	status := s.handle(rec, r)
	if err := s.Contract.CheckResponse(r, reqBody, status, rec.header, rec.body.Bytes()); err != nil {
		s.violation(err)
		return s.errorJSON(w, http.StatusInternalServerError, "the GitHub stand-in answered what GitHub's OpenAPI description does not allow: "+err.Error())
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	w.Write(rec.body.Bytes())
	return status
}

// recorder holds an answer until the Contract has seen it.
type recorder struct {
	header http.Header
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(int)             {}

// handle answers one request with the lock held and returns the status.
func (s *Server) handle(w http.ResponseWriter, r *http.Request) int {
	path := strings.TrimPrefix(r.URL.Path, "/api/v3")
	if status, refused := s.admit(w, r); refused {
		return status
	}
	s.refreshHeads()
	if status, ok := s.handleStacks(w, r, path); ok {
		return status
	}
	if status, ok := s.handleMerges(w, r, path); ok {
		return status
	}

	var m []string
	switch {
	case isGraphQL(r.URL.Path) && r.Method == http.MethodPost:
		return s.graphql(w, r)
	case path == "/user" && r.Method == http.MethodGet:
		return s.reply(w, r, http.StatusOK, s.authenticatedUserJSON())
	case rePulls.MatchString(path):
		m = rePulls.FindStringSubmatch(path)
		repo := m[1] + "/" + m[2]
		if r.Method == http.MethodPost {
			return s.createPR(w, r, repo)
		}
		return s.listPRs(w, r, repo)
	case rePull.MatchString(path):
		m = rePull.FindStringSubmatch(path)
		p := s.find(m[1]+"/"+m[2], m[3])
		if p == nil {
			return s.errorJSON(w, http.StatusNotFound, "Not Found")
		}
		if r.Method == http.MethodPatch {
			if status, refused := s.editPR(w, r, m[1]+"/"+m[2], p); refused {
				return status
			}
		}
		return s.reply(w, r, http.StatusOK, s.prJSON(m[1]+"/"+m[2], p))
	case rePullComms.MatchString(path):
		m = rePullComms.FindStringSubmatch(path)
		if p := s.find(m[1]+"/"+m[2], m[3]); p != nil {
			return s.page(w, r, p.comments)
		}
	case rePullRevs.MatchString(path):
		m = rePullRevs.FindStringSubmatch(path)
		if p := s.find(m[1]+"/"+m[2], m[3]); p != nil {
			return s.page(w, r, p.reviews)
		}
	case reIssueComms.MatchString(path):
		m = reIssueComms.FindStringSubmatch(path)
		if p := s.find(m[1]+"/"+m[2], m[3]); p != nil {
			if r.Method == http.MethodPost {
				return s.postIssueComment(w, r, m[1]+"/"+m[2], p)
			}
			return s.page(w, r, p.issueComms)
		}
	case reStatuses.MatchString(path) && r.Method == http.MethodGet:
		m = reStatuses.FindStringSubmatch(path)
		return s.listStatuses(w, r, m[1]+"/"+m[2], m[3])
	case reCheckRuns.MatchString(path) && r.Method == http.MethodGet:
		return s.checkRuns(w, r)
	case reRequested.MatchString(path) && r.Method == http.MethodPost:
		m = reRequested.FindStringSubmatch(path)
		if p := s.find(m[1]+"/"+m[2], m[3]); p != nil {
			return s.requestReviewers(w, r, m[1]+"/"+m[2], p)
		}
	case reIssueComm.MatchString(path) && r.Method == http.MethodDelete:
		m = reIssueComm.FindStringSubmatch(path)
		return s.deleteIssueComment(w, m[1]+"/"+m[2], m[3])
	}
	return s.errorJSON(w, http.StatusNotFound, "Not Found")
}

// admit answers a request the stand-in turns away before looking at what
// it asks: a fault queued by a test, bad credentials, an exhausted rate
// limit; refused is false for a request to go on with.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) (status int, refused bool) {
	if len(s.faults) > 0 {
		f := &s.faults[0]
		f.count--
		if f.count <= 0 {
			s.faults = s.faults[1:]
		}
		switch f.kind {
		case "5xx":
			return s.errorJSON(w, http.StatusBadGateway, "Server Error"), true
		case "secondary":
			w.Header().Set("Retry-After", strconv.Itoa(int(f.arg.Seconds()+0.999)))
			return s.errorJSON(w, http.StatusTooManyRequests, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."), true
		}
	}
	if r.Header.Get("Authorization") != "Bearer "+s.Token && r.Header.Get("Authorization") != "token "+s.Token {
		return s.errorJSON(w, http.StatusUnauthorized, "Bad credentials"), true
	}
	now := time.Now()
	if now.After(s.resetAt) {
		s.remaining, s.resetAt = s.RateLimit, now.Add(s.RateWindow)
	}
	s.rateHeaders(w)
	if s.remaining <= 0 {
		return s.errorJSON(w, http.StatusForbidden, "API rate limit exceeded for user ID 1."), true
	}
	return 0, false
}

// editPR applies a PATCH of a pull request (state, title, body, base);
// refused is true, with the status answered, when GitHub would refuse it.
func (s *Server) editPR(w http.ResponseWriter, r *http.Request, repo string, p *pr) (status int, refused bool) {
	var in struct{ State, Title, Body, Base *string }
	json.NewDecoder(r.Body).Decode(&in)
	if in.Base != nil {
		// GitHub refuses a base that does not exist.
		if s.headSHA(repo, *in.Base) == "" {
			return s.errorJSON(w, http.StatusUnprocessableEntity, "Validation Failed: base "+*in.Base+" does not exist"), true
		}
		p.Base = *in.Base
	}
	if in.State != nil {
		p.State = *in.State
	}
	if in.Title != nil {
		p.Title = *in.Title
	}
	if in.Body != nil {
		p.Body = *in.Body
	}
	p.UpdatedAt = time.Now().UTC()
	return 0, false
}

// postIssueComment adds a comment to a pull request's conversation, as
// wo's identity, and lets a bot the comment calls answer.
func (s *Server) postIssueComment(w http.ResponseWriter, r *http.Request, repo string, p *pr) int {
	var in struct{ Body string }
	json.NewDecoder(r.Body).Decode(&in)
	s.nextID++
	c := s.issueCommentJSON(repo, p, s.nextID, s.Login, in.Body)
	p.issueComms = append(p.issueComms, c)
	w.Header().Set("Location", c["url"].(string))
	status := s.reply(w, r, http.StatusCreated, c)
	s.botCommand(repo, p, in.Body)
	return status
}

func (s *Server) rateHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(s.RateLimit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(s.remaining, 0)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(s.resetAt.Unix(), 10))
	h.Set("X-RateLimit-Used", strconv.Itoa(s.RateLimit-max(s.remaining, 0)))
	h.Set("X-RateLimit-Resource", "core")
}

func (s *Server) errorJSON(w http.ResponseWriter, status int, msg string) int {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest", "status": strconv.Itoa(status)})
	return status
}

// reply writes JSON with an ETag; a matching If-None-Match gets a 304,
// which does not count against the rate limit, as on GitHub.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, status int, v any) int {
	body, _ := json.Marshal(v)
	etag := fmt.Sprintf(`W/"%x"`, sha256.Sum256(body))
	w.Header().Set("ETag", etag)
	if r.Method == http.MethodGet && r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return http.StatusNotModified
	}
	s.remaining--
	s.rateHeaders(w)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(body)
	return status
}

// page answers a list with per_page/page and Link headers.
func (s *Server) page(w http.ResponseWriter, r *http.Request, items []map[string]any) int {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	pageNo, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if pageNo <= 0 {
		pageNo = 1
	}
	last := max(1, (len(items)+per-1)/per)
	from, to := min((pageNo-1)*per, len(items)), min(pageNo*per, len(items))
	var links []string
	link := func(n int, rel string) {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(n))
		q.Set("per_page", strconv.Itoa(per))
		u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawQuery: q.Encode()}
		links = append(links, fmt.Sprintf(`<%s>; rel="%s"`, u.String(), rel))
	}
	if pageNo < last {
		link(pageNo+1, "next")
		link(last, "last")
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	out := items[from:to]
	if out == nil {
		out = []map[string]any{}
	}
	return s.reply(w, r, http.StatusOK, out)
}

func (s *Server) find(repo, number string) *pr {
	n, _ := strconv.Atoi(number)
	for _, p := range s.prs[repo] {
		if p.Number == n {
			return p
		}
	}
	return nil
}

func (s *Server) listPRs(w http.ResponseWriter, r *http.Request, repo string) int {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var out []map[string]any
	for _, p := range s.prs[repo] {
		if state != "all" && p.State != state {
			continue
		}
		if h := q.Get("head"); h != "" && h != strings.Split(repo, "/")[0]+":"+p.Head {
			continue
		}
		if b := q.Get("base"); b != "" && b != p.Base {
			continue
		}
		out = append(out, s.prSimpleJSON(repo, p))
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["number"].(int) > out[j]["number"].(int) })
	return s.page(w, r, out)
}

func (s *Server) createPR(w http.ResponseWriter, r *http.Request, repo string) int {
	var in struct {
		Title, Body, Head, Base string
		Draft                   bool
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Title == "" || in.Head == "" || in.Base == "" {
		return s.errorJSON(w, http.StatusUnprocessableEntity, "Validation Failed")
	}
	head := strings.TrimPrefix(in.Head, strings.Split(repo, "/")[0]+":")
	if s.headSHA(repo, head) == "" {
		return s.errorJSON(w, http.StatusUnprocessableEntity, "Validation Failed: head "+head+" does not exist")
	}
	for _, p := range s.prs[repo] {
		if p.State == "open" && p.Head == head && p.Base == in.Base {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusUnprocessableEntity)
			json.NewEncoder(w).Encode(map[string]any{"message": "Validation Failed",
				"errors": []any{map[string]any{"resource": "PullRequest", "code": "custom",
					"message": "A pull request already exists for " + in.Head + "."}},
				"documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request", "status": "422"})
			return http.StatusUnprocessableEntity
		}
	}
	now := time.Now().UTC()
	p := &pr{Number: len(s.prs[repo]) + 1, Title: in.Title, Body: in.Body, Head: head, Base: in.Base,
		State: "open", User: s.Login, CreatedAt: now, UpdatedAt: now, Draft: in.Draft}
	s.baseGone(repo, p) // a base that exists now is seen at once, as GitHub sees it
	s.prs[repo] = append(s.prs[repo], p)
	out := s.prJSON(repo, p)
	w.Header().Set("Location", out["url"].(string))
	return s.reply(w, r, http.StatusCreated, out)
}

// headSHA reads a branch tip from the bare repository behind repo.
func (s *Server) headSHA(repo, branch string) string {
	path, ok := s.Remotes[repo]
	if !ok {
		return ""
	}
	r, err := git.PlainOpen(path)
	if err != nil {
		return ""
	}
	ref, err := r.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		return ""
	}
	return ref.Hash().String()
}

// baseGone reports whether a PR's base branch, once seen in the remote,
// was deleted since. GitHub closes the open PRs based on a branch that is
// deleted (and they cannot be reopened), which is why deleting the bottom
// of a stack of PRs loses the ones above it.
func (s *Server) baseGone(repo string, p *pr) bool {
	path, ok := s.Remotes[repo]
	if !ok {
		return false
	}
	r, err := git.PlainOpen(path)
	if err != nil {
		return false
	}
	_, err = r.Reference(plumbing.NewBranchReferenceName(p.Base), true)
	switch {
	case err == nil:
		p.baseSeen = true
		return false
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		return p.baseSeen
	}
	return false
}

// refreshHeads runs the asynchronous merges that are due and notices
// pushes: a PR whose head moved gets a review scheduled after
// ReviewDelay; one whose base branch was deleted is closed, as GitHub
// closes it.
func (s *Server) refreshHeads() {
	s.runMerges() // the asynchronous merges that are due
	for repo, list := range s.prs {
		for _, p := range list {
			if p.State != "open" {
				continue
			}
			if s.baseGone(repo, p) {
				p.State, p.UpdatedAt = "closed", time.Now().UTC()
				continue
			}
			sha := s.headSHA(repo, p.Head)
			if sha != "" && sha != p.headSeen {
				if p.headSeen != "" {
					s.headMoved(repo, p, sha)
				}
				p.headSeen = sha
			}
			switch s.Mode {
			case ModeCodeRabbit:
				s.codeRabbitTick(repo, p, sha)
				continue
			case ModeCopilot:
				if s.hold {
					continue
				}
				if sha != "" && p.bot.seen == "" && s.Copilot.ReviewOnOpen {
					p.pendingSHA, p.pendingSince = sha, time.Now()
				}
				if sha != "" {
					p.bot.seen = sha
				}
				if p.pendingSHA != "" && time.Since(p.pendingSince) >= s.ReviewDelay {
					s.copilotReview(repo, p, p.pendingSHA, s.nextRound(p))
					p.reviewedSHA, p.pendingSHA = p.pendingSHA, ""
				}
				continue
			}
			if s.hold {
				continue
			}
			if sha != "" && sha != p.reviewedSHA && sha != p.pendingSHA {
				p.pendingSHA, p.pendingSince = sha, time.Now()
			}
			if p.pendingSHA != "" && time.Since(p.pendingSince) >= s.ReviewDelay {
				s.review(repo, p, p.pendingSHA)
				p.reviewedSHA, p.pendingSHA = p.pendingSHA, ""
			}
		}
	}
}

// codeRabbitTick is CodeRabbit noticing a head it has not reacted to, and
// finishing a review after the delay: one whose head moved meanwhile
// fails, as CodeRabbit's does.
func (s *Server) codeRabbitTick(repo string, p *pr, sha string) {
	if s.hold {
		return
	}
	if sha != "" && sha != p.bot.seen {
		if p.pendingSHA != "" && p.pendingSHA != sha {
			s.codeRabbitFailed(repo, p, p.pendingSHA, p.pendingSHA, sha)
			p.pendingSHA = ""
		}
		p.bot.seen = sha
		if s.codeRabbitHead(repo, p, sha) {
			p.pendingSHA, p.pendingSince = sha, time.Now()
		}
	}
	if p.pendingSHA != "" && time.Since(p.pendingSince) >= s.ReviewDelay {
		if s.CodeRabbit.AbortNext > 0 {
			s.codeRabbitAbort(repo, p, p.pendingSHA)
			p.pendingSHA = ""
			return
		}
		s.codeRabbitReview(repo, p, p.pendingSHA, s.nextRound(p))
		p.reviewedSHA, p.pendingSHA = p.pendingSHA, ""
	}
}

// nextRound is what the scripted reviewer says in its next review.
func (s *Server) nextRound(p *pr) []Comment {
	var comments []Comment
	if p.round < len(s.ReviewRounds) {
		comments = s.ReviewRounds[p.round]
	}
	p.round++
	return comments
}

// reviewLoop lets reviews arrive while nobody asks, as on GitHub.
func (s *Server) reviewLoop() {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.stopReviews:
			return
		case <-t.C:
			s.mu.Lock()
			s.refreshHeads()
			s.mu.Unlock()
		}
	}
}

func (s *Server) review(repo string, p *pr, sha string) {
	comments := s.nextRound(p)
	s.nextID++
	reviewID := s.nextID
	if s.ResolveFixed {
		for _, t := range p.threads {
			if !t.resolved && t.comments[0].login == s.ReviewerLogin && s.linesChanged(repo, t.sha, sha, t.path, t.line) {
				t.resolved = true
			}
		}
	}
	state, body := "APPROVED", "LGTM: no further comments."
	inline := 0
	for _, c := range comments {
		if c.Path != "" {
			inline++
		}
	}
	if len(comments) > 0 {
		state, body = "CHANGES_REQUESTED", fmt.Sprintf("%d actionable comment(s).", inline)
	}
	for _, c := range comments {
		if c.Path == "" {
			body = c.Body
		}
	}
	p.reviews = append(p.reviews, s.reviewJSON(repo, p, reviewID, s.ReviewerLogin, state, body, sha))
	for _, c := range comments {
		if c.Path == "" {
			continue
		}
		s.nextID++
		p.comments = append(p.comments, s.reviewCommentJSON(repo, p, s.nextID, reviewID, s.ReviewerLogin, c, sha))
		p.threads = append(p.threads, &thread{id: nodeID("PullRequestReviewThread", s.nextID), path: c.Path, line: c.Line, startLine: c.StartLine, sha: sha,
			comments: []threadComment{{id: s.nextID, login: s.ReviewerLogin, body: c.Body, at: time.Now()}}})
	}
}

// isGraphQL reports whether a path is GitHub's GraphQL endpoint
// (/graphql, or /api/graphql on GitHub Enterprise).
func isGraphQL(path string) bool { return path == "/graphql" || path == "/api/graphql" }

// Traffic sums up a list of Requests for tests that count what wo sent.
type Traffic struct {
	Requests    int
	NotModified int // answered 304: free of rate limit
	// ByKind counts by method and path, /repos/OWNER/NAME cut off and a
	// commit named {sha}: "GET /pulls/1/reviews", "POST /graphql", "GET
	// /user", "GET /commits/{sha}/statuses".
	ByKind map[string]int
	// GraphQLBetweenPolls counts GraphQL calls sent in the middle of a
	// wait: between a poll of a PR's reviews that showed nothing new (304)
	// and the next poll. Waiting must cost free polls only.
	GraphQLBetweenPolls int
}

var (
	reRepoPrefix = regexp.MustCompile(`^/repos/[^/]+/[^/]+`)
	reCommitSHA  = regexp.MustCompile(`/commits/[0-9a-f]{40}/`)
)

// Summarize counts reqs.
func Summarize(reqs []Request) Traffic {
	t := Traffic{ByKind: map[string]int{}}
	for i, r := range reqs {
		t.Requests++
		if r.Status == http.StatusNotModified {
			t.NotModified++
		}
		t.ByKind[r.Method+" "+reCommitSHA.ReplaceAllString(reRepoPrefix.ReplaceAllString(r.Path, ""), "/commits/{sha}/")]++
		if isGraphQL(r.Path) && i > 0 && i+1 < len(reqs) && reqs[i-1].Status == http.StatusNotModified &&
			strings.HasSuffix(reqs[i-1].Path, "/reviews") && strings.HasSuffix(reqs[i+1].Path, "/reviews") {
			t.GraphQLBetweenPolls++
		}
	}
	return t
}
