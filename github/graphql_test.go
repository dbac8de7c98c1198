package github

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wo-runner/wo/integration/ghstandin"
)

// graphqlBody is what the GraphQL client posted.
type graphqlBody struct {
	Query     string         `json:"query"`
	Variables map[string]any `json:"variables"`
}

func readGraphQL(t *testing.T, r *http.Request) graphqlBody {
	t.Helper()
	var b graphqlBody
	raw, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Errorf("GraphQL body %q: %v", raw, err)
	}
	return b
}

const threadsPage = `{"data":{"repository":{"pullRequest":{
 "reviewThreads":{"nodes":[{"id":"T1","isResolved":false,"isOutdated":true,"path":"pkg/a.go","line":null,"startLine":2,"diffSide":"LEFT",
   "comments":{"nodes":[{"id":"C1","databaseId":11,"author":{"login":"coderabbitai","__typename":"Bot"},"body":"Name A better.","url":"https://github.example/c/11","createdAt":"2026-01-02T03:04:05Z"},
                        {"id":"C2","databaseId":12,"author":null,"body":"+1","url":"https://github.example/c/12","createdAt":"2026-01-02T03:05:05Z"}]}}],
   "pageInfo":{"hasNextPage":%s,"endCursor":"CUR1"}},
 "reviews":{"nodes":[{"author":{"login":"coderabbitai","__typename":"Bot"},"state":"CHANGES_REQUESTED","commit":{"oid":"abc"}}]}}},
 "rateLimit":{"cost":1,"remaining":4990}}}`

func TestReviewThreadsQueryPagesAndCountsCost(t *testing.T) {
	var bodies []graphqlBody
	answer := func(next string) func(w http.ResponseWriter, r *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || r.URL.Path != "/api/graphql" {
				t.Errorf("GraphQL sent to %s %s, want POST /api/graphql (GitHub Enterprise)", r.Method, r.URL.Path)
			}
			if r.Header.Get("Authorization") != "Bearer "+token {
				t.Errorf("Authorization %q", r.Header.Get("Authorization"))
			}
			bodies = append(bodies, readGraphQL(t, r))
			io.WriteString(w, strings.Replace(threadsPage, "%s", next, 1))
		}
	}
	_, c := newScripted(t, answer("true"), answer("false"))
	st, err := c.ReviewThreads(context.Background(), 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Threads) != 2 || len(st.Reviews) != 1 {
		t.Fatalf("threads %d reviews %d, want 2 (two pages) and 1 (first page only)", len(st.Threads), len(st.Reviews))
	}
	th := st.Threads[0]
	if th.ID != "T1" || th.Resolved || !th.Outdated || th.Path != "pkg/a.go" || th.Line != 0 || th.StartLine != 2 || th.Side != "LEFT" || len(th.Comments) != 2 {
		t.Errorf("thread %+v", th)
	}
	if cm := th.Comments[0]; cm.DatabaseID != 11 || cm.Author != "coderabbitai[bot]" || cm.Body != "Name A better." || cm.CreatedAt.IsZero() {
		t.Errorf("first comment %+v", cm)
	}
	if th.Comments[1].Author != "" {
		t.Errorf("a deleted author (null) reads as %q", th.Comments[1].Author)
	}
	if r := st.Reviews[0]; r.Author != "coderabbitai[bot]" || r.State != "CHANGES_REQUESTED" || r.Commit != "abc" {
		t.Errorf("review %+v", r)
	}
	if bodies[0].Variables["number"] != float64(7) || bodies[0].Variables["owner"] != "acme" || bodies[0].Variables["cursor"] != nil {
		t.Errorf("first page variables %v", bodies[0].Variables)
	}
	if bodies[1].Variables["cursor"] != "CUR1" {
		t.Errorf("second page cursor %v", bodies[1].Variables["cursor"])
	}
	for _, want := range []string{"reviewThreads(first: 100, after: $cursor)", "isOutdated", "comments(first: 50)", "reviews(last: 50)", "rateLimit{cost,remaining}"} {
		if !strings.Contains(bodies[0].Query, want) {
			t.Errorf("query lacks %q:\n%s", want, bodies[0].Query)
		}
	}
	// What wo sends is a valid document for GitHub's own schema.
	for _, b := range bodies {
		if _, err := ghstandin.ValidateGraphQL(b.Query, b.Variables); err != nil {
			t.Errorf("GitHub's schema refuses the query: %v\n%s", err, b.Query)
		}
	}
	if n := c.Counts(); n.GraphQLCost != 2 || n.GraphQLRemaining != 4990 || n.Requests != 2 {
		t.Errorf("counts %+v", n)
	}
}

