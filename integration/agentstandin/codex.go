// This file is part of a TEST DOUBLE: it imitates OpenAI Codex CLI's
// `codex` command line for wo's tests. It is not Codex and calls no model.

package agentstandin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const codexVersion = "0.160.0"

var codexOptions = map[string]string{
	"-c": "value", "--config": "value", "-m": "value", "--model": "value",
	"-p": "value", "--profile": "value", "-s": "value", "--sandbox": "value",
	"-C": "value", "--cd": "value", "--add-dir": "value", "-i": "value", "--image": "value",
	"-o": "value", "--output-last-message": "value", "--output-schema": "value",
	"--color": "value", "--local-provider": "value",
	"--json": "bool", "--experimental-json": "bool", "--skip-git-repo-check": "bool",
	"--ephemeral": "bool", "--ignore-user-config": "bool", "--ignore-rules": "bool",
	"--full-auto": "bool", "--dangerously-bypass-approvals-and-sandbox": "bool", "--yolo": "bool",
	"--not-so-yolo": "bool", "--oss": "bool", "-h": "bool", "--help": "bool", "-V": "bool", "--version": "bool",
}

var codexSandboxes = []string{"read-only", "workspace-write", "danger-full-access"}

type codexArgs struct {
	opts       map[string][]string
	subcommand string
	prompt     *string
}

func (a codexArgs) has(n ...string) bool {
	for _, x := range n {
		if _, ok := a.opts[x]; ok {
			return true
		}
	}
	return false
}

func (a codexArgs) get(n ...string) string {
	for _, x := range n {
		if v := a.opts[x]; len(v) > 0 {
			return v[len(v)-1]
		}
	}
	return ""
}

const codexUsage = "Usage: codex exec [OPTIONS] [PROMPT]\n       codex exec [OPTIONS] <COMMAND> [ARGS]\n\nFor more information, try '--help'.\n"

// parseCodex parses as clap does; a returned string is clap's error text
// (exit 2).
func parseCodex(args []string) (codexArgs, string) {
	out := codexArgs{opts: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if out.subcommand == "" && !strings.HasPrefix(arg, "-") {
			out.subcommand = arg
			continue
		}
		if arg == "--" {
			if i+1 < len(args) {
				v := args[i+1]
				out.prompt = &v
			}
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			if out.prompt != nil {
				return out, fmt.Sprintf("error: unexpected argument '%s' found\n\n%s", arg, codexUsage)
			}
			v := arg
			out.prompt = &v
			continue
		}
		name, val, hasVal := arg, "", false
		if j := strings.IndexByte(arg, '='); j > 0 && strings.HasPrefix(arg, "--") {
			name, val, hasVal = arg[:j], arg[j+1:], true
		} else if len(arg) > 2 && arg[1] != '-' {
			if k, ok := codexOptions[arg[:2]]; ok && k == "value" {
				name, val, hasVal = arg[:2], arg[2:], true
			}
		}
		kind, ok := codexOptions[name]
		if !ok {
			return out, fmt.Sprintf("error: unexpected argument '%s' found\n\n  tip: to pass '%s' as a value, use '-- %s'\n\n%s", name, name, name, codexUsage)
		}
		if kind == "bool" {
			out.opts[name] = append(out.opts[name], "true")
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return out, fmt.Sprintf("error: a value is required for '%s <%s>' but none was supplied\n\nFor more information, try '--help'.\n", name, strings.ToUpper(strings.TrimLeft(name, "-")))
			}
			i++
			val = args[i]
		}
		if name == "-s" || name == "--sandbox" {
			if !contains(codexSandboxes, val) {
				return out, fmt.Sprintf("error: invalid value '%s' for '--sandbox <SANDBOX_MODE>'\n  [possible values: read-only, workspace-write, danger-full-access]\n\nFor more information, try '--help'.\n", val)
			}
		}
		out.opts[name] = append(out.opts[name], val)
	}
	return out, ""
}

func codexHome() string {
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return d
	}
	return filepath.Join(homeDir(), ".codex")
}

