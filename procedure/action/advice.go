package action

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/wo-runner/wo/reviewer"
	"github.com/wo-runner/wo/workorder"
)

// Adviser is an action with rules of its own for its step, beyond the
// shape of the step's fields that package workorder checks: fields it
// cannot run without (errors), or a step that validation's rules accept
// but that will likely not do what its author meant (warnings). wo
// validate, wo import and every run apply them.
type Adviser interface {
	Advise(doc workorder.Document, path string, step workorder.Step) []workorder.Problem
}

// Advice is what this build's actions say about a document's steps (see
// Adviser), for workorder.Options.Advice.
func Advice(doc workorder.Document) []workorder.Problem { return defaultActions.Advice(doc) }

// Advice is what the table's actions say about a document's steps that the
// document's shape does not: each step's action advises on its own step.
func (t Actions) Advice(doc workorder.Document) []workorder.Problem {
	// Each step is read on its own, so that a field elsewhere that the
	// typed view cannot read (a _rev that is no string) hides no rule.
	steps, _ := workorder.Get(doc, "work_order.procedure").([]any)
	var out []workorder.Problem
	for i, raw := range steps {
		var s workorder.Step
		if b, err := json.Marshal(raw); err != nil || json.Unmarshal(b, &s) != nil {
			continue // the validator reports a step it cannot read
		}
		a, ok := t.Lookup(s.Action)
		if !ok || a.New == nil {
			continue
		}
		if adviser, ok := a.New().(Adviser); ok {
			out = append(out, adviser.Advise(doc, fmt.Sprintf("work_order.procedure[%d]", i), s)...)
		}
	}
	return out
}

// Advise warns when duration_minutes is shorter than a named reviewer
// usually takes: the step keeps its own words, but gets a warning.
func (WaitForReview) Advise(doc workorder.Document, path string, s workorder.Step) []workorder.Problem {
	var slowest reviewer.Profile
	for _, name := range stringOrList(workorder.Get(doc, "work_order.context.reviewers")) {
		if p := reviewer.For(name); slowest == nil || p.Latency() > slowest.Latency() {
			slowest = p
		}
	}
	minutes := paramsOf[waitParams](s).DurationMinutes
	wait := time.Duration(minutes * float64(time.Minute))
	if slowest == nil || slowest.Latency() == 0 || minutes <= 0 || wait >= slowest.Latency() {
		return nil
	}
	return []workorder.Problem{{Path: path + ".duration_minutes", Severity: workorder.SeverityWarning,
		Message: fmt.Sprintf("step %d waits %s, shorter than %s usually takes to review a push (up to %s); the run waits what the document says, then stops (exit 3) while the review is in progress: %s suits it",
			s.Step, wait, slowest.Login(), slowest.Latency(), slowest.Wait())}}
}

// stringOrList reads a field that holds one string or a list of them
// (context.reviewers, context.fix_paths).
func stringOrList(v any) []string {
	if s, ok := v.(string); ok && s != "" {
		return []string{s}
	}
	return stringList(v)
}
