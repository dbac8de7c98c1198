package gitops

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

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

// silentServer accepts connections and never sends a byte; it counts the
// connections it accepted.
func silentServer(t *testing.T) (addr string, accepted func() int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go io.Copy(io.Discard, c) // takes what it is sent, answers nothing
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String(), func() int { return int(n.Load()) }
}

// wantStalled checks that err is the stall of limit, named for the remote
// at addr, and that it came well before the operation's own time limit.
func wantStalled(t *testing.T, err error, addr string, limit time.Duration, took time.Duration) {
	t.Helper()
	var stall *StalledError
	if !errors.As(err, &stall) || stall.Limit != limit {
		t.Fatalf("want a stall of %s, got %v", limit, err)
	}
	msg := err.Error()
	for _, want := range []string{addr, "moved nothing for " + limit.String(), "--git-stall", "WO_GIT_STALL"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the stall's message lacks %q: %s", want, msg)
		}
	}
	if took > limit+10*time.Second {
		t.Errorf("it took %s to give up on a remote silent for %s", took, limit)
	}
}

// The first request of every network operation, the reference
// advertisement, is bounded by the stall limit too: a remote that accepts
// and never answers it ends a push, a look at its branches and a fetch
// within the limit, not the network timeout (here an hour).
func TestARemoteThatNeverAnswersTheFirstRequestEndsWithinTheStallLimit(t *testing.T) {
	t.Parallel()
	const limit = 2 * time.Second
	for name, op := range map[string]func(r *Repo) error{
		"push": func(r *Repo) error {
			_, err := r.Push(context.Background(), PushOptions{Remote: "web", Branch: "main", Timeout: time.Hour, Stall: limit})
			return err
		},
		"read the remote": func(r *Repo) error {
			_, err := r.ReadRemote(context.Background(), RemoteOptions{Remote: "web", Branch: "main", Timeout: time.Hour, Stall: limit})
			return err
		},
		"fetch": func(r *Repo) error {
			_, err := r.FetchBranch(context.Background(), RemoteOptions{Remote: "web", Branch: "main", Timeout: time.Hour, Stall: limit})
			return err
		},
		"delete a remote branch": func(r *Repo) error {
			_, err := r.DeleteRemoteBranch(context.Background(), RemoteOptions{Remote: "web", Branch: "main", Timeout: time.Hour, Stall: limit}, plumbing.ZeroHash)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			addr, accepted := silentServer(t)
			r := httpRemoteRepo(t, "http://"+addr)
			start := time.Now()
			err := op(r)
			wantStalled(t, err, addr, limit, time.Since(start))
			if n := accepted(); n != 1 {
				t.Errorf("the remote saw %d connections, want the one wo opened", n)
			}
		})
	}
}

// The same over SSH: the silent server takes the client's greeting and
// never sends its own.
func TestAnSSHRemoteThatNeverAnswersEndsWithinTheStallLimit(t *testing.T) {
	// SSH's agent and known hosts come from the environment: not parallel.
	home := t.TempDir()
	known := filepath.Join(home, "known_hosts")
	if err := os.WriteFile(known, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(home, "agent.sock")
	agent, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	go func() {
		for {
			c, err := agent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
	t.Setenv("SSH_KNOWN_HOSTS", known)
	addr, accepted := silentServer(t)
	repo, _ := fixtureRepo(t)
	gittest.Run(t, repo, "remote", "add", "web", "ssh://git@"+addr+"/acme/hermes.git")
	r, err := Open(repo)
	if err != nil {
		t.Fatal(err)
	}
	const limit = 2 * time.Second
	start := time.Now()
	_, err = r.ReadRemote(context.Background(), RemoteOptions{Remote: "web", Branch: "main", Timeout: time.Hour, Stall: limit})
	wantStalled(t, err, addr, limit, time.Since(start))
	start = time.Now()
	_, err = r.Push(context.Background(), PushOptions{Remote: "web", Branch: "main", Timeout: time.Hour, Stall: limit})
	wantStalled(t, err, addr, limit, time.Since(start))
	if n := accepted(); n != 2 {
		t.Errorf("the remote saw %d connections, want the two wo opened", n)
	}
}
