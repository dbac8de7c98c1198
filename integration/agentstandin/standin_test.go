// Tests of the agent stand-ins (TEST DOUBLES of claude, codex and aider):
// the binary is built once and run under the three names in real temporary
// git repositories. No network, no real agent.

package agentstandin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var builtBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agent-standin-build-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builtBinary = filepath.Join(dir, "agent-standin")
	build := exec.Command("go", "build", "-o", builtBinary, "./cmd/agent-standin")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the stand-in:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const calcGo = "package calc\n\nfunc Add(a, b int) int { return a - b }\n"

var fixEdit = []Edit{{Path: "calc.go", Find: "a - b", Replace: "a + b"}}

// world is one test's bin folder (first on PATH), repository and HOME.
type world struct {
	t    *testing.T
	bin  string
	repo string
	home string
	env  []string
}

func newWorld(t *testing.T, scripts Scripts) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{t: t, bin: filepath.Join(root, "bin"), repo: filepath.Join(root, "repo"), home: filepath.Join(root, "home")}
	for _, d := range []string{w.bin, w.repo, w.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"claude", "codex", "aider"} {
		if err := os.Symlink(builtBinary, filepath.Join(w.bin, n)); err != nil {
			t.Fatal(err)
		}
	}
	if scripts != nil {
		b, _ := json.Marshal(scripts)
		if err := os.WriteFile(filepath.Join(w.bin, ScriptFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An allow-listed environment, as wo gives the agent.
	w.env = []string{"PATH=" + w.bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + w.home,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + filepath.Join(w.home, "no-gitconfig")}
	w.git("init", "-q", "-b", "main")
	w.git("config", "user.name", "Wo Test")
	w.git("config", "user.email", "wo@example.com")
	if err := os.WriteFile(filepath.Join(w.repo, "calc.go"), []byte(calcGo), 0o644); err != nil {
		t.Fatal(err)
	}
	w.git("add", ".")
	w.git("commit", "-q", "-m", "initial")
	return w
}

func (w *world) git(args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = w.repo, w.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

type result struct {
	stdout, stderr string
	code           int
}

// run invokes a tool by name through PATH, in dir, with stdin (nil =
// /dev/null), bounded by a timeout.
func (w *world) run(dir string, stdin *string, extraEnv []string, name string, args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(w.bin, name), args...)
	cmd.Args[0] = name // invoked by its bare name, as a PATH lookup would
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, w.env...), extraEnv...)
	if stdin != nil {
		cmd.Stdin = strings.NewReader(*stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("%s: %v", name, err)
	}
	if ctx.Err() != nil {
		w.t.Fatalf("%s timed out", name)
	}
	return result{out.String(), errb.String(), code}
}

func (w *world) calc() string {
	b, err := os.ReadFile(filepath.Join(w.repo, "calc.go"))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

func (w *world) exists(rel string) bool {
	_, err := os.Stat(filepath.Join(w.repo, rel))
	return err == nil
}

func str(s string) *string { return &s }

func want(t *testing.T, r result, code int, inOut ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
	for _, s := range inOut {
		if !strings.Contains(r.stdout+r.stderr, s) {
			t.Fatalf("output lacks %q\nstdout: %s\nstderr: %s", s, r.stdout, r.stderr)
		}
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(s)), &m); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, s)
	}
	return m
}

func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON Lines: %v: %q", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

var apiKey = []string{"ANTHROPIC_API_KEY=sk-ant-test"}

// ---- claude ----

func TestClaudeNonInteractiveNeedsPrint(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	want(t, w.run(w.repo, str("fix it"), apiKey, "claude", "fix it"), 1, "Raw mode is not supported")
	want(t, w.run(w.repo, nil, apiKey, "claude", "-p"), 1, "Input must be provided either through stdin or as a prompt argument when using --print")
	want(t, w.run(w.repo, nil, apiKey, "claude", "-p", "--output-format", "stream-json", "x"), 1, "requires --verbose")
	want(t, w.run(w.repo, nil, apiKey, "claude", "-p", "--frobnicate", "x"), 1, "error: unknown option '--frobnicate'")
	want(t, w.run(w.repo, nil, apiKey, "claude", "-p", "--permission-mode", "yolo", "x"), 1, "Allowed choices are")
	// commander's variadic --allowedTools takes the prompt too: no prompt left.
	want(t, w.run(w.repo, nil, apiKey, "claude", "-p", "--allowedTools", "Edit", "fix it"), 1, "Input must be provided")
	if w.calc() != calcGo {
		t.Fatal("a failed call edited the file")
	}
}

