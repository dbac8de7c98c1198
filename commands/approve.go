package commands

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// The approval gate's three decisions share one shape.
func newDecisionCommand(f *Factory, name string, decision workorder.Decision, usage, noteFlag, noteUsage string, noteRequired bool) *cli.Command {
	flags := storeFlags()
	if noteFlag != "" {
		flags = append(flags, &cli.StringFlag{Name: noteFlag, Required: noteRequired, Usage: noteUsage})
	}
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "KEY",
		Description: `A work order with work_order.approval.required stops wo run before its first
step that changes git or GitHub (exit 3, with the plan). wo approve lets it
through; wo revise sends it back to formation with a note (it will not run
until approved); wo cancel closes the task with a reason. Each decision is
recorded in work_order.state.approval and the activity log, with who and when.`,
		Flags: flags,
		Action: f.action(func(c *cli.Context) (result, error) {
			key, err := oneArg(c, "task KEY")
			if err != nil {
				return result{}, err
			}
			note := ""
			if noteFlag != "" {
				note = c.String(noteFlag)
			}
			var out *procedure.Result
			err = f.withStore(c, func(s store.Store) error {
				out, err = f.engine(s, engineOptionsFrom(c)).Decide(c.Context, key, decision, note)
				return err
			})
			if err != nil {
				return result{}, err
			}
			return result{data: out, human: func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s: %s (status %s)\n", key, decision, out.Status)
				return err
			}}, nil
		}),
	}
}
