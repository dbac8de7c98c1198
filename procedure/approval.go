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
}

func (e *ApprovalRequiredError) Error() string {
	head := fmt.Sprintf("task %s needs approval before step %d; it would then:\n  %s\napprove with: wo approve %s (or wo revise %s --note …, wo cancel %s --reason …)",
		e.Key, e.Step, strings.Join(e.Summary, "\n  "), e.Key, e.Key, e.Key)
	if e.Revise != "" {
		head = fmt.Sprintf("task %s was sent back for revision (%s); change the work order, then ", e.Key, e.Revise) + head
	}
	return head
}

// gate reports whether a step may run: always for an ephemeral work order
// or one that needs no approval, else only once approved.
func (r *run) gate(step workorder.Step) error {
	wo := r.task.WorkOrder
	if wo.Approval == nil || !wo.Approval.Required || Ephemeral(wo.Procedure) {
		return nil
	}
	if spec, ok := lookupAction(step.Action); ok && !spec.Mutates {
		return nil
	}
	decision, note := "", ""
	if a, ok := r.state["approval"].(map[string]any); ok {
		decision, _ = a["decision"].(string)
		note, _ = a["note"].(string)
	}
	if decision == "approved" {
		return nil
	}
	e := &ApprovalRequiredError{Key: r.key(), Step: step.Step}
	if decision == "revise" {
		e.Revise = note
	}
	for _, s := range wo.Procedure {
		if s.Step < step.Step {
			continue
		}
		if spec, ok := lookupAction(s.Action); ok && spec.Mutates {
			line := fmt.Sprintf("%d %s", s.Step, s.Action)
			if cmd, err := workorder.NewScope(r.currentDoc()).Render(s.Command); err == nil && cmd != "" {
				line += ": " + cmd
			}
			e.Summary = append(e.Summary, line)
		}
	}
	return e
}

// Decide records an approval decision: approved lets wo run pass the gate;
// revise sends the work order back to formation (it will not run); cancel
// closes the task with the reason. Each is logged with who and when.
func (e *Engine) Decide(ctx context.Context, key, decision, note string) (*Result, error) {
	e.defaults()
	switch decision {
	case "approved", "revise", "cancelled":
	default:
		return nil, fmt.Errorf("unknown decision %q", decision)
	}
	doc, task, err := e.Load(ctx, key)
	if err != nil {
		return nil, err
	}
	if task.WorkOrder.Approval == nil || !task.WorkOrder.Approval.Required {
		if decision != "cancelled" {
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
	wb := r.wb
	approval := map[string]any{"decision": decision, "by": e.Runner, "at": workorder.Timestamp(e.Now())}
	if note != "" {
		approval["note"] = note
	}
	var target workorder.Status
	switch decision {
	case "cancelled":
		target = workorder.StatusClosed
	case "revise":
		target = workorder.StatusOpen
	}
	if target != "" {
		for _, hop := range workorder.StatusPath(task.Status, target) {
			patch := map[string]any{}
			if err := r.setStatus(patch, hop, ""); err != nil {
				return nil, err
			}
			if err := wb.Write(ctx, patch); err != nil {
				return nil, err
			}
		}
	}
	phase := map[string]string{"approved": "approved", "revise": "formation", "cancelled": "cancelled"}[decision]
	if err := wb.Write(ctx, map[string]any{"work_order": map[string]any{"state": map[string]any{"approval": approval, "phase": phase}}}); err != nil {
		return nil, err
	}
	r.state["phase"] = phase
	r.log(ctx, "approval_"+decision, map[string]any{"by": e.Runner, "note": note})
	return r.result(), nil
}
