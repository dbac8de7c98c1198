// This file is part of a TEST DOUBLE: it imitates Aider's `aider` command
// line for wo's tests. It is not Aider and calls no model.

package agentstandin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

const aiderVersion = "0.86.2"

// Option names from aider/args.py (0.86): flags take no value, values take
// one, and each BooleanOptionalAction also has a --no- form.
var (
	aiderBools = strings.Fields(`--verify-ssl --auto-accept-architect --show-model-warnings --check-model-accepts-settings
		--cache-prompts --restore-chat-history --pretty --stream --git --gitignore --add-gitignore-files --auto-commits
		--dirty-commits --attribute-author --attribute-committer --attribute-commit-message-author
		--attribute-commit-message-committer --attribute-co-authored-by --git-commit-verify --dry-run --watch-files
		--auto-lint --auto-test --analytics --check-update --show-release-notes --gui --browser --copy-paste
		--suggest-shell-commands --fancy-input --multiline --notifications --detect-urls`)
	aiderFlags = strings.Fields(`--architect --dark-mode --light-mode --show-diffs --subtree-only --commit
		--skip-sanity-check-repo --lint --test --analytics-disable --just-check-update --install-main-branch --upgrade
		--update --version --apply-clipboard-edits --exit --show-repo-map --show-prompts --disable-playwright --vim
		--yes-always -v --verbose -h --help --opus --sonnet --haiku --4 -4 --4o --mini --4-turbo --35turbo --35-turbo
		-3 --3 --deepseek --o1-mini --o1-preview`)
	aiderValues = strings.Fields(`--model --openai-api-key --anthropic-api-key --openai-api-base --openai-api-type
		--openai-api-version --openai-api-deployment-id --openai-organization-id --set-env --api-key --list-models
		--models --model-settings-file --model-metadata-file --alias --reasoning-effort --thinking-tokens --timeout
		--edit-format --chat-mode --weak-model --editor-model --editor-edit-format --max-chat-history-tokens
		--cache-keepalive-pings --map-tokens --map-refresh --map-multiplier-no-files --input-history-file
		--chat-history-file --llm-history-file --user-input-color --tool-output-color --tool-error-color
		--tool-warning-color --assistant-output-color --completion-menu-color --completion-menu-bg-color
		--completion-menu-current-color --completion-menu-current-bg-color --code-theme --aiderignore --commit-prompt
		--lint-cmd --test-cmd --analytics-log --analytics-posthog-host --analytics-posthog-project-api-key --message
		--msg -m --message-file -f --apply --voice-format --voice-language --voice-input-device --file --read
		--chat-language --commit-language --load --encoding --line-endings -c --config --env-file
		--notifications-command --editor --shell-completions`)
	aiderAliases = map[string]string{"--msg": "--message", "-m": "--message", "-f": "--message-file",
		"--chat-mode": "--edit-format", "--models": "--list-models", "--update": "--upgrade", "-v": "--verbose", "-c": "--config", "-h": "--help"}
	aiderShortcutModels = map[string]string{"--opus": "claude-3-opus-20240229", "--sonnet": "anthropic/claude-3-7-sonnet-20250219",
		"--haiku": "claude-3-5-haiku-20241022", "--4": "gpt-4-0613", "-4": "gpt-4-0613", "--4o": "gpt-4o", "--mini": "gpt-4o-mini",
		"--4-turbo": "gpt-4-1106-preview", "--35turbo": "gpt-3.5-turbo", "--35-turbo": "gpt-3.5-turbo", "-3": "gpt-3.5-turbo",
		"--3": "gpt-3.5-turbo", "--deepseek": "deepseek/deepseek-chat", "--o1-mini": "o1-mini", "--o1-preview": "o1-preview"}
)

const aiderUsage = "usage: aider [-h] [--model MODEL] [--openai-api-key OPENAI_API_KEY]\n             [--anthropic-api-key ANTHROPIC_API_KEY] [--message COMMAND]\n             [--message-file MESSAGE_FILE] [--yes-always] [--no-auto-commits]\n             [--no-gitignore] [--chat-history-file CHAT_HISTORY_FILE] ...\n             [FILE ...]\n"

type aiderArgs struct {
	opts  map[string][]string // canonical long name -> values ("true"/"false" for booleans)
	files []string
}

