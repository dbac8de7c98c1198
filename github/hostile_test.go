package github

import (
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// An API server that repeats the request's Authorization header in its 401
// body (as some proxies and error pages do) must not get the token into
// wo's error.
func TestEchoedAuthorizationNeverReachesTheError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		raw := strings.TrimPrefix(strings.TrimPrefix(auth, "Bearer "), "token ")
		basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + raw))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"message":"Bad credentials: got ` + auth + ` = Basic ` + basic + `","documentation_url":"` + auth + `"}`))
	}))
	defer srv.Close()
	c, err := New(Config{BaseURL: srv.URL + "/api/v3/", Token: token, Repo: "acme/hermes"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetPR(context.Background(), 1)
	if err == nil {
		t.Fatal("a 401 gave no error")
	}
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	if msg := err.Error(); strings.Contains(msg, token) || strings.Contains(msg, basic) || !strings.Contains(msg, "GITHUB_TOKEN") {
		t.Fatalf("error leaks the token or lacks the fix: %s", msg)
	}
	var ae *AuthError
	if !asAuth(err, &ae) || strings.Contains(ae.Error(), token) {
		t.Fatalf("the AuthError inside leaks the token or is gone: %v", err)
	}
}

func asAuth(err error, target **AuthError) bool {
	for err != nil {
		if a, ok := err.(*AuthError); ok {
			*target = a
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// A server that accepts the connection and never answers makes the call
// fail within the request limit, naming the server.
func TestHungAPIServerTimesOut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			defer conn.Close() // held open, never answered
		}
	}()
	c, err := New(Config{BaseURL: "http://" + l.Addr().String() + "/", Token: token, Repo: "acme/hermes", RequestTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.GetPR(context.Background(), 1); done <- err }()
	select {
	case err := <-done:
		var se *ServerError
		if err == nil || !asServer(err, &se) || !strings.Contains(err.Error(), l.Addr().String()) || !strings.Contains(err.Error(), "did not answer within") {
			t.Fatalf("want a ServerError naming the server and the limit, got %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call hung on a server that never answers")
	}
}

func asServer(err error, target **ServerError) bool {
	for err != nil {
		if s, ok := err.(*ServerError); ok {
			*target = s
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// The token goes only to the configured API host over https, or plain
// http on loopback.
func TestTokenOnlyToTheAPIHost(t *testing.T) {
	if _, err := New(Config{BaseURL: "http://ghe.example.com/api/v3/", Token: token, Repo: "a/b"}); err == nil ||
		!strings.Contains(err.Error(), "only over https") {
		t.Errorf("plain http to a remote host was accepted: %v", err)
	}
	for _, ok := range []string{"", "https://ghe.example.com/api/v3/", "http://127.0.0.1:9/", "http://localhost:9/api/v3"} {
		if _, err := New(Config{BaseURL: ok, Token: token, Repo: "a/b"}); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	// A request the transport is handed for another host (a link in an
	// answer, a redirect) goes without the token.
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Host+" "+r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	api, _ := APIURL(srv.URL)
	tr := newTransport(http.DefaultTransport, time.Second, api)
	for _, u := range []string{srv.URL + "/x", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/x"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if len(got) != 2 || !strings.Contains(got[0], token) || strings.Contains(got[1], token) {
		t.Fatalf("Authorization sent: %q; want the token to the API host only", got)
	}
}

// A server that says a pull request is open and not merged, but gives it a
// merge time, is answering about a merged pull request: wo must not take
// it for one it may close.
func TestAPRWithAMergeTimeIsMergedWhateverItsFlag(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"number":7,"state":"open","merged":false,"merged_at":"2024-01-02T03:04:05Z","user":{"login":"alice"},"head":{"ref":"review/x","sha":"abc"},"base":{"ref":"main"}}`))
	}))
	defer srv.Close()
	c, err := New(Config{BaseURL: srv.URL + "/api/v3/", Token: token, Repo: "acme/hermes"})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := c.GetPR(context.Background(), 7)
	if err != nil {
		t.Fatal(err)
	}
	if !pr.Merged || pr.Lifecycle() != PRMerged {
		t.Errorf("a pull request with merged_at set reads as %q (merged %v), want merged", pr.Lifecycle(), pr.Merged)
	}
	if pr.Author != "alice" {
		t.Errorf("author %q, want alice", pr.Author)
	}
}
