package commands

import (
	"errors"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// Exit codes: the contract scripts and CI rely on (DESIGN.md).
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitInvalid     = 2 // bad usage or invalid document
	ExitWaiting     = 3 // comments to fix without an agent, approval, blockers
	ExitLeaseHeld   = 4 // another runner holds the task
	ExitUnavailable = 5 // a transient outside failure outlasted its retries
)

// usageError is a mistake in the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(msg string) error { return &usageError{msg: msg} }

// is reports whether err is, or wraps, an error of type T.
func is[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

// exitCodes map errors to the exit code and the envelope's error code, in
// order: the first that matches wins.
var exitCodes = []struct {
	match func(error) bool
	exit  int
	code  string
	// of, when set, computes the codes from the error.
	of func(error) (int, string)
}{
	{match: is[*usageError], exit: ExitInvalid, code: "USAGE"},
	{match: is[*workorder.InvalidError], exit: ExitInvalid, code: "INVALID_DOCUMENT"},
	{match: is[*workorder.SyntaxError], exit: ExitInvalid, code: "MALFORMED_JSON"},
	{match: is[*workorder.ShapeError], exit: ExitInvalid, code: "INVALID_DOCUMENT"},
	// An epic run takes the exit code of its worst task.
	{match: is[*procedure.EpicError], of: epicExit},
	{match: is[*procedure.PreflightError], exit: ExitInvalid, code: "INVALID_INPUT"},
	{match: is[*store.LeaseHeldError], exit: ExitLeaseHeld, code: "LEASE_HELD"},
	{match: is[*store.LeaseLostError], exit: ExitLeaseHeld, code: "LEASE_LOST"},
	{match: is[*procedure.BlockersOpenError], exit: ExitWaiting, code: "BLOCKED_BY"},
	{match: is[*procedure.WaitingError], exit: ExitWaiting, code: "WAITING"},
	{match: is[*procedure.ApprovalRequiredError], exit: ExitWaiting, code: "APPROVAL_REQUIRED"},
	{match: is[*procedure.RetriesExhaustedError], exit: ExitUnavailable, code: "RETRY_LATER"},
	{match: is[*procedure.InterruptedError], exit: ExitFailed, code: "INTERRUPTED"},
	{match: is[*procedure.StepFailedError], exit: ExitFailed, code: "STEP_FAILED"},
	{match: store.IsNotFound, exit: ExitFailed, code: "NOT_FOUND"},
	{match: store.IsExists, exit: ExitFailed, code: "ALREADY_EXISTS"},
	{match: store.IsConflict, exit: ExitUnavailable, code: "CONFLICT"},
	{match: store.IsUnavailable, exit: ExitUnavailable, code: "STORE_UNAVAILABLE"},
}

// classify maps an error to its exit code and envelope error code, in one
// place.
func classify(err error) (exit int, code string) {
	if err == nil {
		return ExitOK, ""
	}
	for _, c := range exitCodes {
		switch {
		case !c.match(err):
		case c.of != nil:
			return c.of(err)
		default:
			return c.exit, c.code
		}
	}
	return ExitFailed, "FAILED"
}

// epicExit is the exit code of an epic run's worst outcome.
func epicExit(err error) (int, string) {
	var e *procedure.EpicError
	errors.As(err, &e)
	switch e.Result.Worst {
	case procedure.OutcomeFailed, procedure.OutcomeInterrupted:
		return ExitFailed, "EPIC_FAILED"
	case procedure.OutcomeRetryLater:
		return ExitUnavailable, "EPIC_RETRY_LATER"
	case procedure.OutcomeLeaseHeld:
		return ExitLeaseHeld, "EPIC_LEASE_HELD"
	default:
		return ExitWaiting, "EPIC_WAITING"
	}
}
