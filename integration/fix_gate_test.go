package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/internal/sandbox"
)

// Issue 24 through the wo binary, against a real bare remote checked with
// git: what an agent leaves or does in its worktree never reaches the
// remote unless it is the task's own fix, and the agent's environment
// holds nothing but its allow-list.

// loopTask is a work order pushed up to its review, with one review
// comment recorded, and an agent script path to write.
func loopTask(t *testing.T, key string, more ...any) (*fixture, string) {
	t.Helper()
	f := newFixture(t, 10)
	f.importTask(f.task(key, append(loopProcedure(), more...), nil))
	if r := f.wo(nil, "run", key, "--until-step", "5"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	seedComments(t, f, key, []any{map[string]any{"id": 11, "author": "coderabbitai", "path": "foundation/new0.go", "line": 3, "body": "Name this constant."}})
	return f, filepath.Join(f.root, "agent.sh")
}

// loopProcedure is the git steps and the review loop, without GitHub: a
// fix, back to the push, and the cleanup.
func loopProcedure() []any {
	return []any{
		map[string]any{"step": 1, "action": "create_worktree"},
		map[string]any{"step": 2, "action": "create_branch"},
		map[string]any{"step": 3, "action": "checkout_files"},
		map[string]any{"step": 4, "action": "commit", "command": "git commit -m '<pr_title>'"},
		map[string]any{"step": 5, "action": "push"},
		map[string]any{"step": 6, "action": "conditional_loop", "condition": "review_comments_exist", "loop_to": 5,
			"fix_action": "Read comments, fix issues"},
		map[string]any{"step": 7, "action": "cleanup_worktree"},
	}
}

// writeAgent writes the agent script: the comment's fix, then what else
// it does.
func writeAgent(t *testing.T, path, body string) {
	t.Helper()
	writeFile(t, path, "#!/bin/sh\nset -e\necho 'const Named = 1' >> foundation/new0.go\n"+body)
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// remoteRefs is every ref of the bare remote, as git lists it.
func remoteRefs(t *testing.T, f *fixture) string {
	t.Helper()
	return gittest.Run(t, f.origin, "for-each-ref", "--format=%(refname) %(objectname)")
}

func TestAnAgentsLeftoversBlockTheTaskWithNothingPushed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, agent, path string }{
		{".env", "echo 'AWS_SECRET_ACCESS_KEY=abc' > .env\n", ".env"},
		{"node_modules", "mkdir -p node_modules/left-pad && echo 'module.exports=1' > node_modules/left-pad/index.js\n", "node_modules/left-pad/index.js"},
		{"a workflow", "mkdir -p .github/workflows && printf 'on: push\\njobs: {}\\n' > .github/workflows/evil.yml\n", ".github/workflows/evil.yml"},
		{"a nested .git", "git init -q vendor/x && echo 'package x' > vendor/x/x.go\n", "vendor/x/"},
		{"a FIFO", "mkfifo foundation/pipe\n", "foundation/pipe"},
		{"a 200 MB file", "truncate -s 200M foundation/big.bin\n", "foundation/big.bin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			key := "task_gate"
			f, agent := loopTask(t, key)
			writeAgent(t, agent, c.agent)
			before := remoteRefs(t, f)
			r := f.wo([]string{"WO_AGENT=" + agent}, "run", key, "--json")
			var env struct {
				Success bool
				Error   struct{ Code, Message string }
			}
			if err := json.Unmarshal([]byte(lastLine(r.stdout)), &env); err != nil {
				t.Fatalf("exit %d, no envelope: %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
			}
			if r.code != 1 || env.Success || env.Error.Code != "FIX_REFUSED" || !strings.Contains(env.Error.Message, c.path+" (") {
				t.Fatalf("exit %d code %s, want 1 FIX_REFUSED naming %s:\n%s\n%s", r.code, env.Error.Code, c.path, env.Error.Message, r.stderr)
			}
			// The cause and the way on, once: not a second "fix the cause and run wo run".
			if n := strings.Count(env.Error.Message, "wo run "+key); n != 1 || strings.Contains(env.Error.Message, "fix the cause") {
				t.Errorf("the message says wo run %s %d time(s), want once:\n%s", key, n, env.Error.Message)
			}
			if after := remoteRefs(t, f); after != before {
				t.Errorf("the remote changed:\n%s\nwas:\n%s", after, before)
			}
			gittest.Run(t, f.origin, "fsck", "--strict", "--no-progress")
			doc := f.doc(key)
			reason := fmt.Sprint(doc["block_reason"])
			wt := filepath.Join(f.wtRoot, "pr-01-foundation")
			if doc["status"] != "blocked" || !strings.Contains(reason, c.path+" (") || !strings.Contains(reason, "git -C "+wt+" reset --hard ") ||
				!strings.Contains(reason, "run wo run "+key) {
				t.Errorf("status %v, block_reason:\n%s", doc["status"], reason)
			}
			// Nothing was committed either: the worktree's branch is at the push.
			if head, pushed := gittest.Run(t, wt, "rev-parse", "HEAD"), fmt.Sprint(stateOf(doc)["pushed_sha"]); head != pushed {
				t.Errorf("HEAD %s, last push %s: a commit was made", head, pushed)
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func TestAnAgentThatRewritesHistoryOrSwitchesBranchIsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, agent, says string }{
		{"amend", "git commit -qa --amend -m 'rewritten'\n", "its history was rewritten or merged"},
		{"reset and recommit", "git reset -q --hard HEAD~1 && echo x > README.md && git add -A && git commit -qm 'other history'\n", "its history was rewritten or merged"},
		{"switch branch", "git switch -q -c elsewhere\n", "the worktree is on branch elsewhere, not the work branch review/01-foundation"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			key := "task_rewrite"
			f, agent := loopTask(t, key)
			writeAgent(t, agent, c.agent)
			before := remoteRefs(t, f)
			// Unconfined, as where no sandbox keeps it out of .git (macOS,
			// --agent-sandbox off): the gate still refuses what it made.
			r := f.wo([]string{"WO_AGENT=" + agent, "WO_AGENT_SANDBOX=off"}, "run", key)
			if r.code != 1 || !strings.Contains(r.stderr, c.says) {
				t.Fatalf("exit %d, want 1 saying %q:\n%s", r.code, c.says, r.stderr)
			}
			if after := remoteRefs(t, f); after != before {
				t.Errorf("the remote changed (a force-push?):\n%s\nwas:\n%s", after, before)
			}
			// What the block reason says to do lets the task go on: the
			// person puts the branch back, and the next pass is clean.
			wt := filepath.Join(f.wtRoot, "pr-01-foundation")
			pushed := fmt.Sprint(stateOf(f.doc(key))["pushed_sha"])
			gittest.Run(t, wt, "switch", "-q", "review/01-foundation")
			gittest.Run(t, wt, "reset", "-q", "--hard", pushed)
			writeAgent(t, agent, "")
			// With nothing left of the refused fix, the agent runs again
			// only when asked: the next run says so.
			if r := f.wo([]string{"WO_AGENT=" + agent}, "run", key); r.code != 3 || !strings.Contains(r.stderr, "wo run "+key+" --rerun-agent") {
				t.Fatalf("after putting it back, without --rerun-agent: exit %d, want 3 naming it\n%s", r.code, r.stderr)
			}
			if r := f.wo([]string{"WO_AGENT=" + agent}, "run", key, "--rerun-agent"); r.code != 0 {
				t.Fatalf("after putting it back: exit %d\n%s", r.code, r.stderr)
			}
			if n := gittest.Run(t, f.origin, "rev-list", "--count", pushed+"..refs/heads/review/01-foundation"); n != "1" {
				t.Errorf("%s commits pushed on top of the last push, want the one fix", n)
			}
			if parent := gittest.Run(t, f.origin, "rev-parse", "refs/heads/review/01-foundation~1"); parent != pushed {
				t.Errorf("the fix sits on %s, not on the last push %s", parent, pushed)
			}
		})
	}
}

// The repository's own ignore files keep an agent's leftovers out of the
// fix, and the fix goes through.
func TestIgnoredLeftoversStayOutOfAFixThatIsPushed(t *testing.T) {
	t.Parallel()
	key := "task_ignored"
	f, agent := loopTask(t, key)
	writeFile(t, filepath.Join(f.repo, ".git/info/exclude"), ".env\nnode_modules/\n")
	writeAgent(t, agent, "echo 'SECRET=1' > .env\nmkdir -p node_modules/x && echo x > node_modules/x/i.js\n")
	if r := f.wo([]string{"WO_AGENT=" + agent}, "run", key); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	files := gittest.Run(t, f.origin, "diff", "--name-only", "refs/heads/review/01-foundation~1", "refs/heads/review/01-foundation")
	if files != "foundation/new0.go" {
		t.Errorf("the fix pushed %q, want foundation/new0.go alone", files)
	}
}

// The agent's environment, seen from inside the agent run by the wo
// binary: nothing beyond the allow-list and what --agent-env names.
func TestTheAgentsEnvironmentIsItsAllowList(t *testing.T) {
	t.Parallel()
	key := "task_env"
	f, agent := loopTask(t, key)
	dump := filepath.Join(f.root, "agent-env")
	writeAgent(t, agent, "env > "+dump+"\n")
	secrets := []string{"ARANGO_PASSWORD=hunter2", "AWS_SECRET_ACCESS_KEY=aws-secret-value", "SSH_AUTH_SOCK=/tmp/agent.sock",
		"GITHUB_ENV=/runner/env", "GITHUB_PATH=/runner/path", "GITHUB_OUTPUT=/runner/output", "WO_STORE=" + f.store,
		"ARANGO_URL=arangodb+https://root:pw@db:8529", "GITHUB_TOKEN=ghs_not_for_the_agent", "GH_TOKEN=gho_not_for_the_agent",
		"MY_API_KEY=sk-for-the-agent"}
	r := f.wo(append(secrets, "WO_AGENT="+agent, "WO_AGENT_ENV=MY_API_KEY", "LANG=C.UTF-8", "TERM=dumb"), "run", key)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, value, _ := strings.Cut(line, "=")
		got[name] = value
	}
	allowed := map[string]bool{"PATH": true, "HOME": true, "LANG": true, "TERM": true, "TMPDIR": true,
		"GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_NOSYSTEM": true, "GIT_TERMINAL_PROMPT": true,
		"GIT_CONFIG_COUNT": true, "GIT_CONFIG_KEY_0": true, "GIT_CONFIG_VALUE_0": true,
		"WO_TASK_KEY": true, "WO_WORKTREE": true, "WO_PROMPT_FILE": true, "MY_API_KEY": true,
		"GOCACHE": true, "GOMODCACHE": true, "npm_config_cache": true, "PIP_CACHE_DIR": true, // the build caches
		"PWD": true, "OLDPWD": true, "SHLVL": true, "_": true} // the last four are the shell's own
	if ok, _ := sandbox.Namespaces(); ok {
		// In a box, the way out is wo's proxy, named for every client.
		for _, name := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy", "NODE_USE_ENV_PROXY"} {
			allowed[name] = true
		}
	}
	var extra []string
	for name := range got {
		if !allowed[name] && !strings.HasPrefix(name, "LC_") {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("the agent has variables outside its allow-list: %v", extra)
	}
	for _, kv := range secrets[:len(secrets)-1] {
		name, value, _ := strings.Cut(kv, "=")
		if _, ok := got[name]; ok || strings.Contains(string(b), value) {
			t.Errorf("%s reached the agent", name)
		}
	}
	if got["MY_API_KEY"] != "sk-for-the-agent" || got["LANG"] != "C.UTF-8" || got["WO_TASK_KEY"] != key {
		t.Errorf("MY_API_KEY=%q LANG=%q WO_TASK_KEY=%q", got["MY_API_KEY"], got["LANG"], got["WO_TASK_KEY"])
	}
	if home, _ := os.UserHomeDir(); got["HOME"] == home || !strings.Contains(got["HOME"], "wo-agent-") {
		t.Errorf("HOME=%s, want a temporary one", got["HOME"])
	}
	if r := f.wo(nil, "run", key, "--agent", agent, "--agent-env", "GITHUB_TOKEN"); r.code != 2 || !strings.Contains(r.stderr, "the agent never gets the GitHub token") {
		t.Errorf("--agent-env GITHUB_TOKEN: exit %d\n%s", r.code, r.stderr)
	}
}

// The loop comes back to the push step (loop_to 5 here) after the fix was
// pushed, and a process the agent left behind moved the branch in between
// (a workflow commit): the push step is gated as a fix is. Nothing is
// pushed, the task is blocked naming the file, the remote stays at the fix.
func TestABranchMovedAfterTheFixIsNotPushedWhenTheLoopReturnsToThePushStep(t *testing.T) {
	t.Parallel()
	key := "task_moved"
	f, agent := loopTask(t, key)
	writeAgent(t, agent, "")
	signal := filepath.Join(t.TempDir(), "pushed")
	cmd := f.cmd([]string{"WO_AGENT=" + agent, "WO_FAULT_PAUSE=conditional_loop:after_push=1500ms", "WO_FAULT_SIGNAL=" + signal}, "run", key, "--json")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the fix push", 20*time.Second, func() bool {
		_, err := os.Stat(signal)
		return err == nil
	})
	// The leftover process, while wo records the fix.
	wt := filepath.Join(f.wtRoot, "pr-01-foundation")
	fix := gittest.Run(t, f.origin, "rev-parse", "refs/heads/review/01-foundation")
	writeFile(t, filepath.Join(wt, ".github/workflows/x.yml"), "on: push\njobs: {}\n")
	gittest.Run(t, wt, "add", "-f", ".github/workflows/x.yml")
	gittest.Run(t, wt, "commit", "-q", "-m", "ci")
	moved := gittest.Run(t, wt, "rev-parse", "HEAD")
	r := result(cmd, cmd.Wait(), out.String(), errb.String())
	var env struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(lastLine(r.stdout)), &env); err != nil {
		t.Fatalf("exit %d, no envelope: %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	if r.code != 1 || env.Error.Code != "FIX_REFUSED" || !strings.Contains(env.Error.Message, "step 5 (push) failed") || !strings.Contains(env.Error.Message, ".github/workflows/x.yml (under .github/") {
		t.Fatalf("exit %d code %s, want 1 FIX_REFUSED from the push step:\n%s\n%s", r.code, env.Error.Code, env.Error.Message, r.stderr)
	}
	if got := gittest.Run(t, f.origin, "rev-parse", "refs/heads/review/01-foundation"); got != fix {
		t.Errorf("the remote is at %s, want the fix %s", got, fix)
	}
	if err := exec.Command("git", "-C", f.origin, "cat-file", "-e", moved).Run(); err == nil {
		t.Error("the moved commit reached the remote")
	}
	doc := f.doc(key)
	if doc["status"] != "blocked" || !strings.Contains(fmt.Sprint(doc["block_reason"]), ".github/workflows/x.yml") {
		t.Errorf("status %v, block_reason %v", doc["status"], doc["block_reason"])
	}
}
