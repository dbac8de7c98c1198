// This file is part of a TEST DOUBLE: it imitates Claude Code's `claude`
// command line for wo's tests. It is not Claude Code and calls no model.

package agentstandin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const claudeVersion = "2.1.240 (stand-in)"

// commander-style option table: name -> kind. Kinds: "bool", "value",
// "optional" (value optional), "variadic" (takes every following
// non-option argument, as commander's <items...> does).
var claudeOptions = map[string]string{
	"-p": "bool", "--print": "bool", "--verbose": "bool", "--bare": "bool",
	"--dangerously-skip-permissions": "bool", "--allow-dangerously-skip-permissions": "bool",
	"-c": "bool", "--continue": "bool", "--strict-mcp-config": "bool",
	"--include-partial-messages": "bool", "--fork-session": "bool",
	"--no-session-persistence": "bool", "--replay-user-messages": "bool",
	"--disable-slash-commands": "bool", "--exclude-dynamic-system-prompt-sections": "bool",
	"--ide": "bool", "-h": "bool", "--help": "bool", "-v": "bool", "--version": "bool",
	"--output-format": "value", "--input-format": "value", "--max-turns": "value",
	"--model": "value", "--fallback-model": "value", "--permission-mode": "value",
	"--append-system-prompt": "value", "--system-prompt": "value",
	"--append-system-prompt-file": "value", "--system-prompt-file": "value",
	"--settings": "value", "--setting-sources": "value", "--max-budget-usd": "value",
	"--session-id": "value", "--json-schema": "value", "--effort": "value",
	"--permission-prompt-tool": "value", "--agents": "value", "--agent": "value",
	"-n": "value", "--name": "value",
	"-r": "optional", "--resume": "optional", "-d": "optional", "--debug": "optional",
	"--allowedTools": "variadic", "--allowed-tools": "variadic",
	"--disallowedTools": "variadic", "--disallowed-tools": "variadic",
	"--tools": "variadic", "--mcp-config": "variadic", "--add-dir": "variadic",
	"--plugin-dir": "variadic", "--betas": "variadic",
}

var claudeChoices = map[string][]string{
	"--output-format":   {"text", "json", "stream-json"},
	"--input-format":    {"text", "stream-json"},
	"--permission-mode": {"acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"},
}

type claudeArgs struct {
	opts   map[string][]string
	prompt []string
}

func (a claudeArgs) has(names ...string) bool {
	for _, n := range names {
		if _, ok := a.opts[n]; ok {
			return true
		}
	}
	return false
}

func (a claudeArgs) get(names ...string) string {
	for _, n := range names {
		if v, ok := a.opts[n]; ok && len(v) > 0 {
			return v[len(v)-1]
		}
	}
	return ""
}

func (a claudeArgs) all(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, a.opts[n]...)
	}
	return out
}

// parseClaude parses as commander does; the error text is commander's.
func parseClaude(args []string) (claudeArgs, error) {
	out := claudeArgs{opts: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			out.prompt = append(out.prompt, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			out.prompt = append(out.prompt, arg)
			continue
		}
		name, val, hasVal := arg, "", false
		if j := strings.IndexByte(arg, '='); j > 0 && strings.HasPrefix(arg, "--") {
			name, val, hasVal = arg[:j], arg[j+1:], true
		}
		kind, ok := claudeOptions[name]
		if !ok {
			return out, fmt.Errorf("error: unknown option '%s'", name)
		}
		switch kind {
		case "bool":
			out.opts[name] = append(out.opts[name], "true")
		case "value":
			if !hasVal {
				if i+1 >= len(args) || (strings.HasPrefix(args[i+1], "-") && args[i+1] != "-") {
					return out, fmt.Errorf("error: option '%s <value>' argument missing", name)
				}
				i++
				val = args[i]
			}
			if ch, ok := claudeChoices[name]; ok && !contains(ch, val) {
				return out, fmt.Errorf("error: option '%s <%s>' argument '%s' is invalid. Allowed choices are %s.", name, strings.TrimPrefix(name, "--"), val, strings.Join(ch, ", "))
			}
			out.opts[name] = append(out.opts[name], val)
		case "optional":
			if !hasVal && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				val = args[i]
			}
			out.opts[name] = append(out.opts[name], val)
		case "variadic":
			vals := []string{}
			if hasVal {
				vals = append(vals, val)
			}
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				vals = append(vals, args[i])
			}
			if len(vals) == 0 {
				return out, fmt.Errorf("error: option '%s <values...>' argument missing", name)
			}
			out.opts[name] = append(out.opts[name], vals...)
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// claudeConfigDir is CLAUDE_CONFIG_DIR, else ~/.claude.
func claudeConfigDir() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	return filepath.Join(homeDir(), ".claude")
}

