package commands

import (
	"strings"
	"testing"
)

func TestRunAgentEnvFlag(t *testing.T) {
	t.Parallel()
	o, msg := parseOptions(t, runCommand, "task_a", "--agent-env", "ANTHROPIC_API_KEY", "--agent-env", "HOME")
	if o == nil || strings.Join(o.Engine.AgentEnv, ",") != "ANTHROPIC_API_KEY,HOME" {
		t.Fatalf("options %+v (%s)", o, msg)
	}
	if f := (&Factory{Getenv: func(string) string { return "" }}).engine(nil, o.Engine); strings.Join(f.AgentEnv, ",") != "ANTHROPIC_API_KEY,HOME" {
		t.Errorf("the engine gets %v", f.AgentEnv)
	}
	o, msg = parseOptionsEnv(t, map[string]string{"WO_AGENT_ENV": "OPENAI_API_KEY,CODEX_HOME"}, runCommand, "task_a")
	if o == nil || strings.Join(o.Engine.AgentEnv, ",") != "OPENAI_API_KEY,CODEX_HOME" {
		t.Errorf("from WO_AGENT_ENV: %+v (%s)", o, msg)
	}
	o, _ = parseOptions(t, runCommand, "task_a")
	if o.Engine.AgentEnv != nil {
		t.Errorf("by default: %v", o.Engine.AgentEnv)
	}
	for bad, why := range map[string]string{
		"GITHUB_TOKEN": "the agent never gets the GitHub token wo pushes with",
		"GH_TOKEN":     "the agent never gets the GitHub token wo pushes with",
		"WO_WORKTREE":  "wo sets WO_WORKTREE for the agent itself",
		"A=B":          "name one environment variable",
	} {
		if o, msg := parseOptions(t, runCommand, "task_a", "--agent-env", bad); o != nil || !strings.Contains(msg, why) {
			t.Errorf("--agent-env %s: options %v, message %q", bad, o, msg)
		}
	}
}