func (a aiderArgs) get(n string) (string, bool) {
	v, ok := a.opts[n]
	if !ok || len(v) == 0 {
		return "", false
	}
	return v[len(v)-1], true
}

func (a aiderArgs) on(n string, def bool) bool {
	v, ok := a.get(n)
	if !ok {
		return def
	}
	return v == "true"
}

// parseAider parses as argparse does, prefix abbreviations included; an
// error is argparse's text (exit 2).
func parseAider(args []string) (aiderArgs, string) {
	kinds := aiderKinds()
	out := aiderArgs{opts: map[string][]string{}}
	var unknown []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			out.files = append(out.files, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			out.files = append(out.files, arg)
			continue
		}
		name, val, hasVal := arg, "", false
		if j := strings.IndexByte(arg, '='); j > 0 && strings.HasPrefix(arg, "--") {
			name, val, hasVal = arg[:j], arg[j+1:], true
		} else if !strings.HasPrefix(arg, "--") && len(arg) > 2 {
			if kinds[arg[:2]] == "value" {
				name, val, hasVal = arg[:2], arg[2:], true
			}
		}
		name, kind, perr := aiderOption(kinds, name)
		if perr != "" {
			return out, perr
		}
		if kind == "" {
			unknown = append(unknown, arg)
			continue
		}
		if kind == "value" && !hasVal {
			if i+1 >= len(args) || (strings.HasPrefix(args[i+1], "-") && args[i+1] != "-") {
				return out, fmt.Sprintf("%saider: error: argument %s: expected one argument\n", aiderUsage, name)
			}
			i++
			val = args[i]
		}
		out.set(kind, name, val)
	}
	if len(unknown) > 0 {
		return out, fmt.Sprintf("%saider: error: unrecognized arguments: %s\n", aiderUsage, strings.Join(unknown, " "))
	}
	return out, ""
}

// aiderKinds is each option aider knows, by name, and its kind: bool (and
// its --no- form, nobool), flag or value.
func aiderKinds() map[string]string {
	kinds := map[string]string{}
	for _, n := range aiderBools {
		kinds[n] = "bool"
		kinds["--no-"+strings.TrimPrefix(n, "--")] = "nobool"
	}
	for _, n := range aiderFlags {
		kinds[n] = "flag"
	}
	for _, n := range aiderValues {
		kinds[n] = "value"
	}
	return kinds
}

// aiderOption is the option name stands for, as argparse reads it (a
// long option by any unique prefix), and its kind; kind "" when aider
// knows none, an error text when the prefix is ambiguous.
func aiderOption(kinds map[string]string, name string) (string, string, string) {
	if kind, ok := kinds[name]; ok || !strings.HasPrefix(name, "--") {
		return name, kind, ""
	}
	var matches []string
	for k := range kinds {
		if strings.HasPrefix(k, name) {
			matches = append(matches, k)
		}
	}
	sort.Strings(matches)
	switch len(matches) {
	case 0:
		return name, "", ""
	case 1:
		return matches[0], kinds[matches[0]], ""
	}
	return name, "", fmt.Sprintf("%saider: error: ambiguous option: %s could match %s\n", aiderUsage, name, strings.Join(matches, ", "))
}

// set records option name, of kind, with val (for a value option).
func (a aiderArgs) set(kind, name, val string) {
	canon := name
	if c, ok := aiderAliases[name]; ok {
		canon = c
	}
	switch kind {
	case "bool":
		a.opts[canon] = append(a.opts[canon], "true")
	case "nobool":
		pos := "--" + strings.TrimPrefix(name, "--no-")
		a.opts[pos] = append(a.opts[pos], "false")
	case "flag":
		if m, ok := aiderShortcutModels[name]; ok {
			a.opts["--model"] = append(a.opts["--model"], m)
			return
		}
		a.opts[canon] = append(a.opts[canon], "true")
	case "value":
		a.opts[canon] = append(a.opts[canon], val)
	}
}

// aiderKeyFor names the environment variable a model needs.
func aiderKeyFor(model string) string {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "openrouter/"):
		return "OPENROUTER_API_KEY"
	case strings.HasPrefix(m, "anthropic/") || strings.Contains(m, "claude") || m == "sonnet" || m == "opus" || m == "haiku":
		return "ANTHROPIC_API_KEY"
	case strings.HasPrefix(m, "deepseek"):
		return "DEEPSEEK_API_KEY"
	case strings.HasPrefix(m, "gemini"):
		return "GEMINI_API_KEY"
	case strings.HasPrefix(m, "vertex_ai/"):
		return "VERTEXAI_PROJECT"
	default:
		return "OPENAI_API_KEY"
	}
}

