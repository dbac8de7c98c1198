package undo

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/workorder"
)

// The record of an undo is work_order.state.undo: who started it, when,
// and each part's step as it finished. A rerun takes a recorded step as
// done (one that LEFT something is asked again), and the last step, the
// state's, ends it (procedure.UndoFinished), which wo run waits for.

// stateStep is the record's last step.
const stateStep = procedure.UndoStateStep

// stateTarget is what the state step names.
const stateTarget = "work_order.state and status"

// start begins the record of the undo, once: a rerun goes on with it.
func (u *undo) start(ctx context.Context) error {
	if u.dry || u.ed.State().Undo != nil {
		return nil
	}
	st := u.ed.State()
	st.Undo = &workorder.UndoRecord{By: u.eng.Runner, Started: workorder.Timestamp(u.eng.Now()), Steps: []workorder.UndoStep{}}
	if err := u.ed.Save(ctx, st); err != nil {
		return err
	}
	u.ed.Log(ctx, "undo_started", map[string]any{"comments": u.opts.Comments, "close": u.opts.Close})
	return nil
}

// recorded is what an earlier attempt of this undo recorded for a step.
func (u *undo) recorded(name string) *workorder.UndoStep {
	st := u.ed.State()
	if st.Undo == nil {
		return nil
	}
	for _, s := range st.Undo.Steps {
		if s.Step == name {
			return &s
		}
	}
	return nil
}

// record writes a step's outcome back, and logs it.
func (u *undo) record(ctx context.Context, s workorder.UndoStep) error {
	if prev := u.recorded(s.Step); prev != nil && *prev == s {
		return nil // a rerun that found the same: nothing to write or log
	}
	st := u.ed.State()
	steps := slices.DeleteFunc(slices.Clone(st.Undo.Steps), func(x workorder.UndoStep) bool { return x.Step == s.Step })
	st.Undo.Steps = append(steps, s)
	if err := u.ed.Save(ctx, st); err != nil {
		return err
	}
	u.ed.Fault("undo:" + s.Step + ":after_writeback")
	u.ed.Log(ctx, "undo_step", map[string]any{"step": s.Step, "target": s.Target, "outcome": s.Outcome, "reason": s.Reason})
	return nil
}

// end is the state's step, the last: the state is kept while something
// left is the person's to deal with, or after a merge; else it is reset
// to before step 1, with the status moved.
func (u *undo) end(ctx context.Context, res *Result) (*Result, error) {
	if u.fixable {
		// Something is left that the person can deal with (changes not
		// committed, a branch checked out, a task stacked on this one):
		// the state and the undo's record stay, so that a rerun, once
		// they have, finishes the job instead of finding nothing to undo.
		kept := workorder.UndoStep{Step: stateStep, Target: stateTarget, Outcome: Left,
			Reason: fmt.Sprintf("kept, with status %s, until what is LEFT above is dealt with as it says: then run wo undo %s again to finish", u.ed.Status(), u.key())}
		res.Steps = append(res.Steps, kept)
		res.Pending = true
		return u.finish(res), nil
	}
	if u.merged() {
		// The change is in the base branch: the task keeps its record and
		// status, which say so.
		left := workorder.UndoStep{Step: stateStep, Target: stateTarget,
			Outcome: Left, Reason: fmt.Sprintf("pull request #%d was merged, so the task keeps its state and status %s", u.pr.Number, u.ed.Status())}
		res.Steps = append(res.Steps, left)
		if !u.dry {
			if err := u.record(ctx, left); err != nil {
				res.Stopped = stateStep
				return res, err
			}
		}
		return u.finish(res), nil
	}
	final := workorder.UndoStep{Step: stateStep, Target: stateTarget, Outcome: Would,
		Reason: fmt.Sprintf("reset to before step 1 and move status %s → %s; the activity log keeps the history", u.ed.Status(), u.opts.target())}
	if u.dry {
		res.Steps = append(res.Steps, final)
		return u.finish(res), nil
	}
	if err := u.reset(ctx, &final); err != nil {
		res.Stopped = stateStep
		return res, err
	}
	res.Steps = append(res.Steps, final)
	return u.finish(res), nil
}

// reset moves the status and clears the state, then logs what it was.
func (u *undo) reset(ctx context.Context, final *workorder.UndoStep) error {
	target := u.opts.target()
	before := u.ed.State()
	from := u.ed.Status()
	if err := u.ed.MoveStatus(ctx, target); err != nil {
		return err
	}
	u.ed.Fault("undo:after_status")
	steps := append(slices.Clone(before.Undo.Steps), workorder.UndoStep{Step: stateStep, Target: stateTarget, Outcome: Done})
	after := cleared(before)
	after.Phase = workorder.PhaseReady
	after.Notes = append(after.Notes, fmt.Sprintf("undone by %s: %s", u.eng.Runner, summarize(steps)))
	if err := u.ed.Save(ctx, after); err != nil {
		return err
	}
	final.Outcome, final.Reason = Done, fmt.Sprintf("reset to before step 1; status %s → %s", from, target)
	before.Lease = nil
	u.ed.Log(ctx, "undone", map[string]any{"steps": steps, "status_from": string(from), "status_to": string(target),
		"state_before": workorder.Clone(mustNormalize(before))})
	return nil
}

func mustNormalize(st workorder.State) any {
	v, err := workorder.Normalize(st)
	if err != nil {
		return nil
	}
	return v
}

func (u *undo) finish(res *Result) *Result {
	res.Status = u.ed.Status()
	res.Complete = !slices.ContainsFunc(res.Steps, func(s workorder.UndoStep) bool { return s.Outcome == Left })
	res.Warnings = u.ed.Warnings()
	return res
}

func summarize(steps []workorder.UndoStep) string {
	var parts []string
	for _, s := range steps {
		parts = append(parts, s.Step+" "+s.Outcome)
	}
	return strings.Join(parts, ", ")
}
