package procedure

import (
	"context"
	"fmt"
	"strings"

	"github.com/wo-runner/wo/workorder"
)

// ApprovalRequiredError stops a run before its first step that changes
// anything, until someone approves; it carries the plan for them.
type ApprovalRequiredError struct {
	Key     string
	Step    int
	Summary []string // the steps that would change git or GitHub
	Revise  string   // the note of a "revise" decision, if that is why
	// Request is what the work order asks the person deciding to read:
	// its summary, confidence, evidence and rollback hints.
	Request []string
}

func (e *ApprovalRequiredError) Error() string {
	request := ""
	if len(e.Request) > 0 {
		request = "\n" + strings.Join(e.Request, "\n")
	}
	head := fmt.Sprintf("task %s needs approval before step %d; it would then:\n  %s%s\napprove with: wo approve %s (or wo revise %s --note …, wo cancel %s --reason …)",
		e.Key, e.Step, strings.Join(e.Summary, "\n  "), request, e.Key, e.Key, e.Key)
	if e.Revise != "" {
		head = fmt.Sprintf("task %s was sent back for revision (%s); change the work order, then ", e.Key, e.Revise) + head
	}
	return head
}

// gate reports whether a step may run: always for an ephemeral work order
// or one that needs no approval, else only once approved.
func (r *run) gate(step workorder.Step) error {
	wo := r.task.WorkOrder
	if wo.Approval == nil || !wo.Approval.Required || r.actions().Ephemeral(wo.Procedure) {
		return nil
	}
	if spec, ok := r.actions().Lookup(step.Action); ok && !spec.Mutates {
		return nil
	}
	var decision workorder.Decision
	note := ""
	if a := r.state.Approval; a != nil {
		decision, note = a.Decision, a.Note
	}
	if decision == workorder.DecisionApproved {
		return nil
	}
	e := &ApprovalRequiredError{Key: r.key(), Step: step.Step, Request: approvalRequest(wo)}
	if decision == workorder.DecisionRevise {
		e.Revise = note
	}
	for _, s := range wo.Procedure {
		if s.Step < step.Step {
			continue
		}
		if spec, ok := r.actions().Lookup(s.Action); ok && spec.Mutates {
			line := fmt.Sprintf("%d %s", s.Step, s.Action)
			if cmd, err := workorder.NewScope(r.currentDoc()).Render(s.Command); err == nil && cmd != "" {
				line += ": " + cmd
			}
			e.Summary = append(e.Summary, line)
		}
	}
	return e
}

// approvalRequest is what a person deciding is shown besides the steps:
// the work order's summary, the confidence it was formed with, the evidence
// for its assumptions, and how to take the change back.
func approvalRequest(wo *workorder.WorkOrder) []string {
	var out []string
	a := wo.Approval
	if a.Summary != "" {
		out = append(out, "summary: "+a.Summary)
	}
	if a.Confidence != nil {
		out = append(out, fmt.Sprintf("confidence: %.0f%%", *a.Confidence*100))
	}
	for _, ev := range a.Evidence {
		out = append(out, fmt.Sprintf("evidence (%s): %s (%d source(s))", ev.Status, ev.Claim, len(ev.Sources)))
	}
	for _, h := range wo.RollbackHints {
		out = append(out, "to roll back: "+h)
	}
	return out
}

// Decide records an approval decision: approved lets wo run pass the gate;
// revise sends the work order back to formation (it will not run); cancel
// closes the task with the reason. Each is logged with who and when.
func (e *Engine) Decide(ctx context.Context, key string, decision workorder.Decision, note string) (*Result, error) {
	e.defaults()
	var target workorder.Status
	switch decision {
	case workorder.DecisionApproved:
	case workorder.DecisionRevise:
		target = workorder.StatusOpen
	case workorder.DecisionCancelled:
		target = workorder.StatusClosed
	default:
		return nil, fmt.Errorf("unknown decision %q", decision)
	}
	doc, task, err := e.Load(ctx, key)
	if err != nil {
		return nil, err
	}
	if task.WorkOrder.Approval == nil || !task.WorkOrder.Approval.Required {
		if decision != workorder.DecisionCancelled {
			return nil, fmt.Errorf("task %s does not ask for approval (work_order.approval.required is not set)", key)
		}
	}
	if task.Status == workorder.StatusClosed {
		return nil, fmt.Errorf("task %s is closed already", key)
	}
	r, release, err := e.hold(ctx, doc, task)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := r.moveStatus(ctx, target); err != nil {
		return nil, err
	}
	r.state.Approval = &workorder.Approval{Decision: decision, By: e.Runner, At: workorder.Timestamp(e.Now()), Note: note}
	r.state.Phase = decision.Phase()
	if err := r.save(ctx, nil); err != nil {
		return nil, err
	}
	r.log(ctx, "approval_"+string(decision), map[string]any{"by": e.Runner, "note": note})
	return r.result(), nil
}