func runCodex(p *proc) int {
	a, perr := parseCodex(p.args)
	if perr != "" {
		fmt.Fprint(p.stderr, perr)
		return 2
	}
	if a.has("-V", "--version") {
		fmt.Fprintf(p.stdout, "codex-cli %s\n", codexVersion)
		return 0
	}
	if code, ok := codexExecOnly(p, a); !ok {
		return code
	}
	if a.has("--help", "-h") {
		fmt.Fprint(p.stdout, "Run Codex non-interactively (stand-in test double)\n\n"+codexUsage)
		return 0
	}
	sandbox, model, yolo, code := codexSettings(p, a)
	if code != 0 {
		return code
	}
	workdir := p.cwd
	if d := a.get("-C", "--cd"); d != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join(p.cwd, d)
		}
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() {
			fmt.Fprintf(p.stderr, "Error: No such file or directory (os error 2)\n")
			return 1
		}
		workdir = filepath.Clean(d)
	}
	// The prompt is settled before the git check, as codex-rs/exec does.
	prompt, ok := codexPrompt(p, a)
	if !ok {
		return 1
	}
	if !a.has("--skip-git-repo-check") && !yolo && gitRoot(workdir) == "" {
		fmt.Fprintln(p.stderr, "Not inside a trusted directory and --skip-git-repo-check was not specified.")
		return 1
	}
	if p.scriptE != nil {
		fmt.Fprintf(p.stderr, "agent-standin: %v\n", p.scriptE)
		return 70
	}
	r := &codexRun{p: p, a: a, json: a.has("--json", "--experimental-json"), workdir: workdir, model: model,
		sandbox: sandbox, thread: newUUID(), prompt: prompt}
	return r.run()
}

// codexExecOnly reports whether the subcommand is exec, which is all the
// stand-in runs; else the exit code codex would give.
func codexExecOnly(p *proc, a codexArgs) (int, bool) {
	switch a.subcommand {
	case "exec", "e":
		return 0, true
	case "":
		// The interactive TUI refuses a stdin that is not a terminal (openai/codex#6382).
		if !p.stdin.tty {
			fmt.Fprintln(p.stderr, "Error: stdin is not a terminal")
			return 1, false
		}
		fmt.Fprintln(p.stderr, "agent-standin: the codex stand-in has no interactive mode; use codex exec")
		return 1, false
	case "login":
		fmt.Fprintln(p.stderr, "agent-standin: the codex stand-in does not log in")
		return 1, false
	default:
		// An unknown word is the interactive TUI's initial prompt.
		if !p.stdin.tty {
			fmt.Fprintln(p.stderr, "Error: stdin is not a terminal")
		}
		return 1, false
	}
}

// codexSettings are the sandbox mode and model the flags and -c
// overrides choose, and whether approvals and the sandbox are bypassed;
// a code other than 0 is an override codex refuses.
func codexSettings(p *proc, a codexArgs) (sandbox, model string, yolo bool, code int) {
	sandbox = orDefault(a.get("-s", "--sandbox"), "read-only")
	if a.has("--full-auto") {
		fmt.Fprintln(p.stderr, "warning: `--full-auto` is deprecated; use `--sandbox workspace-write` instead.")
		sandbox = "workspace-write"
	}
	yolo = a.has("--dangerously-bypass-approvals-and-sandbox", "--yolo")
	if yolo {
		sandbox = "danger-full-access"
	} else if a.has("--not-so-yolo") {
		sandbox = "workspace-write"
	}
	model = "gpt-5.5"
	for _, kv := range append(append([]string{}, a.opts["-c"]...), a.opts["--config"]...) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			fmt.Fprintf(p.stderr, "Error parsing -c overrides: Invalid override (missing '='): %s\n", kv)
			return "", "", false, 1
		}
		if strings.TrimSpace(k) == "model" {
			model = strings.Trim(strings.TrimSpace(v), `"'`)
		}
		if strings.TrimSpace(k) == "sandbox_mode" && a.get("-s", "--sandbox") == "" && !yolo && !a.has("--full-auto") {
			sandbox = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return sandbox, orDefault(a.get("-m", "--model"), model), yolo, 0
}

