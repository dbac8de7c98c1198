package gitops

import (
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
)

// gitHTTPRemote serves a bare repository over smart HTTP with git's own
// http-backend (a real git server), through wrap, which may slow or stall
// it. It returns the server's URL and the bare repository.
func gitHTTPRemote(t *testing.T, wrap func(http.Handler) http.Handler) (string, string) {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, serr := os.Stat(backend); err != nil || serr != nil {
		t.Skip("this machine's git has no git-http-backend to serve a remote over HTTP")
	}
	root := t.TempDir()
	bare := filepath.Join(root, "acme", "hermes.git")
	gittest.Run(t, root, "init", "-q", "--bare", bare)
	gittest.Run(t, bare, "config", "http.receivepack", "true")
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(wrap(h))
	t.Cleanup(srv.Close)
	return srv.URL, bare
}

// slowBody lets the server read a push only chunk bytes every pause.
type slowBody struct {
	io.ReadCloser
	chunk int
	pause time.Duration
}

func (b slowBody) Read(p []byte) (int, error) {
	time.Sleep(b.pause)
	return b.ReadCloser.Read(p[:min(len(p), b.chunk)])
}

// A remote that takes the push and then never answers ends the push
// within the stall limit, long before the push's own time limit.
func TestAPushToARemoteThatStallsEndsWithinTheStallLimit(t *testing.T) {
	t.Parallel()
	url, _ := gitHTTPRemote(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				io.Copy(io.Discard, r.Body)
				<-r.Context().Done() // never answers
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	r := httpRemoteRepo(t, url)
	start := time.Now()
	_, err := r.Push(context.Background(), PushOptions{Remote: "web", Branch: "main", Timeout: time.Minute, Stall: time.Second})
	if err == nil || !strings.Contains(err.Error(), "the remote moved nothing for 1s") {
		t.Fatalf("push to a stalled remote: %v", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the push took %s to give up on a remote stalled for 1s", took)
	}
}

// A large push that keeps moving is not cut off by the stall limit, even
// when it takes many times that limit.
func TestASlowPushThatMovesIsNotCutOff(t *testing.T) {
	t.Parallel()
	url, bare := gitHTTPRemote(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				r.Body = slowBody{ReadCloser: r.Body, chunk: 32 << 10, pause: 250 * time.Millisecond}
			}
			h.ServeHTTP(w, r)
		})
	})
	r := httpRemoteRepo(t, url)
	// 1 MiB that does not compress: at 32 KiB each 250ms, about 8s to send,
	// twice the stall limit. The limit is sixteen times the pause between
	// chunks, so that a machine busy enough to start git's server late (the
	// limit counts from the start) does not cut off a push that moves.
	blob := make([]byte, 1<<20)
	rand.Read(blob)
	if err := os.WriteFile(filepath.Join(r.Path, "big.bin"), blob, 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, r.Path, "add", "big.bin")
	gittest.Run(t, r.Path, "commit", "-q", "-m", "a large file")
	start := time.Now()
	res, err := r.Push(context.Background(), PushOptions{Remote: "web", Branch: "main", Timeout: 2 * time.Minute, Stall: 4 * time.Second})
	if err != nil {
		t.Fatalf("a moving push was cut off after %s: %v", time.Since(start), err)
	}
	if took := time.Since(start); took < 4*time.Second {
		t.Logf("the push took %s: the throttle did not slow it past the stall limit", took)
	}
	if got := gittest.Run(t, bare, "rev-parse", "refs/heads/main"); got != res.Hash.String() {
		t.Errorf("the remote is at %s, want %s", got, res.Hash)
	}
}
