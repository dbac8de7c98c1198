package integration

import (
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
)

// A git remote that accepts and never answers holds a CI runner only as
// long as the stall limit (--git-stall, WO_GIT_STALL), whichever request
// it goes silent on: the run ends with exit 5 ("run again later"), the
// message names the remote, the limit and how to raise it, the push step
// is recorded as not done, and the next run, against a remote that
// answers, pushes. The network timeout stays at its default (five
// minutes): the stall limit alone ends these runs.

const stallLimit = 3 * time.Second

// halfSilentRemote serves the fixture's bare origin over smart HTTP with
// git's own http-backend, except the requests silent picks, which it
// takes and never answers. It counts the connections it accepted.
func halfSilentRemote(t *testing.T, origin string, silent func(*http.Request) bool) (url string, accepted func() int) {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, serr := os.Stat(backend); err != nil || serr != nil {
		t.Skip("this machine's git has no git-http-backend to serve a remote over HTTP")
	}
	gittest.Run(t, origin, "config", "http.receivepack", "true")
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(origin), "GIT_HTTP_EXPORT_ALL=1"}}
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if silent(r) {
			io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
			return
		}
		h.ServeHTTP(w, r)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/" + filepath.Base(origin), func() int { return int(n.Load()) }
}

func TestAGitRemoteThatGoesSilentEndsTheRunWithinTheStallLimit(t *testing.T) {
	t.Parallel()
	receivePack := func(r *http.Request) bool {
		return strings.Contains(r.URL.RawQuery, "git-receive-pack") || strings.HasSuffix(r.URL.Path, "git-receive-pack")
	}
	cases := map[string]struct {
		remote func(t *testing.T, f *fixture) (url, addr string, accepted func() int)
		conns  int
	}{
		// No byte ever: the push step's first request, its look at where
		// the remote's branch is.
		"accepts and never answers": {func(t *testing.T, f *fixture) (string, string, func() int) {
			addr, accepted := countingListener(t)
			return "http://" + addr + "/acme/hermes.git", addr, accepted
		}, 1},
		// It shows its branches, then never sends the push's reference
		// advertisement (the push's first request).
		"never sends the push's advertisement": {func(t *testing.T, f *fixture) (string, string, func() int) {
			url, accepted := halfSilentRemote(t, f.origin, func(r *http.Request) bool { return r.Method == http.MethodGet && receivePack(r) })
			return url, strings.Split(url, "/")[2], accepted
		}, 2},
		// It takes the pack and never says what it made of it.
		"never answers the pack": {func(t *testing.T, f *fixture) (string, string, func() int) {
			url, accepted := halfSilentRemote(t, f.origin, func(r *http.Request) bool { return r.Method == http.MethodPost && receivePack(r) })
			return url, strings.Split(url, "/")[2], accepted
		}, 2},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, 5)
			url, addr, accepted := c.remote(t, f)
			gittest.Run(t, f.repo, "remote", "set-url", "origin", url)
			f.importTask(f.task("task_cr_01", gitProcedure(), nil))
			env := []string{"WO_GIT_STALL=" + stallLimit.String()}
			start := time.Now()
			done := make(chan woResult, 1)
			go func() { done <- f.wo(env, "run", "task_cr_01") }()
			var r woResult
			select {
			case r = <-done:
			case <-time.After(stallLimit + 90*time.Second):
				t.Fatal("wo run hung on a git remote that went silent")
			}
			took := time.Since(start)
			if r.code != 5 {
				t.Fatalf("exit %d, want 5 (an outside failure: run again later):\n%s", r.code, r.stderr)
			}
			for _, want := range []string{addr, "moved nothing for " + stallLimit.String(), "--git-stall", "WO_GIT_STALL", "wo run task_cr_01"} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("the message lacks %q:\n%s", want, r.stderr)
				}
			}
			// The run's own start and steps take a second or two; waiting
			// on the remote may take the limit once, never a retry more.
			if took > stallLimit+10*time.Second {
				t.Errorf("the run took %s on a remote silent past a limit of %s", took, stallLimit)
			}
			if n := accepted(); n != c.conns {
				t.Errorf("the remote saw %d connections, want the %d wo opened (no retry against a silent remote)", n, c.conns)
			}
			st := stateOf(f.doc("task_cr_01"))
			last, _ := st["last_error"].(map[string]any)
			if last["action"] != "push" || !strings.Contains(last["message"].(string), "moved nothing") {
				t.Errorf("the state does not record the push's stall: %v", st["last_error"])
			}
			steps, _ := st["completed_steps"].([]any)
			for _, n := range steps {
				if n == float64(5) {
					t.Errorf("the push step is recorded as done: %v", steps)
				}
			}
			if got := gittest.Run(t, f.origin, "branch", "--list", "review/01-foundation"); got != "" {
				t.Fatalf("the remote has the branch after a push that never finished: %q", got)
			}
			// The next run, against a remote that answers, goes on with the push.
			gittest.Run(t, f.repo, "remote", "set-url", "origin", f.origin)
			again := f.wo(env, "run", "task_cr_01", "--until-step", "5")
			if again.code != 0 {
				t.Fatalf("the run after the stall: exit %d\n%s", again.code, again.stderr)
			}
			local := gittest.Run(t, f.repo, "rev-parse", "review/01-foundation")
			if got := gittest.Run(t, f.origin, "rev-parse", "refs/heads/review/01-foundation"); got != local {
				t.Errorf("after the rerun the remote is at %s, want the branch's %s", got, local)
			}
		})
	}
}