// codexPrompt is the prompt: the argument (with a piped stdin appended),
// or stdin when the argument is "-" or missing; false when there is none
// (codex has said so and exits 1).
func codexPrompt(p *proc, a codexArgs) (string, bool) {
	if a.prompt == nil || *a.prompt == "-" {
		if a.prompt == nil && p.stdin.tty {
			fmt.Fprintln(p.stderr, "No prompt provided. Either specify one as an argument or pipe the prompt into stdin.")
			return "", false
		}
		if a.prompt == nil {
			fmt.Fprintln(p.stderr, "Reading prompt from stdin...")
		}
		prompt := p.stdin.ReadAll()
		if strings.TrimSpace(prompt) == "" {
			fmt.Fprintln(p.stderr, "No prompt provided via stdin.")
			return "", false
		}
		return prompt, true
	}
	prompt := *a.prompt
	if !p.stdin.tty {
		// A piped stdin is read to EOF and appended (it blocks until EOF).
		fmt.Fprintln(p.stderr, "Reading additional input from stdin...")
		if in := p.stdin.ReadAll(); strings.TrimSpace(in) != "" {
			prompt += "\n\n<stdin>\n" + in
			if !strings.HasSuffix(in, "\n") {
				prompt += "\n"
			}
			prompt += "</stdin>"
		}
	}
	return prompt, true
}

type codexRun struct {
	p       *proc
	a       codexArgs
	json    bool
	workdir string
	model   string
	sandbox string
	thread  string
	prompt  string
	items   int
	rollout []any
}

func (r *codexRun) event(v map[string]any) {
	r.rollout = append(r.rollout, v)
	if r.json {
		b, _ := json.Marshal(v)
		fmt.Fprintln(r.p.stdout, string(b))
	}
}

func (r *codexRun) item(v map[string]any) {
	v["id"] = fmt.Sprintf("item_%d", r.items)
	r.items++
	r.event(map[string]any{"type": "item.completed", "item": v})
}

func (r *codexRun) human(format string, args ...any) {
	if !r.json {
		fmt.Fprintf(r.p.stderr, format, args...)
	}
}

func (r *codexRun) fail(msg string, retries int) int {
	for i := 1; i <= retries; i++ {
		r.event(map[string]any{"type": "error", "message": fmt.Sprintf("Reconnecting... %d/%d (%s)", i, retries, msg)})
		r.human("Reconnecting... %d/%d (%s)\n", i, retries, msg)
	}
	r.event(map[string]any{"type": "error", "message": msg})
	r.event(map[string]any{"type": "turn.failed", "error": map[string]any{"message": msg}})
	r.human("ERROR: %s\n", msg)
	return 1
}

func (r *codexRun) run() int {
	p, s := r.p, r.p.script
	r.event(map[string]any{"type": "thread.started", "thread_id": r.thread})
	sandboxText := r.sandbox
	if r.sandbox == "workspace-write" {
		sandboxText = fmt.Sprintf("workspace-write [workdir, /tmp, $TMPDIR, %s]", filepath.Join(codexHome(), "memories"))
	}
	r.human("OpenAI Codex v%s\n--------\nworkdir: %s\nmodel: %s\nprovider: openai\napproval: never\nsandbox: %s\nreasoning effort: medium\nreasoning summaries: none\nsession id: %s\n--------\nuser\n%s\n\n",
		codexVersion, r.workdir, r.model, sandboxText, r.thread, r.prompt)
	r.event(map[string]any{"type": "turn.started"})
	defer r.writeRollout()

	// Credentials: CODEX_API_KEY (exec only) or a login in $CODEX_HOME/auth.json.
	if os.Getenv("CODEX_API_KEY") == "" {
		if fi, err := os.Stat(filepath.Join(codexHome(), "auth.json")); err != nil || fi.Size() == 0 {
			return r.fail("unexpected status 401 Unauthorized: Missing bearer or basic authentication in header, url: https://api.openai.com/v1/responses", 5)
		}
	}
	switch s.Outcome {
	case OutcomeAuth:
		return r.fail("unexpected status 401 Unauthorized: Incorrect API key provided: sk-****. You can find your API key at https://platform.openai.com/account/api-keys., url: https://api.openai.com/v1/responses", 5)
	case OutcomeRateLimit:
		return r.fail(fmt.Sprintf("You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at %s.", orDefault(s.RetryAt, "7:23 PM")), 0)
	case OutcomeTurnLimit:
		// Codex has no turn cap; the nearest failure is a full context window.
		return r.fail("Codex ran out of room in the model's context window. Start a new thread or clear earlier history before retrying.", 0)
	case OutcomeCrash:
		fmt.Fprintf(p.stderr, "\nthread 'main' panicked at codex-rs/exec/src/lib.rs:612:41:\ncalled `Option::unwrap()` on a `None` value\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")
		return 101
	}
	var edits []Edit
	if s.Outcome == OutcomeFix {
		edits = s.Edits
	}
	done, refused := r.makeEdits(edits)
	msg := s.Message
	switch {
	case len(refused) > 0 && r.sandbox == "read-only":
		msg = fmt.Sprintf("I couldn't apply the change to %s: this session runs in a read-only sandbox, so file writes are blocked. Re-run with --sandbox workspace-write to allow edits.", strings.Join(refused, ", "))
	case msg == "" && len(done) > 0:
		msg = "Applied the requested change."
	case msg == "":
		msg = "No change was needed."
	}
	r.item(map[string]any{"type": "agent_message", "text": msg})
	in, out := orInt(s.InputTokens, 24763), orInt(s.OutputTokens, 122)
	usage := map[string]any{"input_tokens": in, "cached_input_tokens": in * 9 / 10, "output_tokens": out, "reasoning_output_tokens": out / 2}
	r.event(map[string]any{"type": "turn.completed", "usage": usage})
	r.human("codex\n%s\ntokens used\n%d\n", msg, in+out)
	if !r.json {
		fmt.Fprintln(p.stdout, msg)
	}
	r.writeLastMessage(msg)
	return 0
}