// claudeCredentials names the credential found, or "" for none. Under
// --bare only ANTHROPIC_API_KEY counts (OAuth and keychain are off there).
func claudeCredentials(bare bool) string {
	if os.Getenv("ANTHROPIC_API_KEY") != "" {
		return "ANTHROPIC_API_KEY"
	}
	if bare {
		return ""
	}
	if os.Getenv("CLAUDE_CODE_OAUTH_TOKEN") != "" {
		return "CLAUDE_CODE_OAUTH_TOKEN"
	}
	if fi, err := os.Stat(filepath.Join(claudeConfigDir(), ".credentials.json")); err == nil && fi.Size() > 0 {
		return "/login managed key"
	}
	return ""
}

var editToolRE = regexp.MustCompile(`^(Edit|Write|MultiEdit|NotebookEdit)(\(.*\))?$`)

// claudeMayEdit says whether a headless run may edit files without a prompt.
func claudeMayEdit(a claudeArgs) bool {
	if a.has("--dangerously-skip-permissions") {
		return true
	}
	mode := a.get("--permission-mode")
	switch mode {
	case "acceptEdits", "bypassPermissions":
		return true
	case "dontAsk", "plan":
		return false // dontAsk denies Write/Edit even when allow-listed (anthropics/claude-code#74567)
	}
	for _, list := range a.all("--allowedTools", "--allowed-tools") {
		for _, t := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
			if editToolRE.MatchString(strings.TrimSpace(t)) {
				return true
			}
		}
	}
	return false
}

func runClaude(p *proc) int {
	a, err := parseClaude(p.args)
	if err != nil {
		fmt.Fprintln(p.stderr, err)
		return 1
	}
	if a.has("-v", "--version") {
		fmt.Fprintln(p.stdout, claudeVersion)
		return 0
	}
	if a.has("-h", "--help") {
		fmt.Fprintln(p.stdout, "Usage: claude [options] [command] [prompt]\n\nClaude Code (stand-in test double) - starts an interactive session by default, use -p/--print for non-interactive output")
		return 0
	}
	writeClaudeJSON()
	if !a.has("-p", "--print") {
		if !p.stdin.tty {
			// Interactive mode renders with Ink, which needs a terminal on stdin.
			fmt.Fprintln(p.stderr, "Error: Raw mode is not supported on the current process.stdin, which Ink uses as input stream by default.\nRead about how to prevent this error on https://github.com/vadimdemedes/ink/#israwmodesupported\n    at handleSetRawMode (file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:720:2407)")
			return 1
		}
		fmt.Fprintln(p.stderr, "agent-standin: the claude stand-in has no interactive mode; use -p")
		return 1
	}
	format := orDefault(a.get("--output-format"), "text")
	if format == "stream-json" && !a.has("--verbose") {
		fmt.Fprintln(p.stderr, "Error: When using --print, --output-format=stream-json requires --verbose")
		return 1
	}
	prompt, maxTurns, ok := claudeInput(p, a)
	if !ok {
		return 1
	}
	if p.scriptE != nil {
		fmt.Fprintf(p.stderr, "agent-standin: %v\n", p.scriptE)
		return 70
	}

	r := claudeRun{p: p, a: a, format: format, session: orDefault(a.get("--session-id"), newUUID()),
		model: orDefault(a.get("--model"), "claude-sonnet-4-6"), start: time.Now()}
	cred := claudeCredentials(a.has("--bare"))
	r.apiKeySource = cred
	r.init()
	defer r.writeSession(prompt)
	if cred == "" {
		return r.finish(claudeResult{Subtype: "success", IsError: true, Result: "Not logged in · Please run /login", Exit: 1, Synthetic: true})
	}
	switch p.script.Outcome {
	case OutcomeAuth:
		return r.finish(claudeResult{Subtype: "success", IsError: true, Result: "Invalid API key · Please run /login", Exit: 1, Synthetic: true, APIStatus: 401, Terminal: "api_error"})
	case OutcomeRateLimit:
		// anthropics/claude-code#79500: subtype "success", is_error true, exit 0,
		// the error text only in result (stdout in text mode).
		return r.finish(claudeResult{Subtype: "success", IsError: true, Result: "API Error: Rate limit reached", Exit: 0, Synthetic: true, APIStatus: 429, Terminal: "api_error"})
	case OutcomeCrash:
		fmt.Fprintf(p.stderr, "file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:4821\n    throw new TypeError(\"Cannot read properties of undefined (reading 'content')\");\n\nTypeError: Cannot read properties of undefined (reading 'content')\n    at Yx5 (file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:4821:1337)\n\nNode.js v22.12.0\n")
		return 1
	}
	return r.work(maxTurns)
}