// loadDotenv reads KEY=VALUE lines (aider loads ~/.env, <git root>/.env,
// ./.env and --env-file, later ones winning).
func loadDotenv(path string, into map[string]string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "export "))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			into[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
}

type aiderRun struct {
	p        *proc
	a        aiderArgs
	root     string // git root, or "" without git
	yes      bool
	chatPath string
	chat     strings.Builder
	env      map[string]string
}

func (r *aiderRun) out(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	fmt.Fprint(r.p.stdout, s)
	r.chat.WriteString(s)
}

// confirm imitates io.confirm_ask: --yes-always answers yes; otherwise
// stdin is read, and EOF counts as the default (yes).
func (r *aiderRun) confirm(q string) bool {
	fmt.Fprintf(r.p.stdout, "%s (Y)es/(N)o [Yes]: ", q)
	if r.yes {
		fmt.Fprintln(r.p.stdout, "y")
		return true
	}
	line := ""
	if rest := r.p.stdin.ReadAll(); rest != "" {
		line, _, _ = strings.Cut(rest, "\n")
		rem := strings.TrimPrefix(rest, line)
		rem = strings.TrimPrefix(rem, "\n")
		r.p.stdin.cache = &rem
	}
	fmt.Fprintln(r.p.stdout)
	line = strings.ToLower(strings.TrimSpace(line))
	return line == "" || strings.HasPrefix(line, "y")
}

func runAider(p *proc) int {
	a, perr := parseAider(p.args)
	if perr != "" {
		fmt.Fprint(p.stderr, perr)
		return 2
	}
	if a.on("--version", false) {
		fmt.Fprintf(p.stdout, "aider %s\n", aiderVersion)
		return 0
	}
	if a.on("--help", false) {
		fmt.Fprint(p.stdout, aiderUsage+"\naider is AI pair programming in your terminal (stand-in test double)\n")
		return 0
	}
	r := &aiderRun{p: p, a: a, yes: a.on("--yes-always", false), env: map[string]string{}}
	if a.on("--git", true) {
		r.root = gitRoot(p.cwd)
	}
	r.loadEnv()
	// The chat history is opened (and written) as aider's io starts.
	inputPath := r.historyPaths()
	r.chat.WriteString(fmt.Sprintf("\n# aider chat started at %s\n\n", time.Now().Format("2006-01-02 15:04:05")))
	defer r.flushChat()

	if r.root != "" {
		r.setupGitIdentity()
	}
	if r.root != "" && a.on("--gitignore", true) {
		r.checkGitignore()
	}
	if p.scriptE != nil {
		fmt.Fprintf(p.stderr, "agent-standin: %v\n", p.scriptE)
		return 70
	}
	model := r.model()
	if model == "" {
		r.onboarding()
		return 1
	}
	keyVar := aiderKeyFor(model)
	missingKey := r.env[keyVar] == ""
	if missingKey && a.on("--show-model-warnings", true) {
		r.out("Warning for %s: Missing these environment variables:\n- %s\n", model, keyVar)
		r.out("You can skip this check with --no-show-model-warnings\n\nhttps://aider.chat/docs/llms/warnings.html\n")
		r.confirm("Open documentation url for more info?")
	}
	r.banner(model)
	messages, code := r.messages(inputPath)
	if messages == nil {
		return code
	}
	for i, m := range messages {
		r.chat.WriteString(fmt.Sprintf("#### %s\n\n", m))
		if i == 0 {
			code = r.turn(model, keyVar, missingKey)
		}
	}
	return code
}