// makeEdits makes the script's edits as codex's apply_patch does (none
// in a read-only sandbox), reporting each as a file_change item; it
// returns the paths changed and the paths refused.
func (r *codexRun) makeEdits(edits []Edit) (done, refused []string) {
	for _, e := range edits {
		kind := "update"
		if _, err := os.Stat(filepath.Join(r.workdir, e.Path)); err != nil {
			kind = "add"
		}
		status := "completed"
		if r.sandbox == "read-only" {
			status = "failed"
			refused = append(refused, e.Path)
			r.human("file update rejected: writing is blocked by read-only sandbox\n")
		} else if ap := applyEdits(r.workdir, []Edit{e})[0]; ap.Err != nil {
			status = "failed"
			refused = append(refused, e.Path)
			r.human("apply_patch failed: %v\n", ap.Err)
		} else {
			done = append(done, e.Path)
			r.human("file update:\nM %s\n", e.Path)
		}
		r.item(map[string]any{"type": "file_change", "changes": []any{map[string]any{"path": filepath.Join(r.workdir, e.Path), "kind": kind}}, "status": status})
	}
	return done, refused
}

// writeLastMessage writes the last message to -o/--output-last-message.
func (r *codexRun) writeLastMessage(msg string) {
	f := r.a.get("-o", "--output-last-message")
	if f == "" {
		return
	}
	if !filepath.IsAbs(f) {
		f = filepath.Join(r.p.cwd, f)
	}
	if err := os.WriteFile(f, []byte(msg), 0o644); err != nil {
		fmt.Fprintf(r.p.stderr, "Failed to write last message file %q: %v\n", f, err)
	}
}

// writeRollout leaves the session file real codex keeps under
// $CODEX_HOME/sessions/YYYY/MM/DD/, unless --ephemeral.
func (r *codexRun) writeRollout() {
	if r.a.has("--ephemeral") {
		return
	}
	now := time.Now()
	dir := filepath.Join(codexHome(), "sessions", now.Format("2006"), now.Format("01"), now.Format("02"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	name := fmt.Sprintf("rollout-%s-%s.jsonl", now.Format("2006-01-02T15-04-05"), r.thread)
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return
	}
	defer f.Close()
	meta, _ := json.Marshal(map[string]any{"timestamp": now.UTC().Format(time.RFC3339Nano), "type": "session_meta",
		"payload": map[string]any{"id": r.thread, "cwd": r.workdir, "originator": "codex_exec", "cli_version": codexVersion}})
	fmt.Fprintln(f, string(meta))
	for _, ev := range r.rollout {
		b, _ := json.Marshal(ev)
		fmt.Fprintln(f, string(b))
	}
}
