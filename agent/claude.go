package agent

import (
	"encoding/json"
	"strconv"
	"strings"
)

// claude is Claude Code. Without a terminal it runs only with -p (the
// prompt on stdin); in -p mode it may not edit until a permission mode
// says so, and a run it could not edit in still ends 0, so wo passes
// acceptEdits: edits inside the working folder, no shell commands unless
// the user's own --allowedTools adds them. --output-format json gives one
// result object with is_error, subtype and total_cost_usd: a rate limit
// or a bad key can end 0 with is_error set, so the object is read, not
// the exit code. --bare (no repository hooks, MCP servers or CLAUDE.md
// discovery) is passed when ANTHROPIC_API_KEY logs it in: bare mode reads
// no OAuth token or login, so with those it runs without it (the sandbox
// and the fix gate still hold what a repository's hooks may do).
var claude = Profile{
	Name: "claude", Program: "claude",
	Summary:       "Claude Code (claude -p)",
	Credentials:   []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "AWS_REGION", "AWS_PROFILE", "ANTHROPIC_VERTEX_PROJECT_ID", "CLOUD_ML_REGION"},
	Settings:      map[string]string{"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1"},
	ConfigVar:     "CLAUDE_CONFIG_DIR",
	ConfigDefault: ".claude",
	HomeFiles:     []string{".claude.json", ".claude"},
	Ports:         []int{443},
	Hosts:         []string{"api.anthropic.com:443", "bedrock-runtime.${AWS_REGION}.amazonaws.com:443", "${CLOUD_ML_REGION}-aiplatform.googleapis.com:443", "oauth2.googleapis.com:443"},
	GatewayVars:   []string{"ANTHROPIC_BASE_URL", "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL"},
	call:          claudeCall,
	read:          readClaude,
}

func claudeCall(args []string, in CallInput) ([]string, PromptVia) {
	var add []string
	if !hasFlag(args, "-p", "--print") {
		add = append(add, "-p")
	}
	if !hasFlag(args, "--output-format") {
		add = append(add, "--output-format", "json")
	}
	if !hasFlag(args, "--permission-mode", "--dangerously-skip-permissions", "--allowedTools", "--allowed-tools") {
		add = append(add, "--permission-mode", "acceptEdits")
	}
	if !in.UseLogin && in.set("ANTHROPIC_API_KEY") && !hasFlag(args, "--bare") {
		add = append(add, "--bare")
	}
	if in.MaxCostUSD > 0 && !hasFlag(args, "--max-budget-usd") {
		add = append(add, "--max-budget-usd", strconv.FormatFloat(in.MaxCostUSD, 'f', 2, 64))
	}
	return append(add, args...), PromptStdin
}

// claudeResult is Claude Code's result object (--output-format json, and
// the last line of stream-json).
type claudeResult struct {
	Type         string  `json:"type"`
	Subtype      string  `json:"subtype"`
	IsError      bool    `json:"is_error"`
	Result       string  `json:"result"`
	TotalCostUSD float64 `json:"total_cost_usd"`
	NumTurns     int     `json:"num_turns"`
	Usage        struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

func readClaude(stdout, stderr string, exit int) Report {
	res, ok := lastJSON[claudeResult](stdout, func(r claudeResult) bool { return r.Type == "result" })
	if !ok {
		// Text output, or a failure before any result (a bad flag, no
		// input): the words say what happened.
		r := readGeneric(stdout, stderr, exit)
		if r.Failure == FailNone {
			if f := failureIn(stdout + "\n" + stderr); f != FailNone {
				return failed(f, stdout+"\n"+stderr)
			}
		}
		return r
	}
	r := Report{Message: Meaningful(res.Result), CostUSD: res.TotalCostUSD, Turns: res.NumTurns,
		Tokens: res.Usage.InputTokens + res.Usage.OutputTokens + res.Usage.CacheCreationInputTokens + res.Usage.CacheReadInputTokens}
	switch {
	case strings.HasPrefix(res.Subtype, "error_max_turns"), strings.HasPrefix(res.Subtype, "error_max_budget"):
		r.Failure = FailLimit
		if r.Message == "" {
			r.Message = "stopped at its " + strings.TrimPrefix(res.Subtype, "error_") + " limit after " + strconv.Itoa(res.NumTurns) + " turn(s)"
		}
	case res.IsError || strings.HasPrefix(res.Subtype, "error"):
		r.Failure = classify(res.Result + "\n" + stderr)
		if r.Failure == FailRateLimit {
			r.RetryAfter = retryAfter(res.Result)
		}
		if r.Message == "" {
			r.Message = Meaningful(stderr)
		}
	case exit != 0:
		r.Failure = classify(stderr)
	}
	return r
}

// lastJSON is the last line of out that decodes as a T that keep accepts:
// tools print JSON Lines, or one object, maybe after other lines.
func lastJSON[T any](out string, keep func(T) bool) (T, bool) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var v T
		if json.Unmarshal([]byte(l), &v) == nil && keep(v) {
			return v, true
		}
	}
	// One object over several lines.
	var v T
	if s := strings.TrimSpace(out); strings.HasPrefix(s, "{") && json.Unmarshal([]byte(s), &v) == nil && keep(v) {
		return v, true
	}
	var zero T
	return zero, false
}