// loadEnv reads the keys as aider does: .env files (home, the repository,
// the folder), then the process environment, then the key flags.
func (r *aiderRun) loadEnv() {
	p, a := r.p, r.a
	loadDotenv(filepath.Join(homeDir(), ".env"), r.env)
	if r.root != "" {
		loadDotenv(filepath.Join(r.root, ".env"), r.env)
	}
	loadDotenv(filepath.Join(p.cwd, ".env"), r.env)
	if f, ok := a.get("--env-file"); ok {
		loadDotenv(f, r.env)
	}
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "VERTEXAI_PROJECT"} {
		if v := os.Getenv(k); v != "" {
			r.env[k] = v
		}
	}
	if v, ok := a.get("--openai-api-key"); ok {
		r.env["OPENAI_API_KEY"] = v
	}
	if v, ok := a.get("--anthropic-api-key"); ok {
		r.env["ANTHROPIC_API_KEY"] = v
	}
	for _, pk := range append(append([]string{}, a.opts["--api-key"]...), a.opts["--set-env"]...) {
		if k, v, ok := strings.Cut(pk, "="); ok {
			if !strings.HasSuffix(k, "_API_KEY") && !strings.Contains(k, "_") {
				k = strings.ToUpper(k) + "_API_KEY"
			}
			r.env[k] = v
		}
	}
}

// historyPaths sets where the chat history goes and returns where the
// input history goes: the repository (else the folder), or the flags'.
func (r *aiderRun) historyPaths() string {
	p, a := r.p, r.a
	base := r.root
	if base == "" {
		base = p.cwd
	}
	r.chatPath = filepath.Join(base, ".aider.chat.history.md")
	if v, ok := a.get("--chat-history-file"); ok {
		r.chatPath = absFrom(p.cwd, v)
	}
	inputPath := filepath.Join(base, ".aider.input.history")
	if v, ok := a.get("--input-history-file"); ok {
		inputPath = absFrom(p.cwd, v)
	}
	return inputPath
}

// model is --model, else the model of the first key found, as aider
// chooses; "" when there is none.
func (r *aiderRun) model() string {
	if model, _ := r.a.get("--model"); model != "" {
		return model
	}
	for _, mk := range [][2]string{{"OPENROUTER_API_KEY", "openrouter/anthropic/claude-sonnet-4"}, {"ANTHROPIC_API_KEY", "sonnet"},
		{"DEEPSEEK_API_KEY", "deepseek"}, {"OPENAI_API_KEY", "gpt-4o"}, {"GEMINI_API_KEY", "gemini/gemini-2.5-pro-exp-03-25"},
		{"VERTEXAI_PROJECT", "vertex_ai/gemini-2.5-pro-exp-03-25"}} {
		if r.env[mk[0]] != "" {
			r.out("Using %s model with API key from environment.\n", mk[1])
			return mk[1]
		}
	}
	return ""
}

// onboarding is aider/onboarding.py with no model: offer OpenRouter
// OAuth, then give up (the caller exits 1).
func (r *aiderRun) onboarding() {
	r.out("No LLM model was specified and no API keys were provided.\n")
	r.out("OpenRouter provides free and paid access to many LLMs.\n")
	if r.confirm("Login to OpenRouter or create a free account?") {
		r.out("\nPlease open this URL in your browser to connect Aider with OpenRouter:\n\nhttps://openrouter.ai/auth?callback_url=http://localhost:8484/callback/aider&code_challenge_method=S256\n")
		r.out("\nWaiting up to 5 minutes for you to finish in the browser...\nUse Control-C to interrupt.\n")
		r.out("OpenRouter authentication did not complete successfully.\n")
	}
	r.confirm("Open documentation URL for more info?")
	r.out("https://aider.chat/docs/troubleshooting/models-and-keys.html\n")
}

// banner is what aider says as it starts: its version and model, the
// repository and its map, the files in the chat.
func (r *aiderRun) banner(model string) {
	editFormat := orDefault(func() string { v, _ := r.a.get("--edit-format"); return v }(), "diff")
	r.out("Aider v%s\nMain model: %s with %s edit format\n", aiderVersion, model, editFormat)
	mapTokens, _ := r.a.get("--map-tokens")
	if r.root != "" {
		n := len(gitLines(r.root, "ls-files"))
		r.out("Git repo: .git with %d files\n", n)
		if mapTokens == "0" {
			r.out("Repo-map: disabled\n")
		} else {
			r.out("Repo-map: using %s tokens, auto refresh\n", orDefault(mapTokens, "4096"))
			_ = os.MkdirAll(filepath.Join(r.root, ".aider.tags.cache.v4"), 0o755)
			_ = os.WriteFile(filepath.Join(r.root, ".aider.tags.cache.v4", "cache.db"), nil, 0o644)
		}
	} else {
		r.out("Git repo: none\nRepo-map: disabled\n")
	}
	for _, f := range r.a.files {
		r.out("Added %s to the chat.\n", f)
	}
}

