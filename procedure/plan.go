package procedure

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/wo-runner/wo/internal/identity"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// PlannedStep is one step of a dry run.
type PlannedStep struct {
	Step          int    `json:"step"`
	Action        string `json:"action"`
	Does          string `json:"does"`
	Command       string `json:"command,omitempty"`
	TemplateError string `json:"template_error,omitempty"`
	Would         string `json:"would"`
	Runnable      bool   `json:"runnable"`
}

// Plan is what wo run would do, computed without changing anything.
type Plan struct {
	Key      string           `json:"key"`
	Status   workorder.Status `json:"status"`
	FromStep int              `json:"from_step"`
	Steps    []PlannedStep    `json:"steps"`
	WaitsFor string           `json:"waits_for,omitempty"`
	// RollbackHints say how to take the change back, from the work order.
	RollbackHints []string `json:"rollback_hints,omitempty"`
	LeaseHeld     string   `json:"lease_held_by,omitempty"`
}

// Plan renders every step from where a run would start. It reads the store
// and the repository and writes to neither. When a run could not start
// (the checks before a run found problems), the plan comes back with the
// *PreflightError that wo run would give.
func (e *Engine) Plan(ctx context.Context, opts RunOptions) (*Plan, error) {
	e.defaults()
	doc, task, err := e.Load(ctx, opts.Key)
	if err != nil {
		return nil, err
	}
	r, err := newRun(e, opts, doc, task)
	if err != nil {
		return nil, err
	}
	p := &Plan{Key: task.Key, Status: task.Status, FromStep: r.state.CurrentStep + 1, RollbackHints: task.WorkOrder.RollbackHints}
	if opts.FromStep > 0 {
		p.FromStep = opts.FromStep
	}
	var blocked *BlockersOpenError
	if err := e.checkBlockers(ctx, doc, task); errors.As(err, &blocked) {
		p.WaitsFor = err.Error()
	} else if err != nil {
		return nil, err
	}
	if cur := store.Current(doc); cur != nil && cur.ExpiresAt.After(e.Now()) && cur.Holder != e.Runner {
		p.LeaseHeld = fmt.Sprintf("%s until %s", cur.Holder, workorder.Timestamp(cur.ExpiresAt))
	}
	scope := workorder.NewScope(doc)
	for _, step := range task.WorkOrder.Procedure {
		if step.Step < p.FromStep || (opts.UntilStep > 0 && step.Step > opts.UntilStep) {
			continue
		}
		spec, _ := e.actions().Lookup(step.Action)
		ps := PlannedStep{Step: step.Step, Action: step.Action, Does: spec.Does, Runnable: spec.New != nil}
		if step.Command != "" {
			// A name a step fills in as it runs (<pr_number>) stays a
			// name until then: not an error.
			if s, err := scope.RenderLeaving(step.Command, action.LaterNames()); err != nil {
				ps.TemplateError = err.Error()
			} else {
				ps.Command = s
			}
		}
		switch {
		case spec.New == nil:
			ps.Would = "cannot run in this build of wo"
		default:
			if planner, ok := spec.New().(action.Planner); ok {
				ps.Would = planner.Plan(r.stepContext(step, scope))
			} else {
				ps.Would = spec.Does
			}
		}
		p.Steps = append(p.Steps, ps)
	}
	if !r.finished() {
		return p, r.preflight(ctx)
	}
	return p, nil
}

// Preflight makes the checks wo run makes before it changes anything — the
// checks of the steps still to run: a repository, branches and files that
// exist, a worktree folder that is free, a reviewer setting wo knows — on
// a document that need not be stored (wo validate -f). It returns the
// *PreflightError wo run would give, or nil.
func (e *Engine) Preflight(ctx context.Context, doc workorder.Document, opts RunOptions) error {
	e.defaults()
	task, err := workorder.Parse(doc)
	if err != nil || task.WorkOrder == nil || !workorder.IsWorkOrder(doc) {
		return err
	}
	r, err := newRun(e, opts, doc, task)
	if err != nil || r.finished() {
		return err
	}
	defer func() {
		if r.repo != nil {
			r.repo.Close()
		}
	}()
	return r.preflight(ctx)
}

