package procedure

import (
	"fmt"
	"time"

	"github.com/wo-runner/wo/reviewer"
	"github.com/wo-runner/wo/workorder"
)

// Advice is what the engine knows about a document that its shape does not
// say: a wait_for_review step whose duration_minutes is shorter than a
// named reviewer usually takes keeps its own words, but gets a warning.
func Advice(doc workorder.Document) []workorder.Problem {
	task, err := workorder.Parse(doc)
	if err != nil || task.WorkOrder == nil {
		return nil
	}
	var slowest reviewer.Profile
	names := reviewerNames(task.WorkOrder.Context["reviewers"])
	for _, name := range names {
		if p := reviewer.For(name); slowest == nil || p.Latency() > slowest.Latency() {
			slowest = p
		}
	}
	if slowest == nil || slowest.Latency() == 0 {
		return nil
	}
	var out []workorder.Problem
	for i, s := range task.WorkOrder.Procedure {
		wait := time.Duration(s.DurationMinutes * float64(time.Minute))
		if s.Action != "wait_for_review" || s.DurationMinutes <= 0 || wait >= slowest.Latency() {
			continue
		}
		out = append(out, workorder.Problem{Path: fmt.Sprintf("work_order.procedure[%d].duration_minutes", i), Severity: workorder.SeverityWarning,
			Message: fmt.Sprintf("step %d waits %s, shorter than %s usually takes to review a push (up to %s); the run waits what the document says, then stops (exit 3) while the review is in progress: %s suits it",
				s.Step, wait, slowest.Login(), slowest.Latency(), slowest.Wait())})
	}
	return out
}

// reviewerNames reads context.reviewers: a login or a list of them.
func reviewerNames(v any) []string {
	if s, ok := v.(string); ok && s != "" {
		return []string{s}
	}
	return stringList(v)
}