// messages are the messages to answer: --message, --message-file, or the
// lines of standard input in chat mode. None means the run ends with the
// exit code given.
func (r *aiderRun) messages(inputPath string) ([]string, int) {
	p, a := r.p, r.a
	if m, ok := a.get("--message"); ok {
		appendInputHistory(inputPath, m)
		return []string{m}, 0
	}
	if mf, ok := a.get("--message-file"); ok {
		b, err := os.ReadFile(absFrom(p.cwd, mf))
		if err != nil {
			fmt.Fprintf(p.stderr, "Message file not found: %s\n", mf)
			return nil, 1
		}
		return []string{string(b)}, 0
	}
	// Chat mode without a terminal: prompt_toolkit warns, lines are read as
	// messages, and EOF ends the session with exit 0.
	if !p.stdin.tty {
		fmt.Fprintln(p.stderr, "Warning: Input is not a terminal (fd=0).")
	}
	var messages []string
	for _, line := range strings.Split(p.stdin.ReadAll(), "\n") {
		if strings.TrimSpace(line) != "" {
			appendInputHistory(inputPath, line)
			messages = append(messages, line)
		}
	}
	if len(messages) == 0 {
		r.out("\n> ")
		fmt.Fprintln(p.stdout)
		return nil, 0
	}
	return messages, 0
}

