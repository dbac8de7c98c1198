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

// classify maps an error to its exit code and envelope error code, in one
// place.
func classify(err error) (exit int, code string) {
	var usage *usageError
	var invalid *workorder.InvalidError
	var syntax *workorder.SyntaxError
	var shape *workorder.ShapeError
	var held *store.LeaseHeldError
	var lost *store.LeaseLostError
	var blockers *procedure.BlockersOpenError
	var waiting *procedure.WaitingError
	var exhausted *procedure.RetriesExhaustedError
	var interrupted *procedure.InterruptedError
	var stepFailed *procedure.StepFailedError
	var preflight *procedure.PreflightError
	var approval *procedure.ApprovalRequiredError
	var epic *procedure.EpicError
	switch {
	case err == nil:
		return ExitOK, ""
	case errors.As(err, &usage):
		return ExitInvalid, "USAGE"
	case errors.As(err, &invalid):
		return ExitInvalid, "INVALID_DOCUMENT"
	case errors.As(err, &syntax):
		return ExitInvalid, "MALFORMED_JSON"
	case errors.As(err, &shape):
		return ExitInvalid, "INVALID_DOCUMENT"
	case errors.As(err, &epic):
		return epicExit(epic)
	case errors.As(err, &preflight):
		return ExitInvalid, "INVALID_INPUT"
	case errors.As(err, &held):
		return ExitLeaseHeld, "LEASE_HELD"
	case errors.As(err, &lost):
		return ExitLeaseHeld, "LEASE_LOST"
	case errors.As(err, &blockers):
		return ExitWaiting, "BLOCKED_BY"
	case errors.As(err, &waiting):
		return ExitWaiting, "WAITING"
	case errors.As(err, &approval):
		return ExitWaiting, "APPROVAL_REQUIRED"
	case errors.As(err, &exhausted):
		return ExitUnavailable, "RETRY_LATER"
	case errors.As(err, &interrupted):
		return ExitFailed, "INTERRUPTED"
	case errors.As(err, &stepFailed):
		return ExitFailed, "STEP_FAILED"
	case store.IsNotFound(err):
		return ExitFailed, "NOT_FOUND"
	case store.IsExists(err):
		return ExitFailed, "ALREADY_EXISTS"
	case store.IsConflict(err):
		return ExitUnavailable, "CONFLICT"
	case store.IsUnavailable(err):
		return ExitUnavailable, "STORE_UNAVAILABLE"
	default:
		return ExitFailed, "FAILED"
	}
}

// epicExit is the exit code of an epic run's worst outcome.
func epicExit(e *procedure.EpicError) (int, string) {
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
