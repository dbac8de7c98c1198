package commands

import (
	"errors"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/store"
)

// Exit codes: the contract scripts and CI rely on. The design fixes them
// (DESIGN.md, section "Configuration (contract: tests and scripts rely on
// these names)"); docs/running.md, section "Exit codes", tells users.
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitInvalid     = 2 // bad usage or invalid document
	ExitWaiting     = 3 // comments to fix without an agent, approval, blockers
	ExitLeaseHeld   = 4 // another runner holds the task
	ExitUnavailable = 5 // a transient outside failure outlasted its retries
	// ExitInterrupted is what shells expect of a command a SIGINT stopped
	// (128 + 2); wo before 0.x exited 1.
	ExitInterrupted = 130
)

// usageError is a mistake in the command line.
type usageError struct {
	command string // the verb whose usage it is, "" for wo itself
	msg     string
}

func (e *usageError) Error() string { return e.msg }

func usagef(msg string) error { return &usageError{msg: msg} }

// exitCodes give each run outcome its exit code: the outcome comes from
// procedure.Classify, the one mapping that wo run and each task of an epic
// run share.
var exitCodes = map[procedure.RunOutcome]int{
	procedure.OutcomeDone:        ExitOK,
	procedure.OutcomeWaiting:     ExitWaiting,
	procedure.OutcomeSkipped:     ExitWaiting,
	procedure.OutcomeElsewhere:   ExitWaiting,
	procedure.OutcomeLeaseHeld:   ExitLeaseHeld,
	procedure.OutcomeRetryLater:  ExitUnavailable,
	procedure.OutcomeInterrupted: ExitInterrupted,
	procedure.OutcomeInvalid:     ExitInvalid,
	procedure.OutcomeFailed:      ExitFailed,
}

// classify maps an error to its exit code and envelope error code, in one
// place: a mistake in the command line, else what the error means to a run.
func classify(err error) (exit int, code string) {
	var usage *usageError
	var foreign *store.ForeignError
	var missing *store.MissingError
	var perm *store.PermissionError
	var refused *refusedError
	var notHere *cannotRunHereError
	switch {
	case errors.As(err, &usage):
		return ExitInvalid, "USAGE"
	case errors.As(err, &refused):
		return ExitInvalid, "REFUSED" // a task with a run history, dependents or children
	case errors.As(err, &notHere):
		return ExitFailed, "CANNOT_RUN_HERE" // wo validate: valid documents, but not on this machine
	case store.IsNoDatabase(err):
		return ExitInvalid, "NO_DATABASE" // --database names none, or a wrong one (docs/security.md, "The store")
	case errors.As(err, &foreign):
		return ExitInvalid, "NOT_A_STORE" // --store names some other file
	case errors.As(err, &missing):
		return ExitFailed, "NO_STORE"
	case errors.As(err, &perm):
		return ExitFailed, "PERMISSION_DENIED" // rerunning will not help
	}
	c := procedure.Classify(err)
	return exitCodes[c.Outcome], c.Code
}
