package commands

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/termtext"
)

func newResetCommand(f *Factory) *cli.Command { return resetCommand(f, runReset) }

// resetOptions are what wo reset is asked.
type resetOptions struct {
	Store  StoreConfig
	Key    string
	ToStep int // the last step kept as done; 0 for none
	DryRun bool
}

func resetCommand(f *Factory, run func(context.Context, *Factory, *resetOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:      "reset",
		Usage:     "rewind a work order's state so that wo run repeats steps",
		ArgsUsage: "KEY --to-step N | --to-start",
		Description: `Sets current_step to --to-step N (--to-start: 0, not started), drops later
steps from completed_steps, forgets what those steps recorded, clears the
last error, and moves the status back through Persephone's transitions
(open for step 0, else in_progress). It says what it forgets before it
does; --dry-run says only that. The activity log keeps the history.

Files, branches and pushes are not undone (wo undo does that): the steps
look at the repository when they run again. After a reset to the start the
work order continues on its existing branch: the manifest is brought in
again from the source on top of it (no commit if nothing differs).`,
		Flags: append(storeFlags(),
			&cli.IntFlag{Name: "to-step", Usage: "the last step to keep as done (`N`; 0 keeps none)"},
			&cli.BoolFlag{Name: "to-start", Usage: "keep no step done: the work order starts over"},
			&cli.BoolFlag{Name: "dry-run", Usage: "say what the reset would forget; change nothing"},
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

// resetOptionsFrom reads the flags. How far back is never a default: a
// reset with no target once threw away a finished task's progress.
func resetOptionsFrom(c *cli.Context, f *Factory) (*resetOptions, error) {
	key, err := oneArg(c, "task KEY")
	if err != nil {
		return nil, err
	}
	switch {
	case c.IsSet("to-step") && c.Bool("to-start"):
		return nil, usagef("give --to-step N or --to-start, not both")
	case !c.IsSet("to-step") && !c.Bool("to-start"):
		return nil, usagef(fmt.Sprintf("say how far back: --to-step N keeps steps 1..N done, --to-start keeps none (add --dry-run to see what either forgets first: wo reset %s --to-start --dry-run)", key))
	case c.Int("to-step") < 0:
		return nil, usagef("--to-step cannot be negative")
	}
	return &resetOptions{Store: f.storeConfig(c), Key: key, ToStep: c.Int("to-step"), DryRun: c.Bool("dry-run")}, nil
}

// resetOutcome is what wo reset did (the result's fields, as before
// there was a plan), or would do, and what it forgets.
type resetOutcome struct {
	*procedure.Result
	Plan   *procedure.ResetPlan `json:"plan"`
	DryRun bool                 `json:"dry_run"`
}

func runReset(ctx context.Context, f *Factory, o *resetOptions) (result, error) {
	var out resetOutcome
	out.DryRun = o.DryRun
	cfg := o.Store
	cfg.ReadOnly = o.DryRun
	err := f.useStore(ctx, cfg, func(s store.Store) error {
		eng := f.engine(s, engineOptions{})
		var err error
		if out.Plan, err = eng.PlanReset(ctx, o.Key, o.ToStep); err != nil || o.DryRun {
			return err
		}
		out.Result, err = eng.Reset(ctx, o.Key, o.ToStep)
		return err
	})
	if err != nil {
		return result{}, err
	}
	width := f.textWidth(false)
	return result{data: out, human: func(w io.Writer) error { return writeReset(w, out, width) }}, nil
}

// writeReset says what the reset forgets, each value in words and cut to
// the width.
func writeReset(w io.Writer, out resetOutcome, width int) error {
	p := out.Plan
	pr := &printer{w: w}
	verb := "forgets"
	if out.DryRun {
		verb = "would forget"
	}
	switch {
	case len(p.NotDone) == 0 && len(p.Forgets) == 0:
		pr.line("%s: at step %d already; the reset %s nothing", p.Key, p.FromStep, verb)
	default:
		pr.line("%s: rewinding from step %d/%d to step %d %s:", p.Key, p.FromStep, p.Steps, p.ToStep, verb)
		if len(p.NotDone) > 0 {
			pr.line("  steps done: %s (they run again)", joinInts(p.NotDone))
		}
		texts := stateTexts(p.Forgets)
		names := make([]string, 0, len(texts))
		for name := range texts {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			pr.line("  %s: %s", name, termtext.Fit(termtext.Line(texts[name]), max(width-termtext.Width(name)-4, 20)))
		}
	}
	if p.StatusFrom != p.StatusTo {
		pr.line("  status: %s → %s", p.StatusFrom, p.StatusTo)
	}
	pr.line("  files, branches, pushes and the pull request stay (wo undo %s takes those back)", p.Key)
	for _, r := range p.Rewrites {
		pr.line("  %s", r)
	}
	if out.DryRun {
		pr.line("dry run: nothing changed; run it without --dry-run to reset")
	} else if r := out.Result; r != nil {
		pr.line("%s: reset to step %d/%d, status %s", r.Key, r.CurrentStep, r.Steps, r.Status)
	}
	return pr.err
}

func joinInts(list []int) string {
	s := make([]string, len(list))
	for i, n := range list {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
