package commands

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

func newCreateCommand(f *Factory) *cli.Command {
	return &cli.Command{
		Name:      "create",
		Usage:     "create one task from a JSON document",
		ArgsUsage: "-f FILE | -f -",
		Description: `Reads one task document. A missing _key is generated (task_ and 6 hex
digits); P0..P3 priorities are stored as critical, high, medium, low. The
document is validated with seed 000's rules: errors stop the creation,
warnings are printed and kept in the result.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read the document from `FILE` (- for stdin)"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			file := c.String("file")
			if file == "" {
				return result{}, usagef("missing document: give -f FILE, or -f - to read standard input")
			}
			if c.Args().Len() > 0 {
				return result{}, usagef("unexpected arguments: " + fmt.Sprint(c.Args().Slice()))
			}
			data, source, err := f.readInput(file)
			if err != nil {
				return result{}, err
			}
			doc, err := workorder.DecodeDocument(source, data)
			if err != nil {
				return result{}, err
			}
			var warnings []workorder.Report
			err = f.withStore(c, func(s store.Store) error {
				_, warnings, err = storeNew(c, s, []workorder.Document{doc}, source)
				return err
			})
			if err != nil {
				return result{}, err
			}
			writeWarnings(f, warnings)
			var msgs []string
			for _, r := range warnings {
				for _, p := range r.Problems {
					msgs = append(msgs, p.String())
				}
			}
			key := workorder.Key(doc)
			// The seed's success shape, inside the envelope's data.
			data2 := map[string]any{
				"success":     true,
				"task_id":     key,
				"description": firstNonEmpty(workorder.String(doc, "description"), workorder.String(doc, "work_order.objective")),
				"priority":    doc["priority"],
				"status":      doc["status"],
				"validation":  map[string]any{"performed": true, "warnings": nonNil(msgs)},
			}
			return result{data: data2, human: func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "created %s\n", key)
				return err
			}}, nil
		}),
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
