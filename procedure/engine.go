// Package procedure runs work orders: the engine that resumes, retries,
// loops, holds the task's lease and writes the state back after every
// step, and runs epics in waves. The actions it runs, and their contract
// with it, are in procedure/action; above it, procedure/undo takes back
// what runs made, procedure/stack keeps an epic's stack (restack, sync,
// GitHub's stacks, wo land) and procedure/ghevent resumes a work order
// from a GitHub event.
package procedure

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/gitops"
	"github.com/wo-runner/wo/internal/identity"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/redact"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// Engine runs work orders step by step, writing state back after every
// step so that any runner can resume.
type Engine struct {
	Store  store.Store
	Runner string              // identity in leases and logs; identity.Runner() by default
	Getenv func(string) string // configuration and secrets
	Events func(Event)         // progress; may be nil
	// Actions are the actions this engine runs; nil means this build's
	// (DefaultActions). ActionSettings are what they read of the engine's
	// configuration (StepContext.Settings).
	Actions action.Actions
	action.Settings

	// Secrets are removed from every activity-log entry, recorded error and
	// failure reason; nil means the GitHub token from Getenv.
	Secrets *redact.Secrets

	// GitHubAPI is the API base URL (--github-api, GITHUB_API_URL); the
	// token comes from GITHUB_TOKEN, then GH_TOKEN, through Getenv.
	GitHubAPI string

	LeaseTTL time.Duration // default 2 minutes; renewed every third of it
	// EpicWait is how long an epic run waits for children that other
	// runners hold (--wait-timeout); 0 reports them as running elsewhere
	// at once. EpicPoll is the first pause between looks (default 1s).
	EpicWait time.Duration
	EpicPoll time.Duration
	// Attempts and Backoff govern retries of transient failures inside a
	// run (defaults 4 and 500ms, doubled each time, with jitter).
	Attempts int
	Backoff  time.Duration
	Now      func() time.Time

	// Fault, when set, is called at named points inside steps; tests use it
	// to crash a run exactly there.
	Fault func(point string)

	// Stacks keeps the stack tables of an epic's pull requests as they
	// open; the commands wire in package procedure/stack's (nil: none).
	Stacks StackKeeper
}

// RunOptions choose what part of a procedure to run.
type RunOptions struct {
	Key       string
	FromStep  int    // run from this step, regardless of current_step
	UntilStep int    // stop after this step
	RepoPath  string // overrides context.repo_path
	// Offline makes Preflight check the document alone: the steps' checks
	// get no repository and no GitHub client, and only what they find
	// wrong with the document counts (wo validate --offline).
	Offline bool
}

