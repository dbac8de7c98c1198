package procedure

import (
	"fmt"
	"slices"

	"github.com/wo-runner/wo/workorder"
)

// What the engine knows of wo undo (package procedure/undo): a run refuses
// a task that an undo has taken part of back, and the outcome table
// classifies an undo's stop for a retry.

// UndoUnfinishedError refuses to run a task that an undo has taken part
// of back (it stopped, or left something for a person): resuming would
// run on a closed pull request and deleted branches. As git town refuses
// other commands while one is unfinished, the undo is finished first.
type UndoUnfinishedError struct{ Key string }

func (e *UndoUnfinishedError) Error() string {
	return fmt.Sprintf("task %s is partly undone (work_order.state.undo): finish the undo with wo undo %s, or start over with wo reset %s --to-step 0", e.Key, e.Key, e.Key)
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

// UndoStateStep is the last step of an undo: the state's reset, or its
// keeping.
const UndoStateStep = "state"

// UndoFinished reports whether an undo recorded its last step, the
// state's, and so ended: only a task whose state it had to keep (a merged
// pull request) still has the record.
func UndoFinished(st workorder.State) bool {
	return st.Undo != nil && slices.ContainsFunc(st.Undo.Steps, func(s workorder.UndoStep) bool { return s.Step == UndoStateStep })
}

// unfinishedUndo reports whether an undo took part of the task back and
// has not finished; one that finished leaving a merged pull request is
// over, and the task's record stands.
func unfinishedUndo(st workorder.State) bool { return st.Undo != nil && !UndoFinished(st) }
