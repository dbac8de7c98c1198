package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const token = "ghp_UNIT_TEST_SECRET_1234"

// scripted is a loopback server whose answers a test lists in order; any
// request beyond the script fails the test.
type scripted struct {
	t       *testing.T
	mu      sync.Mutex
	answers []func(w http.ResponseWriter, r *http.Request)
	seen    []*http.Request
}

func newScripted(t *testing.T, answers ...func(w http.ResponseWriter, r *http.Request)) (*scripted, *Client) {
	s := &scripted{t: t, answers: answers}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.seen = append(s.seen, r)
		if len(s.answers) == 0 {
			t.Errorf("unexpected request %s %s", r.Method, r.URL)
			w.WriteHeader(500)
			return
		}
		a := s.answers[0]
		s.answers = s.answers[1:]
		a(w, r)
	}))
	t.Cleanup(func() {
		srv.Close()
		if len(s.answers) > 0 {
			t.Errorf("%d scripted answers left unused", len(s.answers))
		}
	})
	c, err := New(Config{BaseURL: srv.URL + "/api/v3/", Token: token, Repo: "acme/hermes", MaxWait: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func jsonReply(status int, body string, headers ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

func TestUnchangedPollIsA304FromCache(t *testing.T) {
	reviews := `[{"id": 7, "user": {"login": "coderabbitai[bot]"}, "state": "APPROVED", "commit_id": "abc"}]`
	s, c := newScripted(t,
		jsonReply(200, reviews, "ETag", `W/"v1"`, "X-RateLimit-Remaining", "4999"),
		func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("If-None-Match") != `W/"v1"` {
				t.Errorf("second poll not conditional: If-None-Match %q", r.Header.Get("If-None-Match"))
			}
			w.WriteHeader(http.StatusNotModified)
		},
	)
	for i := 0; i < 2; i++ {
		got, err := c.Reviews(context.Background(), 1)
		if err != nil || len(got) != 1 || got[0].ID != 7 || got[0].Author != "coderabbitai[bot]" {
			t.Fatalf("poll %d: %+v %v", i, got, err)
		}
	}
	if n := c.Counts(); n.Requests != 2 || n.NotModified != 1 {
		t.Errorf("counts %+v", n)
	}
	if auth := s.seen[0].Header.Get("Authorization"); auth != "Bearer "+token {
		t.Errorf("Authorization %q", auth)
	}
	if !strings.HasPrefix(s.seen[0].URL.Path, "/api/v3/repos/acme/hermes/pulls/1/reviews") {
		t.Errorf("path %s", s.seen[0].URL.Path)
	}
}

func TestPaginationIsFollowed(t *testing.T) {
	var srvURL string
	_, c := newScripted(t,
		func(w http.ResponseWriter, r *http.Request) {
			srvURL = "http://" + r.Host
			w.Header().Set("Link", fmt.Sprintf(`<%s/api/v3/repos/acme/hermes/pulls/1/comments?page=2&per_page=100>; rel="next"`, srvURL))
			jsonReply(200, `[{"id": 1, "user": {"login": "a"}, "path": "x.go", "line": 3, "body": "one"}]`)(w, r)
		},
		func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("page") != "2" {
				t.Errorf("second request %s", r.URL)
			}
			jsonReply(200, `[{"id": 2, "user": {"login": "b"}, "body": "two"}]`)(w, r)
		},
	)
	got, err := c.ReviewComments(context.Background(), 1)
	if err != nil || len(got) != 2 || got[0].Path != "x.go" || got[0].Line != 3 || got[1].ID != 2 {
		t.Fatalf("%+v %v", got, err)
	}
}

func TestRetriesAndLimits(t *testing.T) {
	t.Run("5xx then success", func(t *testing.T) {
		_, c := newScripted(t, jsonReply(502, `{"message": "bad gateway"}`), jsonReply(503, `{}`),
			jsonReply(200, `{"login": "wo-bot"}`))
		if login, err := c.Login(context.Background()); err != nil || login != "wo-bot" {
			t.Fatalf("%q %v", login, err)
		}
		if n := c.Counts(); n.Retries != 2 {
			t.Errorf("retries %d", n.Retries)
		}
	})
	t.Run("5xx that outlasts the retries is temporary", func(t *testing.T) {
		var answers []func(http.ResponseWriter, *http.Request)
		for i := 0; i < maxAttempts; i++ {
			answers = append(answers, jsonReply(500, `{"message": "oops"}`))
		}
		_, c := newScripted(t, answers...)
		_, err := c.GetPR(context.Background(), 3)
		var se *ServerError
		if !errors.As(err, &se) || !se.Temporary() {
			t.Fatalf("%v", err)
		}
	})
	t.Run("secondary limit waits Retry-After, even for a POST", func(t *testing.T) {
		_, c := newScripted(t,
			jsonReply(429, `{"message": "You have exceeded a secondary rate limit"}`, "Retry-After", "1"),
			jsonReply(201, `{"number": 4, "html_url": "https://github.com/acme/hermes/pull/4", "state": "open", "head": {"ref": "b"}, "base": {"ref": "main"}}`))
		start := time.Now()
		pr, err := c.CreatePR(context.Background(), "b", "main", "t", "body")
		if err != nil || pr.Number != 4 {
			t.Fatalf("%+v %v", pr, err)
		}
		if time.Since(start) < time.Second {
			t.Error("Retry-After not honoured")
		}
	})
	t.Run("primary limit resetting late", func(t *testing.T) {
		reset := time.Now().Add(time.Hour).Unix()
		_, c := newScripted(t, jsonReply(403, `{"message": "API rate limit exceeded"}`,
			"X-RateLimit-Remaining", "0", "X-RateLimit-Limit", "5000", "X-RateLimit-Reset", fmt.Sprint(reset)))
		_, err := c.GetPR(context.Background(), 1)
		var rl *RateLimitedError
		if !errors.As(err, &rl) || rl.Reset.Unix() != reset {
			t.Fatalf("%v", err)
		}
		// go-github now refuses locally until the reset; wo reports the same.
		if _, err := c.GetPR(context.Background(), 1); !errors.As(err, &rl) {
			t.Fatalf("second call: %v", err)
		}
	})
	t.Run("primary limit resetting soon is waited out", func(t *testing.T) {
		reset := time.Now().Add(1 * time.Second).Unix()
		_, c := newScripted(t,
			jsonReply(403, `{"message": "API rate limit exceeded"}`, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", fmt.Sprint(reset)),
			jsonReply(200, `{"number": 1, "state": "open"}`, "X-RateLimit-Remaining", "4999"))
		if pr, err := c.GetPR(context.Background(), 1); err != nil || pr.Number != 1 {
			t.Fatalf("%+v %v", pr, err)
		}
	})
	t.Run("401 says which variable to set and never shows the token", func(t *testing.T) {
		_, c := newScripted(t, jsonReply(401, `{"message": "Bad credentials"}`))
		_, err := c.Login(context.Background())
		var ae *AuthError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), "GITHUB_TOKEN (or GH_TOKEN)") || strings.Contains(err.Error(), token) {
			t.Fatalf("%v", err)
		}
	})
}

func TestCreatePRThatExistsReturnsIt(t *testing.T) {
	_, c := newScripted(t,
		jsonReply(422, `{"message": "Validation Failed", "errors": [{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for acme:b."}]}`),
		func(w http.ResponseWriter, r *http.Request) {
			if q := r.URL.Query(); q.Get("head") != "acme:b" || q.Get("base") != "main" || q.Get("state") != "open" {
				t.Errorf("list query %s", r.URL.RawQuery)
			}
			jsonReply(200, `[{"number": 9, "html_url": "u", "state": "open", "head": {"ref": "b"}, "base": {"ref": "main"}}]`)(w, r)
		})
	pr, err := c.CreatePR(context.Background(), "b", "main", "t", "body")
	if err != nil || pr.Number != 9 {
		t.Fatalf("%+v %v", pr, err)
	}
}

func TestConfigErrors(t *testing.T) {
	if _, err := New(Config{Repo: "a/b"}); !errors.As(err, new(MissingTokenError)) {
		t.Errorf("missing token: %v", err)
	}
	if _, err := New(Config{Token: "x", Repo: "nope"}); err == nil || !strings.Contains(err.Error(), "owner/name") {
		t.Errorf("bad repo: %v", err)
	}
}
