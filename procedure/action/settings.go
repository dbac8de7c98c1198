package action

import (
	"time"

	"github.com/wo-runner/wo/gitops"
)

// DefaultGitTimeout is --git-timeout's default: how long a push or another
// git network operation may take.
const DefaultGitTimeout = gitops.DefaultNetworkTimeout

// DefaultGitStall is --git-stall's default: how long a git network
// operation may move no byte before wo gives up on the remote.
const DefaultGitStall = gitops.DefaultStall

// Settings are the engine's settings that its actions read: the
// agent, pushes, the review wait and loop. An action sees them through
// StepContext.Settings, a copy, never the engine itself; the engine fills
// in the defaults before a run.
type Settings struct {
	// Agent is the command that fixes review comments (--agent, WO_AGENT);
	// empty means a person does, and the run waits for them.
	Agent string
	// AgentTimeout bounds one agent run (--agent-timeout, WO_AGENT_TIMEOUT;
	// default 30 minutes); its whole process group is stopped at the limit.
	AgentTimeout time.Duration
	// AgentEnv names variables of wo's environment that the agent gets
	// beyond its allow-list (--agent-env, WO_AGENT_ENV): PATH, LANG, LC_*,
	// TERM, TMPDIR, a temporary HOME, and wo's own WO_TASK_KEY,
	// WO_WORKTREE and WO_PROMPT_FILE.
	AgentEnv []string
	// AgentLogin (--agent-login) points a named agent at the user's own
	// config and login folder (its documented variable), never a copy;
	// without it the agent's HOME is empty and its credential variables
	// log it in.
	AgentLogin bool
	// MaxAgentRounds and MaxAgentCost cap a task's agent: rounds that
	// fixed something, and the dollars the tool reported (0: no cap).
	MaxAgentRounds int
	MaxAgentCost   float64
	// DiscardCommits (--discard-commits) lets a step that is run again
	// write its files over commits on the branch that changed them, and
	// the push step replace a remote branch with a tree that drops them.
	DiscardCommits bool
	// RerunAgent (--rerun-agent) asks the agent again about comments it
	// answered with no change.
	RerunAgent bool
	// Sandbox is the agent's confinement: SandboxAuto (on where the
	// kernel has Landlock), SandboxOn or SandboxOff (--agent-sandbox).
	Sandbox string
	// AgentWritable are more folders a sandboxed agent may write
	// (--agent-writable, WO_AGENT_WRITABLE); AgentPorts more TCP ports it
	// may connect to (--agent-allow-port).
	AgentWritable []string
	AgentPorts    []int
	// AgentReadable are more folders a boxed agent sees, read-only
	// (--agent-readable, WO_AGENT_READABLE); AgentHosts more HOST:PORT it
	// may reach through wo's proxy (--agent-allow-host,
	// WO_AGENT_ALLOW_HOST).
	AgentReadable []string
	AgentHosts    []string
	// GitTimeout bounds a push (--git-timeout, WO_GIT_TIMEOUT; default
	// DefaultGitTimeout).
	GitTimeout time.Duration
	// GitStall gives up on a git network operation that moves no byte
	// for it (--git-stall, WO_GIT_STALL; default gitops.DefaultStall).
	GitStall time.Duration
	// ReviewWait overrides a wait_for_review step's duration_minutes;
	// PollInterval is how often it polls (default 30s).
	ReviewWait time.Duration
	// NoReviewWait (--review-wait 0) makes wait_for_review look once: with
	// no review of the pushed commit yet, the run stops waiting (exit 3)
	// and a review event resumes it (wo run --github-event), so that no CI
	// runner sits idle.
	NoReviewWait bool
	PollInterval time.Duration
	// Reviewers (--reviewer, repeatable) replaces context.reviewers: the
	// logins whose review wait_for_review waits for and whose verdict
	// check_review weighs; none means any reviewer but wo itself.
	Reviewers []string
	// ResolveThreads (--resolve-threads) resolves the review threads a fix
	// addressed, as context.resolve_threads: true does.
	ResolveThreads bool
	// MaxLoopIterations bounds a conditional_loop that does not set
	// max_iterations itself (default 5).
	MaxLoopIterations int
}

// The agent's sandbox settings.
const (
	SandboxAuto = ""
	SandboxOn   = "on"
	SandboxOff  = "off"
)

// FillDefaults fills in what is not set: an agent run of 30 minutes, a
// poll every 30 seconds, 5 loop iterations. It writes only fields that are
// zero, so once filled, calling it again (every run of an engine does,
// and an epic's children run at once) writes nothing.
func (s *Settings) FillDefaults() {
	if s.MaxLoopIterations == 0 {
		s.MaxLoopIterations = 5
	}
	if s.AgentTimeout == 0 {
		s.AgentTimeout = 30 * time.Minute
	}
	if s.PollInterval == 0 {
		s.PollInterval = 30 * time.Second
	}
}
