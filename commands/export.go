package commands

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

func newExportCommand(f *Factory) *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "write tasks as a JSON array that wo import reads",
		Description: `Writes every task, or the children of --parent (and the parent itself),
as a JSON array on stdout. Store metadata (_rev, _id) is left out so that
the output imports into any store: wo export | wo import -.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "parent", Aliases: []string{"epic"}, Usage: "export only task `KEY` and its children"},
			&cli.StringFlag{Name: "format", Value: "documents", Usage: "documents (wo import's JSON array) or tasks-json (seed 004's team task state; needs --epic)"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			switch c.String("format") {
			case "documents":
			case "tasks-json":
				return exportTasksJSON(c, f)
			default:
				return result{}, usagef(fmt.Sprintf("--format %q: use documents or tasks-json", c.String("format")))
			}
			var docs []map[string]any
			err := f.withStore(c, func(s store.Store) error {
				parent := c.String("parent")
				if parent != "" {
					p, err := s.Get(c.Context, parent)
					if err != nil {
						return err
					}
					docs = append(docs, p)
				}
				children, err := s.List(c.Context, store.Filter{ParentKey: parent})
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
		}),
	}
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

// exportTasksJSON writes an epic as seed 004's tasks.json.
func exportTasksJSON(c *cli.Context, f *Factory) (result, error) {
	epic := c.String("parent")
	if epic == "" {
		return result{}, usagef("--format tasks-json needs --epic KEY")
	}
	var tf *workorder.TasksFile
	err := f.withStore(c, func(s store.Store) error {
		doc, err := s.Get(c.Context, epic)
		if err != nil {
			return err
		}
		children, err := s.List(c.Context, store.Filter{ParentKey: epic})
		if err != nil {
			return err
		}
		docs := make([]workorder.Document, len(children))
		for i, ch := range children {
			docs[i] = ch
		}
		tf, err = workorder.ToTasksFile(doc, docs)
		return err
	})
	if err != nil {
		return result{}, err
	}
	return result{data: tf, human: func(w io.Writer) error { return workorder.Encode(w, tf) }}, nil
}