func TestClaudeFixWithAcceptEdits(t *testing.T) {
	t.Parallel()
	w := newWorld(t, Scripts{"claude": {Outcome: OutcomeFix, Edits: fixEdit, CostUSD: 0.0421, Turns: 3, Message: "Fixed Add."}})
	r := w.run(w.repo, str("Fix the review comments."), apiKey, "claude", "-p", "--output-format", "json", "--max-turns", "10", "--permission-mode", "acceptEdits", "--model", "sonnet", "--append-system-prompt", "be brief")
	want(t, r, 0)
	m := decode(t, r.stdout)
	if m["type"] != "result" || m["subtype"] != "success" || m["is_error"] != false || m["result"] != "Fixed Add." {
		t.Fatalf("result object: %v", m)
	}
	if m["total_cost_usd"].(float64) != 0.0421 || m["num_turns"].(float64) != 3 || m["session_id"] == "" {
		t.Fatalf("cost/turns/session: %v", m)
	}
	if u, ok := m["usage"].(map[string]any); !ok || u["output_tokens"].(float64) <= 0 {
		t.Fatalf("usage: %v", m["usage"])
	}
	if diff := w.git("diff", "--", "calc.go"); !strings.Contains(diff, "+func Add(a, b int) int { return a + b }") {
		t.Fatalf("diff: %s", diff)
	}
	// It leaves its state beside HOME and a transcript under ~/.claude/projects.
	if _, err := os.Stat(filepath.Join(w.home, ".claude.json")); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(w.home, ".claude", "projects", "*", m["session_id"].(string)+".jsonl")); len(m) != 1 {
		t.Fatal("no session transcript")
	}
	if st := w.git("status", "--porcelain"); strings.TrimSpace(st) != "M calc.go" {
		t.Fatalf("the worktree holds more than the fix: %q", st)
	}
	// Other ways to allow edits.
	for _, args := range [][]string{{"--dangerously-skip-permissions"}, {"--allowedTools", "Read,Edit", "--"}, {"--permission-mode", "bypassPermissions"}} {
		w.git("checkout", "-q", "calc.go")
		want(t, w.run(w.repo, nil, apiKey, "claude", append(append([]string{"-p"}, args...), "fix it")...), 0, "Fixed Add.")
		if w.calc() == calcGo {
			t.Fatalf("%v: no edit", args)
		}
	}
}

func TestClaudeDefaultPermissionEditsNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, Scripts{"claude": {Outcome: OutcomeFix, Edits: append(fixEdit, Edit{Path: ".claude/settings.json", Replace: "{}"})}})
	for _, mode := range [][]string{nil, {"--permission-mode", "plan"}, {"--permission-mode", "dontAsk", "--allowedTools", "Edit", "--"}} {
		r := w.run(w.repo, nil, apiKey, "claude", append(append([]string{"-p", "--output-format", "json"}, mode...), "fix it")...)
		want(t, r, 0, "haven't granted it yet")
		m := decode(t, r.stdout)
		if m["is_error"] != false || len(m["permission_denials"].([]any)) != 2 {
			t.Fatalf("%v: %v", mode, m)
		}
		if st := w.git("status", "--porcelain"); st != "" {
			t.Fatalf("%v edited: %s", mode, st)
		}
	}
	// .claude/ stays refused even when edits are allowed: a sensitive file.
	r := w.run(w.repo, nil, apiKey, "claude", "-p", "--output-format", "json", "--dangerously-skip-permissions", "fix it")
	want(t, r, 0, "sensitive file")
	if w.exists(".claude/settings.json") || w.calc() == calcGo {
		t.Fatal("wrong edits")
	}
}

