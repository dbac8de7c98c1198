package action

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/workorder"
)

// Action is one kind of step. Run looks at the real repository (and forge)
// before acting, so that running it again after a crash at any point gives
// the same result as one clean run.
type Action interface {
	Run(ctx context.Context, sc *StepContext) (Outcome, error)
}

// Planner is an action that can say what it would do, for --dry-run,
// without changing anything.
type Planner interface {
	Plan(sc *StepContext) string
}

// Checker is an action that can check its inputs against the repository
// before the run changes anything, so that a bad manifest or branch name
// fails at once rather than after half the steps ran.
type Checker interface {
	Check(ctx context.Context, sc *StepContext) error
}

// Outcome is what a step reports back to the engine.
type Outcome struct {
	Note string // a line for state.notes, for people: nothing parses it
	// Facts are what the step made or took up (see Fact): the engine logs
	// them with the step's end, and wo undo proves what wo made by them.
	Facts []Fact
	// State is the work order's state as the step leaves it: a copy from
	// StepContext.State, changed, taken after the step's last checkpoint;
	// nil when the step changes nothing. The engine keeps it when the
	// step completes (or waits) and writes what changed in the same write
	// as the step's end.
	State       *workorder.State
	Status      workorder.Status // a Persephone status to move to, if any
	BlockReason string
	JumpTo      int // the step to continue at instead of the next one
}

// The engine's side of a StepContext is one run of one task, in the parts
// its callers use: the task as the run knows it, the run's configuration,
// what a step writes into the run, the repository and GitHub, what a
// person watching is told, and the epic's stack tables. The engine
// implements every part (procedure's stepRun); an action sees them through
// StepContext, which promotes their methods.

// TaskView is the task as the run knows it.
type TaskView interface {
	// Key is the task's key; Task the typed view of the task as loaded.
	Key() string
	Task() *workorder.Task
	// Doc is the task's document with the run's state as it now stands
	// (saved or not), for templates and prompts.
	Doc() workorder.Document
	// State is work_order.state as this run knows it. It is the run's own
	// copy: an action changes the state only through Outcome.State or
	// Checkpoint, so that a step that fails leaves nothing half-recorded.
	State() workorder.State
	// CommandFacts are what the procedure's commands name, read once per
	// run.
	CommandFacts() workorder.CommandFacts
}

// Environment is the run's configuration.
type Environment interface {
	// Getenv reads configuration; Settings are the engine's settings for
	// actions, a copy.
	Getenv(name string) string
	Settings() Settings
	// Now is the engine's clock.
	Now() time.Time
	// Redact removes the run's secrets from text that leaves wo (a prompt,
	// a comment).
	Redact(text string) string
	// GitHubAPI is the GitHub API base URL the run uses ("" for
	// github.com).
	GitHubAPI() string
}

// Recorder is what a step writes into the run besides its outcome.
type Recorder interface {
	// Checkpoint records state at once, in the middle of a step, so that a
	// crash after it does not lose it (the source commit a checkout uses).
	Checkpoint(ctx context.Context, st workorder.State) error
	// Log appends an entry to the task's activity log, secrets removed; a
	// log that cannot be written becomes a warning, never the step's
	// failure.
	Log(ctx context.Context, kind string, details map[string]any)
	// Warn records a loss that does not stop the run (the run's result and
	// wo's output list it).
	Warn(msg string)
	// Fault marks a point where tests may crash the run.
	Fault(point string)
}

// Connections are the run's repository and GitHub client, each opened
// once per run.
type Connections interface {
	// Repo is the repository (--repo, else context.repo_path).
	Repo() (*gitops.Repo, error)
	// GitHub is the run's client, made on the first call for repo (a run
	// works in one repository: later calls get the same client).
	GitHub(repo string) (*github.Client, error)
}

// Reporter tells a person watching what a step is doing; nothing of it is
// recorded.
type Reporter interface {
	Say(step workorder.Step, msg string)
	Progress(step workorder.Step, done, total int)
	Waiting(step workorder.Step, w Wait)
}

// StackTables are the stack tables in the descriptions of an epic's pull
// requests.
type StackTables interface {
	// LoadStack reads the stack of pull requests of the epic.
	LoadStack(ctx context.Context, epic string) (Stack, error)
	// RefreshStack rewrites the stack tables of the epic's pull requests;
	// StackDeferred says an epic run of this engine refreshes them itself,
	// once a wave.
	RefreshStack(ctx context.Context, epic string) ([]StackUpdate, bool, error)
	StackDeferred(epic string) bool
}

// Run is one run of one task as a step sees it, in its parts.
type Run struct {
	TaskView
	Environment
	Recorder
	Connections
	Reporter
	StackTables
}

// StepContext is what an action sees of its run: the step, the scope its
// templates render in, and the run's parts, whose methods it promotes
// (Key, State, Getenv, Checkpoint, Log, Repo, LoadStack, …) but for those
// it says of its own step (Warn, Fault, Say, Progress, Waiting, GitHub).
type StepContext struct {
	Run
	Step  workorder.Step
	Scope workorder.Scope
}

// NewStepContext is the engine's: the context of one step of run.
func NewStepContext(run Run, step workorder.Step, scope workorder.Scope) *StepContext {
	return &StepContext{Run: run, Step: step, Scope: scope}
}

// Warn records a loss that does not stop the run (the run's result and
// wo's output list it).
func (sc *StepContext) Warn(format string, args ...any) {
	sc.Recorder.Warn(fmt.Sprintf(format, args...))
}

// Fault marks a point of this step's action where tests may crash the run.
func (sc *StepContext) Fault(point string) { sc.Recorder.Fault(sc.Step.Action + ":" + point) }

