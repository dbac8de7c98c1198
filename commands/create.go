package commands

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/intake"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

func newCreateCommand(f *Factory) *cli.Command { return createCommand(f, runCreate) }

// createOptions are what wo create is asked.
type createOptions struct {
	Store StoreConfig
	// One of: a task document, a file of parameters, or the parameters
	// given as flags.
	File       string
	ParamsFile string
	Params     workorder.CreateParams
	FlagsUsed  bool
	// SourceEvent makes the creation idempotent per event.
	SourceEvent string
}

func createCommand(f *Factory, run func(context.Context, *Factory, *createOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:      "create",
		Usage:     "create one task: from a JSON document, or from task parameters",
		ArgsUsage: "-f FILE | --params FILE | --description TEXT [...]",
		Description: `Three ways in:
  -f FILE         a task document (JSON; - for stdin), as wo import takes;
  --params FILE   a JSON object with the parameter names (description,
                  priority, client_cwd, background_context, expected_deliverables,
                  success_criteria, constraints, relevant_files, related_documentation);
  flags           --description, --priority, --background-context, and the
                  repeatable --expected-deliverable, --success-criterion,
                  --constraint, --relevant-file, --related-doc; --cwd.

The parameters are checked with the rules wo validate applies: errors
(description 10-500 characters, priority P0-P3, length and count limits)
stop the creation;
warnings (short items, criteria that may not be measurable, constraints
without an imperative, files not found relative to --cwd, URLs with spaces)
are printed and kept in task_context.validation_warnings. Duplicates and
empty items are dropped. The task gets task_context in the registry shape
that Persephone's task tools read.

A missing _key is generated (task_ and 6 hex digits); P0..P3 are stored as
critical, high, medium, low. With --source-event-id the key comes from the
event, so the same event makes the same task, never two, also when two
processes race.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read a task document from `FILE` (- for stdin)"},
			&cli.StringFlag{Name: "params", Usage: "read the task parameters from the JSON object in `FILE`"},
			&cli.StringFlag{Name: "title", Usage: "the task's title", DefaultText: "the description's first line"},
			&cli.StringFlag{Name: "description", Usage: "what the task is (10-500 characters)"},
			&cli.StringFlag{Name: "priority", Usage: "P0 (critical) to P3 (low)", DefaultText: "P2"},
			&cli.StringFlag{Name: "background-context", Usage: "the problem and why the task is needed (up to 5000 characters)"},
			&cli.StringSliceFlag{Name: "expected-deliverable", Usage: "a concrete output (repeatable, up to 20)"},
			&cli.StringSliceFlag{Name: "success-criterion", Usage: "a measurable criterion of done (repeatable, up to 15)"},
			&cli.StringSliceFlag{Name: "constraint", Usage: "a boundary such as 'Do not modify X' (repeatable, up to 15)"},
			&cli.StringSliceFlag{Name: "relevant-file", Usage: "a file to examine (repeatable, up to 50)"},
			&cli.StringSliceFlag{Name: "related-doc", Usage: "a URL or file to read (repeatable, up to 20)"},
			&cli.StringFlag{Name: "cwd", Usage: "resolve relative --relevant-file and --related-doc against `DIR`"},
			&cli.StringFlag{Name: "source-event-id", Usage: "the `ID` of the event this task comes from: the same ID never makes two tasks"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := createOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// createOptionsFrom reads the flags.
func createOptionsFrom(c *cli.Context, f *Factory) (*createOptions, error) {
	if c.Args().Len() > 0 {
		return nil, usagef("unexpected arguments: " + strings.Join(c.Args().Slice(), " "))
	}
	o := &createOptions{
		Store: f.storeConfig(c), File: c.String("file"), ParamsFile: c.String("params"), SourceEvent: c.String("source-event-id"),
		Params: workorder.CreateParams{
			Description: c.String("description"), Priority: c.String("priority"), ClientCWD: c.String("cwd"), Title: c.String("title"),
			BackgroundContext: c.String("background-context"), ExpectedDeliverables: c.StringSlice("expected-deliverable"),
			SuccessCriteria: c.StringSlice("success-criterion"), Constraints: c.StringSlice("constraint"),
			RelevantFiles: c.StringSlice("relevant-file"), RelatedDocumentation: c.StringSlice("related-doc"),
		},
		FlagsUsed: c.IsSet("description") || c.IsSet("background-context") || c.IsSet("expected-deliverable") ||
			c.IsSet("success-criterion") || c.IsSet("constraint") || c.IsSet("relevant-file") || c.IsSet("related-doc"),
	}
	modes := 0
	for _, used := range []bool{o.File != "", o.ParamsFile != "", o.FlagsUsed} {
		if used {
			modes++
		}
	}
	switch {
	case modes == 0:
		return nil, usagef("missing task: give -f FILE (or -f - for stdin), --params FILE, or --description TEXT")
	case modes > 1:
		return nil, usagef("give one of -f FILE, --params FILE, or the --description flags")
	}
	return o, nil
}

func runCreate(ctx context.Context, f *Factory, o *createOptions) (result, error) {
	doc, fromParams, err := o.document(f)
	if err != nil {
		return result{}, err
	}
	var res *intake.TaskCreated
	err = f.useStore(ctx, o.Store, func(s store.Store) error {
		var err error
		res, err = newIntake(s).CreateTask(ctx, intake.NewTask{Doc: doc, FromParams: fromParams, SourceEvent: o.SourceEvent})
		return err
	})
	if _, ok := asInvalid(err); ok && fromParams && res != nil {
		first := firstError(res.Problems)
		return result{data: createRefused{
			Error: fmt.Sprintf("Validation failed for '%s': %s", first.Path, first.Message),
			Field: first.Path, Value: first.Value, Problems: res.Problems}}, err
	}
	if err != nil {
		return result{}, err
	}
	writeNotes(f, res.Warnings)
	if !res.Existing {
		writeWarnings(f, res.Validation)
	}
	msgs := []string{}
	for _, r := range res.Validation {
		for _, p := range r.Problems {
			msgs = append(msgs, p.String())
		}
	}
	doc = res.Doc
	key := workorder.Key(doc)
	// The success shape of Persephone's task creation, inside the
	// envelope's data.
	data := createData{
		Success:     true,
		TaskID:      key,
		Description: cmp.Or(workorder.String(doc, "description"), workorder.String(doc, "work_order.objective")),
		Priority:    workorder.String(doc, "priority"),
		Status:      workorder.String(doc, "status"),
		Validation:  createValidation{Performed: true, Warnings: msgs},
		Existing:    res.Existing,
	}
	return result{data: data, human: func(w io.Writer) error {
		if res.Existing {
			_, err := fmt.Fprintf(w, "%s exists already for event %s\n", key, o.SourceEvent)
			return err
		}
		_, err := fmt.Fprintf(w, "created %s\n", key)
		return err
	}}, nil
}

// document builds the new task from -f, --params or the flags, and says
// whether it came from parameters.
func (o *createOptions) document(f *Factory) (workorder.Document, bool, error) {
	if o.File != "" {
		data, source, err := f.readInput(o.File)
		if err != nil {
			return nil, false, err
		}
		doc, err := workorder.DecodeDocument(source, data)
		return doc, false, err
	}
	p := o.Params
	if o.ParamsFile != "" {
		data, source, err := f.readInput(o.ParamsFile)
		if err != nil {
			return nil, false, err
		}
		if _, err := workorder.DecodeDocument(source, data); err != nil {
			return nil, false, err
		}
		p = workorder.CreateParams{}
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, false, usagef(fmt.Sprintf("%s: %v (the task parameters: description, priority, … as strings and lists of strings)", source, err))
		}
		if p.ClientCWD == "" {
			p.ClientCWD = o.Params.ClientCWD
		}
		if o.Params.Title != "" {
			p.Title = o.Params.Title
		}
	}
	return workorder.FromCreateParams(p, workorder.Now()), true, nil
}

func firstError(probs []workorder.Problem) workorder.Problem {
	for _, p := range probs {
		if p.Severity == workorder.SeverityError {
			return p
		}
	}
	return workorder.Problem{}
}

// createData is wo create's --json data: the success shape of Persephone's
// task creation.
type createData struct {
	Success     bool             `json:"success"`
	TaskID      string           `json:"task_id"`
	Description string           `json:"description"`
	Priority    string           `json:"priority"`
	Status      string           `json:"status"`
	Validation  createValidation `json:"validation"`
	// Existing is true when a task of the same source event was there
	// already and is the one returned.
	Existing bool `json:"existing"`
}

type createValidation struct {
	Performed bool     `json:"performed"`
	Warnings  []string `json:"warnings"`
}

// createRefused is the data of a creation from parameters that failed
// validation: Persephone's failure shape, with every problem.
type createRefused struct {
	Success  bool                `json:"success"`
	Error    string              `json:"error"`
	Field    string              `json:"field"`
	Value    any                 `json:"value"`
	Problems []workorder.Problem `json:"problems"`
}
