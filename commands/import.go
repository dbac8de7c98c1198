package commands

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/intake"
	"github.com/wo-runner/wo/internal/identity"
	"github.com/wo-runner/wo/procedure/action"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/termtext"
	"github.com/wo-runner/wo/workorder"
)

func newImportCommand(f *Factory) *cli.Command { return importCommand(f, runImport) }

// importOptions are what wo import is asked.
type importOptions struct {
	Store  StoreConfig
	File   string // - for standard input
	Format string // documents or tasks-json
	// MaxSize bounds the bytes read from File; 0 is DefaultMaxInputSize.
	MaxSize int64
	// Replace lets documents take the place of stored tasks that never
	// ran.
	Replace bool
}

func importCommand(f *Factory, run func(context.Context, *Factory, *importOptions) (result, error)) *cli.Command {
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
are named. wo export | wo import - round-trips.

--replace lets a document take the place of a stored task with its key,
when that task never ran (or its runs were undone): in the same
transaction, the old one goes and the new one comes. A task with a run
history is refused (wo undo it first).

wo reads at most 32 MiB (--max-size raises it) and refuses documents
nested deeper than 64 levels, duplicate keys and invalid UTF-8.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "max-size", Value: "32MiB", Usage: "read at most `SIZE` bytes of input (K, M, G or KiB, MiB, GiB suffixes)"},
			&cli.StringFlag{Name: "format", Value: "documents", Usage: "documents (a JSON array of tasks) or tasks-json (a team's tasks.json: an epic and one agent work order per task)"},
			&cli.BoolFlag{Name: "replace", Usage: "replace stored tasks of the same keys that never ran (refused for one with a run history)"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := importOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// importOptionsFrom reads the flags.
func importOptionsFrom(c *cli.Context, f *Factory) (*importOptions, error) {
	file, err := oneArg(c, "FILE (or - for standard input)")
	if err != nil {
		return nil, err
	}
	if format := c.String("format"); format != "documents" && format != "tasks-json" {
		return nil, usagef(fmt.Sprintf("--format %q: use documents or tasks-json", format))
	}
	o := &importOptions{Store: f.storeConfig(c), File: file, Format: c.String("format"), Replace: c.Bool("replace")}
	if c.IsSet("max-size") {
		if o.MaxSize, err = parseSize(c.String("max-size")); err != nil {
			return nil, usagef("--max-size: " + err.Error())
		}
	}
	return o, nil
}

func runImport(ctx context.Context, f *Factory, o *importOptions) (result, error) {
	limit := o.MaxSize
	if limit == 0 {
		limit = DefaultMaxInputSize
	}
	data, source, err := f.readInputLimit(o.File, limit)
	if err != nil {
		return result{}, err
	}
	docs, err := importedDocuments(o.Format, source, data)
	if err != nil {
		return result{}, err
	}
	var res *intake.Created
	var replaced []string
	err = f.useStore(ctx, o.Store, func(s store.Store) error {
		from := intake.Origin{Source: source, Command: "import"}
		if !o.Replace {
			res, err = newIntake(s).Create(ctx, docs, from)
			return err
		}
		remove := map[string]string{}
		for _, d := range docs {
			key := workorder.Key(d)
			old, err := s.Get(ctx, key)
			if store.IsNotFound(err) || key == "" {
				continue
			}
			if err != nil {
				return err
			}
			if _, _, err := neverRan(ctx, s, old); err != nil {
				return err
			}
			remove[key], _ = old["_rev"].(string)
			replaced = append(replaced, key)
		}
		res, err = newIntake(s).Replace(ctx, docs, remove, from)
		return err
	})
	if err != nil {
		return result{}, err
	}
	writeNotes(f, res.Warnings)
	writeWarnings(f, res.Validation)
	return result{
		data: importData{Imported: res.Keys, Count: len(res.Keys), Replaced: replaced, Warnings: res.Validation},
		human: func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "imported %d task(s): %s\n", len(res.Keys), joinKeys(res.Keys, 10))
			if err == nil && len(replaced) > 0 {
				_, err = fmt.Fprintf(w, "replaced %d that never ran: %s\n", len(replaced), joinKeys(replaced, 10))
			}
			return err
		},
	}, nil
}

// importedDocuments reads the documents of the input: a JSON array of
// them, or a tasks.json (format tasks-json) as an epic and its tasks.
func importedDocuments(format, source string, data []byte) ([]workorder.Document, error) {
	if format != "tasks-json" {
		return workorder.DecodeDocuments(source, data)
	}
	if err := workorder.CheckJSON(source, data); err != nil {
		return nil, err
	}
	tf, err := workorder.ParseTasksFile(source, data)
	if err != nil {
		return nil, err
	}
	epic, tasks := workorder.FromTasksFile(tf, action.AgentTask)
	return append([]workorder.Document{epic}, tasks...), nil
}

// newIntake is the task intake over s, checking procedures against what
// the engine runs.
func newIntake(s store.Store) *intake.Intake {
	return &intake.Intake{Store: s, Session: identity.Runner(), Vocabulary: intake.Vocabulary{
		Actions: action.Names(), Conditions: action.Conditions(), LaterNames: action.LaterNames(), ReadBy: action.ReadBy, Advice: action.Advice}}
}

// writeNotes prints what went wrong after a write to stderr.
func writeNotes(f *Factory, notes []string) {
	for _, n := range notes {
		fmt.Fprintln(f.Stderr, "warning:", termtext.Block(n))
	}
}

// writeWarnings prints validation warnings to stderr, where they do not mix
// with data.
func writeWarnings(f *Factory, reports []workorder.Report) {
	for _, r := range reports {
		for _, p := range r.Warnings() {
			fmt.Fprintf(f.Stderr, "warning: %s %s\n", termtext.Line(r.Key), termtext.Line(p.String()))
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
		out += termtext.Line(k)
	}
	return out
}

// importData is wo import's --json data.
type importData struct {
	Imported []string `json:"imported"`
	Count    int      `json:"count"`
	// Replaced are the imported keys that replaced a stored task that
	// never ran.
	Replaced []string `json:"replaced"`
	// Warnings are the documents' problems that did not stop the import.
	Warnings []workorder.Report `json:"warnings"`
}
