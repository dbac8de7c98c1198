package commands

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

func newExportCommand(f *Factory) *cli.Command { return exportCommand(f, runExport) }

// exportOptions are what wo export is asked.
type exportOptions struct {
	Store  StoreConfig
	Parent string // only this task and its children
	Format string // documents or tasks-json
}

func exportCommand(f *Factory, run func(context.Context, *Factory, *exportOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "write tasks as a JSON array that wo import reads",
		Description: `Writes every task, or the children of --parent (and the parent itself),
as a JSON array on stdout. Store metadata (_rev, _id) is left out so that
the output imports into any store: wo export | wo import -.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "parent", Aliases: []string{"epic"}, Usage: "export only task `KEY` and its children"},
			&cli.StringFlag{Name: "format", Value: "documents", Usage: "documents (wo import's JSON array) or tasks-json (a team's tasks.json task state; needs --epic)"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := exportOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// exportOptionsFrom reads the flags.
func exportOptionsFrom(c *cli.Context, f *Factory) (*exportOptions, error) {
	o := &exportOptions{Store: f.storeConfig(c), Parent: c.String("parent"), Format: c.String("format")}
	switch o.Format {
	case "documents":
	case "tasks-json":
		if o.Parent == "" {
			return nil, usagef("--format tasks-json needs --epic KEY")
		}
	default:
		return nil, usagef(fmt.Sprintf("--format %q: use documents or tasks-json", o.Format))
	}
	return o, nil
}

func runExport(ctx context.Context, f *Factory, o *exportOptions) (result, error) {
	if o.Format == "tasks-json" {
		return exportTasksJSON(ctx, f, o)
	}
	var docs []map[string]any
	err := f.useStore(ctx, readOnly(o.Store), func(s store.Store) error {
		if o.Parent != "" {
			p, err := s.Get(ctx, o.Parent)
			if err != nil {
				return err
			}
			docs = append(docs, p)
		}
		children, err := s.List(ctx, store.Filter{ParentKey: o.Parent})
		docs = append(docs, children...)
		return err
	})
	if err != nil {
		return result{}, err
	}
	out := make([]map[string]any, len(docs))
	for i, d := range docs {
		out[i] = portable(d)
	}
	return result{data: out, human: func(w io.Writer) error { return workorder.Encode(w, out) }}, nil
}

// portable drops the fields a store assigns.
func portable(doc map[string]any) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		if k != "_rev" && k != "_id" {
			out[k] = v
		}
	}
	return out
}

// exportTasksJSON writes an epic as a team's tasks.json.
func exportTasksJSON(ctx context.Context, f *Factory, o *exportOptions) (result, error) {
	var tf *workorder.TasksFile
	err := f.useStore(ctx, readOnly(o.Store), func(s store.Store) error {
		doc, err := s.Get(ctx, o.Parent)
		if err != nil {
			return err
		}
		children, err := s.List(ctx, store.Filter{ParentKey: o.Parent})
		if err != nil {
			return err
		}
		docs := make([]workorder.Document, len(children))
		copy(docs, children)
		tf, err = workorder.ToTasksFile(doc, docs)
		return err
	})
	if err != nil {
		return result{}, err
	}
	return result{data: tf, human: func(w io.Writer) error { return workorder.Encode(w, tf) }}, nil
}
