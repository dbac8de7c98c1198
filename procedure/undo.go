package procedure

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// UndoOptions say what wo undo is asked.
type UndoOptions struct {
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

// What an undo step found and did (see action.UndoDone).
const (
	UndoDone  = action.UndoDone
	UndoGone  = action.UndoGone
	UndoLeft  = action.UndoLeft
	UndoWould = action.UndoWould
)

// UndoResult says what wo undo did to one task, newest first.
type UndoResult struct {
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

// undo is one undo of one task: it runs the table's undo parts (each
// action's, see action.Undoer) in order, recording each, and is the
// planner they ask (action.Undo): what the task's own log proves wo made,
// and what other tasks in the store name, each read once.
type undo struct {
	run  *run
	opts UndoOptions
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

var _ action.Undo = (*undo)(nil)

// Undo takes back what the task's runs did, using only what wo recorded:
// it closes the pull request wo opened (never a merged one), deletes the
// remote branch while it is still the commit wo pushed, removes the
// worktree (with the ownership checks of its cleanup step), deletes the
// local branch while it points at a commit wo made, deletes wo's comments
// when asked, and resets the state to before the first step with the
// status open (or closed). Each step looks at the world before acting and
// is written back as it finishes, so a rerun after a crash goes on where
// it stopped; an undo of a task with nothing to undo writes nothing.
func (e *Engine) Undo(ctx context.Context, opts UndoOptions) (*UndoResult, error) {
	e.defaults()
	doc, task, err := e.Load(ctx, opts.Key)
	if err != nil {
		return nil, err
	}
	st, err := workorder.StateOf(doc)
	if err != nil {
		return nil, err
	}
	res := &UndoResult{Key: task.Key, DryRun: opts.DryRun, Status: task.Status, Steps: []workorder.UndoStep{},
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
	if finished(st) {
		res.Steps, res.AsRecorded = slices.Clone(st.Undo.Steps), true
		return res, nil
	}
	if opts.DryRun {
		r, err := newRun(e, RunOptions{Key: task.Key, RepoPath: opts.RepoPath}, doc, task)
		if err != nil {
			return nil, err
		}
		u := &undo{run: r, opts: opts, st: st}
		u.sc = r.stepContext(workorder.Step{}, workorder.NewScope(doc))
		return u.execute(ctx, res, true)
	}
	r, release, err := e.hold(ctx, doc, task)
	if err != nil {
		return nil, err
	}
	defer release()
	r.opts.RepoPath = opts.RepoPath
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go r.wb.keepAlive(runCtx, func(err error) { stop(err) })
	u := &undo{run: r, opts: opts, st: st}
	u.sc = r.stepContext(workorder.Step{}, workorder.NewScope(doc))
	out, err := u.execute(runCtx, res, false)
	if err != nil && runCtx.Err() != nil {
		if cause := context.Cause(runCtx); cause != nil && !errors.Is(cause, context.Canceled) {
			return out, cause // the lease was lost
		}
	}
	return out, err
}

// UndoRetryLaterError is a transient failure (GitHub or a remote not
// answering) that stopped an undo: what it took back is recorded, and a
// later undo goes on from there.
type UndoRetryLaterError struct {
	Key string
	Err error
}

func (e *UndoRetryLaterError) Error() string {
	return fmt.Sprintf("%v; what was taken back so far is recorded: run wo undo %s again later", e.Err, e.Key)
}

func (e *UndoRetryLaterError) Unwrap() error { return e.Err }

// UndoUnfinishedError refuses to run a task that an undo has taken part
// of back (it stopped, or left something for a person): resuming would
// run on a closed pull request and deleted branches. As git town refuses
// other commands while one is unfinished, the undo is finished first.
type UndoUnfinishedError struct{ Key string }

func (e *UndoUnfinishedError) Error() string {
	return fmt.Sprintf("task %s is partly undone (work_order.state.undo): finish the undo with wo undo %s, or start over with wo reset %s --to-step 0", e.Key, e.Key, e.Key)
}

// unfinishedUndo reports whether an undo took part of the task back and
// has not finished; one that finished leaving a merged pull request is
// over, and the task's record stands.
func unfinishedUndo(st workorder.State) bool { return st.Undo != nil && !finished(st) }

func (o UndoOptions) target() workorder.Status {
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

// finished reports whether an undo recorded its last step, the state's,
// and so ended: only a task whose state it had to keep (a merged pull
// request) still has the record.
func finished(st workorder.State) bool {
	return st.Undo != nil && slices.ContainsFunc(st.Undo.Steps, func(s workorder.UndoStep) bool { return s.Step == "state" })
}

func (u *undo) execute(ctx context.Context, res *UndoResult, dry bool) (*UndoResult, error) {
	if !dry {
		if u.run.state.Undo == nil {
			u.run.state.Undo = &workorder.UndoRecord{By: u.run.Runner, Started: workorder.Timestamp(u.run.Now()), Steps: []workorder.UndoStep{}}
			if err := u.run.save(ctx, nil); err != nil {
				res.Stopped = "start"
				return res, err
			}
			u.run.log(ctx, "undo_started", map[string]any{"comments": u.opts.Comments, "close": u.opts.Close})
		}
	}
	for _, step := range u.undoParts() {
		if prev := u.recorded(step.Name); prev != nil && !dry && prev.Outcome != UndoLeft {
			res.Steps = append(res.Steps, *prev) // done before a crash; the world need not be asked again
			continue
		}
		got, err := step.Do(ctx, u, dry)
		if err != nil {
			if !dry {
				u.run.log(context.WithoutCancel(ctx), "undo_failed", map[string]any{"step": step.Name, "error": u.run.secrets().String(err.Error())})
			}
			err = fmt.Errorf("undoing %s of task %s: %w", strings.ReplaceAll(step.Name, "_", " "), u.run.key(), err)
			if IsTransient(err) {
				err = &UndoRetryLaterError{Key: u.run.key(), Err: err}
			}
			res.Stopped = step.Name
			return res, err
		}
		if got == nil {
			continue
		}
		got.Reason = u.run.secrets().String(got.Reason)
		res.Steps = append(res.Steps, *got)
		if dry {
			continue
		}
		u.run.fault("undo:" + step.Name + ":before_writeback")
		if err := u.record(ctx, *got); err != nil {
			res.Stopped = step.Name
			return res, err
		}
	}
	if u.fixable {
		// Something is left that the person can deal with (changes not
		// committed, a branch checked out, a task stacked on this one):
		// the state and the undo's record stay, so that a rerun, once
		// they have, finishes the job instead of finding nothing to undo.
		kept := workorder.UndoStep{Step: "state", Target: "work_order.state and status", Outcome: UndoLeft,
			Reason: fmt.Sprintf("kept, with status %s, until what is LEFT above is dealt with as it says: then run wo undo %s again to finish", workorder.StatusOf(u.run.doc), u.run.key())}
		res.Steps = append(res.Steps, kept)
		res.Pending = true
		return u.finish(res), nil
	}
	if u.Merged() {
		// The change is in the base branch: the task keeps its record and
		// status, which say so.
		left := workorder.UndoStep{Step: "state", Target: "work_order.state and status",
			Outcome: UndoLeft, Reason: fmt.Sprintf("pull request #%d was merged, so the task keeps its state and status %s", u.pr.Number, workorder.StatusOf(u.run.doc))}
		res.Steps = append(res.Steps, left)
		if !dry {
			if err := u.record(ctx, left); err != nil {
				res.Stopped = "state"
				return res, err
			}
		}
		return u.finish(res), nil
	}
	target := u.opts.target()
	final := workorder.UndoStep{Step: "state", Target: "work_order.state and status", Outcome: UndoWould,
		Reason: fmt.Sprintf("reset to before step 1 and move status %s → %s; the activity log keeps the history", workorder.StatusOf(u.run.doc), target)}
	if dry {
		res.Steps = append(res.Steps, final)
		return u.finish(res), nil
	}
	before := u.run.state.Clone()
	from := workorder.StatusOf(u.run.doc)
	if err := u.run.moveStatus(ctx, target); err != nil {
		res.Stopped = "state"
		return res, err
	}
	u.run.fault("undo:after_status")
	steps := append(slices.Clone(before.Undo.Steps), workorder.UndoStep{Step: "state", Target: "work_order.state and status", Outcome: UndoDone})
	after := cleared(before)
	after.Phase = workorder.PhaseReady
	after.Notes = append(after.Notes, fmt.Sprintf("undone by %s: %s", u.run.Runner, summarizeUndo(steps)))
	u.run.state = after
	if err := u.run.save(ctx, nil); err != nil {
		res.Stopped = "state"
		return res, err
	}
	final.Outcome, final.Reason = UndoDone, fmt.Sprintf("reset to before step 1; status %s → %s", from, target)
	res.Steps = append(res.Steps, final)
	before.Lease = nil
	u.run.log(ctx, "undone", map[string]any{"steps": steps, "status_from": string(from), "status_to": string(target),
		"state_before": workorder.Clone(mustNormalize(before))})
	return u.finish(res), nil
}

func mustNormalize(st workorder.State) any {
	v, err := workorder.Normalize(st)
	if err != nil {
		return nil
	}
	return v
}

func (u *undo) finish(res *UndoResult) *UndoResult {
	res.Status = workorder.StatusOf(u.run.doc)
	res.Complete = !slices.ContainsFunc(res.Steps, func(s workorder.UndoStep) bool { return s.Outcome == UndoLeft })
	res.Warnings = u.run.warnings
	return res
}

func summarizeUndo(steps []workorder.UndoStep) string {
	var parts []string
	for _, s := range steps {
		parts = append(parts, s.Step+" "+s.Outcome)
	}
	return strings.Join(parts, ", ")
}

// recorded is what an earlier attempt of this undo recorded for a step.
func (u *undo) recorded(name string) *workorder.UndoStep {
	if u.run.state.Undo == nil {
		return nil
	}
	for _, s := range u.run.state.Undo.Steps {
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
	steps := slices.DeleteFunc(slices.Clone(u.run.state.Undo.Steps), func(x workorder.UndoStep) bool { return x.Step == s.Step })
	u.run.state.Undo.Steps = append(steps, s)
	if err := u.run.save(ctx, nil); err != nil {
		return err
	}
	u.run.fault("undo:" + s.Step + ":after_writeback")
	u.run.log(ctx, "undo_step", map[string]any{"step": s.Step, "target": s.Target, "outcome": s.Outcome, "reason": s.Reason})
	return nil
}

// PullRequest reads wo's pull request once: the recorded one, else one a
// run opened but did not record; nil when there is none.
func (u *undo) PullRequest(ctx context.Context) (*github.PR, error) {
	if u.prRead || (u.st.PRNumber == 0 && !u.mayHaveUnrecordedPR()) {
		return u.pr, nil
	}
	client, err := u.sc.GitHub()
	if err != nil {
		return nil, err
	}
	if u.st.PRNumber != 0 {
		u.pr, err = client.GetPR(ctx, u.st.PRNumber)
	} else {
		u.pr, err = u.unrecordedPR(ctx, client)
	}
	if err != nil {
		return nil, err
	}
	u.prRead = true
	return u.pr, nil
}

// mayHaveUnrecordedPR reports whether a run may have opened a pull request
// without recording it: the procedure opens one and the task's branch is
// recorded (the branch is recorded before anything is pushed).
func (u *undo) mayHaveUnrecordedPR() bool {
	return u.st.PRNumber == 0 && u.st.Branch != "" && u.ProcedureMakes(action.FactPullRequest)
}

// StartedPushing reports whether this task's runs pushed, or started a
// step that pushes (one killed after its push and before its write-back
// logged no fact of it).
func (u *undo) StartedPushing(ctx context.Context) (bool, error) {
	prov, err := u.provenance(ctx)
	if err != nil {
		return false, err
	}
	if len(prov.Pushed) > 0 {
		return true, nil
	}
	for name := range prov.StartedActions {
		if a, _ := u.run.actions().Lookup(name); a.MayMake(action.FactPushed) {
			return true, nil
		}
	}
	return false, nil
}

// ProcedurePushesBranch reports whether the task's procedure has a step
// that publishes its branch (action.Spec.PushesBranch).
func (u *undo) ProcedurePushesBranch() bool {
	return slices.ContainsFunc(u.run.procedure(), func(s workorder.Step) bool {
		a, _ := u.run.actions().Lookup(s.Action)
		return a.PushesBranch
	})
}

// ProcedureMakes reports whether the task's procedure has a step that may
// make things of the kind.
func (u *undo) ProcedureMakes(kind action.FactKind) bool {
	return u.run.actions().Makes(u.run.procedure(), kind)
}

// unrecordedPR finds the pull request a run opened but stopped before
// recording (its number is written back after GitHub made it). It
// is wo's only when it is from the task's recorded branch into the task's
// base and wo's own login opened it; one that someone else opened is kept
// in notOurs, and left. A merged one is returned as it is: undo then
// leaves the branch and the state, as for a recorded merged one.
func (u *undo) unrecordedPR(ctx context.Context, client *github.Client) (*github.PR, error) {
	base := u.sc.BaseBranch()
	prs, err := client.PRsFrom(ctx, u.st.Branch, base)
	if err != nil {
		return nil, err
	}
	// An open one is the run's; failing that, a merged one means the
	// work went in, which undo never takes back. Closed ones are done.
	i := slices.IndexFunc(prs, func(p *github.PR) bool { return p.State == github.PROpen })
	if open := onlyOpen(prs); i >= 0 && open == nil {
		// More than one is open: nothing says which one the run opened.
		u.notOurs = prs[i]
		u.notOursWhy = fmt.Sprintf("wo recorded no pull request, and more than one is open from %s into %s, so wo cannot tell which one a run opened: wo keeps them", u.st.Branch, base)
		return nil, nil
	}
	if i < 0 {
		i = slices.IndexFunc(prs, func(p *github.PR) bool { return p.Merged })
	}
	if i < 0 {
		return nil, nil
	}
	pr := prs[i]
	me, err := client.Login(ctx)
	if err != nil {
		return nil, err
	}
	if pr.Head != u.st.Branch || pr.Base != base || pr.Author != me {
		u.notOurs = pr
		u.notOursWhy = fmt.Sprintf("wo recorded no pull request, and this one from %s into %s was opened by %s, not by wo: wo keeps it", pr.Head, pr.Base, pr.Author)
		return nil, nil
	}
	u.prFound = fmt.Sprintf("wo had not recorded it (a run stopped before writing it back), but it is wo's: open from %s into %s, opened by %s", pr.Head, pr.Base, me)
	return pr, nil
}

// undoParts are the engine's table's undo parts. An action of the table
// whose runner takes nothing back (one a test scripted, say) falls back to
// this build's action of the same name, so that what a run of it made is
// still taken back.
func (u *undo) undoParts() []action.UndoPart {
	table := slices.Clone(u.run.actions())
	for i, a := range table {
		if undoes(a) {
			continue
		}
		if d, ok := defaultTable.Lookup(a.Name); ok && undoes(d) {
			table[i].New = d.New
		}
	}
	return table.UndoParts()
}

// undoes reports whether the action's runner takes back what it makes.
func undoes(a action.Spec) bool {
	if a.New == nil {
		return false
	}
	_, ok := a.New().(action.Undoer)
	return ok
}

// Merged says wo's pull request was merged.
func (u *undo) Merged() bool { return u.pr != nil && u.pr.Merged }

// The rest of action.Undo: what the undo was asked, found and noted.

func (u *undo) StepContext() *action.StepContext { return u.sc }
func (u *undo) Found() workorder.State           { return u.st }
func (u *undo) Comments() bool                   { return u.opts.Comments }
func (u *undo) Reason() string                   { return u.opts.Reason }
func (u *undo) NotOurs() (*github.PR, string)    { return u.notOurs, u.notOursWhy }
func (u *undo) FoundUnrecorded() string          { return u.prFound }
func (u *undo) Fixable()                         { u.fixable = true }
func (u *undo) WillRemove(path string)           { u.wouldRemove = path }
func (u *undo) Removing() string                 { return u.wouldRemove }
func (u *undo) Fault(point string)               { u.run.fault(point) }

// WorktreeOfAnotherTask says which other task records the worktree at path
// as its own, "" when none does.
func (u *undo) WorktreeOfAnotherTask(ctx context.Context, path string) (string, error) {
	return u.otherTask(ctx, func(_ *workorder.Task, st workorder.State) bool {
		return st.WorktreePath != nil && samePath(*st.WorktreePath, path)
	})
}

// ConfirmClosed checks a pull request that reads as closed against the
// list of open pull requests from its branch: an undo that took a PR's
// word for being closed would report it gone, and complete, while it is
// open. Two answers that disagree are a retry later (GitHub's lists can
// lag a change by a moment).
func (u *undo) ConfirmClosed(ctx context.Context, pr *github.PR) error {
	client, err := u.sc.GitHub()
	if err != nil {
		return err
	}
	open, err := client.FindOpenPR(ctx, pr.Head, pr.Base)
	if err != nil {
		return err
	}
	if open != nil && open.Number == pr.Number {
		return action.Transient(fmt.Errorf("GitHub answers that pull request #%d is closed, but lists it open from %s into %s: wo does not take it as closed; close it on GitHub, or run wo undo %s again later",
			pr.Number, pr.Head, pr.Base, u.run.key()))
	}
	return nil
}

func (u *undo) Branch() string {
	if u.st.Branch != "" {
		return u.st.Branch
	}
	return u.sc.BranchName()
}

// PushedByWo says why the remote branch's tip is wo's to delete, or ""
// when it is not: a commit this task's runs logged pushing, or making (the
// push of a run that stopped before it logged the push).
func (u *undo) PushedByWo(ctx context.Context, tip plumbing.Hash) (string, error) {
	prov, err := u.provenance(ctx)
	switch {
	case err != nil:
		return "", err
	case prov.PushedIt(tip):
		return "the commit wo pushed", nil
	case prov.Made(tip):
		return "a commit wo made; wo had not recorded pushing it (a run stopped before writing it back)", nil
	}
	return "", nil
}

// NotPushedByWo says why a remote branch that wo cannot prove it pushed
// stays.
func (u *undo) NotPushedByWo(ctx context.Context, branch, remote string, tip plumbing.Hash) (string, error) {
	prov, err := u.provenance(ctx)
	if err != nil {
		return "", err
	}
	if len(prov.Pushed) > 0 {
		return fmt.Sprintf("branch %s on %s is at %s, not %s that wo pushed: someone else pushed since, so wo keeps it; delete it yourself with git push %s --delete %s if it is not needed",
			branch, remote, gitops.Short(tip.String()), strings.Join(prov.Pushed, ", "), remote, branch), nil
	}
	return fmt.Sprintf("branch %s on %s is at %s, which wo did not record making, and wo recorded no push to it: it may be someone else's, so wo keeps it; delete it yourself with git push %s --delete %s if it is not needed",
		branch, remote, gitops.Short(tip.String()), remote, branch), nil
}

// provenance reads this task's activity log once.
func (u *undo) provenance(ctx context.Context) (Provenance, error) {
	if u.prov == nil {
		entries, err := u.run.Store.Logs(ctx, u.run.key())
		if err != nil {
			return Provenance{}, err
		}
		p := provenanceOf(u.run.actions(), u.run.key(), entries)
		u.prov = &p
	}
	return *u.prov, nil
}

// ForeignBranch says why the task's branch is not provably its own, ""
// when it is. The state is document text: a branch it names is this
// task's only when this task's runs logged switching to it or pushing it,
// and it is not another's (see SharedBranch).
func (u *undo) ForeignBranch(ctx context.Context) (string, error) {
	why, err := u.SharedBranch(ctx)
	if err != nil || why != "" {
		return why, err
	}
	prov, err := u.provenance(ctx)
	if err != nil {
		return "", err
	}
	if branch := u.Branch(); !prov.Branch(branch) {
		return fmt.Sprintf(keepBranch, branch, "was never switched to or pushed by this task's runs (its activity log has no such step)"), nil
	}
	return "", nil
}

const keepBranch = "branch %s %s, so wo keeps it; if the task made it, delete it yourself"

// SharedBranch says why the task's branch may be somebody else's, ""
// when nothing says so: it must be the branch the task's inputs name, not
// the base or source branch, not a pull request's base, and no other task
// may name it. Read once.
func (u *undo) SharedBranch(ctx context.Context) (string, error) {
	if u.shared != nil {
		return *u.shared, nil
	}
	why, err := u.whyShared(ctx)
	if err != nil {
		return "", err
	}
	u.shared = &why
	return why, nil
}

func (u *undo) whyShared(ctx context.Context) (string, error) {
	branch := u.Branch()
	const keep = keepBranch
	if named := u.sc.BranchName(); named != "" && named != branch {
		return fmt.Sprintf(keep, branch, "is not the branch the task names ("+named+")"), nil
	}
	for _, c := range []string{"base_branch", "source_branch"} {
		if u.sc.Context(c) == branch {
			return fmt.Sprintf(keep, branch, "is the task's context."+c), nil
		}
	}
	if u.pr != nil && u.pr.Base == branch {
		return fmt.Sprintf(keep, branch, fmt.Sprintf("is the base of pull request #%d", u.pr.Number)), nil
	}
	other, err := u.otherTask(ctx, func(t *workorder.Task, st workorder.State) bool {
		named, _ := t.WorkOrder.Inputs["branch_name"].(string)
		return (named == branch || st.Branch == branch) && u.sameRepository(t)
	})
	if err != nil || other == "" {
		return "", err
	}
	return fmt.Sprintf(keep, branch, "is named by task "+other+" too"), nil
}

// StackedOn says why the branch must stay because another task builds on
// it, "" when none does: a task whose context.base_branch it is and that
// a run has touched and no undo has reset. On GitHub, deleting the branch
// would close that task's pull request for good (GitHub closes the pull
// requests based on a deleted branch, and they cannot be reopened). Once
// that task is undone, a rerun of this undo takes the branch back, so the
// undo is pending until then.
func (u *undo) StackedOn(ctx context.Context, branch string) (string, error) {
	other, err := u.otherTask(ctx, func(t *workorder.Task, st workorder.State) bool {
		base, _ := t.WorkOrder.Context["base_branch"].(string)
		return base == branch && !pristine(st) && !u.opts.plannedUndone[t.Key] && u.sameRepository(t)
	})
	if err != nil || other == "" {
		return "", err
	}
	u.Fixable()
	instead := "run wo undo " + other + " first"
	if epic := u.run.task.ParentKey; epic != "" {
		instead = fmt.Sprintf("undo the stack from the top with wo undo --epic %s, or run wo undo %s first", epic, other)
	}
	return fmt.Sprintf("branch %s is the base of task %s (its context.base_branch), which has not been undone: deleting it would close that task's pull request for good, so wo keeps it; %s, then wo undo %s again",
		branch, other, instead, u.run.key()), nil
}

// sameRepository reports whether another task may work in this task's
// repository: a branch of the same name in another repository (another
// checkout, another GitHub repository) is not this one's. When either
// side names no repository, it may be the same.
func (u *undo) sameRepository(t *workorder.Task) bool {
	theirPath, _ := t.WorkOrder.Context["repo_path"].(string)
	theirRepo, _ := t.WorkOrder.Context["repo"].(string)
	return maySame(cleanPath(cmp.Or(u.run.opts.RepoPath, u.sc.Context("repo_path"))), cleanPath(theirPath)) &&
		maySame(u.sc.Context("repo"), theirRepo)
}

// maySame reports whether two names may name the same thing: they are
// equal, or one is not given.
func maySame(a, b string) bool { return a == "" || b == "" || a == b }

func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Clean(p)
}

// otherTask is the key of another task in the store that match says names
// the same thing, "" when none does.
func (u *undo) otherTask(ctx context.Context, match func(*workorder.Task, workorder.State) bool) (string, error) {
	if u.others == nil {
		docs, err := u.run.Store.List(ctx, store.Filter{})
		if err != nil {
			return "", err
		}
		u.others = []otherWorkOrder{}
		for _, d := range docs {
			if workorder.Key(d) == u.run.key() {
				continue
			}
			t, err := workorder.Parse(d)
			if err != nil || t.WorkOrder == nil || !workorder.IsWorkOrder(d) {
				continue
			}
			st, _ := workorder.StateOf(d)
			if t.Status == workorder.StatusClosed && st.NeverRan() {
				continue // closed before it ran: it made nothing and will make nothing
			}
			u.others = append(u.others, otherWorkOrder{t, st})
		}
	}
	for _, o := range u.others {
		if match(o.task, o.state) {
			return o.task.Key, nil
		}
	}
	return "", nil
}

// otherWorkOrder is another task's work order and state, as undo's
// checks read them (once per undo).
type otherWorkOrder struct {
	task  *workorder.Task
	state workorder.State
}

// ForeignPR says why the recorded pull request is not provably the one
// this task opened, "" when it is: it must come from the task's own
// branch, which must be provably this task's by the rules of the branch
// steps (the state that names both may be another task's, copied), and
// be opened by the login wo runs as.
func (u *undo) ForeignPR(ctx context.Context) (string, error) {
	pr := u.pr
	if pr == nil {
		return "", nil // no pull request read (PullRequest first): nothing to judge
	}
	if pr.Head != u.Branch() {
		return fmt.Sprintf("pull request #%d is from branch %s, not this task's branch %s: wo did not open it for this task, so wo leaves it", pr.Number, pr.Head, u.Branch()), nil
	}
	if why, err := u.ForeignBranch(ctx); err != nil || why != "" {
		return fmt.Sprintf("pull request #%d comes from a branch wo cannot prove is this task's, so wo leaves it: %s", pr.Number, why), err
	}
	client, err := u.sc.GitHub()
	if err != nil {
		return "", err
	}
	me, err := client.Login(ctx)
	if err != nil {
		return "", err
	}
	if pr.Author != "" && pr.Author != me {
		return fmt.Sprintf("pull request #%d was opened by %s, not by %s that wo runs as, so wo leaves it", pr.Number, pr.Author, me), nil
	}
	return u.unloggedPR(ctx, client, pr)
}

// unloggedPR says why a pull request this task's activity log does not
// record opening or taking up stays, "" when it is wo's all the same: the
// state's number is document text, and the login wo runs as may be a
// person's too. Only a run that stopped between opening the pull request
// and logging the step leaves one unlogged, and then it is the single
// open pull request from the task's branch into its base.
func (u *undo) unloggedPR(ctx context.Context, client *github.Client, pr *github.PR) (string, error) {
	prov, err := u.provenance(ctx)
	if err != nil || slices.Contains(prov.PRs, pr.Number) || u.prFound != "" {
		return "", err // unrecordedPR proved the one it found
	}
	logged := "records no pull request"
	if len(prov.PRs) > 0 {
		var nums []string
		for _, n := range prov.PRs {
			nums = append(nums, fmt.Sprintf("#%d", n))
		}
		logged = "records only " + strings.Join(nums, ", ")
	}
	why := fmt.Sprintf("this task's activity log %s, not #%d", logged, pr.Number)
	if base := u.sc.BaseBranch(); pr.Base != base {
		return fmt.Sprintf("pull request #%d is into %s, not the task's base %s, and %s: wo did not open it for this task, so wo leaves it", pr.Number, pr.Base, base, why), nil
	}
	prs, err := client.PRsFrom(ctx, pr.Head, pr.Base)
	if err != nil {
		return "", err
	}
	if open := onlyOpen(prs); pr.State == github.PROpen && (open == nil || open.Number != pr.Number) {
		return fmt.Sprintf("%s, and it is not the only open pull request from %s into %s, so wo cannot prove it opened it and leaves it", why, pr.Head, pr.Base), nil
	}
	return "", nil
}

// onlyOpen is the one open pull request of prs, nil when none or several
// are open.
func onlyOpen(prs []*github.PR) *github.PR {
	var open *github.PR
	for _, p := range prs {
		if p.State == github.PROpen {
			if open != nil {
				return nil
			}
			open = p
		}
	}
	return open
}

func samePath(a, b string) bool { return filepath.Clean(a) == filepath.Clean(b) }

// WorktreeNotMade says why wo cannot prove that this task's run created
// the worktree, "" when it can: wo names the task in the
// worktree's admin files (gitops.OwnerFile), which a document cannot
// write; a worktree made before wo wrote that file counts when this
// task's activity log records creating it at that path.
func (u *undo) WorktreeNotMade(ctx context.Context, w *gitops.Worktree) (string, error) {
	owner, marked := w.CreatedFor()
	switch {
	case marked && owner == u.run.key():
		return "", nil
	case marked:
		return fmt.Sprintf("its admin files %s say task %s created it, not %s, so wo keeps it", w.AdminDir, owner, u.run.key()), nil
	}
	prov, err := u.provenance(ctx)
	if err != nil || slices.ContainsFunc(prov.Worktrees, func(p string) bool { return samePath(p, w.Path) }) {
		return "", err
	}
	return fmt.Sprintf("wo cannot prove it created it: its admin files %s carry no mark of wo's, and this task's activity log records creating no worktree there; it may be someone else's, so wo keeps it (remove it yourself with git worktree remove if it is not needed)", w.AdminDir), nil
}

// AdoptedBranch says why a branch that wo found existing (FactAdopted)
// stays, "" when wo made the branch: it was someone's before wo committed
// on it, and deleting it would take their commits with it. Resetting it
// to where wo found it is left to a person (reset says how, with <start>
// standing for that commit), who knows whether anyone built on wo's part.
func (u *undo) AdoptedBranch(ctx context.Context, branch string, tip plumbing.Hash, reset string) (string, error) {
	prov, err := u.provenance(ctx)
	if err != nil {
		return "", err
	}
	start := prov.Adopted[branch]
	if start == "" {
		return "", nil
	}
	added := "wo added nothing to it"
	if !strings.HasPrefix(tip.String(), start) {
		added = fmt.Sprintf("it is at %s now; the commits this task's runs logged making are %s", gitops.Short(tip.String()), cmp.Or(strings.Join(prov.Commits, ", "), "none"))
	}
	return fmt.Sprintf("branch %s was there before this task's runs: wo found it at %s and started the worktree from it, so it is someone else's and wo never deletes it (%s); to take back only wo's part, reset it yourself: %s",
		branch, start, added, strings.ReplaceAll(reset, "<start>", start)), nil
}

// MadeByWo reports whether the commit is one this task's runs logged
// making or pushing; with base, also the commit wo started
// the branch at (a branch that has not moved since holds nothing to lose).
func (u *undo) MadeByWo(ctx context.Context, branch string, tip plumbing.Hash, base bool) (bool, error) {
	prov, err := u.provenance(ctx)
	if err != nil {
		return false, err
	}
	return prov.Made(tip) || (base && prov.Started(branch, tip)), nil
}

// resets reports whether an undo (or its plan) resets the task's state,
// so that no task stacks on its branch afterwards.
func resets(u *UndoResult) bool {
	return u != nil && (u.NothingToUndo || slices.ContainsFunc(u.Steps, func(s workorder.UndoStep) bool {
		return s.Step == "state" && s.Outcome != UndoLeft
	}))
}

// EpicUndoTask is how the undo of one child of an epic fared.
type EpicUndoTask struct {
	Key     string      `json:"key"`
	Outcome RunOutcome  `json:"outcome"`
	Reason  string      `json:"reason,omitempty"`
	Undo    *UndoResult `json:"undo,omitempty"`
}

// EpicUndoResult is the undo of an epic's children, in the order done.
type EpicUndoResult struct {
	Epic string `json:"epic"`
	// Unstacked says what became of the GitHub stacks wo made for the
	// epic: they are taken apart first, the pull requests kept as
	// separate ones for the children's undo to judge.
	Unstacked []string       `json:"unstacked,omitempty"`
	Tasks     []EpicUndoTask `json:"tasks"`
	// Complete is true when every child was undone whole: none failed or
	// was kept, and none left anything.
	Complete bool `json:"complete"`
}

// UndoEpic undoes an epic's children in reverse dependency order: a task
// after every task that depends on it, so that in a stack of pull requests
// the top one goes first and no branch is deleted under a pull request
// based on it. A task whose dependent could not be undone is kept, with
// the reason. A child that another runner holds is running elsewhere, as
// in wo run --epic (its work, not a failure of the undo): the others are
// undone, and the epic's outcome says to come back (exit 3). The error is
// an *EpicError carrying the worst outcome, as a run of the epic's.
func (e *Engine) UndoEpic(ctx context.Context, epicKey string, opts UndoOptions) (*EpicUndoResult, error) {
	e.defaults()
	children, edges, err := e.epicChildren(ctx, epicKey)
	if err != nil {
		return nil, err
	}
	waves, deps, err := wavesOf(children, edges)
	if err != nil {
		return nil, err
	}
	dependents := map[string][]string{}
	for k, blockers := range deps {
		for _, b := range blockers {
			dependents[b] = append(dependents[b], k)
		}
	}
	res := &EpicUndoResult{Epic: epicKey}
	if res.Unstacked, err = e.UnstackEpic(ctx, epicKey, opts.DryRun); err != nil {
		return nil, fmt.Errorf("taking apart the GitHub stack of epic %s: %w", epicKey, err)
	}
	failed := map[string]bool{}
	if opts.DryRun {
		opts.plannedUndone = map[string]bool{}
	}
	var first error
	for w := len(waves) - 1; w >= 0; w-- {
		for _, key := range waves[w] {
			t := EpicUndoTask{Key: key}
			var kept []string
			for _, d := range dependents[key] {
				if failed[d] {
					kept = append(kept, d)
				}
			}
			switch {
			case len(kept) > 0:
				slices.Sort(kept)
				t.Outcome, t.Reason = OutcomeSkipped, fmt.Sprintf("kept: %s, which depends on it, was not undone", strings.Join(kept, ", "))
				failed[key] = true
			case ctx.Err() != nil:
				t.Outcome, t.Reason = OutcomeInterrupted, "not started: the undo was interrupted"
				failed[key] = true
			default:
				o := opts
				o.Key = key
				u, err := e.Undo(ctx, o)
				t.Undo = u
				if opts.DryRun && err == nil && resets(u) {
					opts.plannedUndone[key] = true
				}
				t.Outcome = Classify(err).Outcome
				if t.Outcome == OutcomeLeaseHeld {
					t.Outcome = OutcomeElsewhere
				}
				if err != nil {
					t.Reason = e.secrets().String(err.Error())
					failed[key] = true
					if first == nil {
						first = err
					}
				}
			}
			res.Tasks = append(res.Tasks, t)
		}
	}
	res.Complete = true
	worst := &EpicResult{Epic: epicKey, Worst: OutcomeDone}
	for _, t := range res.Tasks {
		if t.Outcome != OutcomeDone || t.Undo == nil || !t.Undo.Complete {
			res.Complete = false
		}
		worst.Tasks = append(worst.Tasks, TaskOutcome{Key: t.Key, Outcome: t.Outcome, Reason: t.Reason})
		if t.Outcome.Worse(worst.Worst) {
			worst.Worst = t.Outcome
		}
	}
	if first == nil {
		return res, nil
	}
	return res, &EpicError{Result: worst, Worst: first}
}