// claudeInput is the prompt (stdin, then the arguments) and --max-turns;
// false when either is missing or wrong (claude has said so and exits 1).
func claudeInput(p *proc, a claudeArgs) (string, int, bool) {
	prompt := strings.Join(a.prompt, " ")
	if !p.stdin.tty {
		if in := p.stdin.ReadAll(); strings.TrimSpace(in) != "" {
			if prompt == "" {
				prompt = in
			} else {
				prompt = in + "\n" + prompt
			}
		}
	}
	if strings.TrimSpace(prompt) == "" {
		fmt.Fprintln(p.stderr, "Error: Input must be provided either through stdin or as a prompt argument when using --print")
		return "", 0, false
	}
	maxTurns := 0
	if v := a.get("--max-turns"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			fmt.Fprintf(p.stderr, "Error: Invalid max turns: %s\n", v)
			return "", 0, false
		}
		maxTurns = n
	}
	return prompt, maxTurns, true
}

// work makes the script's edits, up to the turn limit, and ends the run
// with the script's message (or one that says what happened).
func (r *claudeRun) work(maxTurns int) int {
	s := r.p.script
	turns := orInt(s.Turns, 1+len(s.Edits))
	var edits []Edit
	if s.Outcome == OutcomeFix || s.Outcome == OutcomeTurnLimit {
		edits = s.Edits
	}
	limited := s.Outcome == OutcomeTurnLimit || (maxTurns > 0 && turns > maxTurns)
	if limited {
		if maxTurns == 0 {
			maxTurns = orInt(s.Turns, 10)
		}
		// Edits up to the limit stand: the turn cap stops a run part-way.
		if len(edits) > maxTurns {
			edits = edits[:maxTurns]
		}
	}
	r.doEdits(edits)
	if limited {
		return r.finish(claudeResult{Subtype: "error_max_turns", IsError: true, Exit: 1, Turns: maxTurns + 1, Terminal: "max_turns",
			Errors: []string{fmt.Sprintf("Reached maximum number of turns (%d)", maxTurns)}})
	}
	msg := s.Message
	if len(r.denied) > 0 {
		var paths, reasons []string
		for _, d := range r.denied {
			paths = append(paths, d.Path)
			reasons = append(reasons, d.Err.Error())
		}
		msg = fmt.Sprintf("I need permission to edit %s. %s", strings.Join(paths, ", "), strings.Join(reasons, " "))
	} else if msg == "" {
		if len(r.done) > 0 {
			msg = "Made the requested change."
		} else {
			msg = "No change was needed."
		}
	}
	return r.finish(claudeResult{Subtype: "success", Result: msg, Exit: 0, Turns: turns})
}

type claudeResult struct {
	Subtype   string
	IsError   bool
	Result    string
	Exit      int
	Turns     int
	Synthetic bool
	APIStatus int
	Terminal  string
	Errors    []string
}

type claudeRun struct {
	p            *proc
	a            claudeArgs
	format       string
	session      string
	model        string
	start        time.Time
	apiKeySource string
	done         []applied
	denied       []applied
	failed       []applied
	transcript   []map[string]any
}

