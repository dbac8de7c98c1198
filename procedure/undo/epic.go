package undo

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wo-runner/wo/procedure"
)

// EpicTask is how the undo of one child of an epic fared.
type EpicTask struct {
	Key     string               `json:"key"`
	Outcome procedure.RunOutcome `json:"outcome"`
	Reason  string               `json:"reason,omitempty"`
	Undo    *Result              `json:"undo,omitempty"`
}

// EpicResult is the undo of an epic's children, in the order done.
type EpicResult struct {
	Epic string `json:"epic"`
	// Unstacked says what became of the GitHub stacks wo made for the
	// epic: they are taken apart first, the pull requests kept as
	// separate ones for the children's undo to judge.
	Unstacked []string   `json:"unstacked,omitempty"`
	Tasks     []EpicTask `json:"tasks"`
	// Complete is true when every child was undone whole: none failed or
	// was kept, and none left anything.
	Complete bool `json:"complete"`
}

// Epic undoes an epic's children in reverse dependency order: a task
// after every task that depends on it, so that in a stack of pull requests
// the top one goes first and no branch is deleted under a pull request
// based on it. A task whose dependent could not be undone is kept, with
// the reason. A child that another runner holds is running elsewhere, as
// in wo run --epic (its work, not a failure of the undo): the others are
// undone, and the epic's outcome says to come back (exit 3). The error is
// a *procedure.EpicError carrying the worst outcome, as a run of the
// epic's.
func Epic(ctx context.Context, e *procedure.Engine, epicKey string, opts Options) (*EpicResult, error) {
	waves, deps, err := e.EpicWaves(ctx, epicKey)
	if err != nil {
		return nil, err
	}
	res := &EpicResult{Epic: epicKey}
	if res.Unstacked, err = e.UnstackEpic(ctx, epicKey, opts.DryRun); err != nil {
		return nil, fmt.Errorf("taking apart the GitHub stack of epic %s: %w", epicKey, err)
	}
	if opts.DryRun {
		opts.plannedUndone = map[string]bool{}
	}
	ep := &epicUndo{eng: e, opts: opts, dependents: dependentsOf(deps), failed: map[string]bool{}}
	for w := len(waves) - 1; w >= 0; w-- {
		for _, key := range waves[w] {
			res.Tasks = append(res.Tasks, ep.child(ctx, key))
		}
	}
	return res, ep.outcome(res)
}

// dependentsOf turns each task's blockers into each blocker's dependents.
func dependentsOf(deps map[string][]string) map[string][]string {
	dependents := map[string][]string{}
	for k, blockers := range deps {
		for _, b := range blockers {
			dependents[b] = append(dependents[b], k)
		}
	}
	return dependents
}

// epicUndo is the undo of an epic's children, one at a time.
type epicUndo struct {
	eng        *procedure.Engine
	opts       Options
	dependents map[string][]string
	failed     map[string]bool // children not undone, whose blockers are kept
	first      error           // the first child's error
}

// child undoes one child, unless a dependent of it was not undone or the
// undo was interrupted.
func (ep *epicUndo) child(ctx context.Context, key string) EpicTask {
	t := EpicTask{Key: key}
	var kept []string
	for _, d := range ep.dependents[key] {
		if ep.failed[d] {
			kept = append(kept, d)
		}
	}
	switch {
	case len(kept) > 0:
		slices.Sort(kept)
		t.Outcome, t.Reason = procedure.OutcomeSkipped, fmt.Sprintf("kept: %s, which depends on it, was not undone", strings.Join(kept, ", "))
		ep.failed[key] = true
		return t
	case ctx.Err() != nil:
		t.Outcome, t.Reason = procedure.OutcomeInterrupted, "not started: the undo was interrupted"
		ep.failed[key] = true
		return t
	}
	o := ep.opts
	o.Key = key
	u, err := Task(ctx, ep.eng, o)
	t.Undo = u
	if ep.opts.DryRun && err == nil && resets(u) {
		ep.opts.plannedUndone[key] = true
	}
	t.Outcome = procedure.Classify(err).Outcome
	if t.Outcome == procedure.OutcomeLeaseHeld {
		t.Outcome = procedure.OutcomeElsewhere
	}
	if err != nil {
		t.Reason = ep.eng.Redact(err.Error())
		ep.failed[key] = true
		if ep.first == nil {
			ep.first = err
		}
	}
	return t
}

// outcome says whether the epic was undone whole, and is the error of an
// epic with a child not undone: the worst outcome, for the exit code.
func (ep *epicUndo) outcome(res *EpicResult) error {
	res.Complete = true
	worst := &procedure.EpicResult{Epic: res.Epic, Worst: procedure.OutcomeDone}
	for _, t := range res.Tasks {
		if t.Outcome != procedure.OutcomeDone || t.Undo == nil || !t.Undo.Complete {
			res.Complete = false
		}
		worst.Tasks = append(worst.Tasks, procedure.TaskOutcome{Key: t.Key, Outcome: t.Outcome, Reason: t.Reason})
		if t.Outcome.Worse(worst.Worst) {
			worst.Worst = t.Outcome
		}
	}
	if ep.first == nil {
		return nil
	}
	return &procedure.EpicError{Result: worst, Worst: ep.first}
}
