package action

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/redact"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// This file is the harness of the actions' tests: a run of the fixture's
// work order (see procedure/internal/fixture: a real repository and bare
// remote, and the GitHub stand-in when a test asks) as the engine gives it
// to an action, through the Run interface, with the run's state, its
// saved state and its activity log kept in memory. A test runs one
// action's Run, Check or Plan through a StepContext exactly as the engine
// would; the engine's own Run is tested with the engine, in procedure.

func TestMain(m *testing.M) {
	code := m.Run()
	fixture.Cleanup()
	os.Exit(code)
}

// stepLimit bounds each test's steps, a guard against a step that never
// ends (not a measure of speed: the steps take milliseconds).
const stepLimit = 10 * time.Second

// stepOpts describe the work order and the world around it.
type stepOpts = fixture.Options

// testRun is the Run the harness gives its actions.
type testRun struct {
	mu       sync.Mutex // waits come from the agent's output readers too
	t        testing.TB
	task     *workorder.Task
	doc      workorder.Document // as last saved
	state    workorder.State    // the run's
	saved    workorder.State    // as last saved (Checkpoint, keep)
	settings Settings
	env      map[string]string
	ghAPI    string
	now      func() time.Time
	warnings []string
	logs     []store.LogEntry
	says     []string
	progress [][2]int // done, total
	waits    []Wait
	repo     *gitops.Repo
	gh       *github.Client
	facts    *workorder.CommandFacts
	fault    func(point string)
	stack    Stack
	refresh  func(epic string) ([]StackUpdate, bool, error)
	deferred bool
}

func (r *testRun) Key() string           { return r.task.Key }
func (r *testRun) Task() *workorder.Task { return r.task }
func (r *testRun) State() workorder.State {
	return r.state.Clone()
}
func (r *testRun) Getenv(name string) string { return r.env[name] }
func (r *testRun) Settings() Settings        { return r.settings }
func (r *testRun) Now() time.Time            { return r.now() }
func (r *testRun) Warn(msg string)           { r.warnings = append(r.warnings, msg) }
func (r *testRun) GitHubAPI() string         { return r.ghAPI }
func (r *testRun) StackDeferred(string) bool { return r.deferred }
func (r *testRun) Say(_ workorder.Step, msg string) {
	r.says = append(r.says, msg)
}
func (r *testRun) Progress(_ workorder.Step, done, total int) {
	r.progress = append(r.progress, [2]int{done, total})
}
func (r *testRun) Waiting(_ workorder.Step, w Wait) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits = append(r.waits, w)
}

// waitsSeen are the waits the step said so far.
func (r *testRun) waitsSeen() []Wait {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Wait(nil), r.waits...)
}

func (r *testRun) Fault(point string) {
	if r.fault != nil {
		r.fault(point)
	}
}

func (r *testRun) secrets() *redact.Secrets { return redact.New().Token(github.Token(r.Getenv)) }

func (r *testRun) Redact(text string) string { return r.secrets().String(text) }

// Doc is the document with the run's state as it stands.
func (r *testRun) Doc() workorder.Document {
	d := workorder.Clone(r.doc).(map[string]any)
	if p := workorder.StatePatch(r.saved, r.state); p != nil {
		store.Merge(d, p)
	}
	return d
}

// Checkpoint keeps st as the run's state, and saves it.
func (r *testRun) Checkpoint(_ context.Context, st workorder.State) error {
	r.state = st.Clone()
	r.save()
	return nil
}

// save is the engine's write of the state: the document then holds it.
func (r *testRun) save() {
	if p := workorder.StatePatch(r.saved, r.state); p != nil {
		store.Merge(r.doc, p)
	}
	r.saved = r.state.Clone()
}

func (r *testRun) Log(_ context.Context, kind string, details map[string]any) {
	if d, ok := r.secrets().Value(details).(map[string]any); ok {
		details = d
	}
	r.logs = append(r.logs, store.LogEntry{Action: kind, TaskKey: r.Key(), Details: details, CreatedAt: r.now()})
}

func (r *testRun) LoadStack(context.Context, string) (Stack, error) { return r.stack, nil }

