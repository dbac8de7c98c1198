package procedure

import (
	"context"
	"errors"

	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// RunOutcome is how a run of one task ended. wo run, each task of wo run
// --epic and the exit code all take it from Classify, so a task fares the
// same alone and inside an epic.
type RunOutcome string

// The outcomes, from best to worst: an epic reports its worst.
const (
	OutcomeDone        RunOutcome = "done"
	OutcomeWaiting     RunOutcome = "waiting"           // blockers, approval, a person's fix
	OutcomeSkipped     RunOutcome = "skipped"           // an epic task whose blocker did not finish
	OutcomeElsewhere   RunOutcome = "running_elsewhere" // an epic task another live runner holds
	OutcomeLeaseHeld   RunOutcome = "lease_held"        // another runner works on it
	OutcomeRetryLater  RunOutcome = "retry_later"       // an outside failure outlasted its retries
	OutcomeInterrupted RunOutcome = "interrupted"
	OutcomeInvalid     RunOutcome = "invalid" // the document or its inputs are wrong; nothing changed
	OutcomeFailed      RunOutcome = "failed"
)

var outcomeRank = map[RunOutcome]int{OutcomeDone: 0, OutcomeWaiting: 1, OutcomeSkipped: 1, OutcomeElsewhere: 1, OutcomeLeaseHeld: 2,
	OutcomeRetryLater: 3, OutcomeInterrupted: 4, OutcomeInvalid: 5, OutcomeFailed: 6}

// Worse reports whether o is worse than other.
func (o RunOutcome) Worse(other RunOutcome) bool { return outcomeRank[o] > outcomeRank[other] }

// Classification is what an error means to the user: the outcome and the
// envelope's error code.
type Classification struct {
	Outcome RunOutcome
	Code    string
}

func is[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

// Classifier is an error of a package above the engine that says what
// it means to the user.
type Classifier interface {
	error
	Classification() Classification
}

// classes map errors to outcomes, in order: the first that matches wins.
var classes = []struct {
	match func(error) bool
	Classification
}{
	{is[*workorder.InvalidError], Classification{OutcomeInvalid, "INVALID_DOCUMENT"}},
	{is[*workorder.SyntaxError], Classification{OutcomeInvalid, "MALFORMED_JSON"}},
	{is[*workorder.ShapeError], Classification{OutcomeInvalid, "INVALID_DOCUMENT"}},
	{is[*PreflightError], Classification{OutcomeInvalid, "INVALID_INPUT"}},
	{is[*DependencyCycleError], Classification{OutcomeInvalid, "DEPENDENCY_CYCLE"}},
	{is[*RewindError], Classification{OutcomeInvalid, "USAGE"}},
	{is[*store.LeaseHeldError], Classification{OutcomeLeaseHeld, "LEASE_HELD"}},
	{is[*store.LeaseLostError], Classification{OutcomeLeaseHeld, "LEASE_LOST"}},
	{is[*BlockersOpenError], Classification{OutcomeWaiting, "BLOCKED_BY"}},
	{is[*action.WaitingError], Classification{OutcomeWaiting, "WAITING"}},
	{is[*ApprovalRequiredError], Classification{OutcomeWaiting, "APPROVAL_REQUIRED"}},
	{is[*UndoUnfinishedError], Classification{OutcomeWaiting, "UNDO_UNFINISHED"}},
	{is[Classifier], Classification{}}, // its own: a restack's or a land's stop, a GitHub event wo cannot use
	{is[*RetriesExhaustedError], Classification{OutcomeRetryLater, "RETRY_LATER"}},
	{is[*UndoRetryLaterError], Classification{OutcomeRetryLater, "RETRY_LATER"}},
	{is[*InterruptedError], Classification{OutcomeInterrupted, "INTERRUPTED"}},
	{func(err error) bool { return errors.Is(err, context.Canceled) }, Classification{OutcomeInterrupted, "INTERRUPTED"}},
	{is[*action.FixRefusedError], Classification{OutcomeFailed, "FIX_REFUSED"}},
	{agentRateLimited, Classification{OutcomeRetryLater, "AGENT_RATE_LIMITED"}},
	{is[*action.AgentFailedError], Classification{OutcomeFailed, "AGENT_FAILED"}},
	{is[*StepFailedError], Classification{OutcomeFailed, "STEP_FAILED"}},
	{is[*ConcurrentChangeError], Classification{OutcomeWaiting, "CHANGED_ELSEWHERE"}},
	{store.IsNoDatabase, Classification{OutcomeInvalid, "NO_DATABASE"}},
	{store.IsNotFound, Classification{OutcomeFailed, "NOT_FOUND"}},
	{store.IsExists, Classification{OutcomeFailed, "ALREADY_EXISTS"}},
	{store.IsConflict, Classification{OutcomeRetryLater, "CONFLICT"}},
	{store.IsUnavailable, Classification{OutcomeRetryLater, "STORE_UNAVAILABLE"}},
}

// agentRateLimited is an agent's failure that waiting ends.
func agentRateLimited(err error) bool {
	var a *action.AgentFailedError
	return errors.As(err, &a) && a.RateLimited()
}

// Classify is the one mapping from a run's error to its outcome.
func Classify(err error) Classification {
	if err == nil {
		return Classification{OutcomeDone, ""}
	}
	var epic *EpicError
	if errors.As(err, &epic) {
		return Classification{epic.Result.Worst, "EPIC_" + epicCodes[epic.Result.Worst]}
	}
	for _, c := range classes {
		if c.match(err) {
			var own Classifier
			if c.Code == "" && errors.As(err, &own) {
				return own.Classification()
			}
			return c.Classification
		}
	}
	return Classification{OutcomeFailed, "FAILED"}
}

// epicCodes name an epic's worst outcome in its error code.
var epicCodes = map[RunOutcome]string{
	OutcomeWaiting: "WAITING", OutcomeSkipped: "WAITING", OutcomeElsewhere: "RUNNING_ELSEWHERE", OutcomeLeaseHeld: "LEASE_HELD",
	OutcomeRetryLater: "RETRY_LATER", OutcomeInterrupted: "FAILED", OutcomeInvalid: "INVALID", OutcomeFailed: "FAILED",
}
