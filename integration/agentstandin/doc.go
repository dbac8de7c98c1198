// Package agentstandin holds TEST DOUBLES of three coding-agent command
// lines — Claude Code (claude), Codex CLI (codex) and Aider (aider) — as wo
// runs them in a fix round. They are not those tools: they call no model,
// never use the network, and only imitate what each tool's documentation,
// source and issue tracker say it does when run without a terminal.
//
// # Use
//
// Build cmd/agent-standin once, link or copy it as claude, codex and aider
// into a folder placed first on PATH. The base name of argv[0] picks the
// tool. Behaviour is scripted by agent-standin.json in the folder of the
// executable as invoked (argv[0]'s folder, else the PATH entry that supplied
// it; a symbolic link is not followed to its target's folder):
//
//	{"claude": {"outcome": "fix", "edits": [{"path": "calc.go", "find": "a - b", "replace": "a + b"}],
//	            "cost_usd": 0.0421, "turns": 3, "message": "Added the nil check."},
//	 "codex":  {"outcome": "rate_limit", "retry_at": "7:23 PM"},
//	 "aider":  {"outcome": "no_change", "message": "The code already handles that."}}
//
// Keys per tool: outcome (fix, no_change, auth, rate_limit, turn_limit,
// crash), edits (path relative to the working folder; find "" writes
// replace as the whole file; a path leaving the folder, also through a
// link, is refused), cost_usd, turns, message, input_tokens, output_tokens,
// retry_at (codex's usage-limit reset text), commit_message (aider). No file,
// or no entry for the tool, means "fix" with no edits: a run that changes
// nothing. Every run appends one JSON line to agent-standin.log in that
// folder (if writable): tool, argv, the names (never values) of the
// environment variables, cwd, whether stdin was read, outcome, exit.
//
// # claude
//
// Sources: CLI reference https://docs.anthropic.com/en/docs/claude-code/cli-reference
// and headless mode https://docs.claude.com/en/docs/claude-code/headless;
// the CHANGELOG of anthropics/claude-code (2.1.240); issues cited below.
//
//   - Without -p and without a terminal on stdin: Ink's "Error: Raw mode is
//     not supported on the current process.stdin…", exit 1
//     (anthropics/claude-code#1072, #5925, #35734).
//   - -p with no prompt argument and nothing on stdin: "Error: Input must be
//     provided either through stdin or as a prompt argument when using
//     --print", exit 1 (wendylabsinc/WendyOS#804). Piped stdin is read to EOF
//     and put before an argument prompt.
//   - --output-format stream-json without --verbose: "Error: When using
//     --print, --output-format=stream-json requires --verbose", exit 1
//     (RightNow-AI/openfang#305, nullclaw/nullclaw#125).
//   - Options parse as commander does: "error: unknown option '--x'", exit 1;
//     choices checked for --output-format, --input-format, --permission-mode
//     (default, acceptEdits, plan, auto, dontAsk, bypassPermissions). The
//     list options (--allowedTools, --disallowedTools, --tools, --add-dir,
//     --mcp-config) are variadic: `--allowedTools Edit "fix it"` takes the
//     prompt as a tool name, leaving no prompt.
//   - Credentials: ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN, or a non-empty
//     $CLAUDE_CONFIG_DIR/.credentials.json (default ~/.claude). --bare counts
//     only ANTHROPIC_API_KEY (CHANGELOG: "--bare … requires ANTHROPIC_API_KEY
//     or an apiKeyHelper via --settings (OAuth and keychain auth disabled)").
//     None: result "Not logged in · Please run /login", is_error true, exit 1
//     (wording per the CHANGELOG's "Not logged in" entries). Outcome auth (a
//     rejected key): "Invalid API key · Please run /login", exit 1
//     (anthropics/claude-code#1665, #6331).
//   - Edits are made only with --permission-mode acceptEdits or
//     bypassPermissions, --dangerously-skip-permissions, or --allowedTools
//     naming Edit/Write/MultiEdit. Otherwise (default, plan, dontAsk — which
//     denies Edit even when allow-listed, anthropics/claude-code#74567 — and
//     auto, not verified) nothing is edited, the result says "Claude requested
//     permissions to write to …, but you haven't granted it yet", lists
//     permission_denials, is_error false, exit 0 (anthropics/claude-code#54850,
//     #82747). Paths under .claude/ are refused as "a sensitive file" even
//     when edits are allowed (#67268, #39068).
//   - Output: text prints the result on stdout; json prints one object
//     {type:"result", subtype, is_error, duration_ms, duration_api_ms,
//     num_turns, result, stop_reason, session_id, total_cost_usd, usage{…},
//     modelUsage, permission_denials, uuid}; stream-json prints a system/init
//     line, assistant and user (tool_use/tool_result) lines, then the result.
//   - rate_limit: exit 0, subtype "success", is_error true, result "API
//     Error: Rate limit reached", terminal_reason "api_error",
//     api_error_status 429, stop_reason "stop_sequence", zero cost
//     (anthropics/claude-code#79500, open, reproduced up to 2.1.233).
//   - turn_limit (or more scripted turns than --max-turns): edits up to the
//     limit stand, then subtype "error_max_turns", is_error true, num_turns
//     max+1, terminal_reason "max_turns", errors ["Reached maximum number of
//     turns (N)"], no result field, exit 1 (Digital-Process-Tools/claude-remember#98,
//     openclaw/openclaw#94130). Text mode's stderr line is not verified.
//   - crash: a Node.js TypeError stack on stderr, nothing on stdout, exit 1.
//   - Leaves ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json when that is
//     set — from the CLI's known behaviour, not re-verified here) and a
//     transcript $CONFIG/projects/<cwd with / and . as ->/<session>.jsonl
//     (none with --no-session-persistence).
//
// # codex
//
// Sources: openai/codex docs/exec.md; codex-rs/exec/src/cli.rs and lib.rs
// and codex-rs/utils/cli/src/shared_options.rs (commit 02805335); issues
// cited below.
//
//   - codex without exec and without a terminal: "Error: stdin is not a
//     terminal", exit 1 (openai/codex#6382).
//   - clap parsing: "error: unexpected argument '--x' found … Usage: codex
//     exec [OPTIONS] [PROMPT]", exit 2; a bad --sandbox value lists the
//     possible values, exit 2; -c without "=": "Error parsing -c overrides: …",
//     exit 1. Flags: --json (alias --experimental-json), -o/--output-last-message,
//     -s/--sandbox, -m/--model, -C/--cd, -c, -p/--profile, --add-dir, -i,
//     --output-schema, --color, --skip-git-repo-check, --ephemeral,
//     --ignore-user-config, --ignore-rules, --full-auto,
//     --dangerously-bypass-approvals-and-sandbox/--yolo, --not-so-yolo, --oss.
//   - Prompt: argument; or "-" or none with a piped stdin, read to EOF
//     ("Reading prompt from stdin..."; empty: "No prompt provided via
//     stdin.", exit 1; none and a terminal: "No prompt provided. Either
//     specify one as an argument or pipe the prompt into stdin.", exit 1). An
//     argument prompt with a piped stdin still reads stdin to EOF ("Reading
//     additional input from stdin...") and appends it as a <stdin> block — an
//     open pipe hangs it (artwist-polyakov/polyakov-claude-skills#103).
//   - Outside a git repository without --skip-git-repo-check (or --yolo):
//     "Not inside a trusted directory and --skip-git-repo-check was not
//     specified.", exit 1, checked after the prompt is read.
//   - Sandbox: default read-only — each edit is an item.completed file_change
//     with status "failed", the agent message says writes are blocked, exit
//     0. workspace-write (also --full-auto, which prints "warning:
//     `--full-auto` is deprecated; use `--sandbox workspace-write`
//     instead.", and --not-so-yolo) and danger-full-access (--yolo) edit.
//   - Output: --json prints JSON Lines thread.started, turn.started,
//     item.completed (file_change, agent_message), turn.completed with usage
//     {input_tokens, cached_input_tokens, output_tokens,
//     reasoning_output_tokens}; failures print error events and turn.failed
//     {error:{message}}. Without --json the banner and progress go to stderr
//     and only the final message to stdout. -o writes the last message.
//   - Credentials: CODEX_API_KEY (exec only) or $CODEX_HOME/auth.json
//     (default ~/.codex). None: five "Reconnecting... n/5 (unexpected status
//     401 Unauthorized: Missing bearer or basic authentication in header, …)"
//     errors, then turn.failed, exit 1 (openai/codex#30514: no fail-fast;
//     the real one spends 10–20 s on it). auth: "unexpected status 401
//     Unauthorized: Incorrect API key provided…", exit 1.
//   - rate_limit: turn.failed "You've hit your usage limit. Upgrade to Pro
//     (…), visit … or try again at <retry_at>.", exit 1 (openai/codex#3124,
//     #3899). turn_limit: codex has no turn cap, so the nearest failure — a
//     full context window — as turn.failed, exit 1. crash: a Rust panic on
//     stderr, exit 101.
//   - Leaves $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl,
//     none with --ephemeral.
//
// # aider
//
// Sources: https://aider.chat/docs/scripting.html,
// https://aider.chat/docs/git.html; Aider-AI/aider at 5dc9490 (0.86.3.dev):
// aider/args.py, main.py, io.py, onboarding.py, repo.py, exceptions.py,
// coders/base_coder.py; issues cited below.
//
//   - argparse: every option of args.py, --no- forms of its boolean options,
//     unambiguous prefixes (so --yes means --yes-always); unknown: usage,
//     then "aider: error: unrecognized arguments: …", exit 2; a missing
//     value: "argument --message: expected one argument", exit 2.
//   - Without --message/--message-file: prompt_toolkit's "Warning: Input is
//     not a terminal (fd=0)." on stderr, stdin lines are chat messages, EOF
//     ends the session with exit 0 (coder.run returns on EOFError).
//     Confirmations read stdin too; EOF answers the default (Yes).
//   - Model: --model, else the first key found (OpenRouter, Anthropic →
//     sonnet, DeepSeek, OpenAI → gpt-4o, Gemini, Vertex). No model and no
//     key: "No LLM model was specified and no API keys were provided.", the
//     OpenRouter login offer, exit 1 (onboarding.py; the real one, told yes,
//     starts a browser login and waits up to 5 minutes — the stand-in
//     reports the failure at once). A model whose key is missing: "Missing
//     these environment variables" (unless --no-show-model-warnings), then
//     "litellm.AuthenticationError: …" and "The API provider is not able to
//     authenticate you. Check your API key.", exit 0. Keys come from the
//     environment, ~/.env, <git root>/.env, ./.env, --env-file,
//     --openai-api-key, --anthropic-api-key, --api-key, --set-env.
//   - rate_limit: "litellm.RateLimitError: …" and "Retrying in N seconds..."
//     with doubling delays past 60 s (not slept here), then exit 0
//     (Aider-AI/aider#3918, #5552; the fix, PR #5553, is not merged). auth:
//     the AuthenticationError above, exit 0. crash and turn_limit (aider has
//     none): a Python traceback on stderr, exit 1.
//   - fix: "Applied edit to <file>", a token/cost line, then its own commit of
//     the edited files only — real git, `git commit -m <msg> --no-verify --
//     <files>` with author and committer "<user.name> (aider)" — printing
//     "Commit <hash> <msg>" or "Unable to commit: <git's error>" and going
//     on; none with --no-auto-commits, --no-git or --dry-run. A repository
//     without user.name/user.email gets "Your Name"/"you@example.com" written
//     into its .git/config (setup_git).
//   - Files left: .aider.chat.history.md and .aider.input.history in the git
//     root (cwd without git) unless --chat-history-file/--input-history-file
//     move them; .aider.tags.cache.v4/ unless --map-tokens 0; ".aider*" (and
//     ".env" if one exists) appended to .gitignore, uncommitted, unless
//     --no-gitignore.
//
// # Differences from /work/shared/AGENTS.md (the documentation wins)
//
//   - claude without credentials says "Not logged in · Please run /login"
//     (exit 1); "Invalid API key" is a rejected key. --bare turns OAuth off,
//     so CLAUDE_CODE_OAUTH_TOKEN and a login under CLAUDE_CONFIG_DIR do not
//     work with --bare: only ANTHROPIC_API_KEY does.
//   - claude's API errors (429, 403) end exit 0 with subtype "success" and
//     is_error true; a subscription usage limit ("You've hit your limit ·
//     resets …") has been reported exiting 1 (slopus/happy#465). Turn limit
//     exits 1.
//   - claude's list options are variadic: a prompt after --allowedTools is
//     eaten. Permission modes also include dontAsk (denies edits even when
//     allow-listed) and auto; .claude/ paths are refused even under bypass.
//   - claude without -p and without a terminal fails on Ink's raw mode,
//     not with a message about -p.
//   - codex exec with a prompt argument still reads a piped stdin to EOF:
//     stdin must be /dev/null or closed, or it hangs. With no credentials it
//     retries 401s for 10–20 s before failing. --full-auto is deprecated
//     (warns) but still means workspace-write; --yolo also skips the git
//     check. codex has no turn limit.
//   - aider "exits 0 on a missing key" only when a model is chosen; with no
//     model and no key it offers an OpenRouter browser login (which, with
//     --yes-always, waits up to 5 minutes) and exits 1 — pass --model.
//     Without --message it does read stdin (as chat input), and a
//     confirmation at EOF answers Yes even without --yes-always.
//   - aider commits with --no-verify (hooks skipped) as "<name> (aider)",
//     may write a placeholder identity into .git/config, adds ".env" to
//     .gitignore when a .env exists, and leaves .gitignore modified but
//     uncommitted.
//
// Not imitated: interactive modes, resume/continue, MCP, hooks, claude's
// `auth`/`mcp` subcommands, codex `resume`/`review`/`login`, aider's
// dirty-file commits before editing, ~/.aider/ analytics files.
package agentstandin