func TestClaudeCredentials(t *testing.T) {
	t.Parallel()
	w := newWorld(t, Scripts{"claude": {Outcome: OutcomeFix, Edits: fixEdit}})
	r := w.run(w.repo, nil, nil, "claude", "-p", "--output-format", "json", "--permission-mode", "acceptEdits", "fix it")
	want(t, r, 1)
	if m := decode(t, r.stdout); m["is_error"] != true || m["result"] != "Not logged in · Please run /login" {
		t.Fatalf("%v", m)
	}
	want(t, w.run(w.repo, nil, nil, "claude", "-p", "fix it"), 1, "Not logged in · Please run /login")
	// --bare takes only ANTHROPIC_API_KEY: the OAuth token does not count.
	oauth := []string{"CLAUDE_CODE_OAUTH_TOKEN=tok"}
	want(t, w.run(w.repo, nil, oauth, "claude", "-p", "--bare", "fix it"), 1, "Not logged in")
	want(t, w.run(w.repo, nil, oauth, "claude", "-p", "fix it"), 0)
	// A login under CLAUDE_CONFIG_DIR counts.
	cfg := filepath.Join(w.home, "cfg")
	os.MkdirAll(cfg, 0o700)
	os.WriteFile(filepath.Join(cfg, ".credentials.json"), []byte(`{"claudeAiOauth":{}}`), 0o600)
	want(t, w.run(w.repo, nil, []string{"CLAUDE_CONFIG_DIR=" + cfg}, "claude", "-p", "fix it"), 0)
	if _, err := os.Stat(filepath.Join(cfg, ".claude.json")); err != nil {
		t.Fatal("with CLAUDE_CONFIG_DIR, .claude.json lives there:", err)
	}
	if w.calc() != calcGo {
		t.Fatal("edited without permission")
	}
}

func TestClaudeFailureOutcomes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		outcome string
		code    int
		subtype string
		text    string
	}{
		{OutcomeRateLimit, 0, "success", "API Error: Rate limit reached"},
		{OutcomeAuth, 1, "success", "Invalid API key · Please run /login"},
		{OutcomeTurnLimit, 1, "error_max_turns", "Reached maximum number of turns (2)"},
	} {
		w := newWorld(t, Scripts{"claude": {Outcome: tc.outcome, Edits: fixEdit}})
		r := w.run(w.repo, nil, apiKey, "claude", "-p", "--output-format", "json", "--max-turns", "2", "fix it")
		want(t, r, tc.code, tc.text)
		m := decode(t, r.stdout)
		if m["subtype"] != tc.subtype || m["is_error"] != true {
			t.Fatalf("%s: %v", tc.outcome, m)
		}
		tr := w.run(w.repo, nil, apiKey, "claude", "-p", "fix it")
		if tr.code != tc.code {
			t.Fatalf("%s text mode: exit %d", tc.outcome, tr.code)
		}
	}
	w := newWorld(t, Scripts{"claude": {Outcome: OutcomeCrash}})
	r := w.run(w.repo, nil, apiKey, "claude", "-p", "--output-format", "json", "fix it")
	want(t, r, 1, "TypeError")
	if r.stdout != "" {
		t.Fatal("a crash printed a result")
	}
}

func TestClaudeStreamJSON(t *testing.T) {
	t.Parallel()
	w := newWorld(t, Scripts{"claude": {Outcome: OutcomeFix, Edits: fixEdit, CostUSD: 0.01}})
	r := w.run(w.repo, nil, apiKey, "claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "fix it")
	want(t, r, 0)
	lines := jsonLines(t, r.stdout)
	if lines[0]["type"] != "system" || lines[0]["subtype"] != "init" || lines[0]["permissionMode"] != "acceptEdits" {
		t.Fatalf("first line: %v", lines[0])
	}
	last := lines[len(lines)-1]
	if last["type"] != "result" || last["total_cost_usd"].(float64) != 0.01 {
		t.Fatalf("last line: %v", last)
	}
	var sawAssistant bool
	for _, l := range lines {
		sawAssistant = sawAssistant || l["type"] == "assistant"
	}
	if !sawAssistant || w.calc() == calcGo {
		t.Fatal("no assistant message or no edit")
	}
}

// ---- codex ----

var codexKey = []string{"CODEX_API_KEY=sk-test"}

func TestCodexNonInteractiveNeedsExec(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	want(t, w.run(w.repo, nil, codexKey, "codex", "fix it"), 1, "Error: stdin is not a terminal")
	want(t, w.run(w.repo, nil, codexKey, "codex"), 1, "Error: stdin is not a terminal")
	want(t, w.run(w.repo, nil, codexKey, "codex", "exec", "--frobnicate", "x"), 2, "error: unexpected argument '--frobnicate' found")
	want(t, w.run(w.repo, nil, codexKey, "codex", "exec", "--sandbox", "write", "x"), 2, "possible values: read-only, workspace-write, danger-full-access")
	want(t, w.run(w.repo, nil, codexKey, "codex", "exec"), 1, "No prompt provided via stdin.")
	outside := t.TempDir()
	want(t, w.run(outside, nil, codexKey, "codex", "exec", "x"), 1, "Not inside a trusted directory and --skip-git-repo-check was not specified.")
	want(t, w.run(outside, nil, codexKey, "codex", "exec", "--skip-git-repo-check", "x"), 0)
}

func TestCodexSandboxDefaultEditsNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, Scripts{"codex": {Outcome: OutcomeFix, Edits: fixEdit}})
	r := w.run(w.repo, nil, codexKey, "codex", "exec", "--json", "fix it")
	want(t, r, 0, "read-only sandbox")
	var failed bool
	for _, ev := range jsonLines(t, r.stdout) {
		if it, ok := ev["item"].(map[string]any); ok && it["type"] == "file_change" && it["status"] == "failed" {
			failed = true
		}
	}
	if !failed || w.git("status", "--porcelain") != "" {
		t.Fatal("the read-only sandbox let an edit through, or did not say so")
	}
}

