package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wo-runner/wo/internal/gittest"
)

// The coding agents people run, by name (--agent claude|codex|aider),
// through the wo binary: the project's stand-ins of the tools (test
// doubles written from the tools' documentation, integration/agentstandin)
// on PATH under the real names, with only that tool's key set.

var (
	agentStandinOnce sync.Once
	agentStandinBin  string
	agentStandinErr  error
)

// agentBin is a folder holding the agent stand-in as claude, codex and
// aider, with a script of what each does (agent-standin.json).
func agentBin(t *testing.T, script map[string]any) string {
	t.Helper()
	agentStandinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wo-agent-standin-")
		if err != nil {
			agentStandinErr = err
			return
		}
		agentStandinBin = filepath.Join(dir, "agent-standin")
		if out, err := exec.Command("go", "build", "-o", agentStandinBin, "./agentstandin/cmd/agent-standin").CombinedOutput(); err != nil {
			agentStandinErr = fmt.Errorf("building the agent stand-in: %v\n%s", err, out)
		}
	})
	if agentStandinErr != nil {
		t.Fatal(agentStandinErr)
	}
	bin := t.TempDir()
	for _, name := range []string{"claude", "codex", "aider"} {
		if err := os.Symlink(agentStandinBin, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(script)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(bin, "agent-standin.json"), string(b))
	// The stand-ins log their runs here: the one file outside the
	// worktree they may write (WO_AGENT_WRITABLE, set by agentEnv).
	writeFile(t, filepath.Join(bin, "agent-standin.log"), "")
	return bin
}

// agentKeys are the credential variables of every agent, unset: each
// test sets the one it means.
var agentKeys = []string{"ANTHROPIC_API_KEY=", "CLAUDE_CODE_OAUTH_TOKEN=", "CODEX_API_KEY=", "OPENAI_API_KEY=", "GEMINI_API_KEY=",
	"WO_AGENT_SANDBOX=", "WO_MAX_AGENT_ROUNDS=", "WO_MAX_AGENT_COST="}

// agentEnv is the environment of a run with the stand-ins in bin: first
// on PATH, every agent key unset, their log writable, then env.
func agentEnv(bin string, env ...string) []string {
	all := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "WO_AGENT_WRITABLE=" + filepath.Join(bin, "agent-standin.log")}
	return append(append(all, agentKeys...), env...)
}

// agentRun runs wo run KEY --agent NAME with the stand-ins in bin and env.
func agentRun(f *fixture, bin, key, name string, env ...string) woResult {
	return f.wo(agentEnv(bin, env...), "run", key, "--agent", name)
}

// fixEdit is the review comment's fix, as the stand-ins' script gives it.
var fixEdit = []any{map[string]any{"path": "foundation/new0.go", "find": "", "replace": "package foundation\n\n// Named is what the reviewer asked for.\nconst Named = 1\n"}}

