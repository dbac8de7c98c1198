package commands

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// gateDecision is one of the approval gate's three commands: its name, the
// decision it records, and the flag that carries its note, if any.
type gateDecision struct {
	Name         string
	Decision     workorder.Decision
	Usage        string
	NoteFlag     string
	NoteUsage    string
	NoteRequired bool
}

var (
	approveDecision = gateDecision{Name: "approve", Decision: workorder.DecisionApproved, Usage: "approve a work order that waits at its approval gate"}
	reviseDecision  = gateDecision{Name: "revise", Decision: workorder.DecisionRevise, Usage: "send a work order back to formation with a note",
		NoteFlag: "note", NoteUsage: "what to change", NoteRequired: true}
	cancelDecision = gateDecision{Name: "cancel", Decision: workorder.DecisionCancelled, Usage: "close a task with a reason",
		NoteFlag: "reason", NoteUsage: "why it is cancelled", NoteRequired: true}
)

// decisionOptions are what wo approve, revise or cancel is asked.
type decisionOptions struct {
	Store    StoreConfig
	Key      string
	Decision workorder.Decision
	Note     string // --note or --reason
}

func newDecisionCommand(f *Factory, d gateDecision) *cli.Command {
	return decisionCommand(f, d, runDecision)
}

// The approval gate's three decisions share one shape.
func decisionCommand(f *Factory, d gateDecision, run func(context.Context, *Factory, *decisionOptions) (result, error)) *cli.Command {
	flags := storeFlags()
	if d.NoteFlag != "" {
		flags = append(flags, &cli.StringFlag{Name: d.NoteFlag, Required: d.NoteRequired, Usage: d.NoteUsage})
	}
	return &cli.Command{
		Name:      d.Name,
		Usage:     d.Usage,
		ArgsUsage: "KEY",
		Description: `A work order with work_order.approval.required stops wo run before its first
step that changes git or GitHub (exit 3, with the plan). wo approve lets it
through; wo revise sends it back to formation with a note (it will not run
until approved); wo cancel closes the task with a reason. Each decision is
recorded in work_order.state.approval and the activity log, with who and when.`,
		Flags: flags,
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := decisionOptionsFrom(c, f, d)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// decisionOptionsFrom reads the flags of decision d.
func decisionOptionsFrom(c *cli.Context, f *Factory, d gateDecision) (*decisionOptions, error) {
	key, err := oneArg(c, "task KEY")
	if err != nil {
		return nil, err
	}
	o := &decisionOptions{Store: f.storeConfig(c), Key: key, Decision: d.Decision}
	if d.NoteFlag != "" {
		o.Note = c.String(d.NoteFlag)
	}
	return o, nil
}

func runDecision(ctx context.Context, f *Factory, o *decisionOptions) (result, error) {
	var out *procedure.Result
	err := f.useStore(ctx, o.Store, func(s store.Store) error {
		var err error
		out, err = f.engine(s, engineOptions{}).Decide(ctx, o.Key, o.Decision, o.Note)
		return err
	})
	if err != nil {
		return result{}, err
	}
	return result{data: out, human: func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s: %s (status %s)\n", o.Key, o.Decision, out.Status)
		return err
	}}, nil
}
