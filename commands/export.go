package commands

import (
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
			&cli.StringFlag{Name: "parent", Usage: "export only task `KEY` and its children"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
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
