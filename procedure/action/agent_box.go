package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/kballard/go-shellquote"

	"github.com/wo-runner/wo/agent"
	"github.com/wo-runner/wo/internal/sandbox"
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

// caches makes the agents' build caches (buildCaches) where missing;
// one that cannot be made is a folder in the box: the agent's checks
// start cold rather than fail where the sandbox lets them write nothing.
func (b agentBox) caches(want map[string]string) map[string]string {
	out := map[string]string{}
	for name, dir := range want {
		if os.MkdirAll(dir, 0o700) == nil {
			out[name] = dir
			continue
		}
		own := filepath.Join(b.root, "cache", name)
		if os.MkdirAll(own, 0o700) == nil {
			out[name] = own
		}
	}
	return out
}

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

// agentCommand is the agent's process, through wo's launcher (every
// process it starts ends with it) and, unless the user turned it off, in
// the sandbox: in a box of its own where the kernel allows namespaces
// (agent_view.go: it sees the system's folders, its worktree, the
// repository's .git read-only and what the user lends; its network is its
// own loopback and wo's proxy to its model's hosts), with Landlock in it.
// It may write its worktree, its own folder, its task's build caches, its
// login folder when the user lent it and the folders --agent-writable
// names, and reach no process of wo's. p is the command's profile
// (agent.Parse gives every command one, "command" for a program of the
// user's own). The launch's env is added to the agent's environment, and
// its finish must be called when the agent has ended.
func agentCommand(sc *StepContext, box agentBox, dir, login string, caches map[string]string, p *agent.Profile, argv []string, env []string) (agentLaunch, error) {
	s := sc.Settings()
	spec := sandbox.Spec{Confine: s.Sandbox != SandboxOff}
	if spec.Confine {
		if _, ok, why := sandbox.Status(); !ok {
			switch {
			case s.Sandbox == SandboxOn:
				return agentLaunch{}, fmt.Errorf("--agent-sandbox on: this machine cannot confine the agent (%s); run wo where the kernel has Landlock, or pass --agent-sandbox off to run it unconfined", why)
			case sc.Getenv("GITHUB_ACTIONS") == "true":
				return agentLaunch{}, fmt.Errorf("refusing to run the agent unconfined in GitHub Actions, where wo holds a token that pushes: this runner cannot confine it (%s); use a Linux runner with Landlock, or pass --agent-sandbox off to run it unconfined anyway", why)
			}
			unconfinedOnce.Do(func() {
				sc.Warn("the agent runs unconfined: %s; it can reach whatever wo can (its token in /proc, the store, the repository's .git, the network). --agent-sandbox off silences this", why)
			})
			spec.Confine = false
		}
	}
	spec.Writable = append([]string{dir, box.root}, s.AgentWritable...)
	for _, d := range caches {
		spec.Writable = append(spec.Writable, d)
	}
	if login != "" {
		spec.Writable = append(spec.Writable, login)
		// Files beside the folder that the tool keeps in the user's home
		// with it (Claude Code's ~/.claude.json).
		if home := sc.Getenv("HOME"); home != "" {
			for _, f := range p.HomeFiles {
				if path := filepath.Join(home, f); path != login {
					spec.Writable = append(spec.Writable, path)
				}
			}
		}
	}
	spec.Ports = slices.Concat(p.Ports, s.AgentPorts)
	slices.Sort(spec.Ports)
	spec.Ports = slices.Compact(spec.Ports)
	var launch agentLaunch
	if spec.Confine {
		if ok, why := sandbox.Namespaces(); ok {
			view, l, err := agentView(sc, box, p, argv, env)
			if err != nil {
				return agentLaunch{}, err
			}
			spec.View, launch = view, l
		} else {
			landlockOnlyOnce.Do(func() {
				sc.Warn("the agent has no box of its own here (%s): Landlock alone confines it, so it can read every file your user can (your HOME's keys and tokens), reach unix sockets by path (an ssh-agent, docker), send UDP and connect to its profile's ports on any host, and its processes are ended by the launcher's sweep only", why)
			})
		}
	}
	cmd, err := sandbox.Command(spec, argv)
	if err != nil {
		launch.finish(context.Background(), sc)
		return agentLaunch{}, err
	}
	launch.cmd = cmd
	return launch, nil
}

// landlockOnlyOnce says once per wo process that agents have no box.
var landlockOnlyOnce sync.Once

// unconfinedOnce says once per wo process that agents run unconfined.
var unconfinedOnce sync.Once

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
