package workorder

import "slices"

// Status is a Persephone task status. Other tools read it with strict
// schemas, so wo never writes a value outside Statuses.
type Status string

// Persephone's statuses.
const (
	StatusOpen       Status = "open"
	StatusInProgress Status = "in_progress"
	StatusInReview   Status = "in_review"
	StatusClosed     Status = "closed"
	StatusBlocked    Status = "blocked"
)

// Statuses lists Persephone's statuses in their usual order.
var Statuses = []Status{StatusOpen, StatusInProgress, StatusInReview, StatusClosed, StatusBlocked}

// StatusNames are the statuses as strings, for messages and validation.
func StatusNames() []string {
	out := make([]string, len(Statuses))
	for i, s := range Statuses {
		out[i] = string(s)
	}
	return out
}

// StatusOf reads a document's status.
func StatusOf(doc Document) Status { return Status(String(doc, "status")) }

// transitions are Persephone's allowed status moves.
var transitions = map[Status][]Status{
	StatusOpen:       {StatusInProgress},
	StatusInProgress: {StatusInReview, StatusBlocked, StatusOpen},
	StatusBlocked:    {StatusInProgress, StatusOpen},
	StatusInReview:   {StatusClosed, StatusInProgress},
	StatusClosed:     {StatusOpen},
}

// CanTransition reports whether Persephone allows moving from one status to another.
func CanTransition(from, to Status) bool {
	if from == to {
		return true
	}
	return slices.Contains(transitions[from], to)
}

// StatusPath is the shortest series of Persephone transitions from one
// status to another, excluding from; nil when there is none or from == to.
func StatusPath(from, to Status) []Status {
	if from == to {
		return nil
	}
	prev := map[Status]Status{from: ""}
	queue := []Status{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, next := range Statuses {
			if _, seen := prev[next]; seen || !CanTransition(cur, next) {
				continue
			}
			prev[next] = cur
			if next == to {
				var path []Status
				for s := to; s != from; s = prev[s] {
					path = append([]Status{s}, path...)
				}
				return path
			}
			queue = append(queue, next)
		}
	}
	return nil
}

// Phase is the finer run phase that Persephone has no status for; it lives
// in work_order.state.phase.
type Phase string

// The run phases.
const (
	PhaseNone             Phase = ""      // not started
	PhaseReady            Phase = "ready" // rewound by wo reset: the next run starts after the step it names
	PhaseRunning          Phase = "running"
	PhaseAwaitingApproval Phase = "awaiting_approval"
	PhaseApproved         Phase = "approved"
	PhaseFormation        Phase = "formation" // sent back for revision
	PhaseCancelled        Phase = "cancelled"
	PhaseWaitingForReview Phase = "waiting_for_review" // no review yet; a review event resumes it
	PhaseNeedsFix         Phase = "needs_fix"          // review comments for a person to fix
	PhaseNeedsAgent       Phase = "needs_agent"        // an agent step with no agent configured
	PhaseNeedsReview      Phase = "needs_review"       // an agent's deliverable failed its gate
	PhaseFailed           Phase = "failed"
	PhaseInterrupted      Phase = "interrupted" // a signal stopped the run; wo run goes on
	PhaseDone             Phase = "done"
)

// Phases lists every phase wo writes.
var Phases = []Phase{PhaseReady, PhaseRunning, PhaseWaitingForReview, PhaseAwaitingApproval, PhaseApproved, PhaseFormation, PhaseCancelled,
	PhaseNeedsFix, PhaseNeedsAgent, PhaseNeedsReview, PhaseFailed, PhaseInterrupted, PhaseDone}

// Decision is an approval decision.
type Decision string

// The approval decisions.
const (
	DecisionApproved  Decision = "approved"
	DecisionRevise    Decision = "revise"
	DecisionCancelled Decision = "cancelled"
)

// Phase is the run phase a decision leaves the work order in.
func (d Decision) Phase() Phase {
	switch d {
	case DecisionApproved:
		return PhaseApproved
	case DecisionRevise:
		return PhaseFormation
	case DecisionCancelled:
		return PhaseCancelled
	}
	return PhaseNone
}
