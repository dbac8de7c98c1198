package action

import (
	"context"
	"fmt"
	"time"
)

// WaitingError stops a run that needs something from outside: a person's
// fix, an approval. The task's state says what; the next run continues.
type WaitingError struct {
	Key    string
	Reason string
}

func (e *WaitingError) Error() string {
	return fmt.Sprintf("task %s is waiting: %s", e.Key, e.Reason)
}

// finalWrite bounds a write that must happen even when the run's context
// is cancelled (a signal): the lease given back, the interruption or a log
// entry recorded.
const finalWrite = 10 * time.Second

// PastCancel is a context for such a write (the engine's, and an
// action's that must stop what it started): not cancelled with ctx, ended
// after finalWrite.
func PastCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), finalWrite)
}

// TransientError marks a failure worth retrying: a network error, a busy
// store, a rate limit. The engine retries a step that fails with one (and
// with the errors of the network and the store it knows as such).
type TransientError struct{ Err error }

func (e *TransientError) Error() string { return e.Err.Error() }
func (e *TransientError) Unwrap() error { return e.Err }

// Transient wraps err as retryable.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &TransientError{Err: err}
}

// TellsNextStep is an error whose message ends with what the person runs
// next (a refused fix: the paths to take out, then wo run KEY). An error
// that wraps one adds no next step of its own: a person reads it once.
type TellsNextStep interface {
	error
	TellsNextStep()
}

// DocumentError marks what a Checker finds wrong with the document itself
// (an empty manifest, a branch name git refuses): wrong wherever the task
// runs, unlike a missing repository, branch or token, which are this
// machine's. wo validate tells the two apart, and checks these without a
// repository.
type DocumentError struct{ Err error }

func (e *DocumentError) Error() string { return e.Err.Error() }
func (e *DocumentError) Unwrap() error { return e.Err }

// inDocument wraps err as the document's.
func inDocument(err error) error {
	if err == nil {
		return nil
	}
	return &DocumentError{Err: err}
}
