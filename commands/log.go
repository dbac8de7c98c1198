package commands

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/termtext"
)

func newLogCommand(f *Factory) *cli.Command { return logCommand(f, runLog) }

// logOptions are what wo log is asked.
type logOptions struct {
	Store StoreConfig
	Key   string
}

func logCommand(f *Factory, run func(context.Context, *Factory, *logOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:      "log",
		Usage:     "show a task's activity timeline",
		ArgsUsage: "KEY",
		Description: `Prints the task's persephone_logs entries, oldest first: each step run,
failure, wait, reset and creation, with the runner that did it.`,
		Flags: storeFlags(),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := logOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// logOptionsFrom reads the flags.
func logOptionsFrom(c *cli.Context, f *Factory) (*logOptions, error) {
	key, err := oneArg(c, "task KEY")
	if err != nil {
		return nil, err
	}
	return &logOptions{Store: f.storeConfig(c), Key: key}, nil
}

func runLog(ctx context.Context, f *Factory, o *logOptions) (result, error) {
	var entries []store.LogEntry
	err := f.useStore(ctx, readOnly(o.Store), func(s store.Store) error {
		if _, err := s.Get(ctx, o.Key); err != nil {
			return err
		}
		var err error
		entries, err = s.Logs(ctx, o.Key)
		return err
	})
	if err != nil {
		return result{}, err
	}
	if entries == nil {
		entries = []store.LogEntry{}
	}
	return result{data: entries, human: func(w io.Writer) error { return writeLog(w, entries) }}, nil
}

func writeLog(w io.Writer, entries []store.LogEntry) error {
	if len(entries) == 0 {
		_, err := fmt.Fprintln(w, "no activity")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tACTION\tBY\tDETAILS")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.CreatedAt.Format("2006-01-02 15:04:05Z07:00"),
			termtext.Line(e.Action), termtext.Line(e.SessionKey), details(e.Details))
	}
	return tw.Flush()
}

// details prints a log entry's details as key=value, the step first.
func details(d map[string]any) string {
	keys := make([]string, 0, len(d))
	for k := range d {
		if k == "stdout" || k == "stderr" {
			continue
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i] == "step" || keys[j] == "step" {
			return keys[i] == "step"
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := fmt.Sprint(d[k])
		if v == "" {
			continue
		}
		// Details hold review comments and agent output: escape, then cut.
		v = termtext.Line(v)
		if r := []rune(v); len(r) > 120 {
			v = string(r[:117]) + "..."
		}
		parts = append(parts, termtext.Line(k)+"="+v)
	}
	return strings.Join(parts, " ")
}
