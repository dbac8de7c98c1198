package procedure

import (
	"context"

	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/workorder"
)

// Edit is one task opened for changes made outside the run loop, written
// back as a run writes them (conditional on the revision, rebased over
// another writer's change, under the task's lease): wo undo, in package
// procedure/undo. Open reads the task (a dry run changes nothing); Hold
// takes its lease for writing.
type Edit struct{ r *run }

// Open loads a task for an edit; repoPath overrides context.repo_path.
func (e *Engine) Open(ctx context.Context, key, repoPath string) (*Edit, error) {
	e.defaults()
	doc, task, err := e.Load(ctx, key)
	if err != nil {
		return nil, err
	}
	r, err := newRun(e, RunOptions{Key: task.Key, RepoPath: repoPath}, doc, task)
	if err != nil {
		return nil, err
	}
	return &Edit{r: r}, nil
}

// Hold takes the task's lease and keeps it alive until release: the
// context it returns ends, with the loss as its cause, when the lease is
// lost.
func (ed *Edit) Hold(ctx context.Context) (context.Context, func(), error) {
	if err := ed.r.hold(ctx); err != nil {
		return nil, nil, err
	}
	held, stop := context.WithCancelCause(ctx)
	go ed.r.wb.keepAlive(held, func(err error) { stop(err) })
	return held, func() {
		stop(nil)
		ed.r.release(context.WithoutCancel(ctx))
	}, nil
}

// Key is the task's key; Task its typed view as loaded.
func (ed *Edit) Key() string           { return ed.r.key() }
func (ed *Edit) Task() *workorder.Task { return ed.r.task }

// State is work_order.state as the edit knows it, a copy; Status the
// task's status as last written or read.
func (ed *Edit) State() workorder.State   { return ed.r.state.Clone() }
func (ed *Edit) Status() workorder.Status { return workorder.StatusOf(ed.r.doc) }

// Save writes st back: what changed since the last write, in one
// conditional write.
func (ed *Edit) Save(ctx context.Context, st workorder.State) error {
	ed.r.state = st.Clone()
	return ed.r.save(ctx, nil)
}

// MoveStatus walks Persephone's transitions to the status, a write a hop.
func (ed *Edit) MoveStatus(ctx context.Context, to workorder.Status) error {
	return ed.r.moveStatus(ctx, to)
}

// Log appends to the task's activity log, secrets removed; a log that
// cannot be written is a warning (Warnings), never the edit's failure.
func (ed *Edit) Log(ctx context.Context, kind string, details map[string]any) {
	ed.r.log(ctx, kind, details)
}

// Warnings are the losses that did not stop the edit.
func (ed *Edit) Warnings() []string { return ed.r.warnings }

// Redact removes the engine's secrets from text.
func (ed *Edit) Redact(text string) string { return ed.r.secrets().String(text) }

// Fault marks a point where tests may crash the edit.
func (ed *Edit) Fault(point string) { ed.r.fault(point) }

// Actions is the table of actions the engine runs.
func (ed *Edit) Actions() action.Actions { return ed.r.actions() }

// StepContext is what the action of step would see of the task now; an
// edit that runs no step asks with a zero Step for the task's repository,
// worktree, GitHub client and names.
func (ed *Edit) StepContext(step workorder.Step) *action.StepContext {
	return ed.r.stepContext(step, workorder.NewScope(ed.r.currentDoc()))
}

// EpicWaves are an epic's children in dependency waves (wave n depends
// only on earlier ones), with each child's blockers among them, read from
// the documents and the store's edges.
func (e *Engine) EpicWaves(ctx context.Context, epicKey string) ([][]string, map[string][]string, error) {
	e.defaults()
	children, edges, err := e.epicChildren(ctx, epicKey)
	if err != nil {
		return nil, nil, err
	}
	return wavesOf(children, edges)
}

// Redact removes the engine's secrets from text.
func (e *Engine) Redact(text string) string { return e.secrets().String(text) }