func TestGraphQLQueryRetriedMutationNot(t *testing.T) {
	fail := func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) }
	ok := func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Replace(threadsPage, "%s", "false", 1))
	}
	_, c := newScripted(t, fail, ok)
	if _, err := c.ReviewThreads(context.Background(), 1); err != nil {
		t.Errorf("a query after one 502: %v", err)
	}
	_, c = newScripted(t, fail)
	err := c.ResolveThread(context.Background(), "T1")
	var se *ServerError
	if !errors.As(err, &se) {
		t.Errorf("a mutation answered 502 gives %v, want a ServerError without a retry", err)
	}
}

func TestGraphQLUnauthorizedNamesNoToken(t *testing.T) {
	_, c := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"message":"Bad credentials for `+r.Header.Get("Authorization")+`"}`)
	})
	err := c.ReplyToThread(context.Background(), "T1", "hi")
	var ae *AuthError
	if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		t.Errorf("error %v, want an AuthError 401", err)
	}
	if err != nil && strings.Contains(err.Error(), token) {
		t.Errorf("the token is in the error: %v", err)
	}
}

func TestGraphQLURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.github.com/":       "https://api.github.com/graphql",
		"https://ghe.example/api/v3/":   "https://ghe.example/api/graphql",
		"http://127.0.0.1:8080/":        "http://127.0.0.1:8080/graphql",
		"http://127.0.0.1:8080/api/v3/": "http://127.0.0.1:8080/api/graphql",
	} {
		u, _ := url.Parse(in)
		if got := GraphQLURL(u); got != want {
			t.Errorf("GraphQLURL(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestThreadMutationsAreValidForGitHubsSchema(t *testing.T) {
	var bodies []graphqlBody
	capture := func(data string) func(w http.ResponseWriter, r *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			bodies = append(bodies, readGraphQL(t, r))
			io.WriteString(w, `{"data":`+data+`}`)
		}
	}
	_, c := newScripted(t,
		capture(`{"addPullRequestReviewThreadReply":{"comment":{"id":"C9"}}}`),
		capture(`{"resolveReviewThread":{"thread":{"id":"T1","isResolved":true}}}`),
		capture(`{"deletePullRequestReviewComment":{"clientMutationId":null}}`),
		func(w http.ResponseWriter, r *http.Request) {
			bodies = append(bodies, readGraphQL(t, r))
			io.WriteString(w, `{"data":{"deletePullRequestReviewComment":null},"errors":[{"type":"NOT_FOUND","path":["deletePullRequestReviewComment"],"message":"Could not resolve to a node with the global id of 'C9'"}]}`)
		})
	if err := c.ReplyToThread(context.Background(), "T1", "Addressed in abc"); err != nil {
		t.Fatal(err)
	}
	if err := c.ResolveThread(context.Background(), "T1"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteReviewComment(context.Background(), "C9"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteReviewComment(context.Background(), "C9"); err != nil {
		t.Errorf("deleting a review comment that is gone already: %v, want no error", err)
	}
	for i, want := range []string{"addPullRequestReviewThreadReply(input: $input)", "resolveReviewThread(input: $input)", "deletePullRequestReviewComment(input: $input)"} {
		b := bodies[i]
		if !strings.HasPrefix(b.Query, "mutation") || !strings.Contains(b.Query, want) {
			t.Errorf("mutation %d: %s", i, b.Query)
		}
		if _, err := ghstandin.ValidateGraphQL(b.Query, b.Variables); err != nil {
			t.Errorf("GitHub's schema refuses the mutation: %v\n%s %v", err, b.Query, b.Variables)
		}
	}
	if n := c.Counts(); n.GraphQLMutations != 3 {
		t.Errorf("counts %+v, want 3 mutations (the one refused not counted)", n)
	}
	if in, _ := bodies[2].Variables["input"].(map[string]any); in["id"] != "C9" {
		t.Errorf("delete input %v", bodies[2].Variables)
	}
	if in, _ := bodies[0].Variables["input"].(map[string]any); in["pullRequestReviewThreadId"] != "T1" || in["body"] != "Addressed in abc" {
		t.Errorf("reply input %v", bodies[0].Variables)
	}
}

// A long thread is read by its first and its latest comments, so that
// wo's reply at the end of a thread of hundreds is found again.
func TestReviewThreadsReadTheLatestCommentsOfALongThread(t *testing.T) {
	page := `{"data":{"repository":{"pullRequest":{
 "reviewThreads":{"nodes":[{"id":"T1","isResolved":false,"isOutdated":false,"path":"a.go","line":3,
   "comments":{"nodes":[{"id":"C1","databaseId":1,"author":{"login":"rabbit"},"body":"first"},{"id":"C2","databaseId":2,"author":{"login":"p"},"body":"second"}]},
   "latest":{"nodes":[{"id":"C2","databaseId":2,"author":{"login":"p"},"body":"second"},{"id":"C99","databaseId":99,"author":{"login":"wo-bot"},"body":"Addressed"}]}}],
   "pageInfo":{"hasNextPage":false,"endCursor":""}},
 "reviews":{"nodes":[]}}},"rateLimit":{"cost":1,"remaining":4999}}}`
	var query string
	_, c := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
		b := readGraphQL(t, r)
		query = b.Query
		if _, err := ghstandin.ValidateGraphQL(b.Query, b.Variables); err != nil {
			t.Errorf("GitHub's schema refuses the query: %v", err)
		}
		io.WriteString(w, page)
	})
	st, err := c.ReviewThreads(context.Background(), 7)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, cm := range st.Threads[0].Comments {
		ids = append(ids, cm.ID)
	}
	if got := strings.Join(ids, " "); got != "C1 C2 C99" {
		t.Errorf("comments read %s, want the first ones then the latest, each once (C1 C2 C99)", got)
	}
	if !strings.Contains(query, "latest: comments(last: 20)") {
		t.Errorf("the query does not ask for the latest comments:\n%s", query)
	}
}

// Past the pages wo reads, the threads beyond are unknown: an error, never
// a review that looks clean because its open threads were not read.
func TestReviewThreadsBeyondWhatWoReadsAreAnError(t *testing.T) {
	var pages []func(http.ResponseWriter, *http.Request)
	for range maxThreadPages {
		pages = append(pages, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, strings.Replace(threadsPage, "%s", "true", 1))
		})
	}
	_, c := newScripted(t, pages...)
	_, err := c.ReviewThreads(context.Background(), 7)
	var many *TooManyThreadsError
	if !errors.As(err, &many) || many.PR != 7 || many.Read != maxThreadPages || many.Pages != maxThreadPages {
		t.Fatalf("error %v, want a TooManyThreadsError for #7 after %d pages of one thread each", err, maxThreadPages)
	}
	// Resolving threads does not make fewer of them: the error says what
	// wo did and leaves the judgement to a person.
	want := "pull request #7: GitHub still had more review threads after 10 pages (10 threads read); wo reads no more and cannot tell whether the rest are resolved, so it does not call the review clean: judge the pull request on GitHub"
	if !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error %q, want it to end %q", err, want)
	}
}