func (r *claudeRun) emit(v map[string]any) {
	r.transcript = append(r.transcript, v)
	if r.format == "stream-json" {
		b, _ := json.Marshal(v)
		fmt.Fprintln(r.p.stdout, string(b))
	}
}

func (r *claudeRun) init() {
	mode := orDefault(r.a.get("--permission-mode"), "default")
	if r.a.has("--dangerously-skip-permissions") {
		mode = "bypassPermissions"
	}
	src := r.apiKeySource
	if src == "" || src == "CLAUDE_CODE_OAUTH_TOKEN" {
		src = "none"
	}
	r.emit(map[string]any{"type": "system", "subtype": "init", "cwd": r.p.cwd, "session_id": r.session,
		"tools":       []string{"Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "NotebookEdit", "WebFetch", "TodoWrite", "WebSearch"},
		"mcp_servers": []any{}, "model": r.model, "permissionMode": mode, "apiKeySource": src,
		"claude_code_version": strings.Fields(claudeVersion)[0], "uuid": newUUID()})
}

// doEdits makes the scripted edits the permission settings allow; paths
// under .claude/ are refused as sensitive files even then.
func (r *claudeRun) doEdits(edits []Edit) {
	may := claudeMayEdit(r.a)
	for _, e := range edits {
		toolID := "toolu_" + strings.ReplaceAll(newUUID(), "-", "")[:24]
		input := map[string]any{"file_path": filepath.Join(r.p.cwd, e.Path), "old_string": e.Find, "new_string": e.Replace}
		tool := "Edit"
		if e.Find == "" {
			tool, input = "Write", map[string]any{"file_path": filepath.Join(r.p.cwd, e.Path), "content": e.Replace}
		}
		r.emit(map[string]any{"type": "assistant", "session_id": r.session, "uuid": newUUID(), "parent_tool_use_id": nil,
			"message": map[string]any{"role": "assistant", "model": r.model, "type": "message",
				"content": []any{map[string]any{"type": "tool_use", "id": toolID, "name": tool, "input": input}}}})
		var res string
		isErr := false
		sensitive := strings.HasPrefix(filepath.ToSlash(filepath.Clean(e.Path)), ".claude/")
		switch {
		case sensitive:
			res, isErr = fmt.Sprintf("Claude requested permissions to edit %s which is a sensitive file.", filepath.Join(r.p.cwd, e.Path)), true
			r.denied = append(r.denied, applied{Path: e.Path, Err: fmt.Errorf("%s", res)})
		case !may:
			res, isErr = fmt.Sprintf("Claude requested permissions to write to %s, but you haven't granted it yet.", filepath.Join(r.p.cwd, e.Path)), true
			r.denied = append(r.denied, applied{Path: e.Path, Err: fmt.Errorf("%s", res)})
		default:
			ap := applyEdits(r.p.cwd, []Edit{e})[0]
			if ap.Err != nil {
				res, isErr = ap.Err.Error(), true
				r.failed = append(r.failed, ap)
			} else {
				res = fmt.Sprintf("The file %s has been updated successfully.", ap.Abs)
				r.done = append(r.done, ap)
			}
		}
		r.emit(map[string]any{"type": "user", "session_id": r.session, "uuid": newUUID(), "parent_tool_use_id": nil,
			"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": toolID, "content": res, "is_error": isErr}}}})
	}
}