func (r *testRun) RefreshStack(_ context.Context, epic string) ([]StackUpdate, bool, error) {
	if r.refresh == nil {
		return nil, false, nil
	}
	return r.refresh(epic)
}

func (r *testRun) Repo() (*gitops.Repo, error) {
	if r.repo == nil {
		path, _ := r.task.WorkOrder.Context["repo_path"].(string)
		repo, err := gitops.Open(path)
		if err != nil {
			return nil, err
		}
		r.repo = repo
	}
	return r.repo, nil
}

func (r *testRun) GitHub(repo string) (*github.Client, error) {
	if r.gh == nil {
		c, err := github.New(github.Config{BaseURL: r.ghAPI, Token: github.Token(r.Getenv), Repo: repo, Login: r.env["WO_GITHUB_LOGIN"]})
		if err != nil {
			return nil, err
		}
		r.gh = c
	}
	return r.gh, nil
}

func (r *testRun) CommandFacts() workorder.CommandFacts {
	if r.facts == nil {
		f := workorder.FactsOf(r.doc)
		r.facts = &f
	}
	return *r.facts
}

// stepHarness is a run over a fixture, and handles to look at the world.
type stepHarness struct {
	*fixture.World
	t       *testing.T
	ctx     context.Context
	r       *testRun
	actions Actions
}

// newStepContext builds the fixture and a run over the work order
// task_cr_01 that opts describe.
func newStepContext(t *testing.T, opts stepOpts) *stepHarness {
	t.Helper()
	w := fixture.New(t, opts)
	table := defaultActions
	if report := workorder.Validate(w.Doc, table.Options()); !report.Valid() && !opts.Invalid {
		t.Fatalf("the test's work order is not valid: %v", &workorder.InvalidError{Reports: []workorder.Report{report}})
	}
	task, err := workorder.Parse(w.Doc)
	if err != nil {
		t.Fatalf("the test's work order does not parse: %v", err)
	}
	st, err := workorder.StateOf(w.Doc)
	if err != nil {
		t.Fatal(err)
	}
	r := &testRun{t: t, task: task, doc: w.Doc, state: st, saved: st.Clone(), env: w.Env,
		settings: Settings{PollInterval: time.Millisecond, Agent: w.Agent},
		now:      func() time.Time { return time.Now().UTC() }}
	r.settings.FillDefaults()
	if opts.Unconfined {
		r.settings.Sandbox = SandboxOff
	}
	r.settings.AgentWritable = w.AgentWritable(t)
	if w.GH != nil {
		r.ghAPI = w.GH.URL
	}
	// A step here takes well under a second; one that waits on and on (a
	// review it no longer recognises, a process it no longer sees end)
	// fails its test after stepLimit instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), stepLimit)
	t.Cleanup(cancel)
	return &stepHarness{World: w, t: t, ctx: ctx, r: r, actions: table}
}

// settings are the run's action settings, for a test to change.
func (h *stepHarness) settings() *Settings { return &h.r.settings }

// setenv changes what Getenv answers.
func (h *stepHarness) setenv(k, v string) { h.r.env[k] = v }

// step is the first step of the procedure with the given action.
func (h *stepHarness) step(name string) workorder.Step {
	h.t.Helper()
	for _, s := range h.r.task.WorkOrder.Procedure {
		if s.Action == name {
			return s
		}
	}
	h.t.Fatalf("the procedure has no %s step", name)
	return workorder.Step{}
}

// sc is the StepContext the engine would give the action's step now.
func (h *stepHarness) sc(name string) *StepContext {
	r := h.r
	return NewStepContext(Run{TaskView: r, Environment: r, Recorder: r, Connections: r, Reporter: r, StackTables: r}, h.step(name), workorder.NewScope(r.Doc()))
}

func (h *stepHarness) action(name string) Action {
	h.t.Helper()
	spec, ok := h.actions.Lookup(name)
	if !ok || spec.New == nil {
		h.t.Fatalf("no runnable action %s", name)
	}
	return spec.New()
}