func TestCodexFix(t *testing.T) {
	t.Parallel()
	w := newWorld(t, Scripts{"codex": {Outcome: OutcomeFix, Edits: fixEdit, Message: "Added the fix.", InputTokens: 500, OutputTokens: 40}})
	last := filepath.Join(t.TempDir(), "last.txt")
	codexHome := filepath.Join(w.home, "codexhome")
	env := append([]string{"CODEX_HOME=" + codexHome}, codexKey...)
	r := w.run(t.TempDir(), str("Fix the review comments."), env, "codex", "exec", "--json", "--sandbox", "workspace-write", "-C", w.repo, "-o", last, "-m", "gpt-5.5", "-c", "model_reasoning_effort=high", "-")
	want(t, r, 0)
	evs := jsonLines(t, r.stdout)
	types := []string{}
	for _, e := range evs {
		types = append(types, e["type"].(string))
	}
	if strings.Join(types, ",") != "thread.started,turn.started,item.completed,item.completed,turn.completed" {
		t.Fatalf("events: %v", types)
	}
	u := evs[len(evs)-1]["usage"].(map[string]any)
	if u["input_tokens"].(float64) != 500 || u["output_tokens"].(float64) != 40 {
		t.Fatalf("usage: %v", u)
	}
	if b, _ := os.ReadFile(last); string(b) != "Added the fix." {
		t.Fatalf("-o file: %q", b)
	}
	if !strings.Contains(w.git("diff"), "a + b") {
		t.Fatal("no edit")
	}
	if m, _ := filepath.Glob(filepath.Join(codexHome, "sessions", "*", "*", "*", "rollout-*.jsonl")); len(m) != 1 {
		t.Fatalf("sessions: %v", m)
	}
	// --full-auto still means workspace-write, with a deprecation warning;
	// human mode puts only the final message on stdout.
	w.git("checkout", "-q", "calc.go")
	r = w.run(w.repo, nil, append([]string{"CODEX_HOME=" + codexHome}, codexKey...), "codex", "exec", "--full-auto", "--ephemeral", "fix it")
	want(t, r, 0, "`--full-auto` is deprecated")
	if strings.TrimSpace(r.stdout) != "Added the fix." || w.calc() == calcGo {
		t.Fatalf("stdout %q", r.stdout)
	}
	if m, _ := filepath.Glob(filepath.Join(codexHome, "sessions", "*", "*", "*", "rollout-*.jsonl")); len(m) != 1 {
		t.Fatal("--ephemeral wrote a session file")
	}
}

