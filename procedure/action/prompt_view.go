package action

import (
	"fmt"
	"strings"

	"github.com/wo-runner/wo/workorder"
)

// PromptView is what an agent is told about a task: the task's context
// section, the objective, the step it is at, and what remains.
type PromptView struct {
	Key            string   `json:"key"`
	Title          string   `json:"title"`
	ContextSection string   `json:"context_section"`
	Objective      string   `json:"objective"`
	CurrentStep    string   `json:"current_step"`
	Remaining      []string `json:"remaining"`
	Text           string   `json:"text"`
}

// Prompt builds the prompt view of a task document; Text is exactly what
// the agent command receives for the task's next step.
func Prompt(doc workorder.Document) (*PromptView, error) {
	task, err := workorder.Parse(doc)
	if err != nil {
		return nil, err
	}
	v := &PromptView{Key: task.Key, Title: task.Title, ContextSection: ContextSection(doc)}
	if task.WorkOrder == nil {
		v.Objective = task.Description
		v.Text = v.ContextSection + "\nTask: " + task.Title + "\n\n" + task.Description + "\n"
		return v, nil
	}
	wo := task.WorkOrder
	v.Objective = wo.Objective
	next := wo.State.CurrentStep + 1
	scope := workorder.NewScope(doc)
	for _, s := range wo.Procedure {
		line := fmt.Sprintf("%d. %s", s.Step, s.Action)
		if s.Description != "" {
			line += ": " + scope.Text(s.Description)
		}
		switch {
		case s.Step == next:
			v.CurrentStep = line
		case s.Step > next:
			v.Remaining = append(v.Remaining, line)
		}
	}
	if step, ok := wo.StepByNumber(next); ok {
		if a, ok := defaultActions.Lookup(step.Action); ok && a.New != nil {
			if p, ok := a.New().(Prompter); ok {
				v.Text = p.Prompt(doc, step)
				return v, nil
			}
		}
	}
	var b strings.Builder
	b.WriteString(v.ContextSection)
	fmt.Fprintf(&b, "\nTask: %q (%s)\n\nObjective: %s\n", task.Title, task.Key, wo.Objective)
	if v.CurrentStep != "" {
		fmt.Fprintf(&b, "\nCurrent step: %s\n", v.CurrentStep)
	} else {
		b.WriteString("\nEvery step is done.\n")
	}
	if len(v.Remaining) > 0 {
		b.WriteString("\nThen:\n")
		for _, r := range v.Remaining {
			b.WriteString("  " + r + "\n")
		}
	}
	v.Text = b.String()
	return v, nil
}
