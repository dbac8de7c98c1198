package agent

import (
	"encoding/json"
	"slices"
	"strings"
)

// codex is OpenAI's Codex CLI. Without a terminal only `codex exec` runs
// (the prompt on stdin with "-"); its default sandbox is read-only, where
// every write fails and the run still ends 0, so wo passes workspace-write
// (the working folder only, no network for the commands it runs). --json
// prints JSON Lines events: turn.failed and error carry the failure,
// turn.completed the tokens used; it reports no cost.
var codex = Profile{
	Name: "codex", Program: "codex",
	Summary:       "OpenAI Codex CLI (codex exec)",
	Credentials:   []string{"CODEX_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"},
	ConfigVar:     "CODEX_HOME",
	ConfigDefault: ".codex",
	HomeFiles:     []string{".codex"},
	Ports:         []int{443},
	Hosts:         []string{"api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443"},
	GatewayVars:   []string{"OPENAI_BASE_URL"},
	call:          codexCall,
	read:          readCodex,
}

func codexCall(args []string, _ CallInput) ([]string, PromptVia) {
	if len(args) == 0 || (args[0] != "exec" && args[0] != "e") {
		args = append([]string{"exec"}, args...)
	}
	var add []string
	if !hasFlag(args, "--json", "--experimental-json") {
		add = append(add, "--json")
	}
	if !hasFlag(args, "-s", "--sandbox", "--full-auto", "--dangerously-bypass-approvals-and-sandbox") {
		add = append(add, "--sandbox", "workspace-write")
	}
	if !hasFlag(args, "--skip-git-repo-check") {
		add = append(add, "--skip-git-repo-check")
	}
	out := append([]string{args[0]}, add...)
	out = append(out, args[1:]...)
	if !slices.Contains(args[1:], "-") {
		out = append(out, "-")
	}
	return out, PromptStdin
}

// codexEvent is one line of codex exec --json.
type codexEvent struct {
	Type  string `json:"type"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"` // an "error" event's text
	Item    *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"item"`
	Usage *struct {
		InputTokens       int64 `json:"input_tokens"`
		CachedInputTokens int64 `json:"cached_input_tokens"`
		OutputTokens      int64 `json:"output_tokens"`
	} `json:"usage"`
}

func readCodex(stdout, stderr string, exit int) Report {
	var r Report
	var errs []string
	events := 0
	for _, l := range strings.Split(stdout, "\n") {
		var e codexEvent
		if l = strings.TrimSpace(l); !strings.HasPrefix(l, "{") || json.Unmarshal([]byte(l), &e) != nil {
			continue
		}
		events++
		switch e.Type {
		case "turn.completed":
			r.Turns++
			if e.Usage != nil {
				r.Tokens += e.Usage.InputTokens + e.Usage.OutputTokens
			}
		case "turn.failed":
			if e.Error != nil {
				errs = append(errs, e.Error.Message)
			}
		case "error":
			errs = append(errs, e.Message)
		case "item.completed":
			if e.Item != nil && e.Item.Type == "agent_message" && e.Item.Text != "" {
				r.Message = Meaningful(e.Item.Text)
			}
		}
	}
	switch {
	case len(errs) > 0:
		text := strings.Join(errs, "\n")
		f := classify(text + "\n" + stderr)
		rep := failed(f, text)
		rep.Tokens, rep.Turns = r.Tokens, r.Turns
		return rep
	case events == 0 || exit != 0:
		g := readGeneric(stdout, stderr, exit)
		if g.Failure == FailNone && events == 0 {
			if f := failureIn(stderr); f != FailNone {
				return failed(f, stderr)
			}
		}
		g.Tokens, g.Turns = r.Tokens, r.Turns
		return g
	}
	return r
}
