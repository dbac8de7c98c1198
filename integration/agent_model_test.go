package integration

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/internal/sandbox"
)

// needBox skips a test of what a boxed agent can do where there is no box,
// saying why; where WO_TEST_REQUIRE_BOX is set (CI, on machines that have
// namespaces and Landlock) that is a failure instead.
func needBox(t *testing.T) {
	t.Helper()
	why := ""
	if _, ok, w := sandbox.Status(); !ok {
		why = "this machine cannot confine an agent, so there is no box to test: " + w
	} else if ok, w := sandbox.Namespaces(); !ok {
		why = "this machine gives the agent no box of its own (namespaces): " + w
	}
	switch {
	case why == "":
	case os.Getenv("WO_TEST_REQUIRE_BOX") != "":
		t.Fatal("WO_TEST_REQUIRE_BOX is set, but " + why)
	default:
		t.Skip(why)
	}
}

// modelServer stands in for a model's API on loopback (a test double): it
// answers every request 200 and records the paths it was asked for.
func modelServer(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"stand-in"}`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), paths...) }
}

// In its box each named agent reaches its model through wo's proxy, at
// the gateway its own variable names (on loopback here, as a company's
// LLM gateway may be), and fixes the review; the host is let through
// because that variable names it.
func TestEachNamedAgentReachesItsModelFromItsBox(t *testing.T) {
	t.Parallel()
	needBox(t)
	for _, c := range []struct{ agent, key, gateway, base, path string }{
		{"claude", "ANTHROPIC_API_KEY=sk-ant-test", "ANTHROPIC_BASE_URL", "", "POST /v1/messages"},
		{"codex", "CODEX_API_KEY=sk-codex-test", "OPENAI_BASE_URL", "/v1", "POST /v1/responses"},
		{"aider", "OPENAI_API_KEY=sk-openai-test", "OPENAI_API_BASE", "/v1", "POST /v1/chat/completions"},
	} {
		t.Run(c.agent, func(t *testing.T) {
			t.Parallel()
			srv, asked := modelServer(t)
			key := "task_model_" + c.agent
			f, _ := loopTask(t, key)
			bin := agentBin(t, map[string]any{c.agent: map[string]any{"outcome": "fix", "edits": fixEdit, "reach_model": true, "message": "Named the constant."}})
			r := agentRun(f, bin, key, c.agent, c.key, c.gateway+"="+srv.URL+c.base)
			if r.code != 0 {
				t.Fatalf("exit %d:\n%s", r.code, r.stderr)
			}
			if got := asked(); len(got) != 1 || got[0] != c.path {
				t.Errorf("the model was asked %v, want %q once", got, c.path)
			}
			if got := gittest.Run(t, f.origin, "show", "review/01-foundation:foundation/new0.go"); !strings.Contains(got, "const Named = 1") {
				t.Errorf("the fix is not on the remote:\n%s", got)
			}
			if strings.Contains(r.stderr, "proxy refused") {
				t.Errorf("the proxy refused something:\n%s", r.stderr)
			}
		})
	}
	// A command of the user's own reaches nothing until the user allows
	// its host, and the refusal names the flag that does.
	t.Run("a command of the user's", func(t *testing.T) {
		t.Parallel()
		srv, asked := modelServer(t)
		f, agent := loopTask(t, "task_model_own")
		host := strings.TrimPrefix(srv.URL, "http://")
		writeAgent(t, agent, boxProbe(t)+" proxy "+srv.URL+"/v1/chat\n")
		env := []string{"WO_AGENT=" + agent, "WO_AGENT_READABLE=" + filepath.Dir(boxProbe(t))}
		r := f.wo(env, "run", "task_model_own")
		if r.code == 0 || len(asked()) != 0 {
			t.Fatalf("a host nobody allowed: exit %d, asked %v\n%s", r.code, asked(), r.stderr)
		}
		if !strings.Contains(r.stderr, "--agent-allow-host "+host) {
			t.Errorf("the refusal does not name the flag:\n%s", r.stderr)
		}
		r = f.wo(append(env, "WO_AGENT_ALLOW_HOST="+host), "run", "task_model_own")
		if r.code != 0 || len(asked()) != 1 {
			t.Errorf("allowed: exit %d, asked %v\n%s", r.code, asked(), r.stderr)
		}
	})
}

// An agent that runs the repository's tests in its box: go test passes
// with the toolchain and the task's own caches, and a second go test in
// the task finds its build cache warm.
func TestAnAgentRunsGoTestInItsBox(t *testing.T) {
	t.Parallel()
	needBox(t)
	f, agent := loopTask(t, "task_gotest")
	out := t.TempDir()
	// A module of its own in the worktree, with a test; the agent runs it
	// twice, keeps what go test said, and leaves only its fix.
	script := "printf 'module example.com/fixture\\n\\ngo 1.21\\n' > go.mod\n" +
		"printf 'package foundation\\n\\nimport \"testing\"\\n\\nfunc TestNamed(t *testing.T) {\\n\\tif Named != 1 {\\n\\t\\tt.Fatal(Named)\\n\\t}\\n}\\n' > foundation/named_test.go\n" +
		"go test ./foundation/ >> OUT/go-test 2>&1; echo \"exit $?\" >> OUT/go-test\n" +
		"go test ./foundation/ >> OUT/go-test-again 2>&1\n" +
		"rm -f go.mod foundation/named_test.go\n"
	writeAgent(t, agent, strings.ReplaceAll(script, "OUT", out))
	r := f.wo([]string{"WO_AGENT=" + agent, "WO_AGENT_WRITABLE=" + out}, "run", "task_gotest")
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	first := readFileOr(out + "/go-test")
	if !strings.Contains(first, "ok  \texample.com/fixture/foundation") || !strings.Contains(first, "exit 0") {
		t.Fatalf("go test in the box:\n%s", first)
	}
	if again := readFileOr(out + "/go-test-again"); !strings.Contains(again, "(cached)") {
		t.Errorf("the second go test did not find the task's cache warm:\n%s", again)
	}
}