// turn answers one message as the script says.
func (r *aiderRun) turn(model, keyVar string, missingKey bool) int {
	s, p := r.p.script, r.p
	provider := map[string]string{"ANTHROPIC_API_KEY": "AnthropicException", "OPENAI_API_KEY": "OpenAIException",
		"DEEPSEEK_API_KEY": "DeepseekException", "GEMINI_API_KEY": "GeminiException", "OPENROUTER_API_KEY": "OpenrouterException"}[keyVar]
	if provider == "" {
		provider = "OpenAIException"
	}
	if missingKey || s.Outcome == OutcomeAuth {
		// A non-retryable litellm error: printed, then a clean exit 0.
		r.out("litellm.AuthenticationError: %s - {\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}\n", provider)
		r.out("The API provider is not able to authenticate you. Check your API key.\n")
		return 0
	}
	switch s.Outcome {
	case OutcomeRateLimit:
		// Retried with doubling delays until past RETRY_TIMEOUT (60 s), then
		// given up on with exit 0. The stand-in does not sleep.
		msg := fmt.Sprintf("litellm.RateLimitError: %s - {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"This request would exceed your account's rate limit. Please try again later.\"}}", provider)
		for d := 0.25; d <= 60; d *= 2 {
			r.out("%s\nThe API provider has rate limited you. Try again later or check your quotas.\nRetrying in %.1f seconds...\n", msg, d)
		}
		r.out("%s\nThe API provider has rate limited you. Try again later or check your quotas.\n", msg)
		return 0
	case OutcomeCrash, OutcomeTurnLimit:
		fmt.Fprintf(p.stderr, "Traceback (most recent call last):\n  File \"/usr/local/bin/aider\", line 8, in <module>\n    sys.exit(main())\n  File \"/usr/local/lib/python3.12/site-packages/aider/main.py\", line 1108, in main\n    coder.run(with_message=args.message)\n  File \"/usr/local/lib/python3.12/site-packages/aider/coders/base_coder.py\", line 880, in run\n    self.run_one(with_message, preproc)\nRuntimeError: stand-in crash\n")
		return 1
	}
	var edits []Edit
	if s.Outcome == OutcomeFix {
		edits = s.Edits
	}
	msg := s.Message
	if msg == "" {
		msg = map[bool]string{true: "I made the requested change.", false: "No change is needed."}[len(edits) > 0]
	}
	r.out("%s\n\n", msg)
	dry := r.a.on("--dry-run", false)
	var changed []string
	for _, e := range edits {
		if dry {
			r.out("Did not apply edit to %s (--dry-run)\n", e.Path)
			continue
		}
		ap := applyEdits(p.cwd, []Edit{e})[0]
		if ap.Err != nil {
			r.out("The LLM did not conform to the edit format.\n%v\n", ap.Err)
			continue
		}
		r.out("Applied edit to %s\n", e.Path)
		changed = append(changed, ap.Abs)
	}
	in, out := orInt(s.InputTokens, 2100), orInt(s.OutputTokens, 150)
	cost := s.CostUSD
	if cost == 0 {
		cost = float64(in)*3e-6 + float64(out)*15e-6
	}
	r.out("Tokens: %.1fk sent, %d received. Cost: $%.4f message, $%.4f session.\n", float64(in)/1000, out, cost, cost)
	if len(changed) > 0 && r.root != "" && r.a.on("--auto-commits", true) && !dry {
		r.commit(changed, orDefault(s.CommitMessage, "fix: apply requested change"))
	}
	return 0
}

// commit is aider's own commit of its edits: real git, only the edited
// files, author and committer named "<user.name> (aider)", --no-verify.
func (r *aiderRun) commit(files []string, message string) {
	for _, f := range files {
		if out, err := gitCmd(r.root, nil, "add", f); err != nil {
			r.out("Unable to add %s: %s\n", f, strings.TrimSpace(out))
		}
	}
	name := strings.TrimSpace(strings.Join(gitLines(r.root, "config", "--get", "user.name"), ""))
	env := []string{}
	if name != "" {
		env = append(env, "GIT_AUTHOR_NAME="+name+" (aider)", "GIT_COMMITTER_NAME="+name+" (aider)")
	}
	args := []string{"commit", "-m", message}
	if !r.a.on("--git-commit-verify", false) {
		args = append(args, "--no-verify")
	}
	args = append(append(args, "--"), files...)
	if out, err := gitCmd(r.root, env, args...); err != nil {
		r.out("Unable to commit: %s\n", strings.TrimSpace(out))
		return
	}
	hash := strings.TrimSpace(strings.Join(gitLines(r.root, "rev-parse", "--short", "HEAD"), ""))
	r.out("Commit %s %s\n", hash, message)
}

// setupGitIdentity is aider's setup_git: a repository without user.name or
// user.email gets placeholders written into its own config.
func (r *aiderRun) setupGitIdentity() {
	if len(gitLines(r.root, "config", "--get", "user.name")) == 0 {
		_, _ = gitCmd(r.root, nil, "config", "user.name", "Your Name")
		r.out("Update git name with: git config user.name \"Your Name\"\n")
	}
	if len(gitLines(r.root, "config", "--get", "user.email")) == 0 {
		_, _ = gitCmd(r.root, nil, "config", "user.email", "you@example.com")
		r.out("Update git email with: git config user.email \"you@example.com\"\n")
	}
}

// checkGitignore appends .aider* (and .env when one exists) to the
// repository's .gitignore unless git already ignores them, asking first as
// aider does; the .gitignore change is left uncommitted.
func (r *aiderRun) checkGitignore() {
	var patterns []string
	if _, err := gitCmd(r.root, nil, "check-ignore", "-q", ".aider"); err != nil {
		patterns = append(patterns, ".aider*")
	}
	if _, err := os.Stat(filepath.Join(r.root, ".env")); err == nil {
		if _, err := gitCmd(r.root, nil, "check-ignore", "-q", ".env"); err != nil {
			patterns = append(patterns, ".env")
		}
	}
	if len(patterns) == 0 {
		return
	}
	list := strings.Join(patterns, ", ")
	r.out("You can skip this check with --no-gitignore\n")
	if !r.confirm("Add " + list + " to .gitignore (recommended)?") {
		return
	}
	path := filepath.Join(r.root, ".gitignore")
	content, _ := os.ReadFile(path)
	s := string(content)
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	if err := os.WriteFile(path, []byte(s+strings.Join(patterns, "\n")+"\n"), 0o644); err != nil {
		fmt.Fprintf(r.p.stderr, "Error when trying to write to %s: %v\n", path, err)
		return
	}
	r.out("Added %s to .gitignore\n", list)
}

func (r *aiderRun) flushChat() {
	if r.chatPath == "" {
		return
	}
	_ = os.MkdirAll(filepath.Dir(r.chatPath), 0o755)
	f, err := os.OpenFile(r.chatPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(r.chat.String())
}

func appendInputHistory(path, msg string) {
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "\n# %s\n", time.Now().Format("2006-01-02 15:04:05.000000"))
	for _, l := range strings.Split(msg, "\n") {
		fmt.Fprintf(f, "+%s\n", l)
	}
}

func absFrom(cwd, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(cwd, p)
}

func gitCmd(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func gitLines(dir string, args ...string) []string {
	out, err := gitCmd(dir, nil, args...)
	if err != nil {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
