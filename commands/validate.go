package commands

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

func newValidateCommand(f *Factory) *cli.Command {
	return &cli.Command{
		Name:      "validate",
		Usage:     "check a stored task, or documents in a file, and list every problem",
		ArgsUsage: "KEY | -f FILE",
		Description: `Checks Persephone's fields (status, priority, type, block_reason), seed 000's
task-creation rules (errors and warnings), and the work order's structure:
steps numbered 1..n, known actions, loop_to pointing back, conditions,
file_manifest paths, pr_number, dependencies that exist and form no cycle,
and the state's shape and version. Exits 2 when there is any error.

With -f, the file holds one document or an array; defaults that wo import
would fill (status, priority, _key) are applied first, so the result is
what an import would say.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "validate the documents in `FILE` (- for stdin) instead of a stored task"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			var reports []workorder.Report
			err := f.withStore(c, func(s store.Store) error {
				var err error
				if file := c.String("file"); file != "" {
					if c.Args().Len() > 0 {
						return usagef("give either a KEY or -f FILE, not both")
					}
					reports, err = validateFile(c.Context, f, s, file)
					return err
				}
				key, err := oneArg(c, "task KEY")
				if err != nil {
					return err
				}
				doc, err := s.Get(c.Context, key)
				if err != nil {
					return err
				}
				reports = []workorder.Report{workorder.Validate(doc, validationOptions(c.Context, s, nil))}
				return nil
			})
			if err != nil {
				return result{}, err
			}
			res := result{data: reports, human: func(w io.Writer) error { return writeReports(w, reports) }}
			return res, invalid(reports)
		}),
	}
}

func validateFile(ctx context.Context, f *Factory, s store.Store, file string) ([]workorder.Report, error) {
	data, source, err := f.readInput(file)
	if err != nil {
		return nil, err
	}
	docs, err := workorder.DecodeDocuments(source, data)
	if err != nil {
		return nil, err
	}
	batch := map[string]workorder.Document{}
	for _, d := range docs {
		workorder.ApplyDefaults(d)
		batch[workorder.Key(d)] = d
	}
	opts := validationOptions(ctx, s, batch)
	reports := make([]workorder.Report, len(docs))
	for i, d := range docs {
		reports[i] = workorder.Validate(d, opts)
	}
	return reports, nil
}

// validationOptions builds the options that let validation see other tasks:
// first the batch being imported, then the store.
func validationOptions(ctx context.Context, s store.Store, batch map[string]workorder.Document) workorder.Options {
	return workorder.Options{
		Actions:    procedure.ActionNames(),
		Conditions: procedure.Conditions(),
		LaterNames: procedure.LaterNames(),
		Lookup: func(key string) (workorder.Dependencies, bool) {
			doc, ok := batch[key]
			if !ok {
				var err error
				doc, err = s.Get(ctx, key)
				if err != nil {
					return workorder.Dependencies{}, false
				}
			}
			return dependenciesOf(doc), true
		},
	}
}

func dependenciesOf(doc workorder.Document) workorder.Dependencies {
	var d workorder.Dependencies
	d.BlockedBy = store.BlockedByOf(doc)
	if v, ok := workorder.Lookup(doc, "work_order.dependencies.blocks"); ok {
		if list, ok := v.([]any); ok {
			for _, x := range list {
				if s, ok := x.(string); ok {
					d.Blocks = append(d.Blocks, s)
				}
			}
		}
	}
	return d
}

// invalid returns the error for reports that contain errors, or nil.
func invalid(reports []workorder.Report) error {
	var bad []workorder.Report
	for _, r := range reports {
		if !r.Valid() {
			bad = append(bad, r)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &workorder.InvalidError{Reports: bad}
}

func writeReports(w io.Writer, reports []workorder.Report) error {
	for _, r := range reports {
		errs, warns := r.Errors(), r.Warnings()
		key := r.Key
		if key == "" {
			key = "(no _key)"
		}
		switch {
		case len(errs) > 0:
			fmt.Fprintf(w, "%s: invalid, %d error(s), %d warning(s)\n", key, len(errs), len(warns))
		case len(warns) > 0:
			fmt.Fprintf(w, "%s: valid, %d warning(s)\n", key, len(warns))
		default:
			fmt.Fprintf(w, "%s: valid\n", key)
		}
		for _, p := range errs {
			fmt.Fprintf(w, "  error   %s\n", p)
		}
		for _, p := range warns {
			fmt.Fprintf(w, "  warning %s\n", p)
		}
	}
	return nil
}
