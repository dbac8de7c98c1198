package gitops

import (
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
)

const pushToken = "ghs_PUSH_SECRET_0a1b2c3d4e"

// echoRemote is a loopback HTTP git remote that answers every request with
// an error page repeating the Authorization header it was sent, and
// remembers the headers.
func echoRemote(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte("proxy error; request had Authorization: " + r.Header.Get("Authorization")))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

func httpRemoteRepo(t *testing.T, url string) *Repo {
	t.Helper()
	repo, _ := fixtureRepo(t)
	gittest.Run(t, repo, "remote", "add", "web", url+"/acme/hermes.git")
	r, err := Open(repo)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPushToAnEchoingRemoteNeverShowsTheToken(t *testing.T) {
	t.Parallel()
	srv, seen := echoRemote(t)
	r := httpRemoteRepo(t, srv.URL)
	// The remote is the GitHub the token belongs to (loopback, plain http:
	// the stand-in's case), so the token is sent, and echoed back.
	_, err := r.Push(context.Background(), PushOptions{Remote: "web", Branch: "main", Token: pushToken, GitHubAPI: srv.URL + "/"})
	if err == nil {
		t.Fatal("a push to a failing remote succeeded")
	}
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + pushToken))
	if h := seen(); len(h) == 0 || !strings.Contains(h[0], basic) {
		t.Fatalf("the remote did not get the credentials (%q): the echo was not exercised", h)
	}
	if msg := err.Error(); strings.Contains(msg, pushToken) || strings.Contains(msg, basic) || !strings.Contains(msg, "proxy error") {
		t.Fatalf("the push error leaks the token (or lost the server's message): %s", msg)
	}
}

func TestPushSendsNoTokenToAnotherHost(t *testing.T) {
	t.Parallel()
	srv, seen := echoRemote(t)
	r := httpRemoteRepo(t, srv.URL)
	for _, api := range []string{"", "https://ghe.example.com/api/v3/", "http://127.0.0.1:1/"} {
		_, err := r.Push(context.Background(), PushOptions{Remote: "web", Branch: "main", Token: pushToken, GitHubAPI: api})
		if err == nil || !strings.Contains(err.Error(), "no credentials were sent") {
			t.Errorf("api %q: the error does not say that no credentials were sent: %v", api, err)
		}
	}
	for _, h := range seen() {
		if h != "" {
			t.Fatalf("a remote that is not the token's GitHub got credentials: %q", h)
		}
	}
}

func TestCredentialsForEachRemote(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		remote, api string
		send        bool
	}{
		{"https://github.com/acme/hermes.git", "", true},
		{"https://github.com/acme/hermes.git", "https://api.github.com/", true},
		{"https://GitHub.com:443/acme/hermes.git", "https://api.github.com", true},
		{"http://github.com/acme/hermes.git", "", false},
		{"https://gitlab.com/acme/hermes.git", "", false},
		{"https://github.com.evil.example/acme/hermes.git", "", false},
		{"https://ghe.corp/acme/hermes.git", "https://ghe.corp/api/v3/", true},
		{"https://ghe.corp:8443/acme/hermes.git", "https://ghe.corp/api/v3/", false},
		{"https://github.com/acme/hermes.git", "https://ghe.corp/api/v3/", false},
		{"http://127.0.0.1:8080/acme/hermes.git", "http://127.0.0.1:8080/", true},
		{"http://127.0.0.1:8081/acme/hermes.git", "http://127.0.0.1:8080/", false},
		{"http://ghe.corp/acme/hermes.git", "http://ghe.corp/api/v3/", false},
		{"/srv/git/hermes.git", "", false},
	} {
		tok, why := CredentialsFor(c.remote, c.api, "tok")
		if (tok != "") != c.send {
			t.Errorf("%s with API %q: sent=%v, want %v (%s)", c.remote, c.api, tok != "", c.send, why)
		}
		if !c.send && strings.HasPrefix(c.remote, "http") && why == "" {
			t.Errorf("%s: withheld without saying why", c.remote)
		}
	}
}

// A remote that accepts the connection and never answers fails the push
// within its time limit, naming the flag to raise.
func TestPushToAHungRemoteTimesOut(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	r := httpRemoteRepo(t, "http://"+l.Addr().String())
	done := make(chan error, 1)
	go func() {
		_, err := r.Push(context.Background(), PushOptions{Remote: "web", Branch: "main", Timeout: 500 * time.Millisecond})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "--git-timeout") || !strings.Contains(err.Error(), l.Addr().String()) {
			t.Fatalf("want an error naming the remote and --git-timeout, got %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the push hung on a remote that never answers")
	}
}
