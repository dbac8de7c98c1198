package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestOneAccountHasOneLoginWhicheverAPINamesIt(t *testing.T) {
	for _, c := range []struct {
		a    actor
		want string
	}{
		{actor{Login: "coderabbitai", Typename: "Bot"}, "coderabbitai[bot]"},
		{actor{Login: "coderabbitai[bot]", Typename: "Bot"}, "coderabbitai[bot]"}, // never twice
		{actor{Login: "alice", Typename: "User"}, "alice"},
		{actor{Login: "alice"}, "alice"},
		{actor{Typename: "Bot"}, ""}, // a deleted account
	} {
		if got := c.a.restLogin(); got != c.want {
			t.Errorf("%+v reads as %q, want %q", c.a, got, c.want)
		}
	}
}

func TestLoginsMatchAsGitHubsDo(t *testing.T) {
	same := []struct {
		a, b string
		want bool
	}{
		{"coderabbitai[bot]", "CodeRabbitAI[bot]", true},
		{"alice", "Alice", true},
		{"alice", "alicia", false},
		{"", "", false}, // nobody is not somebody
		{"coderabbitai[bot]", "coderabbitai", false},
	}
	for _, c := range same {
		if got := SameLogin(c.a, c.b); got != c.want {
			t.Errorf("SameLogin(%q, %q) = %v", c.a, c.b, got)
		}
	}
	reviewer := []struct {
		login, name string
		want        bool
	}{
		{"coderabbitai[bot]", "coderabbitai", true}, // the app's name waits for its bot
		{"coderabbitai[bot]", "CodeRabbitAI[bot]", true},
		{"coderabbitai", "coderabbitai[bot]", false}, // a person is not the bot
		{"alice", "bob", false},
		{"", "", false},
	}
	for _, c := range reviewer {
		if got := IsReviewer(c.login, c.name); got != c.want {
			t.Errorf("IsReviewer(%q, %q) = %v", c.login, c.name, got)
		}
	}
}

func TestAnAnswerLargerThanWoReadsIsAnError(t *testing.T) {
	huge := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":{"x":"`)
		chunk := strings.Repeat("a", 1<<20)
		for range MaxResponseBytes>>20 + 1 {
			io.WriteString(w, chunk)
		}
		io.WriteString(w, `"}}`)
	}
	_, c := newScripted(t, huge, huge)
	_, err := c.ReviewThreads(context.Background(), 7)
	if err == nil || !strings.Contains(err.Error(), "GitHub's answer to POST /api/graphql is larger than 32 MiB; wo reads no more") {
		t.Errorf("GraphQL: %v", err)
	}
	_, err = c.Reviews(context.Background(), 7)
	if err == nil || !strings.Contains(err.Error(), "is larger than 32 MiB") {
		t.Errorf("REST: %v", err)
	}
}

func TestABoundedBodyReadsUpToItsLimitExactly(t *testing.T) {
	read := func(body string, limit int64) (string, error) {
		b, err := io.ReadAll(&boundedBody{ReadCloser: io.NopCloser(strings.NewReader(body)), left: limit, what: "GET /x"})
		return string(b), err
	}
	if got, err := read("12345", 5); got != "12345" || err != nil {
		t.Errorf("a body of exactly the limit: %q, %v", got, err)
	}
	if got, err := read("123456", 5); got != "12345" || err == nil || !strings.Contains(err.Error(), "GET /x") {
		t.Errorf("a byte past the limit: %q, %v", got, err)
	}
}

// A list that never ends, or that names a page it gave already as the
// next, is an error after a bounded number of requests: never an endless
// read, never a list silently cut short.
func TestListsThatDoNotEndAreAnError(t *testing.T) {
	page := func(next int) func(w http.ResponseWriter, r *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			u := *r.URL
			q := u.Query()
			q.Set("page", fmt.Sprint(next))
			u.RawQuery = q.Encode()
			w.Header().Set("Link", fmt.Sprintf(`<http://%s%s>; rel="next"`, r.Host, u.RequestURI()))
			io.WriteString(w, `[{"id":1,"user":{"login":"alice"},"body":"again"}]`)
		}
	}
	var endless []func(http.ResponseWriter, *http.Request)
	for i := range maxListPages {
		endless = append(endless, page(i+2))
	}
	s, c := newScripted(t, endless...)
	_, err := c.IssueComments(context.Background(), 7)
	var many *TooManyPagesError
	if !errors.As(err, &many) || many.Back != 0 || !strings.Contains(err.Error(), "the comments of #7 went on past 30 pages of 100") {
		t.Errorf("endless list: %v", err)
	}
	if len(s.seen) != maxListPages {
		t.Errorf("%d requests for an endless list, want %d", len(s.seen), maxListPages)
	}
	_, c = newScripted(t, page(2), page(2))
	_, err = c.Reviews(context.Background(), 7)
	if !errors.As(err, &many) || many.Back != 2 || !strings.Contains(err.Error(), "named page 2 as the next page again") {
		t.Errorf("a list going back: %v", err)
	}
}

// An error answer carries a message wo reports and keeps in the task's
// last_error: a server cannot make that message megabytes long.
func TestAHugeErrorAnswerGivesAShortError(t *testing.T) {
	huge := strings.Repeat("x", 30<<20)
	rest := func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnprocessableEntity)
		io.WriteString(w, `{"message":"`+huge+`"}`)
	}
	gql := func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnprocessableEntity)
		io.WriteString(w, huge)
	}
	_, c := newScripted(t, rest, gql)
	_, err := c.GetPR(context.Background(), 7)
	if err == nil || len(err.Error()) > maxErrorMessage+100 {
		t.Errorf("REST: an error of %d bytes", len(fmt.Sprint(err)))
	}
	_, err = c.ReviewThreads(context.Background(), 7)
	if err == nil || len(err.Error()) > maxErrorMessage+100 {
		t.Errorf("GraphQL: an error of %d bytes", len(fmt.Sprint(err)))
	}
}

// An App's installation token (GitHub Actions' GITHUB_TOKEN) may not read
// GET /user: wo takes the login it is given, or the App's bot where the
// environment names it, or says what to set.
func TestWoLearnsItsLoginWhereGitHubWillNotSay(t *testing.T) {
	denied := func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"message":"Resource not accessible by integration"}`)
	}
	srv := func(answers ...func(http.ResponseWriter, *http.Request)) (*scripted, Config) {
		s, c := newScripted(t, answers...)
		return s, Config{BaseURL: c.gh.BaseURL.String(), Token: token, Repo: "acme/hermes"}
	}
	s, cfg := srv()
	cfg.Login = "wo-app[bot]"
	if c, _ := New(cfg); c != nil {
		if me, err := c.Login(context.Background()); me != "wo-app[bot]" || err != nil || len(s.seen) != 0 {
			t.Errorf("a given login: %q, %v after %d request(s), want it without asking", me, err, len(s.seen))
		}
	}
	_, cfg = srv(denied)
	cfg.AppLogin = "github-actions[bot]"
	if c, _ := New(cfg); c != nil {
		if me, err := c.Login(context.Background()); me != "github-actions[bot]" || err != nil {
			t.Errorf("in GitHub Actions: %q, %v", me, err)
		}
	}
	_, cfg = srv(denied)
	if c, _ := New(cfg); c != nil {
		if _, err := c.Login(context.Background()); err == nil || !strings.Contains(err.Error(), "set WO_GITHUB_LOGIN to the login wo's comments appear under") {
			t.Errorf("elsewhere: %v", err)
		}
	}
}
