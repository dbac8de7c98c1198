package commands

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/store"
)

func newResetCommand(f *Factory) *cli.Command { return resetCommand(f, runReset) }

// resetOptions are what wo reset is asked.
type resetOptions struct {
	Store  StoreConfig
	Key    string
	ToStep int // the last step kept as done; 0 for none
}

func resetCommand(f *Factory, run func(context.Context, *Factory, *resetOptions) (result, error)) *cli.Command {
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
			opts, err := resetOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// resetOptionsFrom reads the flags.
func resetOptionsFrom(c *cli.Context, f *Factory) (*resetOptions, error) {
	key, err := oneArg(c, "task KEY")
	if err != nil {
		return nil, err
	}
	return &resetOptions{Store: f.storeConfig(c), Key: key, ToStep: c.Int("to-step")}, nil
}

func runReset(ctx context.Context, f *Factory, o *resetOptions) (result, error) {
	var out *procedure.Result
	err := f.useStore(ctx, o.Store, func(s store.Store) error {
		var err error
		out, err = f.engine(s, engineOptions{}).Reset(ctx, o.Key, o.ToStep)
		return err
	})
	if err != nil {
		return result{}, err
	}
	return result{data: out, human: func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s: reset to step %d/%d, status %s\n", out.Key, out.CurrentStep, out.Steps, out.Status)
		return err
	}}, nil
}