// standinLog is what the stand-ins recorded of their runs.
func standinLog(t *testing.T, bin string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(bin, "agent-standin.log"))
	if err != nil {
		return nil
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func TestEachNamedAgentFixesTheReviewWithItsOwnKeyAlone(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ agent, key string }{
		{"claude", "ANTHROPIC_API_KEY=sk-ant-test"},
		{"codex", "CODEX_API_KEY=sk-codex-test"},
		{"aider", "ANTHROPIC_API_KEY=sk-ant-test"},
	} {
		t.Run(c.agent, func(t *testing.T) {
			t.Parallel()
			key := "task_agent_" + c.agent
			f, _ := loopTask(t, key, map[string]any{"step": 8, "action": "update_task"})
			bin := agentBin(t, map[string]any{c.agent: map[string]any{"outcome": "fix", "edits": fixEdit, "cost_usd": 0.0421, "message": "Named the constant."}})
			r := agentRun(f, bin, key, c.agent, c.key)
			if r.code != 0 {
				t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			branch := "review/01-foundation"
			remote := gittest.Run(t, f.origin, "show", branch+":foundation/new0.go")
			if !strings.Contains(remote, "const Named = 1") {
				t.Errorf("the fix is not on the remote branch:\n%s", remote)
			}
			// Nothing the agent's tool leaves (histories, caches, a
			// .gitignore line) is pushed: the fix commit holds the fix alone.
			files := gittest.Run(t, f.origin, "diff-tree", "--no-commit-id", "--name-only", "-r", branch)
			if files != "foundation/new0.go" {
				t.Errorf("the fix commit changed %q, want foundation/new0.go alone", files)
			}
			if all := gittest.Run(t, f.origin, "ls-tree", "-r", "--name-only", branch); strings.Contains(all, ".aider") || strings.Contains(all, ".claude") {
				t.Errorf("the agent's files reached the remote:\n%s", all)
			}
			doc := f.doc(key)
			if doc["status"] != "in_review" {
				t.Errorf("status %v, want in_review", doc["status"])
			}
			st := stateOf(doc)
			usage, _ := st["agent_usage"].(map[string]any)
			if usage == nil || fmt.Sprint(usage["rounds"]) != "1" || fmt.Sprint(usage["runs"]) != "1" {
				t.Errorf("agent_usage %v, want one run and one round", usage)
			}
			if last, _ := usage["last"].(map[string]any); last == nil || last["agent"] != c.agent || last["outcome"] != "fixed" {
				t.Errorf("the last run %v, want %s fixed", usage["last"], c.agent)
			}
			runs := standinLog(t, bin)
			if len(runs) != 1 {
				t.Fatalf("the stand-in ran %d time(s), want once", len(runs))
			}
			// It got its own key by name, and nothing of wo's.
			envNames := fmt.Sprint(runs[0]["env_names"])
			if want := strings.SplitN(c.key, "=", 2)[0]; !strings.Contains(envNames, want) {
				t.Errorf("the agent did not get %s: %s", want, envNames)
			}
			for _, never := range []string{"GITHUB_TOKEN", "GH_TOKEN", "WO_STORE", "ARANGO_PASSWORD"} {
				if strings.Contains(envNames, never) {
					t.Errorf("the agent got %s: %s", never, envNames)
				}
			}
			wt := filepath.Join(f.wtRoot, "pr-01-foundation")
			if _, err := os.Stat(wt); err == nil {
				if out := gittest.Run(t, wt, "status", "--porcelain", "--ignored"); strings.Contains(out, ".aider") {
					t.Errorf("the agent's files were left in the worktree:\n%s", out)
				}
			}
		})
	}
}

func TestAnAgentsFailureIsToldInItsOwnWordsAndPushesNothing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, agent, outcome, key string
		exit                      int
		code, says                string
	}{
		{"claude without credentials", "claude", "fix", "", 1, "AGENT_FAILED", "Please run /login"},
		{"claude rate limited, exit 0", "claude", "rate_limit", "ANTHROPIC_API_KEY=sk", 5, "AGENT_RATE_LIMITED", "Rate limit"},
		{"claude at its turn limit", "claude", "turn_limit", "ANTHROPIC_API_KEY=sk", 1, "AGENT_FAILED", "turn or budget limit"},
		{"codex rate limited", "codex", "rate_limit", "CODEX_API_KEY=sk", 5, "AGENT_RATE_LIMITED", "usage limit"},
		{"aider with a rejected key, exit 0", "aider", "auth", "ANTHROPIC_API_KEY=sk", 1, "AGENT_FAILED", "AuthenticationError"},
		{"aider rate limited, exit 0", "aider", "rate_limit", "ANTHROPIC_API_KEY=sk", 5, "AGENT_RATE_LIMITED", "RateLimitError"},
		{"codex that changes nothing", "codex", "no_change", "CODEX_API_KEY=sk", 3, "WAITING", "changed nothing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			key := "task_agent_fail"
			f, _ := loopTask(t, key)
			bin := agentBin(t, map[string]any{c.agent: map[string]any{"outcome": c.outcome, "edits": fixEdit, "message": "I looked; the code is fine as it is."}})
			before := remoteRefs(t, f)
			all := agentEnv(bin, c.key)
			r := f.wo(all, "run", key, "--agent", c.agent, "--json")
			var env struct {
				Success bool
				Error   struct{ Code, Message string }
			}
			if err := json.Unmarshal([]byte(lastLine(r.stdout)), &env); err != nil {
				t.Fatalf("exit %d, no envelope: %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
			}
			if r.code != c.exit || env.Error.Code != c.code || !strings.Contains(env.Error.Message, c.says) {
				t.Fatalf("exit %d %s, want %d %s saying %q:\n%s\n%s", r.code, env.Error.Code, c.exit, c.code, c.says, env.Error.Message, r.stderr)
			}
			// --json puts the run's events (the agent's words among them)
			// on stdout; without it they go to the terminal as lines.
			if !strings.Contains(r.stdout, c.says) {
				t.Errorf("the run's events do not show the agent's words %q:\n%s", c.says, r.stdout)
			}
			if after := remoteRefs(t, f); after != before {
				t.Errorf("the remote changed:\n%s\nwas:\n%s", after, before)
			}
			doc := f.doc(key)
			st := stateOf(doc)
			if doc["status"] == "in_review" || doc["status"] == "closed" || len(st["review_comments"].([]any)) == 0 {
				t.Errorf("status %v with %v comments: the task must not read as clean", doc["status"], st["review_comments"])
			}
			usage, _ := st["agent_usage"].(map[string]any)
			if usage == nil || fmt.Sprint(usage["rounds"]) != "0" {
				t.Errorf("agent_usage %v: a failed or empty run is no round", usage)
			}
			// A second run of an agent that changed nothing does not ask it
			// again about the same comments.
			if c.outcome == "no_change" {
				r2 := f.wo(all, "run", key, "--agent", c.agent)
				if r2.code != 3 || len(standinLog(t, bin)) != 1 || !strings.Contains(r2.stderr, "--rerun-agent") {
					t.Errorf("rerun: exit %d, %d stand-in runs, want 3 and 1 naming --rerun-agent:\n%s", r2.code, len(standinLog(t, bin)), r2.stderr)
				}
			}
		})
	}
}

