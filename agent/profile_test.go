package agent

import (
	"slices"
	"strings"
	"testing"
)

func call(t *testing.T, line string, in CallInput) Call {
	t.Helper()
	c, err := Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	if in.PromptFile == "" {
		in.PromptFile = "/box/prompt.md"
	}
	if in.StateDir == "" {
		in.StateDir = "/box/state"
	}
	if in.Prompt == "" {
		in.Prompt = "fix the nil check"
	}
	return c.Call(in)
}

func TestANamedAgentRunsWithoutATerminalWithEditsAllowed(t *testing.T) {
	key := func(name string) bool { return name == "ANTHROPIC_API_KEY" }
	for _, tc := range []struct {
		line  string
		in    CallInput
		argv  string
		stdin bool
	}{
		{"claude", CallInput{Set: key}, "claude -p --output-format json --permission-mode acceptEdits --bare", true},
		// A login (OAuth) is never read in bare mode: no --bare without the key.
		{"claude", CallInput{}, "claude -p --output-format json --permission-mode acceptEdits", true},
		{"claude", CallInput{Set: key, UseLogin: true}, "claude -p --output-format json --permission-mode acceptEdits", true},
		{"claude", CallInput{Set: key, MaxCostUSD: 1.5}, "claude -p --output-format json --permission-mode acceptEdits --bare --max-budget-usd 1.50", true},
		// The user's own flags are kept, and wo adds none they already chose.
		{"claude -p --model opus --output-format stream-json --verbose --dangerously-skip-permissions", CallInput{},
			"claude -p --model opus --output-format stream-json --verbose --dangerously-skip-permissions", true},
		{"/opt/bin/claude --max-turns 4", CallInput{Set: key}, "/opt/bin/claude -p --output-format json --permission-mode acceptEdits --bare --max-turns 4", true},
		{"codex", CallInput{}, "codex exec --json --sandbox workspace-write --skip-git-repo-check -", true},
		{"codex exec -m gpt-5 --full-auto", CallInput{}, "codex exec --json --skip-git-repo-check -m gpt-5 --full-auto -", true},
		{"codex e --json -", CallInput{}, "codex e --sandbox workspace-write --skip-git-repo-check --json -", true},
		{"aider", CallInput{}, "aider --message-file /box/prompt.md --yes-always --no-auto-commits --no-dirty-commits --no-gitignore --no-check-update --no-show-model-warnings --no-pretty --no-stream --analytics-disable --chat-history-file /box/state/aider.chat.history.md --input-history-file /box/state/aider.input.history", false},
		{"aider --model sonnet --auto-commits --yes-always", CallInput{}, "aider --message-file /box/prompt.md --no-dirty-commits --no-gitignore --no-check-update --no-show-model-warnings --no-pretty --no-stream --analytics-disable --chat-history-file /box/state/aider.chat.history.md --input-history-file /box/state/aider.input.history --model sonnet --auto-commits --yes-always", false},
		{"gemini", CallInput{}, "gemini --output-format json --approval-mode auto_edit", true},
		{"gemini --yolo -o text", CallInput{}, "gemini --yolo -o text", true},
		{"copilot", CallInput{}, "copilot --no-ask-user --allow-tool write -p fix the nil check", false},
		{"./fix.sh --fast", CallInput{}, "./fix.sh --fast", true},
	} {
		c := call(t, tc.line, tc.in)
		if got := strings.Join(c.Argv, " "); got != tc.argv {
			t.Errorf("%s:\n got %s\nwant %s", tc.line, got, tc.argv)
		}
		if (c.Stdin != "") != tc.stdin {
			t.Errorf("%s: prompt on stdin %v, want %v", tc.line, c.Stdin != "", tc.stdin)
		}
	}
}

func TestALongPromptArgumentPointsAtTheFile(t *testing.T) {
	c := call(t, "copilot", CallInput{Prompt: strings.Repeat("x", maxPromptArg+1)})
	if last := c.Argv[len(c.Argv)-1]; !strings.Contains(last, "/box/prompt.md") || len(last) > 200 {
		t.Errorf("the prompt argument is %d bytes: %.80s", len(last), last)
	}
	c = call(t, "copilot", CallInput{Prompt: strings.Repeat("x", maxPromptArg)})
	if last := c.Argv[len(c.Argv)-1]; len(last) != maxPromptArg {
		t.Errorf("a prompt at the bound is passed whole: %d bytes", len(last))
	}
}

func TestParse(t *testing.T) {
	for line, want := range map[string]string{"claude": "claude", "claude -p --model X": "claude", "/usr/local/bin/codex exec": "codex",
		"aider.exe": "aider", "my-agent": "command", "'gemini' --yolo": "gemini", "copilot": "copilot"} {
		c, err := Parse(line)
		if err != nil || c.Profile.Name != want {
			t.Errorf("Parse(%q) = %v, %v; want profile %s", line, c.Profile.Name, err, want)
		}
		if c.Known() != (want != "command") {
			t.Errorf("Parse(%q).Known() = %v", line, c.Known())
		}
	}
	if _, err := Parse("   "); err == nil || !strings.Contains(err.Error(), "claude, codex, aider, gemini, copilot") {
		t.Errorf("an empty command: %v", err)
	}
	if _, err := Parse(`claude "unclosed`); err == nil || !strings.Contains(err.Error(), "cannot be split") {
		t.Errorf("an unclosed quote: %v", err)
	}
	if got := Names(); !slices.Equal(got, []string{"claude", "codex", "aider", "gemini", "copilot"}) {
		t.Errorf("Names() = %v", got)
	}
	if ByName("codex") != &codex || ByName("nope") != nil || len(Profiles()) != 5 {
		t.Error("ByName or Profiles")
	}
}

func TestNoProfilePassesWosOwnCredentials(t *testing.T) {
	for _, p := range profiles {
		for _, name := range p.Credentials {
			switch name {
			case "GITHUB_TOKEN", "GH_TOKEN", "ARANGO_PASSWORD", "ARANGO_URL", "WO_STORE":
				t.Errorf("%s passes %s", p.Name, name)
			}
		}
		if len(p.Ports) == 0 || p.Summary == "" || p.Program == "" {
			t.Errorf("%s: no ports, summary or program", p.Name)
		}
	}
}
