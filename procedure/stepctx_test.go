package procedure

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// This file is a harness for tests of the engine around single steps: a
// real run (the engine's own run type, with a StateWriteBack over an
// embedded SQLite store and a lease held) over the fixture's work order
// (see procedure/internal/fixture). The actions' own tests are in
// procedure/action, over a run of their own.

// stepOpts describe the work order and the world around it.
type stepOpts = fixture.Options

func TestMain(m *testing.M) {
	code := m.Run()
	fixture.Cleanup()
	os.Exit(code)
}

// stepHarness is a run over a fixture, and handles to look at the world.
type stepHarness struct {
	*fixture.World
	t     *testing.T
	ctx   context.Context
	r     *run
	store store.Store
	env   map[string]string
}

// newStepContext builds the fixture and a run over the work order
// task_cr_01 that opts describe, holding its lease.
func newStepContext(t *testing.T, opts stepOpts) *stepHarness {
	t.Helper()
	return newStepContextWith(t, opts, nil)
}

// newStepContextWith is newStepContext with an engine that runs the table
// of actions (nil: this build's).
func newStepContextWith(t *testing.T, opts stepOpts, actions action.Actions) *stepHarness {
	t.Helper()
	ctx := context.Background()
	w := fixture.New(t, opts)
	h := &stepHarness{World: w, t: t, ctx: ctx, env: w.Env}
	e := &Engine{Runner: "tester@host:1", Attempts: 1, Backoff: time.Millisecond, Settings: action.Settings{PollInterval: time.Millisecond, Agent: w.Agent},
		Getenv: func(k string) string { return h.env[k] }, Actions: actions}
	e.Settings.AgentWritable = w.AgentWritable(t)
	if opts.Unconfined {
		e.Settings.Sandbox = action.SandboxOff
	}
	if w.GH != nil {
		e.GitHubAPI = w.GH.URL
	}
	s, err := store.OpenSQLite(ctx, filepath.Join(w.Root, "wo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	e.Store = s
	h.store = s
	e.defaults()
	if err := s.Create(ctx, w.Doc); err != nil {
		t.Fatal(err)
	}
	loaded, task, err := e.Load(ctx, fixture.Key)
	if err != nil {
		t.Fatalf("the test's work order does not load: %v", err)
	}
	r, err := newRun(e, RunOptions{Key: fixture.Key}, loaded, task)
	if err != nil {
		t.Fatal(err)
	}
	lease, err := (&store.Leases{Store: s, Now: e.Now}).Acquire(ctx, fixture.Key, e.Runner, e.LeaseTTL, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.wb = &StateWriteBack{store: s, key: fixture.Key, rev: lease.Rev, runner: e.Runner, leaseTTL: e.LeaseTTL, now: e.Now, secrets: e.secrets()}
	h.r = r
	return h
}

// engine is the run's engine, for knobs such as Agent and ReviewWait.
func (h *stepHarness) engine() *Engine { return h.r.Engine }

// setenv changes what Getenv answers.
func (h *stepHarness) setenv(k, v string) { h.env[k] = v }

// step is the first step of the procedure with the given action.
func (h *stepHarness) step(name string) workorder.Step {
	h.t.Helper()
	for _, s := range h.r.procedure() {
		if s.Action == name {
			return s
		}
	}
	h.t.Fatalf("the procedure has no %s step", name)
	return workorder.Step{}
}

// sc is the StepContext the engine would give the action's step now.
func (h *stepHarness) sc(name string) *action.StepContext {
	return h.r.stepContext(h.step(name), workorder.NewScope(h.r.currentDoc()))
}

func (h *stepHarness) action(name string) action.Action {
	h.t.Helper()
	spec, ok := h.r.actions().Lookup(name)
	if !ok || spec.New == nil {
		h.t.Fatalf("no runnable action %s", name)
	}
	return spec.New()
}

// run runs the action's step once, changing nothing in the run's state.
func (h *stepHarness) run(name string) (action.Outcome, error) {
	h.t.Helper()
	return h.action(name).Run(h.ctx, h.sc(name))
}

// must runs the action's step, fails the test on an error, and keeps what
// it records in the run's state and the store, as the engine would.
func (h *stepHarness) must(name string) action.Outcome {
	h.t.Helper()
	out, err := h.run(name)
	if err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
	h.keep(out)
	return out
}

// keep takes an outcome's state as the run's and saves it.
func (h *stepHarness) keep(out action.Outcome) {
	h.t.Helper()
	if out.State != nil {
		h.r.state = out.State.Clone()
	}
	if err := h.r.save(h.ctx, nil); err != nil {
		h.t.Fatal(err)
	}
}

// upTo runs (with must) every step of the procedure before the first step
// of the given action.
func (h *stepHarness) upTo(name string) {
	h.t.Helper()
	for _, s := range h.r.procedure() {
		if s.Action == name {
			return
		}
		h.must(s.Action)
	}
}

// recorded is the state the outcome leaves (the run's, when it changes
// nothing); the run itself is left as it was.
func (h *stepHarness) recorded(out action.Outcome) workorder.State {
	if out.State != nil {
		return out.State.Clone()
	}
	return h.r.state.Clone()
}

// stored is work_order.state as the store holds it.
func (h *stepHarness) stored() workorder.State {
	h.t.Helper()
	doc, err := h.store.Get(h.ctx, fixture.Key)
	if err != nil {
		h.t.Fatal(err)
	}
	st, err := workorder.StateOf(doc)
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

// check runs the action's preflight check.
func (h *stepHarness) check(name string) error {
	h.t.Helper()
	c, ok := h.action(name).(action.Checker)
	if !ok {
		h.t.Fatalf("%s has no Check", name)
	}
	return c.Check(h.ctx, h.sc(name))
}

// plan is what a dry run shows for the action's step.
func (h *stepHarness) plan(name string) string {
	h.t.Helper()
	p, ok := h.action(name).(action.Planner)
	if !ok {
		h.t.Fatalf("%s has no Plan", name)
	}
	return p.Plan(h.sc(name))
}

// setState changes the run's state (and the store's), as earlier steps
// would have.
func (h *stepHarness) setState(change func(*workorder.State)) {
	h.t.Helper()
	change(&h.r.state)
	if err := h.r.save(h.ctx, nil); err != nil {
		h.t.Fatal(err)
	}
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

// TestHarnessRunsOverARealRepositoryAndStore checks the harness itself:
// the work order loads, the lease is held, and state written through the
// run reaches the store.
func TestHarnessRunsOverARealRepositoryAndStore(t *testing.T) {
	h := newStepContext(t, stepOpts{})
	if got := gittest.Run(t, h.Remote, "rev-parse", fixture.Base); got != gittest.Run(t, h.Repo, "rev-parse", fixture.Base) {
		t.Errorf("the remote's %s is %s", fixture.Base, got)
	}
	if sc := h.sc("commit"); sc.Key() != fixture.Key || sc.Input("branch_name") != fixture.Branch || sc.Context("base_branch") != fixture.Base {
		t.Errorf("step context sees key %q branch %q base %q", sc.Key(), sc.Input("branch_name"), sc.Context("base_branch"))
	}
	h.setState(func(s *workorder.State) { s.CommitSHA = "abc" })
	st := h.stored()
	if st.CommitSHA != "abc" || st.Lease == nil || st.Lease.Holder != "tester@host:1" {
		t.Errorf("stored state: commit_sha %q lease %+v", st.CommitSHA, st.Lease)
	}
}

// stateT is the state type, short for setState callbacks.
type stateT = workorder.State

// loopReady is a harness whose branch is committed and pushed, with the
// comments of a check waiting to be fixed.
func loopReady(t *testing.T, opts stepOpts) *stepHarness {
	t.Helper()
	h := newStepContext(t, opts)
	h.upTo("create_pr")
	h.setState(func(s *stateT) { s.ReviewComments, s.ReviewSeen = fixture.OpenComments(), fixture.SeenAtCheck })
	return h
}

// waiting is err as a WaitingError; the test fails if it is not one.
func waiting(t *testing.T, err error) *action.WaitingError {
	t.Helper()
	var w *action.WaitingError
	if !errors.As(err, &w) {
		t.Fatalf("err %v, want the run to wait", err)
	}
	return w
}
