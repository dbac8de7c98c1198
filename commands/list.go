package commands

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

func newListCommand(f *Factory) *cli.Command { return listCommand(f, runList) }

// listOptions are what wo list is asked.
type listOptions struct {
	Store  StoreConfig
	Filter store.Filter
}

func listCommand(f *Factory, run func(context.Context, *Factory, *listOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list tasks, by status or parent",
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "status", Usage: "only tasks with `STATUS` (" + strings.Join(workorder.StatusNames(), ", ") + ")"},
			&cli.StringFlag{Name: "parent", Usage: "only the children of task `KEY`"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := listOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// listOptionsFrom reads the flags.
func listOptionsFrom(c *cli.Context, f *Factory) (*listOptions, error) {
	if c.Args().Len() > 0 {
		return nil, usagef("wo list takes no arguments; use --status or --parent")
	}
	filter := store.Filter{Status: c.String("status"), ParentKey: c.String("parent")}
	if filter.Status != "" && !slices.Contains(workorder.Statuses, workorder.Status(filter.Status)) {
		return nil, usagef(fmt.Sprintf("--status %q: use one of %s", filter.Status, strings.Join(workorder.StatusNames(), ", ")))
	}
	return &listOptions{Store: f.storeConfig(c), Filter: filter}, nil
}

func runList(ctx context.Context, f *Factory, o *listOptions) (result, error) {
	var docs []map[string]any
	err := f.useStore(ctx, readOnly(o.Store), func(s store.Store) error {
		var err error
		docs, err = s.List(ctx, o.Filter)
		return err
	})
	if err != nil {
		return result{}, err
	}
	rows := make([]TaskRow, len(docs))
	for i, d := range docs {
		rows[i] = taskRow(d)
	}
	return result{data: rows, human: func(w io.Writer) error { return writeRows(w, rows) }}, nil
}

// TaskRow is one line of wo list.
type TaskRow struct {
	Key      string `json:"key"`
	Title    string `json:"title"`
	Status   string `json:"status"`
	Priority string `json:"priority"`
	Type     string `json:"type"`
	Parent   string `json:"parent_key,omitempty"`
	Step     int    `json:"current_step"`
	Steps    int    `json:"steps"`
	PRURL    string `json:"pr_url,omitempty"`
}

func taskRow(d map[string]any) TaskRow {
	r := TaskRow{
		Key: workorder.Key(d), Title: workorder.String(d, "title"), Status: workorder.String(d, "status"),
		Priority: workorder.String(d, "priority"), Type: workorder.String(d, "type"), Parent: workorder.String(d, "parent_key"),
		PRURL: workorder.String(d, "work_order.state.pr_url"),
	}
	if v, ok := workorder.Lookup(d, "work_order.state.current_step"); ok {
		n, _ := workorder.AsInt(v)
		r.Step = int(n)
	}
	if v, ok := workorder.Lookup(d, "work_order.procedure"); ok {
		if list, ok := v.([]any); ok {
			r.Steps = len(list)
		}
	}
	return r
}

func writeRows(w io.Writer, rows []TaskRow) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no tasks")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSTATUS\tPRIORITY\tSTEP\tTITLE")
	for _, r := range rows {
		step := "-"
		if r.Steps > 0 {
			step = fmt.Sprintf("%d/%d", r.Step, r.Steps)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termtext.Line(r.Key), termtext.Line(r.Status),
			termtext.Line(orDash(r.Priority)), step, termtext.Line(r.Title))
	}
	return tw.Flush()
}
