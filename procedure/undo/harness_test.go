package undo

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/wo-runner/wo/internal/gittest"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/procedure/internal/epicworld"
	"github.com/wo-runner/wo/procedure/internal/fixture"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// This file is the undo tests' world: the fixture's real repository, bare
// remote and GitHub stand-in (procedure/internal/fixture), an engine over
// an embedded SQLite store holding the fixture's work order task_cr_01,
// and ways to leave behind what runs leave: steps completed by the engine
// (Engine.Run, which logs what each made), or run with only their state
// written (as a document could say it, proving nothing).

func TestMain(m *testing.M) {
	code := m.Run()
	fixture.Cleanup()
	os.Exit(code)
}

// stepOpts describe the work order and the world around it.
type stepOpts = fixture.Options

// stateT is the state type, short for setState callbacks.
type stateT = workorder.State

// harness is an engine over a fixture, and handles to look at the world.
type harness struct {
	*fixture.World
	t     *testing.T
	ctx   context.Context
	eng   *procedure.Engine
	store store.Store
	env   map[string]string
}

// newHarness builds the fixture, a store holding its work order, and an
// engine over both.
func newHarness(t *testing.T, opts stepOpts) *harness {
	t.Helper()
	w := epicworld.New(t, opts)
	h := &harness{World: w.World, t: t, ctx: w.Ctx, eng: w.Engine, store: w.Store, env: w.Env}
	e, ctx := w.Engine, w.Ctx
	e.Now = func() time.Time { return time.Now().UTC() }
	if _, err := e.Open(ctx, fixture.Key, ""); err != nil {
		t.Fatalf("the test's work order does not load: %v", err)
	}
	return h
}

// undoHarness is a run that went as far as opening its pull request: a
// worktree, a branch with a commit, the branch pushed, a PR open.
func undoHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, stepOpts{GitHub: true})
	h.completeUpTo("wait_for_review")
	if h.stored().PRNumber != 1 {
		t.Fatalf("the run opened no pull request: %+v", h.stored())
	}
	return h
}

// loopReady is a harness whose branch is committed and pushed, with the
// comments of a check waiting to be fixed.
func loopReady(t *testing.T, opts stepOpts) *harness {
	t.Helper()
	h := newHarness(t, opts)
	h.upTo("create_pr")
	h.setState(func(s *stateT) { s.ReviewComments, s.ReviewSeen = fixture.OpenComments(), fixture.SeenAtCheck })
	return h
}

// engine is the harness's engine, for knobs such as Fault and GitHubAPI.
func (h *harness) engine() *procedure.Engine { return h.eng }

// procedure is the work order's procedure.
func (h *harness) procedure() []workorder.Step {
	h.t.Helper()
	ed, err := h.eng.Open(h.ctx, fixture.Key, "")
	if err != nil {
		h.t.Fatal(err)
	}
	return ed.Task().WorkOrder.Procedure
}

// step is the first step of the procedure with the given action.
func (h *harness) step(name string) workorder.Step {
	h.t.Helper()
	for _, s := range h.procedure() {
		if s.Action == name {
			return s
		}
	}
	h.t.Fatalf("the procedure has no %s step", name)
	return workorder.Step{}
}

// held is the task opened and its lease taken, for an edit of the test's;
// the lease is given back when the test's function returns.
func (h *harness) held() (*procedure.Edit, func()) {
	h.t.Helper()
	ed, err := h.eng.Open(h.ctx, fixture.Key, "")
	if err != nil {
		h.t.Fatal(err)
	}
	_, release, err := ed.Hold(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	return ed, release
}

// run runs the action's step once, outside the run loop: nothing is
// logged, and what it records in the state stays unwritten.
func (h *harness) run(name string) (action.Outcome, error) {
	h.t.Helper()
	ed, release := h.held()
	defer release()
	spec, ok := ed.Actions().Lookup(name)
	if !ok || spec.New == nil {
		h.t.Fatalf("no runnable action %s", name)
	}
	return spec.New().Run(h.ctx, ed.StepContext(h.step(name)))
}

// keep writes an outcome's state, and nothing else: no log entry, as a
// document that said it would.
func (h *harness) keep(out action.Outcome) {
	h.t.Helper()
	if out.State != nil {
		h.setState(func(s *stateT) { *s = out.State.Clone() })
	}
}

// upTo runs every step of the procedure before the first step of the
// given action, keeping only the state each records (keep).
func (h *harness) upTo(name string) {
	h.t.Helper()
	for _, s := range h.procedure() {
		if s.Action == name {
			return
		}
		out, err := h.run(s.Action)
		if err != nil {
			h.t.Fatalf("%s: %v", s.Action, err)
		}
		h.keep(out)
	}
}

// completeUpTo has the engine run every step before the first of the
// given action (all of them when none is that action): each completed as
// a run completes it, its state written back and its step_completed
// entry, with what it made, in the activity log, which undo takes as
// proof of what wo made.
func (h *harness) completeUpTo(name string) {
	h.t.Helper()
	steps := h.procedure()
	until := len(steps)
	for i, s := range steps {
		if s.Action == name {
			until = i
			break
		}
	}
	h.completeSteps(1, until)
}

// completeSteps has the engine run steps from through until.
func (h *harness) completeSteps(from, until int) {
	h.t.Helper()
	if until < from {
		return
	}
	if _, err := h.eng.Run(h.ctx, procedure.RunOptions{Key: fixture.Key, FromStep: from, UntilStep: until}); err != nil {
		h.t.Fatalf("running steps %d-%d: %v", from, until, err)
	}
}

// setState changes the task's state in the store, as earlier steps (or
// anyone who can write the document) would have.
func (h *harness) setState(change func(*workorder.State)) {
	h.t.Helper()
	ed, release := h.held()
	defer release()
	st := ed.State()
	change(&st)
	if err := ed.Save(h.ctx, st); err != nil {
		h.t.Fatal(err)
	}
}

// stored is work_order.state as the store holds it.
func (h *harness) stored() workorder.State {
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

// revOf is the task's revision in the store: every write changes it.
func (h *harness) revOf() string {
	h.t.Helper()
	doc, err := h.store.Get(h.ctx, fixture.Key)
	if err != nil {
		h.t.Fatal(err)
	}
	return doc["_rev"].(string)
}

// hasBranch says whether the repository at dir has the branch, asking git.
func hasBranch(t *testing.T, dir, branch string) bool {
	t.Helper()
	_, err := gittest.Try(dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
}

// mustUndo runs wo undo on the harness's task and fails the test on an
// error.
func (h *harness) mustUndo(opts Options) *Result {
	h.t.Helper()
	res, err := Task(h.ctx, h.eng, opts)
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

func stepsOf(res *Result) map[string]string {
	out := map[string]string{}
	for _, s := range res.Steps {
		out[s.Step] = s.Outcome + ": " + s.Reason
	}
	return out
}