// Event is one progress report.
type Event struct {
	Type     string        `json:"event"` // run_started, step_started, step_progress, step_waiting, step_finished, step_failed, step_retry, run_finished, run_waiting
	Key      string        `json:"key"`
	Step     int           `json:"step,omitempty"`
	Steps    int           `json:"steps,omitempty"`
	Action   string        `json:"action,omitempty"`
	Outcome  string        `json:"outcome,omitempty"`
	Note     string        `json:"note,omitempty"`
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"-"`
	Millis   int64         `json:"duration_ms,omitempty"`
	Done     int           `json:"done,omitempty"`
	Total    int           `json:"total,omitempty"`
	Time     time.Time     `json:"time"`
	// Wait is what a step_waiting event's step waits for (nil: the wait is
	// over). It is for a person watching, never in --json.
	Wait *action.Wait `json:"-"`
}

// Result summarises a run.
type Result struct {
	Key            string           `json:"key"`
	Status         workorder.Status `json:"status"`
	CurrentStep    int              `json:"current_step"`
	Steps          int              `json:"steps"`
	CompletedSteps []int            `json:"completed_steps"`
	Ran            []int            `json:"ran"`
	Phase          workorder.Phase  `json:"phase,omitempty"`
	// Warnings are losses that did not stop the run, such as activity-log
	// entries that could not be written.
	Warnings []string `json:"warnings,omitempty"`
	// GitHub counts the requests this run sent to GitHub.
	GitHub *github.Counts `json:"github_requests,omitempty"`
}

func (e *Engine) defaults() {
	if e.Runner == "" {
		e.Runner = identity.Runner()
	}
	if e.Getenv == nil {
		e.Getenv = func(string) string { return "" }
	}
	if e.LeaseTTL == 0 {
		e.LeaseTTL = 2 * time.Minute
	}
	if e.Attempts == 0 {
		e.Attempts = 4
	}
	if e.Backoff == 0 {
		e.Backoff = 500 * time.Millisecond
	}
	if e.Now == nil {
		e.Now = func() time.Time { return time.Now().UTC() }
	}
	e.Settings.FillDefaults()
	if e.EpicPoll == 0 {
		e.EpicPoll = time.Second
	}
}

// actions is the table the engine runs.
func (e *Engine) actions() action.Actions {
	if e.Actions == nil {
		return defaultTable
	}
	return e.Actions
}

func (e *Engine) emit(ev Event) {
	if e.Events == nil {
		return
	}
	ev.Time = e.Now()
	ev.Millis = ev.Duration.Milliseconds()
	e.Events(ev)
}

func (e *Engine) fault(point string) {
	if e.Fault != nil {
		e.Fault(point)
	}
}

// Load reads a task and checks that it can be run: valid, a work order, a
// state this wo understands.
func (e *Engine) Load(ctx context.Context, key string) (workorder.Document, *workorder.Task, error) {
	doc, err := e.Store.Get(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	task, err := e.runnable(doc)
	if err != nil {
		return nil, nil, err
	}
	return doc, task, nil
}

// runnable checks a document as Load does and returns its typed view: the
// actions read their params trusting that validation checked them.
func (e *Engine) runnable(doc workorder.Document) (*workorder.Task, error) {
	report := workorder.Validate(doc, e.actions().Options())
	if !report.Valid() {
		return nil, &workorder.InvalidError{Reports: []workorder.Report{report}}
	}
	task, err := workorder.Parse(doc)
	if err != nil {
		return nil, err
	}
	if task.WorkOrder == nil || !workorder.IsWorkOrder(doc) {
		if task.Type == "epic" {
			return nil, fmt.Errorf("task %s is an epic, not a work order: wo run --epic %s runs its children", workorder.Key(doc), workorder.Key(doc))
		}
		return nil, fmt.Errorf("task %s has no work_order: there is nothing to run", workorder.Key(doc))
	}
	return task, nil
}

// Run executes the procedure from where it stopped.
func (e *Engine) Run(ctx context.Context, opts RunOptions) (*Result, error) {
	e.defaults()
	doc, task, err := e.Load(ctx, opts.Key)
	if err != nil {
		return nil, err
	}
	wo := task.WorkOrder
	n := len(wo.Procedure)
	if opts.FromStep < 0 || opts.FromStep > n || opts.UntilStep < 0 || opts.UntilStep > n {
		return nil, fmt.Errorf("task %s has steps 1..%d: --from-step and --until-step must be within them", opts.Key, n)
	}
	r, err := newRun(e, opts, doc, task)
	if err != nil {
		return nil, err
	}
	if unfinishedUndo(r.state) {
		return nil, &UndoUnfinishedError{Key: opts.Key}
	}
	if r.finished() {
		// Closed or not, a complete procedure has nothing left to do. A
		// runner that still holds it is finishing it (moving the status on):
		// that is its work until it lets go.
		if cur := store.Current(doc); cur != nil && cur.Holder != e.Runner && cur.ExpiresAt.After(e.Now()) && !identity.Gone(cur.Holder) {
			return nil, &store.LeaseHeldError{Key: opts.Key, Holder: cur.Holder, ExpiresAt: cur.ExpiresAt}
		}
		if !r.unclosed() {
			return r.alreadyComplete(), nil
		}
		// A runner that stopped between the status moves that close a task
		// with nothing to merge left it half-way: finish closing it.
	} else if task.Status == workorder.StatusClosed {
		return nil, fmt.Errorf("task %s is closed: reopen it (wo reset %s) to run it again", opts.Key, opts.Key)
	}
	if !r.finished() {
		if err := e.checkBlockers(ctx, doc, task); err != nil {
			return nil, err
		}
		if err := r.preflight(ctx); err != nil {
			return nil, err
		}
	}

	leases := &store.Leases{Store: e.Store, Now: e.Now}
	lease, err := leases.Acquire(ctx, opts.Key, e.Runner, e.LeaseTTL, identity.Gone)
	if err != nil {
		return nil, err
	}
	r.wb = &StateWriteBack{store: e.Store, key: opts.Key, rev: lease.Rev, runner: e.Runner, leaseTTL: e.LeaseTTL, now: e.Now, secrets: e.secrets()}
	// The lease is given back however the run ends, Ctrl-C included.
	defer func() {
		rctx, cancel := action.PastCancel(ctx)
		defer cancel()
		r.release(rctx)
	}()
	// Resume from the revision the lease was written against, not from the
	// first read: another runner may have finished steps in between, and
	// running them again from a stale snapshot would do them twice.
	// r stays the run the deferred release gives the lease back through.
	fresh, err := r.resumeFrom(ctx, lease.Doc)
	if err != nil {
		return nil, err
	}
	r = fresh
	if r.finished() {
		if r.unclosed() {
			if err := r.moveStatus(ctx, workorder.StatusClosed); err != nil {
				return nil, err
			}
		}
		return r.alreadyComplete(), nil
	}
	defer func() {
		if r.repo != nil {
			r.repo.Close()
		}
	}()
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	go r.wb.keepAlive(runCtx, func(err error) { stopRun(err) })
	return r.execute(runCtx)
}

// resumeFrom rebuilds the run from the document as the lease write left it,
// validated again: it is not the one Load checked when it changed since.
// When another runner moved the procedure on since the first read, the
// checks run again against what is left to do.
func (r *run) resumeFrom(ctx context.Context, doc workorder.Document) (*run, error) {
	task, err := r.runnable(doc)
	if err != nil {
		return nil, err
	}
	fresh, err := newRun(r.Engine, r.opts, doc, task)
	if err != nil {
		return nil, err
	}
	fresh.wb = r.wb
	if fresh.state.CurrentStep != r.state.CurrentStep && !fresh.finished() {
		if err := fresh.preflight(ctx); err != nil {
			return nil, err
		}
	}
	return fresh, nil
}

// nothingToMerge reports whether a completed procedure left nothing for
// anyone to merge: no pull request and no pushed branch (agent work and
// deliveries only). Such a work order is done when its steps are.
func (r *run) nothingToMerge() bool {
	return r.state.PRNumber == 0 && r.state.PushedSHA == "" && r.opts.UntilStep == 0 && r.opts.FromStep == 0
}

// unclosed reports whether a complete procedure with nothing to merge
// has not reached closed yet (a runner stopped between the moves).
func (r *run) unclosed() bool {
	return r.finished() && r.nothingToMerge() && workorder.StatusOf(r.doc) != workorder.StatusClosed
}

// finished reports whether there is nothing left to run.
func (r *run) finished() bool {
	return r.opts.FromStep == 0 && r.state.CurrentStep >= len(r.procedure())
}

func (r *run) alreadyComplete() *Result {
	r.emit(Event{Type: "run_finished", Key: r.key(), Outcome: "already complete"})
	return r.result()
}

// checkBlockers refuses to start while a task it waits for is not done:
// one named in its blocked_by, in the store's edges, or a task of the same
// epic that lists it in blocks. (In a stacked split a pushed blocker is
// enough.)
func (e *Engine) checkBlockers(ctx context.Context, doc workorder.Document, task *workorder.Task) error {
	keys, err := e.blockers(ctx, doc)
	if err != nil {
		return err
	}
	var open []string
	for _, k := range keys {
		b, err := e.Store.Get(ctx, k)
		switch {
		case store.IsNotFound(err):
			open = append(open, k+" (does not exist)")
		case err != nil:
			return err
		case !workorder.BlockerSatisfied(doc, b):
			open = append(open, fmt.Sprintf("%s (%s)", k, workorder.StatusOf(b)))
		}
	}
	if len(open) > 0 {
		return &BlockersOpenError{Key: task.Key, Blockers: open}
	}
	return nil
}

// blockers are the tasks doc waits for, from every place a dependency can
// be written.
func (e *Engine) blockers(ctx context.Context, doc workorder.Document) ([]string, error) {
	key := workorder.Key(doc)
	edges, err := e.Store.BlockedBy(ctx, key)
	if err != nil {
		return nil, err
	}
	docs := []workorder.Document{doc}
	if parent := workorder.String(doc, "parent_key"); parent != "" {
		siblings, err := e.Store.List(ctx, store.Filter{ParentKey: parent})
		if err != nil {
			return nil, err
		}
		docs = append(docs, siblings...)
	}
	return workorder.NewGraph(docs, map[string][]string{key: edges}).BlockersOf(key), nil
}

// preflight runs the checks of the steps still to run, and reports every
// problem at once.
func (r *run) preflight(ctx context.Context) error {
	from := r.state.CurrentStep + 1
	if r.opts.FromStep > 0 {
		from = r.opts.FromStep
	}
	var problems []string
	var steps []int
	var kinds []workorder.ProblemKind
	scope := workorder.NewScope(r.doc)
	for _, step := range r.procedure() {
		if step.Step < from || (r.opts.UntilStep > 0 && step.Step > r.opts.UntilStep) {
			continue
		}
		spec, _ := r.actions().Lookup(step.Action)
		if spec.New == nil {
			continue // reported when the step is reached
		}
		checker, ok := spec.New().(action.Checker)
		if !ok {
			continue
		}
		if err := checker.Check(ctx, r.stepContext(step, scope)); err != nil {
			kind := workorder.OfMachine
			if is[*action.DocumentError](err) {
				kind = workorder.OfDocument
			}
			if r.opts.Offline && kind != workorder.OfDocument {
				continue // no repository or GitHub was there to check
			}
			problems = append(problems, fmt.Sprintf("step %d (%s): %v", step.Step, step.Action, err))
			steps = append(steps, step.Step)
			kinds = append(kinds, kind)
		}
	}
	if len(problems) > 0 {
		return &PreflightError{Key: r.key(), Problems: problems, Steps: steps, Kinds: kinds}
	}
	return nil
}

// run is one execution of a procedure.
type run struct {
	*Engine
	opts  RunOptions
	doc   workorder.Document // the document as last written
	task  *workorder.Task
	wb    *StateWriteBack
	state workorder.State // work_order.state as this run knows it
	saved workorder.State // work_order.state as last written
	// savedStatus is the status as last written or read, to tell a status
	// another writer set from one this run set.
	savedStatus workorder.Status
	ran         []int
	// warnings are losses that did not stop the run; logFailed makes a
	// failing activity log reported once, not at every entry.
	warnings  []string
	logFailed bool
	gh        *github.Client          // opened by the first step that needs it
	repo      *gitops.Repo            // likewise
	facts     *workorder.CommandFacts // what the procedure's commands name, read once
}

func newRun(e *Engine, opts RunOptions, doc workorder.Document, task *workorder.Task) (*run, error) {
	st, err := workorder.StateOf(doc)
	if err != nil {
		return nil, err
	}
	return &run{Engine: e, opts: opts, doc: doc, task: task, state: st, saved: st.Clone(), savedStatus: workorder.StatusOf(doc)}, nil
}

func (r *run) key() string { return r.task.Key }

func (r *run) procedure() []workorder.Step { return r.task.WorkOrder.Procedure }

// save writes the state's changes since the last save, with the top-level
// fields in top (a status move), in one conditional write; the document
// this run holds then mirrors the store.
func (r *run) save(ctx context.Context, top map[string]any) error {
	return r.saveLogged(ctx, top)
}

// saveLogged is save with activity-log entries (see entry) written by the
// same store request when the store can: a step's state and its
// step_completed entry cost one round trip. An entry the combined write
// could not carry is appended on its own, as log does, so a log that
// cannot be written never stops the run.
func (r *run) saveLogged(ctx context.Context, top map[string]any, entries ...store.LogEntry) error {
	patch := workorder.StatePatch(r.saved, r.state)
	if patch == nil {
		patch = map[string]any{}
	}
	store.Merge(patch, top)
	if len(patch) == 0 {
		r.appendLogs(ctx, entries)
		return nil
	}
	if !r.wb.logged() {
		defer r.appendLogs(ctx, entries)
		entries = nil
	}
	written := patch
	rebase := func(fresh workorder.Document) (map[string]any, error) {
		p, err := r.rebase(fresh, top)
		written = p
		return p, err
	}
	err := r.wb.WriteLogged(ctx, patch, rebase, entries)
	var lost *store.LeaseLostError
	var concurrent *ConcurrentChangeError
	if err != nil && len(entries) > 0 && ctx.Err() == nil && !errors.As(err, &lost) && !errors.As(err, &concurrent) {
		// Perhaps the log is what failed: the state alone, then the log.
		if err = r.wb.WriteRebasing(ctx, written, rebase); err == nil {
			r.appendLogs(ctx, entries)
		}
	}
	if err != nil {
		return err
	}
	r.saved = r.state.Clone()
	store.Merge(r.doc, workorder.Clone(written).(map[string]any))
	r.savedStatus = workorder.StatusOf(r.doc)
	return nil
}

// rebase builds a write anew when another writer (a person's Persephone
// tool, say) changed the task since this run last wrote: what they changed
// stays, notes from both are kept, and a status they set is never
// overwritten by a move Persephone would not allow from it; a task they
// closed stops the run.
func (r *run) rebase(fresh workorder.Document, top map[string]any) (map[string]any, error) {
	theirs, err := workorder.StateOf(fresh)
	if err != nil {
		return nil, err
	}
	now := workorder.StatusOf(fresh)
	target, moving := top["status"].(string)
	if now != r.savedStatus && (now == workorder.StatusClosed || moving && !workorder.CanTransition(now, workorder.Status(target))) {
		return nil, &ConcurrentChangeError{Key: r.key(), Status: now}
	}
	merged := workorder.MergeStates(r.saved, theirs, r.state)
	patch := workorder.StatePatch(theirs, merged)
	if patch == nil {
		patch = map[string]any{}
	}
	store.Merge(patch, top)
	if moving && workorder.Status(target) == now {
		delete(patch, "status")
	}
	r.state, r.saved = merged, theirs
	r.doc = workorder.Clone(fresh).(map[string]any)
	return patch, nil
}

// setStatus moves the task's status through Persephone's transitions,
// adding the patch fields to out.
func (r *run) setStatus(out map[string]any, to workorder.Status, reason string) error {
	from := workorder.StatusOf(r.doc)
	if from == to {
		if to == workorder.StatusBlocked {
			out["block_reason"] = reason
		}
		return nil
	}
	if !workorder.CanTransition(from, to) {
		return fmt.Errorf("task %s: Persephone does not allow status %s → %s", r.key(), from, to)
	}
	out["status"] = string(to)
	if to == workorder.StatusBlocked {
		out["block_reason"] = reason
	} else if from == workorder.StatusBlocked {
		out["block_reason"] = nil
	}
	r.doc["status"] = string(to)
	return nil
}

func (r *run) execute(ctx context.Context) (*Result, error) {
	steps := r.procedure()
	next := r.state.CurrentStep + 1
	if r.opts.FromStep > 0 {
		next = r.opts.FromStep
	}
	if next > len(steps) {
		return r.alreadyComplete(), nil
	}
	// The approval gate, before anything changes when the first step
	// already would.
	if err := r.gate(steps[next-1]); err != nil {
		r.log(ctx, "approval_requested", map[string]any{"step": next, "plan": err.Error()})
		return r.result(), err
	}
	start := map[string]any{}
	if err := r.setStatus(start, workorder.StatusInProgress, ""); err != nil {
		return nil, err
	}
	r.state.Phase, r.state.Version, r.state.Skipped = workorder.PhaseRunning, workorder.StateVersion, nil
	// The timeline is written before anything is shown.
	if err := r.saveLogged(ctx, start, r.entry("run_started", map[string]any{"from_step": next})); err != nil {
		return nil, err
	}
	r.emit(Event{Type: "run_started", Key: r.key(), Step: next, Steps: len(steps)})

	for next <= len(steps) {
		step := steps[next-1]
		if err := r.gate(step); err != nil {
			r.state.Phase = workorder.PhaseAwaitingApproval
			if werr := r.save(ctx, nil); werr != nil {
				return r.result(), werr
			}
			r.log(ctx, "approval_requested", map[string]any{"step": step.Step, "plan": err.Error()})
			return r.result(), err
		}
		jump, err := r.runStep(ctx, step)
		var stopped *InterruptedError
		if err != nil && !errors.As(err, &stopped) && ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled) {
			// The signal came while the step's outcome was being written.
			r.interrupted(ctx, step)
			err = &InterruptedError{Key: r.key(), Step: step.Step}
		}
		if err != nil {
			return r.result(), err
		}
		if r.opts.UntilStep > 0 && step.Step >= r.opts.UntilStep && jump == 0 {
			r.emit(Event{Type: "run_finished", Key: r.key(), Outcome: fmt.Sprintf("stopped after step %d as asked", step.Step)})
			return r.result(), nil
		}
		if jump > 0 {
			next = jump
		} else {
			next = step.Step + 1
		}
	}
	r.state.Phase = workorder.PhaseDone
	if r.nothingToMerge() {
		// Nobody will merge anything, so nothing else would ever close it,
		// and the tasks that wait for it would wait forever.
		r.state.Notes = append(r.state.Notes, "closed: the procedure completed with no pull request or pushed branch to merge")
		if err := r.moveStatus(ctx, workorder.StatusClosed); err != nil {
			return r.result(), err
		}
	}
	if err := r.saveLogged(ctx, nil, r.entry("run_finished", map[string]any{"status": workorder.String(r.doc, "status")})); err != nil {
		return r.result(), err
	}
	r.emit(Event{Type: "run_finished", Key: r.key(), Outcome: "complete"})
	return r.result(), nil
}

// runStep runs one step with retries and writes its outcome back. It
// returns the step to jump to (0: the next one).
func (r *run) runStep(ctx context.Context, step workorder.Step) (int, error) {
	spec, ok := r.actions().Lookup(step.Action)
	if !ok || spec.New == nil {
		err := fmt.Errorf("action %s cannot run in this build of wo", step.Action)
		return 0, r.fail(ctx, step, 1, err)
	}
	sc := r.stepContext(step, workorder.NewScope(r.currentDoc()))
	r.log(ctx, "step_started", map[string]any{"step": step.Step, "action": step.Action})
	r.emit(Event{Type: "step_started", Key: r.key(), Step: step.Step, Steps: len(r.procedure()), Action: step.Action})
	started := time.Now()
	var out action.Outcome
	var err error
	attempt := 1
	for ; ; attempt++ {
		out, err = spec.New().Run(ctx, sc)
		if err == nil || !IsTransient(err) || ctx.Err() != nil {
			break
		}
		if attempt >= r.Attempts || waitedOut(err) {
			err = r.recordError(ctx, step, attempt, err)
			return 0, &RetriesExhaustedError{Key: r.key(), Step: step.Step, Action: step.Action, Attempts: attempt, Err: err}
		}
		delay := r.Backoff << (attempt - 1)
		delay += time.Duration(rand.Int64N(int64(delay)/2 + 1))
		r.emit(Event{Type: "step_retry", Key: r.key(), Step: step.Step, Action: step.Action, Error: err.Error(), Duration: delay})
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		}
	}
	elapsed := time.Since(started)
	if ctx.Err() != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return 0, cause // the lease was lost
		}
		r.interrupted(ctx, step)
		return 0, &InterruptedError{Key: r.key(), Step: step.Step}
	}
	if err != nil {
		var waiting *action.WaitingError
		if errors.As(err, &waiting) {
			return 0, r.wait(ctx, step, out, waiting)
		}
		return 0, r.fail(ctx, step, attempt, err)
	}
	return r.complete(ctx, step, out, elapsed)
}

// interrupted records that a signal stopped the run in a step: the phase
// says so (not "running", with no runner behind it) and the timeline has
// the entry, in one write made past the cancelled context and bounded on
// its own. The lease is given back after it, as at every end of a run.
func (r *run) interrupted(ctx context.Context, step workorder.Step) {
	wctx, cancel := action.PastCancel(ctx)
	defer cancel()
	r.state.Phase = workorder.PhaseInterrupted
	entry := r.entry("step_interrupted", map[string]any{"step": step.Step, "action": step.Action})
	if err := r.saveLogged(wctx, nil, entry); err != nil {
		r.warnings = append(r.warnings, fmt.Sprintf("the interruption of step %d was not recorded: %v", step.Step, err))
	}
}

// currentDoc is the document with the state as this run knows it.
func (r *run) currentDoc() workorder.Document {
	d := workorder.Clone(r.doc).(map[string]any)
	if p := workorder.StatePatch(r.saved, r.state); p != nil {
		store.Merge(d, p)
	}
	return d
}

// complete writes a finished step back: one conditional write.
func (r *run) complete(ctx context.Context, step workorder.Step, out action.Outcome, elapsed time.Duration) (int, error) {
	if out.State != nil {
		r.state = out.State.Clone()
	}
	st := &r.state
	done := st.CompletedSteps
	if !slices.Contains(done, step.Step) {
		done = append(done, step.Step)
	}
	st.CurrentStep = step.Step
	if out.JumpTo > 0 {
		// Going back: the steps from loop_to on are to be done again.
		done = slices.DeleteFunc(done, func(s int) bool { return s >= out.JumpTo })
		st.CurrentStep = out.JumpTo - 1
	}
	slices.Sort(done)
	st.CompletedSteps = done
	if out.Note != "" {
		st.Notes = append(st.Notes, out.Note)
	}
	if st.StepDurationsMS == nil {
		st.StepDurationsMS = map[string]int64{}
	}
	st.StepDurationsMS[strconv.Itoa(step.Step)] = elapsed.Milliseconds()
	st.LastError = nil
	top := map[string]any{}
	if out.Status != "" {
		if err := r.setStatus(top, out.Status, out.BlockReason); err != nil {
			return 0, r.fail(ctx, step, 1, err)
		}
	}
	r.fault(step.Action + ":before_writeback")
	completed := r.entry("step_completed", map[string]any{"step": step.Step, "action": step.Action,
		"duration_ms": elapsed.Milliseconds(), "outcome": "ok", "note": out.Note, action.FactsKey: action.FactsData(out.Facts),
		"repo": workorder.String(r.doc, "work_order.context.repo_path")})
	if err := r.saveLogged(ctx, top, completed); err != nil {
		return 0, err
	}
	r.fault(step.Action + ":after_writeback")
	r.ran = append(r.ran, step.Step)
	r.emit(Event{Type: "step_finished", Key: r.key(), Step: step.Step, Steps: len(r.procedure()), Action: step.Action,
		Outcome: "ok", Note: out.Note, Duration: elapsed})
	return out.JumpTo, nil
}

// fail records a failed step, blocks the task with the reason, and returns
// the error for the exit code.
func (r *run) fail(ctx context.Context, step workorder.Step, attempt int, err error) error {
	ctx = context.WithoutCancel(ctx)
	err = r.secrets().Error(err)
	reason := fmt.Sprintf("step %d (%s) failed: %v", step.Step, step.Action, err)
	r.state.LastError = r.stepError(step, attempt, err)
	r.state.Phase = workorder.PhaseFailed
	top := map[string]any{}
	if serr := r.setStatus(top, workorder.StatusBlocked, reason); serr != nil {
		top = nil
	}
	if werr := r.save(ctx, top); werr != nil {
		err = fmt.Errorf("%w (and recording the failure failed too: %v)", err, werr)
	}
	r.log(ctx, "step_failed", map[string]any{"step": step.Step, "action": step.Action, "attempt": attempt, "error": err.Error()})
	r.emit(Event{Type: "step_failed", Key: r.key(), Step: step.Step, Action: step.Action, Outcome: string(OutcomeFailed), Error: err.Error()})
	return &StepFailedError{Key: r.key(), Step: step.Step, Action: step.Action, Attempt: attempt, Err: err}
}

// recordError keeps a transient failure in state without blocking the
// task; it returns the error to report, with the recording's own failure.
func (r *run) recordError(ctx context.Context, step workorder.Step, attempt int, err error) error {
	ctx = context.WithoutCancel(ctx)
	r.state.LastError = r.stepError(step, attempt, err)
	if werr := r.save(ctx, nil); werr != nil {
		err = fmt.Errorf("%w (and recording it failed too: %v)", err, werr)
	}
	r.log(ctx, "step_retries_exhausted", map[string]any{"step": step.Step, "action": step.Action, "attempts": attempt, "error": err.Error()})
	r.emit(Event{Type: "step_failed", Key: r.key(), Step: step.Step, Action: step.Action, Outcome: "retry later", Error: err.Error()})
	return err
}

func (r *run) stepError(step workorder.Step, attempt int, err error) *workorder.StepError {
	return &workorder.StepError{Step: step.Step, Action: step.Action, Message: r.secrets().String(err.Error()), Attempt: attempt,
		At: workorder.Timestamp(r.Now())}
}

// wait stops the run because it needs something from outside; the step is
// not complete, and the next run repeats it.
func (r *run) wait(ctx context.Context, step workorder.Step, out action.Outcome, w *action.WaitingError) error {
	ctx = context.WithoutCancel(ctx)
	if out.State != nil {
		r.state = out.State.Clone()
	}
	top := map[string]any{}
	if out.Status != "" {
		if err := r.setStatus(top, out.Status, out.BlockReason); err != nil {
			return err
		}
	}
	if err := r.save(ctx, top); err != nil {
		return err
	}
	r.log(ctx, "run_waiting", map[string]any{"step": step.Step, "action": step.Action, "reason": w.Reason})
	r.emit(Event{Type: "run_waiting", Key: r.key(), Step: step.Step, Action: step.Action, Outcome: "waiting", Note: w.Reason})
	return w
}

// release gives the lease back; a failure is not fatal (the lease expires
// by itself) but is reported, since another runner must wait for it.
func (r *run) release(ctx context.Context) {
	if err := r.wb.Release(ctx); err != nil {
		r.emit(Event{Type: "warning", Key: r.key(), Error: fmt.Sprintf("the lease of %s was not released (%v); it expires within %s", r.key(), err, r.LeaseTTL)})
	}
}

// log appends to the activity log. A write that fails does not stop the
// run, but it is never silently lost: the first failure is reported as an
// event and kept as a warning in the result.
func (r *run) log(ctx context.Context, action string, details map[string]any) {
	r.appendLogs(ctx, []store.LogEntry{r.entry(action, details)})
}

// entry is an activity-log entry of this run, secrets removed.
func (r *run) entry(action string, details map[string]any) store.LogEntry {
	if d, ok := r.secrets().Value(details).(map[string]any); ok {
		details = d
	}
	return store.LogEntry{Action: action, TaskKey: r.key(), SessionKey: r.Runner, Details: details, CreatedAt: r.Now()}
}

func (r *run) appendLogs(ctx context.Context, entries []store.LogEntry) {
	for _, e := range entries {
		r.appendLog(ctx, e)
	}
}

func (r *run) appendLog(ctx context.Context, e store.LogEntry) {
	// An entry says what happened (an agent that ran, a step that
	// stopped): a signal that ends the run must not lose it. The write is
	// bounded on its own.
	lctx, cancel := action.PastCancel(ctx)
	defer cancel()
	err := r.Store.AppendLog(lctx, e)
	if err == nil || r.logFailed {
		return
	}
	r.logFailed = true
	msg := fmt.Sprintf("the activity log of %s was not written (%s, and possibly later entries): %v", r.key(), e.Action, err)
	r.warnings = append(r.warnings, msg)
	r.emit(Event{Type: "log_failed", Key: r.key(), Error: msg})
}

func (r *run) result() *Result {
	res := &Result{
		Key: r.key(), Status: workorder.StatusOf(r.doc), CurrentStep: r.state.CurrentStep,
		Steps: len(r.procedure()), CompletedSteps: slices.Clone(r.state.CompletedSteps), Ran: r.ran,
		Phase: r.state.Phase, Warnings: r.warnings,
	}
	if r.gh != nil {
		c := r.gh.Counts()
		res.GitHub = &c
	}
	return res
}
