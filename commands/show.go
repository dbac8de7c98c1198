package commands

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

func newShowCommand(f *Factory) *cli.Command { return showCommand(f, runShow) }

// showOptions are what wo show is asked.
type showOptions struct {
	Store StoreConfig
	Key   string
	Wide  bool // every value whole, whatever the width
}

func showCommand(f *Factory, run func(context.Context, *Factory, *showOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show a task's work order: objective, context, steps and state",
		ArgsUsage: "KEY",
		Description: `Prints the work order as a person reads it: each step with its command
template rendered from state, inputs and context, marked done, next or
pending, and where the review stood at the last check: the unresolved
threads (file:line, outdated or not, who opened it and how) and each
reviewer's latest verdict; for a task not yet done, the time its remaining
steps should take and what that estimate rests on. --json gives the
document, the rendered steps and the review.

The values of the context and inputs are cut to the terminal's width
($COLUMNS, else the terminal's, else 80); --wide shows them whole.`,
		Flags: append(storeFlags(), wideFlag()),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := showOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// showOptionsFrom reads the flags.
func showOptionsFrom(c *cli.Context, f *Factory) (*showOptions, error) {
	key, err := oneArg(c, "task KEY")
	if err != nil {
		return nil, err
	}
	return &showOptions{Store: f.storeConfig(c), Key: key, Wide: c.Bool("wide")}, nil
}

func runShow(ctx context.Context, f *Factory, o *showOptions) (result, error) {
	var doc map[string]any
	var estimate *procedure.Estimate
	err := f.useStore(ctx, readOnly(o.Store), func(s store.Store) error {
		var err error
		if doc, err = s.Get(ctx, o.Key); err != nil {
			return err
		}
		if st := workorder.StatusOf(doc); st == workorder.StatusClosed || st == workorder.StatusInReview || len(planSteps(doc)) == 0 {
			return nil // as wo status: no estimate for a task that is done or in review
		}
		est, err := procedure.NewEstimator(ctx, s)
		if err != nil {
			return err
		}
		e := est.Remaining(doc)
		estimate = &e
		return nil
	})
	if err != nil {
		return result{}, err
	}
	steps := planSteps(doc)
	data := showData{Task: portable(doc), Steps: steps}
	if st, err := workorder.StateOf(doc); err == nil {
		data.Review = reviewOutcomeOf(st)
	}
	return result{
		data:  data,
		human: func(w io.Writer) error { return writeShow(w, doc, steps, estimate, f.textWidth(o.Wide)) },
	}, nil
}

// StepView is one step as wo show and the plan present it.
type StepView struct {
	Step     int    `json:"step"`
	Action   string `json:"action"`
	Does     string `json:"does"`
	Command  string `json:"command,omitempty"`
	Rendered string `json:"rendered,omitempty"`
	// TemplateError says why Command could not be rendered.
	TemplateError string `json:"template_error,omitempty"`
	Description   string `json:"description,omitempty"`
	Mark          string `json:"mark"` // done, next, pending, failed
}

// planSteps renders every step of a work order and marks its progress.
func planSteps(doc map[string]any) []StepView {
	task, err := workorder.Parse(doc)
	if err != nil || task.WorkOrder == nil || !workorder.IsWorkOrder(doc) {
		return nil
	}
	wo := task.WorkOrder
	scope := workorder.NewScope(doc)
	next := 0
	for _, s := range wo.Procedure {
		if !wo.State.IsCompleted(s.Step) && s.Step > wo.State.CurrentStep {
			next = s.Step
			break
		}
	}
	var out []StepView
	for _, s := range wo.Procedure {
		does, _ := action.Describe(s.Action)
		v := StepView{Step: s.Step, Action: s.Action, Does: does, Command: s.Command, Description: scope.Text(s.Description), Mark: "pending"}
		if s.Command != "" {
			if r, err := scope.RenderLeaving(s.Command, action.LaterNames()); err != nil {
				v.TemplateError = err.Error()
			} else {
				v.Rendered = r
			}
		}
		switch {
		case wo.State.LastError != nil && wo.State.LastError.Step == s.Step:
			v.Mark = "failed"
		case wo.State.IsCompleted(s.Step) || s.Step <= wo.State.CurrentStep:
			v.Mark = "done"
		case s.Step == next:
			v.Mark = "next"
		}
		out = append(out, v)
	}
	return out
}

var marks = map[string]string{"done": "[done]", "next": "[next]", "pending": "[    ]", "failed": "[FAIL]"}

// writeShow prints the task for a person; width bounds the values of its
// context and inputs (0: no limit).
func writeShow(w io.Writer, doc map[string]any, steps []StepView, estimate *procedure.Estimate, width int) error {
	p := &printer{w: w, width: width}
	p.line("%s  %s", workorder.Key(doc), workorder.String(doc, "title"))
	p.line("status %s · priority %s · type %s%s", orDash(workorder.String(doc, "status")),
		orDash(workorder.String(doc, "priority")), orDash(workorder.String(doc, "type")),
		optional(" · parent ", workorder.String(doc, "parent_key")))
	if r := workorder.String(doc, "block_reason"); r != "" && workorder.StatusOf(doc) == workorder.StatusBlocked {
		p.line("blocked: %s", r)
	}
	if d := workorder.String(doc, "description"); d != "" {
		p.line("\n%s", multiline(d))
	}
	writeFormation(p, workorder.FormationOf(doc))
	task, err := workorder.Parse(doc)
	if err != nil {
		p.line("\n(the work order cannot be read: %v; run wo validate %s)", err, workorder.Key(doc))
		return p.err
	}
	if task.WorkOrder == nil || !workorder.IsWorkOrder(doc) {
		p.line("\n(no work_order: this task has no procedure to run)")
		return p.err
	}
	wo := task.WorkOrder
	p.line("\nObjective: %s", wo.Objective)
	p.section("Context", wo.Context)
	p.section("Inputs", wo.Inputs)
	if len(wo.Dependencies.BlockedBy)+len(wo.Dependencies.Blocks) > 0 {
		p.line("\nDependencies:")
		p.line("  blocked by  %s", orDash(strings.Join(wo.Dependencies.BlockedBy, ", ")))
		p.line("  blocks      %s", orDash(strings.Join(wo.Dependencies.Blocks, ", ")))
	}
	writeSteps(p, steps)
	writeApproval(p, wo.Approval)
	for i, h := range wo.RollbackHints {
		if i == 0 {
			p.line("\nTo roll back:")
		}
		p.line("  - %s", h)
	}
	if len(wo.SuccessCriteria) > 0 {
		p.line("\nSuccess criteria:")
		for _, c := range wo.SuccessCriteria {
			p.line("  - %s", c)
		}
	}
	writeRunState(p, workorder.Key(doc), wo.State, len(wo.Procedure), estimate)
	writeReviewOutcome(p, reviewOutcomeOf(wo.State))
	return p.err
}

// writeSteps lists the procedure's steps, each marked done, next,
// pending or failed, with its rendered command.
func writeSteps(p *printer, steps []StepView) {
	p.line("\nProcedure (%d steps):", len(steps))
	for _, s := range steps {
		p.line("  %s %2d %s", marks[s.Mark], s.Step, s.Action)
		if s.Description != "" {
			p.line("          %s", s.Description)
		}
		switch {
		case s.TemplateError != "":
			p.line("          command: (cannot render: %s)", s.TemplateError)
		case s.Rendered != "":
			p.line("          command: %s", firstLine(s.Rendered))
		}
	}
}

// writeApproval shows the request for approval, when the work order makes
// one.
func writeApproval(p *printer, a *workorder.ApprovalSpec) {
	if a == nil || a.Summary == "" && a.Confidence == nil && len(a.Evidence) == 0 {
		return
	}
	p.line("\nApproval request:")
	if a.Summary != "" {
		p.line("  summary     %s", a.Summary)
	}
	if a.Confidence != nil {
		p.line("  confidence  %.0f%%", *a.Confidence*100)
	}
	for _, e := range a.Evidence {
		p.line("  evidence    (%s) %s", e.Status, e.Claim)
	}
}

// writeRunState shows where the run stands: its step, review iterations,
// pull request and worktree, what is left to do (estimate), the agent's
// usage, an interrupt, the lease, the last error and the notes.
func writeRunState(p *printer, key string, st workorder.State, steps int, estimate *procedure.Estimate) {
	p.line("\nState: step %d/%d done · review iterations %d · PR %s · worktree %s",
		st.CurrentStep, steps, st.ReviewIterations, orDash(deref(st.PRURL)), orDash(deref(st.WorktreePath)))
	if e := estimate; e != nil && !e.Known {
		p.line("  estimate: %s", e.Basis)
	} else if e != nil {
		p.line("  estimate: ~%s left (%s)", roughDuration(e.Remaining), e.Basis)
	}
	if st.AgentUsage != nil {
		p.line("  agent: %s", agentUsageText(*st.AgentUsage))
	}
	if st.Phase == workorder.PhaseInterrupted {
		p.line("  interrupted: the last run was stopped by a signal in step %d; wo run %s goes on from there", st.CurrentStep+1, termtext.Line(key))
	}
	if st.Lease != nil {
		p.line("  lease: %s until %s", st.Lease.Holder, st.Lease.ExpiresAt.Format("2006-01-02 15:04:05Z07:00"))
	}
	if st.LastError != nil {
		p.line("  last error (step %d, %s, attempt %d): %s", st.LastError.Step, st.LastError.Action, st.LastError.Attempt, st.LastError.Message)
	}
	for _, n := range st.Notes {
		p.line("  note: %s", n)
	}
}

// printer writes lines and remembers the first write error.
type printer struct {
	w     io.Writer
	err   error
	width int // what a section's values are cut to (0: no limit)
}

// line prints one formatted line. The format is wo's own; every string or
// error argument is untrusted and printed escaped (termtext), a multiline
// one keeping its line breaks.
func (p *printer) line(format string, args ...any) {
	if p.err != nil {
		return
	}
	for i, a := range args {
		switch t := a.(type) {
		case string:
			args[i] = termtext.Line(t)
		case multiline:
			args[i] = termtext.Block(string(t))
		case error:
			args[i] = termtext.Block(t.Error())
		case fmt.Stringer:
			args[i] = termtext.Line(t.String())
		}
	}
	_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
}

// multiline is untrusted text whose line breaks are kept.
type multiline string

// section prints a map's entries sorted by key, each value on one line
// in words and cut to the width.
func (p *printer) section(title string, m map[string]any) {
	if len(m) == 0 {
		return
	}
	p.line("\n%s:", title)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t := &termtext.Table{Indent: "  ", Columns: []termtext.Column{{}, {Give: 1, Min: 20}}}
	for _, k := range keys {
		t.Rows = append(t.Rows, []string{k, plainValue(m[k])})
	}
	if p.err == nil {
		text, _ := t.Render(p.width)
		_, p.err = io.WriteString(p.w, text)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func optional(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// writeFormation shows what formation decided about the task, if anything.
func writeFormation(p *printer, f workorder.Formation) {
	if f.Empty() {
		return
	}
	p.line("\nFormation:")
	if f.SourceEventID != "" {
		p.line("  event       %s", f.SourceEventID)
	}
	if f.TaskType != "" {
		p.line("  type        %s", f.TaskType)
	}
	if f.ProjectID != nil {
		p.line("  project     %s", *f.ProjectID)
	}
	if len(f.SystemsAffected) > 0 {
		p.line("  systems     %s", strings.Join(f.SystemsAffected, ", "))
	}
	if f.ArtifactRef != "" {
		p.line("  artifact    %s", f.ArtifactRef)
	}
	if f.PatchRef != "" {
		p.line("  patch       %s", f.PatchRef)
	}
	if f.FormationConfidence != nil {
		p.line("  confidence  %.0f%%", *f.FormationConfidence*100)
	}
	for _, e := range f.Evidence {
		p.line("  evidence    (%s) %s — %d source(s)", e.Status, e.Claim, len(e.Sources))
		for _, s := range e.Sources {
			p.line("              %s <%s> read %s", s.Title, s.URL, s.RetrievedAt)
		}
	}
}

// showData is wo show's --json data: the stored document (without _rev and
// _id), its steps as the plan reads them, and the review so far.
type showData struct {
	Task   workorder.Document `json:"task" jsonschema:"description=The stored document as it is: one that wo validate accepts has this shape; one that another tool wrote may not."`
	Steps  []StepView         `json:"steps"`
	Review *ReviewOutcome     `json:"review,omitempty"`
}

// JSONSchemaProperty gives the schema of task: the document's typed view.
func (showData) JSONSchemaProperty(prop string) any {
	if prop == "task" {
		return workorder.Task{}
	}
	return nil
}
