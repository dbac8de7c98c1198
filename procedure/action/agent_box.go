package action

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/kballard/go-shellquote"

	"github.com/wo-runner/wo/agent"
)

// agentBox is the folder of one agent run: its HOME, its TMPDIR, the
// prompt, and the files its tool keeps (histories), outside the worktree
// and removed after the run. In the sandbox it is, with the worktree, what
// the agent may write.
type agentBox struct {
	root, home, tmp, state, prompt string
}

func newAgentBox(key string) (agentBox, error) {
	root, err := os.MkdirTemp("", "wo-agent-")
	if err != nil {
		return agentBox{}, fmt.Errorf("making the agent's folder for task %s: %w", key, err)
	}
	b := agentBox{root: root, home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp"), state: filepath.Join(root, "state"),
		prompt: filepath.Join(root, "prompt.md")}
	for _, d := range []string{b.home, b.tmp, b.state} {
		if err := os.Mkdir(d, 0o700); err != nil {
			os.RemoveAll(root)
			return agentBox{}, fmt.Errorf("making the agent's folder for task %s: %w", key, err)
		}
	}
	return b, nil
}

func (b agentBox) remove() { os.RemoveAll(b.root) }

// presentLeaves are the names among leaves that exist at the root of dir.
func presentLeaves(dir string, leaves []string) map[string]bool {
	out := map[string]bool{}
	for _, name := range leaves {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			out[name] = true
		}
	}
	return out
}

// removeLeaves removes what the agent's tool left at the root of dir
// (its caches and histories, by their fixed names) that was not there
// before: a link among them is removed, never followed.
func removeLeaves(dir string, leaves []string, before map[string]bool) {
	for _, name := range leaves {
		if before[name] || filepath.Base(name) != name {
			continue
		}
		os.RemoveAll(filepath.Join(dir, name))
	}
}

// The sandbox's launcher says so on stderr, and exits 126, when it could
// not confine the agent: the agent did not run.
const (
	sandboxRefusedExit  = 126
	sandboxRefusedWords = "wo sandbox:"
)

// agentCommand is the agent's process: argv through the sandbox where the
// machine has one and the user did not turn it off.
var agentCommand = func(sc *StepContext, box agentBox, dir, login string, caches map[string]string, p *agent.Profile, argv []string) (*exec.Cmd, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	startInOwnGroup(cmd)
	return cmd, nil
}

// costLeft is what is left of the task's cost cap (--max-agent-cost), 0
// when there is none.
func costLeft(sc *StepContext) float64 {
	limit := sc.Settings().MaxAgentCost
	if limit <= 0 {
		return 0
	}
	spent := 0.0
	if u := sc.State().AgentUsage; u != nil {
		spent = u.CostUSD
	}
	return max(limit-spent, 0.01)
}

// agentCallText is the agent's command line as wo would run it, for a
// plan: the profile's flags with the user's, and where the prompt goes.
func agentCallText(sc *StepContext) string {
	line, err := agent.Parse(sc.Settings().Agent)
	if err != nil {
		return sc.Settings().Agent
	}
	set := func(name string) bool { return sc.Getenv(name) != "" }
	call := line.Call(agent.CallInput{PromptFile: "PROMPT_FILE", Prompt: "PROMPT", StateDir: "AGENT_DIR", UseLogin: sc.Settings().AgentLogin,
		MaxCostUSD: costLeft(sc), Set: set})
	text := shellquote.Join(call.Argv...)
	if call.Stdin != "" {
		text += " < prompt"
	}
	return text
}
