package commands

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/procedure"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

func newImportCommand(f *Factory) *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "store the documents of a JSON file, all or none",
		ArgsUsage: "FILE | -",
		Description: `Reads a JSON array of task documents (or one document) from FILE, or from
standard input with -, fills defaults (status open, priority medium, type
task, timestamps, an initial work_order.state), turns P0..P3 into
Persephone's priority words, validates every document against the store
and the rest of the file, and stores them all in one transaction. If any
document is invalid or its key exists, nothing is stored and the culprits
are named. wo export | wo import - round-trips.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "format", Value: "documents", Usage: "documents (a JSON array of tasks) or tasks-json (seed 004: an epic and one agent work order per task)"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			file, err := oneArg(c, "FILE (or - for standard input)")
			if err != nil {
				return result{}, err
			}
			if format := c.String("format"); format != "documents" && format != "tasks-json" {
				return result{}, usagef(fmt.Sprintf("--format %q: use documents or tasks-json", format))
			}
			var keys []string
			var warnings []workorder.Report
			err = f.withStore(c, func(s store.Store) error {
				keys, warnings, err = importDocuments(c, f, s, file)
				return err
			})
			if err != nil {
				return result{}, err
			}
			writeWarnings(f, warnings)
			return result{
				data: map[string]any{"imported": keys, "count": len(keys), "warnings": warnings},
				human: func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "imported %d task(s): %s\n", len(keys), joinKeys(keys, 10))
					return err
				},
			}, nil
		}),
	}
}

// importDocuments validates and stores the documents of file. It returns
// the imported keys and the reports that carry warnings.
func importDocuments(c *cli.Context, f *Factory, s store.Store, file string) ([]string, []workorder.Report, error) {
	data, source, err := f.readInput(file)
	if err != nil {
		return nil, nil, err
	}
	var docs []workorder.Document
	if c.String("format") == "tasks-json" {
		tf, err := workorder.ParseTasksFile(source, data)
		if err != nil {
			return nil, nil, err
		}
		epic, tasks := workorder.FromTasksFile(tf)
		docs = append([]workorder.Document{epic}, tasks...)
	} else if docs, err = workorder.DecodeDocuments(source, data); err != nil {
		return nil, nil, err
	}
	return storeNew(c, s, docs, source)
}

// storeNew fills defaults, validates the documents against the store and
// each other, and creates them all or none.
func storeNew(c *cli.Context, s store.Store, docs []workorder.Document, source string) ([]string, []workorder.Report, error) {
	batch := map[string]workorder.Document{}
	var dupes []workorder.Report
	for _, d := range docs {
		workorder.ApplyDefaults(d)
		key := workorder.Key(d)
		if _, seen := batch[key]; seen {
			dupes = append(dupes, workorder.Report{Key: key, Problems: []workorder.Problem{{
				Path: "_key", Message: "appears more than once in " + source, Severity: workorder.SeverityError}}})
		}
		batch[key] = d
	}
	opts := validationOptions(c.Context, s, batch)
	reports := dupes
	for _, d := range docs {
		reports = append(reports, workorder.Validate(d, opts))
	}
	if err := invalid(reports); err != nil {
		return nil, nil, err
	}
	if err := s.Create(c.Context, docs...); err != nil {
		if store.IsExists(err) {
			return nil, nil, fmt.Errorf("%w; nothing was imported (remove the document from %s, or give it another _key)", err, source)
		}
		return nil, nil, err
	}
	keys := make([]string, len(docs))
	runner := procedure.Identity()
	for i, d := range docs {
		keys[i] = workorder.Key(d)
		entry := store.LogEntry{Action: "task_created", TaskKey: keys[i], SessionKey: runner,
			Details: map[string]any{"source": source, "command": c.Command.Name}}
		if err := s.AppendLog(c.Context, entry); err != nil {
			fmt.Fprintf(c.App.ErrWriter, "warning: %s was created but its activity log entry was not written: %v\n", keys[i], err)
		}
	}
	return keys, withWarnings(reports), nil
}

func withWarnings(reports []workorder.Report) []workorder.Report {
	var out []workorder.Report
	for _, r := range reports {
		if len(r.Warnings()) > 0 {
			out = append(out, workorder.Report{Key: r.Key, Problems: r.Warnings()})
		}
	}
	return out
}

// writeWarnings prints validation warnings to stderr, where they do not mix
// with data.
func writeWarnings(f *Factory, reports []workorder.Report) {
	for _, r := range reports {
		for _, p := range r.Warnings() {
			fmt.Fprintf(f.Stderr, "warning: %s %s\n", r.Key, p)
		}
	}
}

func joinKeys(keys []string, max int) string {
	out := ""
	for i, k := range keys {
		if i == max {
			return out + fmt.Sprintf(", … and %d more", len(keys)-max)
		}
		if i > 0 {
			out += ", "
		}
		out += k
	}
	return out
}