func (r *claudeRun) finish(res claudeResult) int {
	s := r.p.script
	in, out := orInt(s.InputTokens, 1200), orInt(s.OutputTokens, 180)
	cost := s.CostUSD
	if res.Synthetic {
		in, out, cost = 0, 0, 0
	} else if cost == 0 {
		cost = float64(in)*3e-6 + float64(out)*15e-6
	}
	turns := res.Turns
	if turns == 0 {
		turns = 1
	}
	if res.Result != "" {
		r.emit(r.assistantMessage(res))
	}
	denials := []any{}
	for _, d := range r.denied {
		denials = append(denials, map[string]any{"tool_name": "Edit", "tool_use_id": "toolu_" + strings.ReplaceAll(newUUID(), "-", "")[:24],
			"tool_input": map[string]any{"file_path": filepath.Join(r.p.cwd, d.Path)}})
	}
	stop := "end_turn"
	if res.Synthetic {
		stop = "stop_sequence"
	}
	apiMS := int64(0)
	if !res.Synthetic {
		apiMS = int64(900 * turns)
	}
	obj := map[string]any{
		"type": "result", "subtype": res.Subtype, "is_error": res.IsError,
		"duration_ms": time.Since(r.start).Milliseconds() + apiMS, "duration_api_ms": apiMS,
		"num_turns": turns, "session_id": r.session, "total_cost_usd": cost, "stop_reason": stop,
		"usage": map[string]any{"input_tokens": in, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
			"output_tokens": out, "server_tool_use": map[string]any{"web_search_requests": 0}, "service_tier": "standard"},
		"modelUsage":         map[string]any{r.model: map[string]any{"inputTokens": in, "outputTokens": out, "costUSD": cost}},
		"permission_denials": denials, "uuid": newUUID(),
	}
	if res.Subtype == "success" {
		obj["result"] = res.Result
	}
	if res.Terminal != "" {
		obj["terminal_reason"] = res.Terminal
	}
	if res.APIStatus != 0 {
		obj["api_error_status"] = res.APIStatus
	}
	if len(res.Errors) > 0 {
		obj["errors"] = res.Errors
	}
	r.transcript = append(r.transcript, obj)
	switch r.format {
	case "json", "stream-json":
		b, _ := json.Marshal(obj)
		fmt.Fprintln(r.p.stdout, string(b))
	default:
		if res.Subtype == "error_max_turns" {
			fmt.Fprintf(r.p.stderr, "Error: Reached max turns (%d)\n", turns-1)
		} else {
			fmt.Fprintln(r.p.stdout, res.Result)
		}
	}
	return res.Exit
}

// assistantMessage is the assistant's message with the result's text,
// marked synthetic (and with its error) when claude made it, not a model.
func (r *claudeRun) assistantMessage(res claudeResult) map[string]any {
	msg := map[string]any{"type": "assistant", "session_id": r.session, "uuid": newUUID(), "parent_tool_use_id": nil,
		"message": map[string]any{"role": "assistant", "model": r.model, "type": "message",
			"content": []any{map[string]any{"type": "text", "text": res.Result}}}}
	if res.Synthetic {
		msg["message"].(map[string]any)["model"] = "<synthetic>"
		msg["is_api_error_message"] = true
		if res.APIStatus != 0 {
			msg["error"] = map[int]string{401: "authentication_failed", 429: "rate_limit"}[res.APIStatus]
		}
	}
	return msg
}

// writeClaudeJSON leaves the global state file real claude keeps:
// $CLAUDE_CONFIG_DIR/.claude.json when that is set, else ~/.claude.json.
func writeClaudeJSON() {
	path := filepath.Join(homeDir(), ".claude.json")
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		path = filepath.Join(d, ".claude.json")
	}
	var st map[string]any
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &st)
	}
	if st == nil {
		st = map[string]any{"firstStartTime": time.Now().UTC().Format(time.RFC3339), "userID": strings.ReplaceAll(newUUID(), "-", "")}
	}
	n, _ := st["numStartups"].(float64)
	st["numStartups"] = n + 1
	b, _ := json.MarshalIndent(st, "", "  ")
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	_ = os.WriteFile(path, b, 0o600)
}

// writeSession leaves the transcript under the config folder's projects/
// (the working folder's path with / and . made -), unless told not to.
func (r *claudeRun) writeSession(prompt string) {
	if r.a.has("--no-session-persistence") {
		return
	}
	proj := strings.NewReplacer("/", "-", ".", "-").Replace(r.p.cwd)
	dir := filepath.Join(claudeConfigDir(), "projects", proj)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, r.session+".jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	first, _ := json.Marshal(map[string]any{"type": "user", "sessionId": r.session, "cwd": r.p.cwd, "message": map[string]any{"role": "user", "content": prompt}})
	fmt.Fprintln(f, string(first))
	for _, m := range r.transcript {
		b, _ := json.Marshal(m)
		fmt.Fprintln(f, string(b))
	}
}
