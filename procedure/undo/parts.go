package undo

import (
	"context"
	"fmt"
	"strings"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/workorder"
)

// part is one kind of thing a run makes that wo undo takes back. Its name
// is its step in the record of an undo: a rerun finds what an earlier
// attempt did by it, and records are kept in documents, so names stay
// once released. take looks at the world and takes the thing back, or,
// dry, says what it would do; nil and no error when the task never made
// such a thing.
type part struct {
	name string
	take func(ctx context.Context, u *undo) (*workorder.UndoStep, error)
}

// parts are what undo takes back, in order: wo's comments before the pull
// request they are on, the pull request before the branch it is from
// (deleting that first would close it without a word), the worktree
// before the branch checked out in it.
var parts = []part{
	{"comments", undoComments},
	{"pull_request", undoPullRequest},
	{"remote_branch", undoRemoteBranch},
	{"worktree", undoWorktree},
	{"local_branch", undoLocalBranch},
}

// execute takes the parts back in order, each recorded as it finishes
// (a dry run only says what each would do), then the state.
func (u *undo) execute(ctx context.Context, res *Result) (*Result, error) {
	if err := u.start(ctx); err != nil {
		res.Stopped = "start"
		return res, err
	}
	for _, p := range parts {
		if prev := u.recorded(p.name); prev != nil && !u.dry && prev.Outcome != Left {
			res.Steps = append(res.Steps, *prev) // done before a crash; the world need not be asked again
			continue
		}
		got, err := p.take(ctx, u)
		if err != nil {
			res.Stopped = p.name
			return res, u.stopped(ctx, p.name, err)
		}
		if got == nil {
			continue
		}
		got.Reason = u.ed.Redact(got.Reason)
		res.Steps = append(res.Steps, *got)
		if u.dry {
			continue
		}
		u.ed.Fault("undo:" + p.name + ":before_writeback")
		if err := u.record(ctx, *got); err != nil {
			res.Stopped = p.name
			return res, err
		}
	}
	return u.end(ctx, res)
}

// stopped is the error that stopped a part, logged, and said as the
// part's: a transient one is to be retried later, from the record.
func (u *undo) stopped(ctx context.Context, name string, err error) error {
	if !u.dry {
		u.ed.Log(context.WithoutCancel(ctx), "undo_failed", map[string]any{"step": name, "error": u.ed.Redact(err.Error())})
	}
	err = fmt.Errorf("undoing %s of task %s: %w", strings.ReplaceAll(name, "_", " "), u.key(), err)
	if procedure.IsTransient(err) {
		err = &procedure.UndoRetryLaterError{Key: u.key(), Err: err}
	}
	return err
}