func TestCodexFailures(t *testing.T) {
	t.Parallel()
	w := newWorld(t, Scripts{"codex": {Outcome: OutcomeFix, Edits: fixEdit}})
	r := w.run(w.repo, nil, nil, "codex", "exec", "--json", "--sandbox", "workspace-write", "fix it")
	want(t, r, 1, "401 Unauthorized: Missing bearer")
	evs := jsonLines(t, r.stdout)
	if last := evs[len(evs)-1]; last["type"] != "turn.failed" || !strings.Contains(last["error"].(map[string]any)["message"].(string), "401") {
		t.Fatalf("last event %v", last)
	}
	// A login file in CODEX_HOME counts as credentials.
	os.MkdirAll(filepath.Join(w.home, ".codex"), 0o700)
	os.WriteFile(filepath.Join(w.home, ".codex", "auth.json"), []byte(`{"tokens":{}}`), 0o600)
	want(t, w.run(w.repo, nil, nil, "codex", "exec", "--sandbox", "workspace-write", "fix it"), 0)

	for _, tc := range []struct{ outcome, text string }{
		{OutcomeRateLimit, "try again at 9:05 PM"}, {OutcomeAuth, "Incorrect API key"}, {OutcomeTurnLimit, "context window"},
	} {
		w := newWorld(t, Scripts{"codex": {Outcome: tc.outcome, RetryAt: "9:05 PM"}})
		r := w.run(w.repo, nil, codexKey, "codex", "exec", "--json", "x")
		want(t, r, 1, tc.text)
		if evs := jsonLines(t, r.stdout); evs[len(evs)-1]["type"] != "turn.failed" {
			t.Fatalf("%s: no turn.failed", tc.outcome)
		}
	}
	w = newWorld(t, Scripts{"codex": {Outcome: OutcomeCrash}})
	want(t, w.run(w.repo, nil, codexKey, "codex", "exec", "x"), 101, "panicked")
}

// ---- aider ----

var aiderBase = []string{"--model", "sonnet", "--no-analytics", "--no-check-update", "--no-show-model-warnings", "--no-pretty", "--no-stream"}

func TestAiderArgumentsAndNoMessage(t *testing.T) {
	t.Parallel()
	w := newWorld(t, Scripts{"aider": {Outcome: OutcomeFix, Edits: fixEdit}})
	r := w.run(w.repo, nil, apiKey, "aider", "--frobnicate", "calc.go")
	want(t, r, 2, "aider: error: unrecognized arguments: --frobnicate")
	want(t, w.run(w.repo, nil, apiKey, "aider", "--message"), 2, "expected one argument")
	// Without --message, and no terminal: EOF on stdin ends the chat, exit 0.
	r = w.run(w.repo, nil, apiKey, "aider", append(aiderBase, "--no-gitignore", "calc.go")...)
	want(t, r, 0, "Input is not a terminal")
	if w.calc() != calcGo {
		t.Fatal("edited without a message")
	}
}

func TestAiderFixCommitsAndLeavesFiles(t *testing.T) {
	t.Parallel()
	w := newWorld(t, Scripts{"aider": {Outcome: OutcomeFix, Edits: fixEdit, CommitMessage: "fix: add instead of subtract"}})
	head := strings.TrimSpace(w.git("rev-parse", "HEAD"))
	// --yes is argparse's abbreviation of --yes-always.
	r := w.run(w.repo, nil, apiKey, "aider", append(aiderBase, "--yes", "--message", "Fix the review comments.", "calc.go")...)
	want(t, r, 0, "Applied edit to calc.go", "Commit ", "Added .aider* to .gitignore")
	if strings.TrimSpace(w.git("rev-parse", "HEAD~1")) != head {
		t.Fatal("aider did not make its own commit")
	}
	if author := w.git("log", "-1", "--format=%an|%cn|%s"); strings.TrimSpace(author) != "Wo Test (aider)|Wo Test (aider)|fix: add instead of subtract" {
		t.Fatalf("commit: %q", author)
	}
	for _, f := range []string{".aider.chat.history.md", ".aider.input.history", ".aider.tags.cache.v4"} {
		if !w.exists(f) {
			t.Fatalf("no %s", f)
		}
	}
	if st := strings.TrimSpace(w.git("status", "--porcelain")); st != "?? .gitignore" {
		t.Fatalf("status: %q", st)
	}
}

func TestAiderNoAutoCommitsAndMovedFiles(t *testing.T) {
	t.Parallel()
	w := newWorld(t, Scripts{"aider": {Outcome: OutcomeFix, Edits: fixEdit}})
	away := t.TempDir()
	msg := filepath.Join(away, "msg.txt")
	os.WriteFile(msg, []byte("Fix the review comments."), 0o644)
	head := w.git("rev-parse", "HEAD")
	r := w.run(w.repo, nil, apiKey, "aider", append(aiderBase, "--yes-always", "--no-auto-commits", "--no-gitignore", "--map-tokens", "0",
		"--chat-history-file", filepath.Join(away, "chat.md"), "--input-history-file", filepath.Join(away, "input"), "--message-file", msg, "calc.go")...)
	want(t, r, 0, "Applied edit to calc.go")
	if w.git("rev-parse", "HEAD") != head {
		t.Fatal("committed despite --no-auto-commits")
	}
	if st := strings.TrimSpace(w.git("status", "--porcelain", "--ignored")); st != "M calc.go" {
		t.Fatalf("the worktree holds more than the fix: %q", st)
	}
	if _, err := os.Stat(filepath.Join(away, "chat.md")); err != nil {
		t.Fatal("chat history not where the flag said")
	}
}

