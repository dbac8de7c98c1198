package commands

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

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
	Wide   bool // every value whole, whatever the width
}

func listCommand(f *Factory, run func(context.Context, *Factory, *listOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list tasks, by status or parent",
		Description: `One line a task: key, status, priority, step and title. The table fits
the terminal ($COLUMNS, else the terminal's width, else 80): the title is
cut first (…), and with --parent the children's keys leave out the start
they share with the parent's (…_01_foundation) before they are cut; --wide
shows every value whole.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "status", Usage: "only tasks with `STATUS` (" + strings.Join(workorder.StatusNames(), ", ") + ")"},
			&cli.StringFlag{Name: "parent", Usage: "only the children of task `KEY`"},
			wideFlag(),
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
	return &listOptions{Store: f.storeConfig(c), Filter: filter, Wide: c.Bool("wide")}, nil
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
	width := f.textWidth(o.Wide)
	return result{data: rows, human: func(w io.Writer) error { return writeRows(w, rows, o.Filter.ParentKey, width) }}, nil
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

// writeRows prints one line a task within width (0: no limit); keys under
// parent may leave out the start they share with it.
func writeRows(w io.Writer, rows []TaskRow, parent string, width int) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no tasks")
		return err
	}
	t := &termtext.Table{Columns: []termtext.Column{{Header: "KEY", Give: 2, Min: 12}, {Header: "STATUS"},
		{Header: "PRIORITY", Drop: 1}, {Header: "STEP"}, {Header: "TITLE", Give: 3, Min: 20}}}
	for _, r := range rows {
		step := "-"
		if r.Steps > 0 {
			step = fmt.Sprintf("%d/%d", r.Step, r.Steps)
		}
		t.Rows = append(t.Rows, []string{r.Key, r.Status, orDash(r.Priority), step, r.Title})
		short := ""
		if parent != "" {
			short = shortKey(parent, r.Key)
		}
		t.Columns[0].Short = append(t.Columns[0].Short, short)
	}
	return writeTable(w, t, width)
}
