package commands

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/store"
)

func newResetCommand(f *Factory) *cli.Command {
	return &cli.Command{
		Name:      "reset",
		Usage:     "rewind a work order's state so that wo run repeats steps",
		ArgsUsage: "KEY",
		Description: `Sets current_step to --to-step (default 0: not started), drops later steps
from completed_steps, clears the last error, and moves the status back
through Persephone's transitions (open for step 0, else in_progress). The
activity log keeps the history. Files, branches and pushes are not undone:
the steps look at the repository when they run again. After a reset to step
0 the work order continues on its existing branch: the manifest is brought
in again from the source on top of it (no commit if nothing differs).`,
		Flags: append(storeFlags(),
			&cli.IntFlag{Name: "to-step", Usage: "the last step to keep as done (`N`, 0 for none)"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			key, err := oneArg(c, "task KEY")
			if err != nil {
				return result{}, err
			}
			var out *procedure.Result
			err = f.withStore(c, func(s store.Store) error {
				out, err = f.engine(s, engineOptionsFrom(c)).Reset(c.Context, key, c.Int("to-step"))
				return err
			})
			if err != nil {
				return result{}, err
			}
			return result{data: out, human: func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s: reset to step %d/%d, status %s\n", out.Key, out.CurrentStep, out.Steps, out.Status)
				return err
			}}, nil
		}),
	}
}