func TestAiderFailuresExitZero(t *testing.T) {
	t.Parallel()
	// A model named but no key: a litellm AuthenticationError, exit 0.
	w := newWorld(t, Scripts{"aider": {Outcome: OutcomeFix, Edits: fixEdit}})
	r := w.run(w.repo, nil, nil, "aider", append(aiderBase, "--yes-always", "--message", "fix", "calc.go")...)
	want(t, r, 0, "litellm.AuthenticationError", "Check your API key")
	if w.calc() != calcGo {
		t.Fatal("edited without a key")
	}
	// A key in a .env file at the repository root counts.
	os.WriteFile(filepath.Join(w.repo, ".env"), []byte("ANTHROPIC_API_KEY=sk-ant-env\n"), 0o600)
	want(t, w.run(w.repo, nil, nil, "aider", append(aiderBase, "--yes-always", "--no-auto-commits", "--message", "fix", "calc.go")...), 0, "Applied edit")
	if gi, _ := os.ReadFile(filepath.Join(w.repo, ".gitignore")); string(gi) != ".aider*\n.env\n" {
		t.Fatalf(".gitignore: %q", gi)
	}
	// No model and no key at all: the OpenRouter offer, then exit 1.
	w2 := newWorld(t, nil)
	want(t, w2.run(w2.repo, nil, nil, "aider", "--yes-always", "--message", "fix"), 1, "No LLM model was specified and no API keys were provided.")

	w3 := newWorld(t, Scripts{"aider": {Outcome: OutcomeRateLimit, Edits: fixEdit}})
	want(t, w3.run(w3.repo, nil, apiKey, "aider", append(aiderBase, "--yes-always", "--message", "fix")...), 0, "litellm.RateLimitError", "Retrying in 32.0 seconds...")
	if w3.calc() != calcGo {
		t.Fatal("edited while rate limited")
	}
	w4 := newWorld(t, Scripts{"aider": {Outcome: OutcomeCrash}})
	want(t, w4.run(w4.repo, nil, apiKey, "aider", append(aiderBase, "--yes-always", "--message", "fix")...), 1, "Traceback (most recent call last)")
}

// ---- shared ----

func TestEditsStayInsideAndInvocationsAreLogged(t *testing.T) {
	t.Parallel()
	w := newWorld(t, Scripts{"claude": {Outcome: OutcomeFix, Edits: []Edit{{Path: "../escape.txt", Replace: "x"}, {Path: "/tmp/abs.txt", Replace: "x"}}}})
	os.Symlink(t.TempDir(), filepath.Join(w.repo, "link"))
	want(t, w.run(w.repo, nil, append([]string{"SECRET_TOKEN=hunter2"}, apiKey...), "claude", "-p", "--dangerously-skip-permissions", "fix it"), 0)
	if _, err := os.Stat(filepath.Join(filepath.Dir(w.repo), "escape.txt")); err == nil {
		t.Fatal("an edit left the working folder")
	}
	if _, err := resolveInside(w.repo, "link/x.txt"); err == nil {
		t.Fatal("an edit through a link left the working folder")
	}
	log, err := os.ReadFile(filepath.Join(w.bin, LogFile))
	if err != nil {
		t.Fatal(err)
	}
	var inv invocation
	if err := json.Unmarshal(bytes.Split(log, []byte("\n"))[0], &inv); err != nil {
		t.Fatal(err)
	}
	if inv.Tool != "claude" || inv.Cwd != w.repo || !inv.StdinRead || inv.Argv[1] != "-p" {
		t.Fatalf("%+v", inv)
	}
	if !strings.Contains(string(log), `"SECRET_TOKEN"`) || strings.Contains(string(log), "hunter2") || strings.Contains(string(log), "sk-ant-test") {
		t.Fatal("the log must name variables, never hold their values")
	}
}