func TestTheCapsStopTheAgentAndShowWhatItCost(t *testing.T) {
	t.Parallel()
	key := "task_agent_caps"
	f, _ := loopTask(t, key)
	bin := agentBin(t, map[string]any{"claude": map[string]any{"outcome": "fix", "edits": fixEdit, "cost_usd": 0.75}})
	setState(t, f, key, map[string]any{"agent_usage": map[string]any{"runs": 2, "rounds": 2, "cost_usd": 1.5}})
	r := agentRun(f, bin, key, "claude", "ANTHROPIC_API_KEY=sk", "WO_MAX_AGENT_COST=1.5")
	if r.code != 3 || !strings.Contains(r.stderr, "cost cap of $1.50") || len(standinLog(t, bin)) != 0 {
		t.Fatalf("exit %d, %d runs, want 3 naming the cost cap and no run:\n%s", r.code, len(standinLog(t, bin)), r.stderr)
	}
	r = agentRun(f, bin, key, "claude", "ANTHROPIC_API_KEY=sk", "WO_MAX_AGENT_ROUNDS=2")
	if r.code != 3 || !strings.Contains(r.stderr, "cap of 2 round(s)") || len(standinLog(t, bin)) != 0 {
		t.Fatalf("exit %d, want 3 naming the round cap:\n%s", r.code, r.stderr)
	}
	r = agentRun(f, bin, key, "claude", "ANTHROPIC_API_KEY=sk", "WO_MAX_AGENT_ROUNDS=3")
	if r.code != 0 {
		t.Fatalf("under the caps: exit %d\n%s", r.code, r.stderr)
	}
	show := f.wo(nil, "show", key)
	if !strings.Contains(show.stdout, "agent: 3 run(s), 3 fix round(s), $2.25") {
		t.Errorf("wo show does not tell the cost claude reported:\n%s", show.stdout)
	}
	log := f.wo(nil, "log", key, "--wide")
	if !strings.Contains(log.stdout, "claude, $0.7500") {
		t.Errorf("wo log does not show the run's cost:\n%s", log.stdout)
	}
}
