package workorder

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Persephone's enumerations. Other tools read these fields with strict
// schemas, so wo never writes a value outside them.
var (
	Priorities = []string{"critical", "high", "medium", "low"}
	Types      = []string{"task", "bug", "epic"}
)

// priorityAliases maps the P0..P3 spelling of task creation onto Persephone words.
var priorityAliases = map[string]string{"P0": "critical", "P1": "high", "P2": "medium", "P3": "low"}

// CanonicalPriority accepts a Persephone word or P0..P3 (any case) and
// returns the word to store; ok is false for anything else.
func CanonicalPriority(p string) (string, bool) {
	if w, ok := priorityAliases[strings.ToUpper(p)]; ok {
		return w, true
	}
	if slices.Contains(Priorities, p) {
		return p, true
	}
	return "", false
}

// StateVersion is the version of work_order.state that this wo writes.
// A document whose state has a higher version was written by a newer wo and
// is refused rather than misread.
const StateVersion = 1

// Task is the typed, read-only view of a Persephone task document.
type Task struct {
	Key         string     `json:"_key"`
	Rev         string     `json:"_rev,omitempty"`
	Title       string     `json:"title,omitempty"`
	Description string     `json:"description,omitempty"`
	Status      Status     `json:"status,omitempty"`
	BlockReason string     `json:"block_reason,omitempty"`
	Priority    string     `json:"priority,omitempty"`
	Type        string     `json:"type,omitempty"`
	ParentKey   string     `json:"parent_key,omitempty"`
	Labels      []string   `json:"labels,omitempty"`
	CreatedAt   string     `json:"created_at,omitempty"`
	UpdatedAt   string     `json:"updated_at,omitempty"`
	WorkOrder   *WorkOrder `json:"work_order,omitempty"`
}

// WorkOrder is the declarative part of a task: what to do and how far it got.
type WorkOrder struct {
	Version         string         `json:"version"`
	Objective       string         `json:"objective"`
	Context         map[string]any `json:"context,omitempty"`
	Inputs          map[string]any `json:"inputs,omitempty"`
	Dependencies    Dependencies   `json:"dependencies"`
	Procedure       []Step         `json:"procedure"`
	SuccessCriteria []string       `json:"success_criteria,omitempty"`
	// Approval, when required, stops wo run before the first step that
	// changes anything until someone approves (the decision lives in
	// state.approval).
	Approval *ApprovalSpec `json:"approval,omitempty"`
	// RollbackHints say how to take the change back, for the plan and the
	// approval request.
	RollbackHints []string `json:"rollback_hints,omitempty"`
	State         State    `json:"state"`
}

// ApprovalSpec is work_order.approval: what the author asks for, and what
// the person deciding is shown: a summary, the confidence of whoever formed
// the task, and the evidence for its assumptions.
type ApprovalSpec struct {
	Required   bool       `json:"required"`
	Summary    string     `json:"summary,omitempty"`
	Confidence *float64   `json:"confidence,omitempty"`
	Evidence   []Evidence `json:"evidence,omitempty"`
}

// Dependencies are task keys, mirrored as persephone_edges in a Persephone database.
type Dependencies struct {
	BlockedBy []string `json:"blocked_by"`
	Blocks    []string `json:"blocks"`
	// Parent is the task's parent_key, when a lookup knows it: blocks is
	// honoured between tasks of one epic.
	Parent string `json:"-"`
}

// Step is one entry of the procedure: what every step has, and the
// action's own fields (its params) as the document gives them. Each action
// decodes and checks its params itself; this package names no action.
type Step struct {
	Step        int    `json:"step"`
	Action      string `json:"action"`
	Command     string `json:"command,omitempty"` // shown, never run: wo runs its own steps
	Description string `json:"description,omitempty"`
	// Params are the step's other fields ("title", "loop_to", …), as
	// decoded JSON.
	Params map[string]any `json:"-"`
}

// UnmarshalJSON reads the fields every step has, and keeps the others in
// Params.
func (s *Step) UnmarshalJSON(b []byte) error {
	type common Step
	var c common
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	var all map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for _, k := range []string{"step", "action", "command", "description"} {
		delete(all, k)
	}
	*s = Step(c)
	if len(all) > 0 {
		s.Params = all
	}
	return nil
}

// DecodeParams decodes the step's params into v, a struct with JSON tags.
// Only the fields named exactly as v's tags are read: encoding/json would
// match "Loop_To" to loop_to, a field validation (which reads names
// exactly) never checked and calls no field of a step.
func (s Step) DecodeParams(v any) error {
	if len(s.Params) == 0 {
		return nil
	}
	b, err := json.Marshal(exactly(s.Params, v))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("step %d (%s): %w", s.Step, s.Action, err)
	}
	return nil
}

// exactly is the params named exactly as the JSON names of the fields of
// the struct v points to (all of them when v is no struct, or embeds one).
func exactly(params map[string]any, v any) map[string]any {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return params
	}
	out := map[string]any{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			return params // an embedded struct's fields: not read here
		}
		if name == "" {
			name = f.Name
		}
		if x, ok := params[name]; ok && name != "-" && f.IsExported() {
			out[name] = x
		}
	}
	return out
}

// DeliveryTargets are the places a deliverable can go.
var DeliveryTargets = []string{"pr_body", "pr_comment", "task_note"}

// Parse builds the typed view of a document. Call Validate first: Parse
// reports only the first type mismatch it meets.
func Parse(doc Document) (*Task, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var t Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("task %s: %w", Key(doc), err)
	}
	return &t, nil
}

// StepByNumber returns the step numbered n.
func (w *WorkOrder) StepByNumber(n int) (Step, bool) {
	for _, s := range w.Procedure {
		if s.Step == n {
			return s, true
		}
	}
	return Step{}, false
}

// BlockerSatisfied says whether a blocker lets its dependent start: when it
// is closed, or, in a stacked split (context.split_mode "stacked", where
// each PR builds on the branch of the one before), once it has pushed.
func BlockerSatisfied(dependent, blocker Document) bool {
	if blocker == nil {
		return false
	}
	if Done(blocker) {
		return true
	}
	return String(dependent, "work_order.context.split_mode") == "stacked" &&
		String(blocker, "work_order.state.pushed_sha") != ""
}
