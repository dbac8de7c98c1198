// Package undo takes back what a work order's runs made (wo undo): wo's
// comments, the pull request, the remote branch, the worktree and the
// local branch, in that fixed order (parts.go, a file each), then the
// state. Each part asks the task's own activity log whether wo made the
// thing (provenance.go) and the world whether it is still as wo left it,
// and is recorded as it finishes (record.go), so that a rerun goes on
// where the last one stopped. The actions that made the things only run
// and report what they made (action.Fact); the engine's Edit is the
// undo's way to write the task back.
package undo

import (
	"context"
	"errors"
	"slices"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/workorder"
)

// Options say what wo undo is asked.
type Options struct {
	Key      string
	Reason   string // said in the comment that closes the pull request
	Comments bool   // also delete the comments wo posted (deliveries)
	Close    bool   // end with status closed instead of open
	DryRun   bool   // say what would be done; change nothing
	RepoPath string // overrides context.repo_path
	// plannedUndone are the tasks an epic's dry run has planned to undo
	// whole before this one: their state would be reset by then, so
	// nothing of theirs stacks on this task's branch any more.
	plannedUndone map[string]bool
}

// What an undo step found and did.
const (
	Done  = "undone" // wo took it back
	Gone  = "gone"   // nothing there to take back
	Left  = "left"   // wo may not take it back; the reason says why
	Would = "would"  // a dry run: it would be taken back
)

// Result says what wo undo did to one task, newest first.
type Result struct {
	Key    string               `json:"key"`
	DryRun bool                 `json:"dry_run,omitempty"`
	Status workorder.Status     `json:"status"`
	Steps  []workorder.UndoStep `json:"steps"`
	// Complete is true only when every step finished and none left
	// anything (someone else pushed, the pull request was merged: Steps
	// say what and why); an undo that an error stopped is not complete.
	Complete bool `json:"complete"`
	// Stopped names the step at which an error stopped the undo; the
	// Steps before it were done and are recorded.
	Stopped       string `json:"stopped,omitempty"`
	NothingToUndo bool   `json:"nothing_to_undo,omitempty"`
	// Pending says something was left that a rerun can take back once
	// the reason is dealt with (the step says how): the state is kept
	// until then.
	Pending bool `json:"pending,omitempty"`
	// AsRecorded says an earlier undo finished (what it left stays), and
	// Steps are what it recorded: this one changed nothing.
	AsRecorded    bool     `json:"as_recorded,omitempty"`
	RollbackHints []string `json:"rollback_hints,omitempty"`
	Warnings      []string `json:"warnings,omitempty"`
}

// undo is one undo of one task: it takes the parts back in order,
// recording each, and answers their questions (provenance.go): what the
// task's own log proves wo made, and what other tasks in the store name,
// each read once.
type undo struct {
	eng  *procedure.Engine
	ed   *procedure.Edit
	opts Options
	dry  bool
	sc   *action.StepContext
	st   workorder.State // the state as the undo found it
	pr   *github.PR      // wo's pull request, read once; nil when none
	// prRead says pr was looked for; prFound, when wo had not recorded
	// the pull request, how it was proven wo's; notOurs is an open pull
	// request from the task's branch into its base that someone else
	// opened.
	prRead     bool
	prFound    string
	notOurs    *github.PR
	notOursWhy string
	// shared says why the branch may be another task's or a base, ""
	// when it is not; read once.
	shared *string
	others []otherWorkOrder // the store's other work orders, read once
	prov   *Provenance      // this task's activity log, read once
	// fixable says a step left something that a rerun can take back once
	// the person deals with the reason.
	fixable bool
	// wouldRemove is the worktree a dry run would remove, so the branch
	// checked out in it would not stay checked out.
	wouldRemove string
}

// Task takes back what the task's runs did, using only what wo recorded:
// it closes the pull request wo opened (never a merged one), deletes the
// remote branch while it is still the commit wo pushed, removes the
// worktree (with the ownership checks of its cleanup step), deletes the
// local branch while it points at a commit wo made, deletes wo's comments
// when asked, and resets the state to before the first step with the
// status open (or closed). Each step looks at the world before acting and
// is written back as it finishes, so a rerun after a crash goes on where
// it stopped; an undo of a task with nothing to undo writes nothing.
func Task(ctx context.Context, e *procedure.Engine, opts Options) (*Result, error) {
	ed, err := e.Open(ctx, opts.Key, opts.RepoPath)
	if err != nil {
		return nil, err
	}
	task, st := ed.Task(), ed.State()
	res := &Result{Key: task.Key, DryRun: opts.DryRun, Status: task.Status, Steps: []workorder.UndoStep{},
		RollbackHints: task.WorkOrder.RollbackHints}
	// A task no run touched keeps its status, whatever it is: a person or
	// Persephone set it, and undo takes back only what runs did.
	if pristine(st) {
		res.NothingToUndo, res.Complete = true, true
		return res, nil
	}
	// An undo that finished, leaving what it may not take back (a merged
	// pull request, and so the state): running it again would change
	// nothing, so it writes nothing and asks nobody, and says again what
	// it left. It is not complete: the state, at least, was left.
	if procedure.UndoFinished(st) {
		res.Steps, res.AsRecorded = slices.Clone(st.Undo.Steps), true
		return res, nil
	}
	u := &undo{eng: e, ed: ed, opts: opts, dry: opts.DryRun, st: st, sc: ed.StepContext(workorder.Step{})}
	if u.dry {
		return u.execute(ctx, res)
	}
	held, release, err := ed.Hold(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	out, err := u.execute(held, res)
	if err != nil && held.Err() != nil {
		if cause := context.Cause(held); cause != nil && !errors.Is(cause, context.Canceled) {
			return out, cause // the lease was lost
		}
	}
	return out, err
}

func (o Options) target() workorder.Status {
	if o.Close {
		return workorder.StatusClosed
	}
	return workorder.StatusOpen
}

// cleared is the state undo resets to: that of a work order before its
// first step, keeping the notes (a log), the approval decision (made
// before the first step) and the version.
func cleared(st workorder.State) workorder.State {
	out := workorder.NewState()
	out.Version = st.Version
	out.Notes = slices.Clone(st.Notes)
	out.Approval = st.Approval
	if st.Phase == "" || st.Phase == workorder.PhaseReady {
		out.Phase = st.Phase
	}
	return out
}

// pristine reports whether the state records nothing a run did.
func pristine(st workorder.State) bool { return workorder.StatePatch(st, cleared(st)) == nil }

// key is the task's key.
func (u *undo) key() string { return u.ed.Key() }