// ResetPlan is what a reset would change, for wo reset to say before it
// does it (and instead of it, with --dry-run).
type ResetPlan struct {
	Key        string           `json:"key"`
	FromStep   int              `json:"from_step"`
	ToStep     int              `json:"to_step"`
	Steps      int              `json:"steps"`
	StatusFrom workorder.Status `json:"status_from"`
	StatusTo   workorder.Status `json:"status_to"`
	// NotDone are the steps that are done now and will not be.
	NotDone []int `json:"not_done"`
	// Forgets are the state fields whose recorded value goes, with it.
	Forgets map[string]any `json:"forgets"`
	// Rewrites says, for each step that will run again and writes the
	// work order's files on a branch that was pushed, what it will meet.
	Rewrites []string `json:"rewrites,omitempty"`
}

// PlanReset says what Reset would change, without changing anything.
func (e *Engine) PlanReset(ctx context.Context, key string, toStep int) (*ResetPlan, error) {
	e.defaults()
	doc, task, err := e.Load(ctx, key)
	if err != nil {
		return nil, err
	}
	r, err := newRun(e, RunOptions{Key: key}, doc, task)
	if err != nil {
		return nil, err
	}
	return e.rewind(ctx, r, toStep)
}

// rewind checks the target step and rewinds r's state to it in memory,
// returning what that changes.
func (e *Engine) rewind(ctx context.Context, r *run, toStep int) (*ResetPlan, error) {
	key, task := r.key(), r.task
	n := len(task.WorkOrder.Procedure)
	if err := rewindable(task, toStep); err != nil {
		return nil, err
	}
	fromStep := r.state.CurrentStep
	if toStep > fromStep {
		return nil, &RewindError{Key: key, Msg: fmt.Sprintf("is at step %d: wo reset only rewinds, and step %d has not run; use wo run %s --from-step %d to start later",
			fromStep, toStep, key, toStep+1)}
	}
	target := workorder.StatusInProgress
	if toStep == 0 {
		target = workorder.StatusOpen
	}
	// Persephone refuses in_progress while a blocker is not done: a task
	// rewound under open blockers stays open until they are.
	var blocked *BlockersOpenError
	if err := e.checkBlockers(ctx, r.doc, task); errors.As(err, &blocked) {
		target = workorder.StatusOpen
	} else if err != nil {
		return nil, err
	}
	before := r.state.Clone()
	st := &r.state
	plan := &ResetPlan{Key: key, FromStep: fromStep, ToStep: toStep, Steps: n, StatusFrom: task.Status, StatusTo: target, Forgets: map[string]any{}}
	for _, s := range st.CompletedSteps {
		if s > toStep {
			plan.NotDone = append(plan.NotDone, s)
		}
	}
	st.CompletedSteps = slices.DeleteFunc(st.CompletedSteps, func(s int) bool { return s > toStep })
	st.CurrentStep, st.LastError, st.Phase = toStep, nil, workorder.PhaseReady
	if toStep == 0 {
		st.Undo = nil // starting over: an undo that did not finish is given up
	}
	for _, s := range task.WorkOrder.Procedure {
		if s.Step > toStep {
			spec, _ := e.actions().Lookup(s.Action)
			st.Forget(spec.Forgets...)
			if spec.WritesWork && before.PushedSHA != "" {
				plan.Rewrites = append(plan.Rewrites, rewriteNote(s, before))
			}
		}
	}
	old := workorder.StateMap(before)
	diff, _ := workorder.Get(workorder.StatePatch(before, *st), "work_order.state").(map[string]any)
	for name, v := range diff {
		if v == nil && old[name] != nil && name != "last_error" && name != "phase" {
			plan.Forgets[name] = old[name]
		}
	}
	return plan, nil
}