// Say tells the user something a long step is doing ("rate limited
// until …: waiting"), as a progress event; the text must be escaped
// already.
func (sc *StepContext) Say(msg string) { sc.Reporter.Say(sc.Step, msg) }

// Progress reports how far a long step is.
func (sc *StepContext) Progress(done, total int) { sc.Reporter.Progress(sc.Step, done, total) }

// Wait is what a step waits for, for a person watching the run (the
// terminal's status line, a log's line a minute): it is not recorded, and
// --json does not show it.
type Wait struct {
	// For is what the step waits for: "coderabbitai[bot] to review
	// 1a2b3c4 on pull request #1", "agent claude".
	For string
	// Last is the latest line of what it runs (an agent's output), its
	// secrets removed: untrusted, escaped where it is printed.
	Last     string
	Since    time.Time // when the wait began
	Until    time.Time // its deadline; zero: none
	NextLook time.Time // when it looks again; zero: it does not poll
}

// Waiting says what the step waits for now; a Wait with nothing For says
// the wait is over.
func (sc *StepContext) Waiting(w Wait) { sc.Reporter.Waiting(sc.Step, w) }

// Context returns work_order.context.name as a string.
func (sc *StepContext) Context(name string) string {
	s, _ := sc.Task().WorkOrder.Context[name].(string)
	return s
}

// Input returns work_order.inputs.name as a string.
func (sc *StepContext) Input(name string) string {
	s, _ := sc.Task().WorkOrder.Inputs[name].(string)
	return s
}

// BranchName is inputs.branch_name, else the branch the procedure's
// commands create; "" when neither says.
func (sc *StepContext) BranchName() string {
	if b := sc.Input("branch_name"); b != "" {
		return b
	}
	return sc.CommandFacts().Branch
}

// Branch is the branch the work order works on.
func (sc *StepContext) Branch() (string, error) {
	b := sc.BranchName()
	if b == "" {
		return "", fmt.Errorf("task %s: work_order.inputs.branch_name is not set", sc.Key())
	}
	return b, nil
}

// BaseBranch is context.base_branch, else the base the procedure's
// git worktree add command names.
func (sc *StepContext) BaseBranch() string {
	if b := sc.Context("base_branch"); b != "" {
		return b
	}
	return sc.CommandFacts().Base
}

// Remote is context.remote, else the remote the procedure's git push
// command names; "" means origin.
func (sc *StepContext) Remote() string {
	if r := sc.Context("remote"); r != "" {
		return r
	}
	return sc.CommandFacts().Remote
}

// WorktreeName is the recorded name, else inputs.worktree_name, else the
// last element of the path the procedure's git worktree add names, else
// the branch name with '/' turned into '-'.
func (sc *StepContext) WorktreeName() (string, error) {
	if n := sc.State().WorktreeName; n != "" {
		return n, nil
	}
	if n := sc.Input("worktree_name"); n != "" {
		return n, nil
	}
	if p := sc.CommandFacts().WorktreePath; p != "" {
		return filepath.Base(p), nil
	}
	b, err := sc.Branch()
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(b, "/", "-"), nil
}

// Worktree describes the work order's linked worktree: where a run
// recorded it, else <worktree_root>/<inputs.worktree_name>, else the path
// the procedure's git worktree add command names (so that a person finds
// it where the document says), else <worktree_root>/<branch as a name>.
func (sc *StepContext) Worktree() (*gitops.Worktree, error) {
	r, err := sc.Repo()
	if err != nil {
		return nil, err
	}
	name, err := sc.WorktreeName()
	if err != nil {
		return nil, err
	}
	path, from := "", "work_order.state.worktree_path"
	if p := sc.State().WorktreePath; p != nil {
		path = *p
	}
	root := sc.Context("worktree_root")
	switch named := sc.CommandFacts().WorktreePath; {
	case path != "":
	case root == "":
		return nil, fmt.Errorf("task %s: work_order.context.worktree_root is not set", sc.Key())
	case sc.Input("worktree_name") == "" && named != "":
		path, from = named, fmt.Sprintf("step %d's git worktree add", sc.CommandFacts().Steps["worktree_path"])
	default:
		path = filepath.Join(root, name)
	}
	w, err := r.Worktree(name, path)
	if err != nil {
		return nil, err
	}
	// Wherever the path came from (a document may say anything), the
	// worktree stays inside worktree_root.
	if !workorder.Inside(root, path) {
		return nil, fmt.Errorf("task %s: the worktree %s (from %s) is not inside work_order.context.worktree_root %s: name a folder under it",
			sc.Key(), path, from, root)
	}
	return w, nil
}

// GitHub returns the run's GitHub client for context.repo, built on first
// use from the token in GITHUB_TOKEN (or GH_TOKEN).
func (sc *StepContext) GitHub() (*github.Client, error) {
	return sc.Connections.GitHub(sc.Context("repo"))
}

// PRNumber is the pull request recorded in state, 0 if none.
func (sc *StepContext) PRNumber() int { return sc.State().PRNumber }

// Render renders a template against the task as it now stands.
func (sc *StepContext) Render(tmpl string) (string, error) { return sc.Scope.Render(tmpl) }

// withPhase is the state as it stands, in the given run phase: for
// outcomes that only change the phase.
func (sc *StepContext) withPhase(p workorder.Phase) *workorder.State {
	st := sc.State()
	st.Phase = p
	return &st
}

// paramsOf decodes a step's own fields into the action's params type.
// Validation has checked their types before any run; a field of another
// type reads as its zero value.
func paramsOf[T any](s workorder.Step) T {
	var p T
	_ = s.DecodeParams(&p)
	return p
}
