package procedure

import (
	"context"
	"errors"
	"fmt"
	"slices"

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
	Key       string           `json:"key"`
	Status    workorder.Status `json:"status"`
	FromStep  int              `json:"from_step"`
	Steps     []PlannedStep    `json:"steps"`
	WaitsFor  string           `json:"waits_for,omitempty"`
	LeaseHeld string           `json:"lease_held_by,omitempty"`
}

// Plan renders every step from where a run would start. It reads the store
// and the repository and writes to neither.
func (e *Engine) Plan(ctx context.Context, opts RunOptions) (*Plan, error) {
	e.defaults()
	doc, task, err := e.Load(ctx, opts.Key)
	if err != nil {
		return nil, err
	}
	r := &run{Engine: e, opts: opts, doc: doc, task: task, state: stateMap(doc)}
	p := &Plan{Key: task.Key, Status: task.Status, FromStep: r.currentStep() + 1}
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
		spec, _ := lookupAction(step.Action)
		ps := PlannedStep{Step: step.Step, Action: step.Action, Does: spec.Does, Runnable: spec.New != nil}
		if step.Command != "" {
			if s, err := scope.Render(step.Command); err != nil {
				ps.TemplateError = err.Error()
			} else {
				ps.Command = s
			}
		}
		switch {
		case spec.New == nil:
			ps.Would = "cannot run in this build of wo"
		default:
			if planner, ok := spec.New().(Planner); ok {
				ps.Would = planner.Plan(&StepContext{run: r, Step: step, Scope: scope})
			} else {
				ps.Would = spec.Does
			}
		}
		p.Steps = append(p.Steps, ps)
	}
	return p, nil
}

// resetFields are state fields that a step records; rewinding past the step
// forgets them, so the step resolves them afresh.
var resetFields = map[string][]string{
	"create_worktree": {"base_sha"},
	"checkout_files":  {"source_sha"},
	"check_review":    {"review_comments"},
}

// Reset rewinds a task's state to just after step toStep (0: not started),
// keeping the history in the activity log. It takes the lease for the write,
// so it cannot run under a working runner.
func (e *Engine) Reset(ctx context.Context, key string, toStep int) (*Result, error) {
	e.defaults()
	doc, task, err := e.Load(ctx, key)
	if err != nil {
		return nil, err
	}
	n := len(task.WorkOrder.Procedure)
	if toStep < 0 || toStep > n {
		return nil, fmt.Errorf("task %s has steps 1..%d: --to-step must be 0..%d", key, n, n)
	}
	r, release, err := e.hold(ctx, doc, task)
	if err != nil {
		return nil, err
	}
	defer release()
	wb := r.wb
	kept := slices.DeleteFunc(r.completed(), func(s int) bool { return s > toStep })
	statePatch := map[string]any{
		"current_step": toStep, "completed_steps": workorder.AnyList(kept), "last_error": nil, "phase": nil,
	}
	for _, s := range task.WorkOrder.Procedure {
		if s.Step > toStep {
			for _, f := range resetFields[s.Action] {
				statePatch[f] = nil
			}
		}
	}
	target := workorder.StatusInProgress
	if toStep == 0 {
		target = workorder.StatusOpen
	}
	from := task.Status
	for _, hop := range workorder.StatusPath(from, target) {
		patch := map[string]any{}
		if err := r.setStatus(patch, hop, ""); err != nil {
			return nil, err
		}
		if err := wb.Write(ctx, patch); err != nil {
			return nil, err
		}
	}
	if err := wb.Write(ctx, map[string]any{"work_order": map[string]any{"state": statePatch}}); err != nil {
		return nil, err
	}
	for k, v := range statePatch {
		r.state[k] = v
	}
	r.log(ctx, "reset", map[string]any{"to_step": toStep, "from_step": r.currentStep(), "status_from": from, "status_to": workorder.String(r.doc, "status")})
	return r.result(), nil
}

// hold takes the task's lease for a short edit outside a run (reset, an
// approval decision) and returns a run to write through, and the release.
func (e *Engine) hold(ctx context.Context, doc workorder.Document, task *workorder.Task) (*run, func(), error) {
	leases := &store.Leases{Store: e.Store, Now: e.Now}
	lease, err := leases.Acquire(ctx, task.Key, e.Runner, e.LeaseTTL, HolderGone)
	if err != nil {
		return nil, nil, err
	}
	wb := &StateWriteBack{store: e.Store, key: task.Key, rev: lease.Rev, runner: e.Runner, leaseTTL: e.LeaseTTL, now: e.Now}
	r := &run{Engine: e, doc: doc, task: task, wb: wb, state: stateMap(doc)}
	return r, func() { wb.Release(context.WithoutCancel(ctx)) }, nil
}