// rewriteNote says what a step that writes the work order's files meets
// when it runs again on a branch that was pushed.
func rewriteNote(s workorder.Step, st workorder.State) string {
	fixes := ""
	if st.ReviewIterations > 0 {
		fixes = fmt.Sprintf(", which carries %d review fix round(s)", st.ReviewIterations)
	}
	return fmt.Sprintf("step %d (%s) runs again on the pushed branch%s: where the branch holds its files it writes nothing; where later commits changed them it stops (exit 3) and names them, unless the run is given --discard-commits",
		s.Step, s.Action, fixes)
}

// rewindable checks that toStep is a step of the task's procedure, or 0.
func rewindable(task *workorder.Task, toStep int) error {
	if n := len(task.WorkOrder.Procedure); toStep < 0 || toStep > n {
		return &RewindError{Key: task.Key, Msg: fmt.Sprintf("has steps 1..%d: --to-step must be 0..%d", n, n)}
	}
	return nil
}

// Reset rewinds a task's state to just after step toStep (0: not started),
// keeping the history in the activity log. It takes the lease for the write,
// so it cannot run under a working runner. The fields that the rewound
// steps record are forgotten (the state registry says which), so those
// steps resolve them afresh.
func (e *Engine) Reset(ctx context.Context, key string, toStep int) (*Result, error) {
	e.defaults()
	doc, task, err := e.Load(ctx, key)
	if err != nil {
		return nil, err
	}
	if err := rewindable(task, toStep); err != nil {
		return nil, err // before the lease: nothing to hold it for
	}
	r, release, err := e.hold(ctx, doc, task)
	if err != nil {
		return nil, err
	}
	defer release()
	from := task.Status
	plan, err := e.rewind(ctx, r, toStep)
	if err != nil {
		return nil, err
	}
	if err := r.moveStatus(ctx, plan.StatusTo); err != nil {
		return nil, err
	}
	if err := r.save(ctx, nil); err != nil {
		return nil, err
	}
	r.log(ctx, "reset", map[string]any{"to_step": toStep, "from_step": plan.FromStep, "status_from": string(from), "status_to": string(workorder.StatusOf(r.doc))})
	return r.result(), nil
}

// moveStatus walks Persephone's transitions to the target status, one
// write per hop, since each hop must be one that Persephone allows.
func (r *run) moveStatus(ctx context.Context, target workorder.Status) error {
	if target == "" {
		return nil
	}
	for _, hop := range workorder.StatusPath(workorder.StatusOf(r.doc), target) {
		top := map[string]any{}
		if err := r.setStatus(top, hop, ""); err != nil {
			return err
		}
		if err := r.save(ctx, top); err != nil {
			return err
		}
	}
	return nil
}

// hold takes the task's lease for a short edit outside a run (reset, an
// approval decision) and returns a run to write through, and the release.
func (e *Engine) hold(ctx context.Context, doc workorder.Document, task *workorder.Task) (*run, func(), error) {
	r, err := newRun(e, RunOptions{Key: task.Key}, doc, task)
	if err != nil {
		return nil, nil, err
	}
	if err := r.hold(ctx); err != nil {
		return nil, nil, err
	}
	return r, func() { r.release(context.WithoutCancel(ctx)) }, nil
}

// hold takes the task's lease for the run's writes.
func (r *run) hold(ctx context.Context) error {
	e := r.Engine
	leases := &store.Leases{Store: e.Store, Now: e.Now}
	lease, err := leases.Acquire(ctx, r.key(), e.Runner, e.LeaseTTL, identity.Gone)
	if err != nil {
		return err
	}
	// The lease write may have gone on over a change made since doc was
	// read (a note, a close): the edit's first write rebases on the task
	// as it stands, as a write after a renewal does, at the cost of one
	// read.
	r.wb = &StateWriteBack{store: e.Store, key: r.key(), rev: lease.Rev, runner: e.Runner, leaseTTL: e.LeaseTTL, now: e.Now, secrets: e.secrets(),
		stale: true}
	return nil
}
