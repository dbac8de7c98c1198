package procedure

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// BlockersOpenError says the task waits for other tasks to be closed.
type BlockersOpenError struct {
	Key      string
	Blockers []string // "task_x (in_review)"
}

func (e *BlockersOpenError) Error() string {
	return fmt.Sprintf("task %s waits for %s to be closed; nothing was changed: run it again once they are", e.Key, strings.Join(e.Blockers, ", "))
}

// StepFailedError is a step that failed; the task is blocked with the
// reason and the next run retries the step.
type StepFailedError struct {
	Key     string
	Step    int
	Action  string
	Attempt int
	Err     error
}

func (e *StepFailedError) Error() string {
	msg := fmt.Sprintf("task %s: step %d (%s) failed: %v", e.Key, e.Step, e.Action, e.Err)
	var told action.TellsNextStep
	if errors.As(e.Err, &told) {
		return msg // the cause says what to run next; once is enough
	}
	return msg + fmt.Sprintf("; fix the cause and run wo run %s to retry it", e.Key)
}

func (e *StepFailedError) Unwrap() error { return e.Err }

// IsTransient reports whether err is worth retrying after a pause.
func IsTransient(err error) bool {
	var te *action.TransientError
	if errors.As(err, &te) {
		return true
	}
	if store.IsUnavailable(err) || store.IsConflict(err) {
		return true
	}
	var temp interface{ Temporary() bool }
	if errors.As(err, &temp) && temp.Temporary() {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && !errors.Is(err, context.Canceled)
}

// waitedOut reports whether a transient failure already waited as long as
// one try may (a git remote silent for the stall limit): another try in
// this run would hold it as long again, so the next run retries instead.
func waitedOut(err error) bool {
	var w interface{ WaitedOut() bool }
	return errors.As(err, &w) && w.WaitedOut()
}

// RetriesExhaustedError is a transient failure that outlasted its retries:
// the task is not blocked, and a later run picks it up.
type RetriesExhaustedError struct {
	Key      string
	Step     int
	Action   string
	Attempts int
	Err      error
}

func (e *RetriesExhaustedError) Error() string {
	if e.Attempts == 1 {
		return fmt.Sprintf("task %s: step %d (%s) gave up: %v; run wo run %s again later", e.Key, e.Step, e.Action, e.Err, e.Key)
	}
	return fmt.Sprintf("task %s: step %d (%s) still failing after %d attempts: %v; run wo run %s again later",
		e.Key, e.Step, e.Action, e.Attempts, e.Err, e.Key)
}

func (e *RetriesExhaustedError) Unwrap() error { return e.Err }

// InterruptedError is a run stopped by a signal; the lease was released and
// the step will be retried by the next run.
type InterruptedError struct {
	Key  string
	Step int
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("task %s: interrupted during step %d; run wo run %s to continue", e.Key, e.Step, e.Key)
}

// PreflightError lists what the checks before a run found wrong with the
// work order's inputs; nothing was changed.
type PreflightError struct {
	Key      string
	Problems []string
	// Steps are the step number of each problem, in order.
	Steps []int
	// Kinds say whose each problem is: the document's (wrong wherever it
	// runs) or this machine's (its repository, branches, token).
	Kinds []workorder.ProblemKind
}

func (e *PreflightError) Error() string {
	return fmt.Sprintf("task %s cannot run; nothing was changed:\n  %s", e.Key, strings.Join(e.Problems, "\n  "))
}

// ConcurrentChangeError stops a run when another writer moved the task to
// a status the run must not overwrite (closed, or one from which its next
// status is not a move Persephone allows): it was detected, not
// overwritten.
type ConcurrentChangeError struct {
	Key    string
	Status workorder.Status
}

func (e *ConcurrentChangeError) Error() string {
	return fmt.Sprintf("task %s was moved to %s by someone else while this run worked; the run stopped and left it so (run wo run %s to go on if that was a mistake)",
		e.Key, e.Status, e.Key)
}

// DependencyCycleError is an epic whose tasks wait for each other in a
// circle: nothing of it can run until the dependencies are corrected.
type DependencyCycleError struct{ Through string }

func (e *DependencyCycleError) Error() string {
	return fmt.Sprintf("the epic's dependencies have a cycle through %s: correct blocked_by/blocks so that nothing waits for itself", e.Through)
}

// RewindError is a wo reset that cannot be done as asked.
type RewindError struct {
	Key string
	Msg string
}

func (e *RewindError) Error() string { return fmt.Sprintf("task %s %s", e.Key, e.Msg) }