// run runs the action's step once, changing nothing in the run's state.
func (h *stepHarness) run(name string) (Outcome, error) {
	h.t.Helper()
	return h.action(name).Run(h.ctx, h.sc(name))
}

// must runs the action's step, fails the test on an error, and keeps what
// it records, as the engine would.
func (h *stepHarness) must(name string) Outcome {
	h.t.Helper()
	out, err := h.run(name)
	if err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
	h.keep(out)
	return out
}

// keep takes an outcome's state as the run's and saves it.
func (h *stepHarness) keep(out Outcome) {
	if out.State != nil {
		h.r.state = out.State.Clone()
	}
	h.r.save()
}

// upTo runs (with must) every step of the procedure before the first step
// of the given action.
func (h *stepHarness) upTo(name string) {
	h.t.Helper()
	for _, s := range h.r.task.WorkOrder.Procedure {
		if s.Action == name {
			return
		}
		h.must(s.Action)
	}
}

// recorded is the state the outcome leaves (the run's, when it changes
// nothing); the run itself is left as it was.
func (h *stepHarness) recorded(out Outcome) workorder.State {
	if out.State != nil {
		return out.State.Clone()
	}
	return h.r.state.Clone()
}

// stored is work_order.state as the run last saved it.
func (h *stepHarness) stored() workorder.State { return h.r.saved.Clone() }

// check runs the action's preflight check.
func (h *stepHarness) check(name string) error {
	h.t.Helper()
	c, ok := h.action(name).(Checker)
	if !ok {
		h.t.Fatalf("%s has no Check", name)
	}
	return c.Check(h.ctx, h.sc(name))
}

// plan is what a dry run shows for the action's step.
func (h *stepHarness) plan(name string) string {
	h.t.Helper()
	p, ok := h.action(name).(Planner)
	if !ok {
		h.t.Fatalf("%s has no Plan", name)
	}
	return p.Plan(h.sc(name))
}

// setState changes the run's state (and the saved one), as earlier steps
// would have.
func (h *stepHarness) setState(change func(*workorder.State)) {
	change(&h.r.state)
	h.r.save()
}

// logged lists the activity-log entries of the kind the run wrote.
func (h *stepHarness) logged(kind string) []store.LogEntry {
	var out []store.LogEntry
	for _, e := range h.r.logs {
		if e.Action == kind {
			out = append(out, e)
		}
	}
	return out
}

// pushBranch makes the work order's branch on the source commit and
// pushes it.
func (h *stepHarness) pushBranch() string { return h.PushBranch(h.t) }

// openPR pushes the branch and opens its pull request through the
// create_pr action, keeping the number in state; it returns the pushed
// commit, which is recorded as pushed_sha.
func (h *stepHarness) openPR() string {
	h.t.Helper()
	sha := h.pushBranch()
	h.setState(func(s *stateT) { s.PushedSHA = sha })
	h.must("create_pr")
	return sha
}

// stateT is the state type, short for setState callbacks.
type stateT = workorder.State

// TestHarnessRunsOverARealRepository checks the harness itself: the work
// order loads, and a checkpoint is what the run saved.
func TestHarnessRunsOverARealRepository(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	if got := gittest.Run(t, h.Remote, "rev-parse", fixture.Base); got != gittest.Run(t, h.Repo, "rev-parse", fixture.Base) {
		t.Errorf("the remote's %s is %s", fixture.Base, got)
	}
	sc := h.sc("commit")
	if sc.Key() != fixture.Key || sc.Input("branch_name") != fixture.Branch || sc.Context("base_branch") != fixture.Base {
		t.Errorf("step context sees key %q branch %q base %q", sc.Key(), sc.Input("branch_name"), sc.Context("base_branch"))
	}
	st := sc.State()
	st.CommitSHA = "abc"
	if err := sc.Checkpoint(h.ctx, st); err != nil {
		t.Fatal(err)
	}
	if got := h.stored().CommitSHA; got != "abc" {
		t.Errorf("saved commit_sha %q after a checkpoint", got)
	}
	if got := workorder.Get(sc.Doc(), "work_order.state.commit_sha"); got != "abc" {
		t.Errorf("the document's commit_sha %q after a checkpoint", got)
	}
}
