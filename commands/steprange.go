package commands

import (
	"context"
	"fmt"

	"github.com/wo-runner/wo/procedure"
)

// checkStepRange refuses --from-step and --until-step outside the task's
// procedure as a usage mistake (exit 2), before anything runs, for a real
// run and a dry run alike.
func checkStepRange(ctx context.Context, eng *procedure.Engine, opts procedure.RunOptions) error {
	if opts.FromStep == 0 && opts.UntilStep == 0 {
		return nil
	}
	_, task, err := eng.Load(ctx, opts.Key)
	if err != nil {
		return err
	}
	n := len(task.WorkOrder.Procedure)
	for _, s := range []struct {
		flag string
		v    int
	}{{"--from-step", opts.FromStep}, {"--until-step", opts.UntilStep}} {
		if s.v < 0 || s.v > n {
			return usagef(fmt.Sprintf("%s %d: task %s has steps 1..%d", s.flag, s.v, opts.Key, n))
		}
	}
	if opts.UntilStep > 0 && opts.FromStep > opts.UntilStep {
		return usagef(fmt.Sprintf("--from-step %d is after --until-step %d", opts.FromStep, opts.UntilStep))
	}
	return nil
}
