package commands

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

func newCreateCommand(f *Factory) *cli.Command {
	return &cli.Command{
		Name:      "create",
		Usage:     "create one task: from a JSON document, or from seed 000's parameters",
		ArgsUsage: "-f FILE | --params FILE | --description TEXT [...]",
		Description: `Three ways in:
  -f FILE         a task document (JSON; - for stdin), as wo import takes;
  --params FILE   a JSON object with seed 000's parameter names (description,
                  priority, client_cwd, background_context, expected_deliverables,
                  success_criteria, constraints, relevant_files, related_documentation);
  flags           --description, --priority, --background-context, and the
                  repeatable --expected-deliverable, --success-criterion,
                  --constraint, --relevant-file, --related-doc; --cwd.

The parameters are checked with seed 000's rules: errors (description 10-500
characters, priority P0-P3, length and count limits) stop the creation;
warnings (short items, criteria that may not be measurable, constraints
without an imperative, files not found relative to --cwd, URLs with spaces)
are printed and kept in task_context.validation_warnings. Duplicates and
empty items are dropped. The task gets task_context in the seed's registry
shape.

A missing _key is generated (task_ and 6 hex digits); P0..P3 are stored as
critical, high, medium, low. With --source-event-id the key comes from the
event, so the same event makes the same task, never two, also when two
processes race.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read a task document from `FILE` (- for stdin)"},
			&cli.StringFlag{Name: "params", Usage: "read seed 000's parameters from the JSON object in `FILE`"},
			&cli.StringFlag{Name: "title", Usage: "the task's title (default: the description's first line)"},
			&cli.StringFlag{Name: "description", Usage: "what the task is (10-500 characters)"},
			&cli.StringFlag{Name: "priority", Usage: "P0 (critical) to P3 (low); default P2"},
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
			if c.Args().Len() > 0 {
				return result{}, usagef("unexpected arguments: " + strings.Join(c.Args().Slice(), " "))
			}
			doc, seedMode, err := createInput(c, f)
			if err != nil {
				return result{}, err
			}
			if seedMode != nil {
				if inv := invalid([]workorder.Report{{Key: "(new task)", Problems: seedMode}}); inv != nil {
					first := firstError(seedMode)
					return result{data: map[string]any{"success": false,
						"error": fmt.Sprintf("Validation failed for '%s': %s", first.Path, first.Message),
						"field": first.Path, "problems": seedMode}}, inv
				}
			}
			event := c.String("source-event-id")
			if event != "" {
				doc["source_event_id"] = event
				if _, has := doc["_key"]; !has {
					doc["_key"] = eventKey(event, 6)
				}
			}
			var warnings []workorder.Report
			existing := false
			err = f.withStore(c, func(s store.Store) error {
				var err error
				_, warnings, err = storeNew(c, s, []workorder.Document{doc}, "create")
				if store.IsExists(err) && event != "" {
					// The same event again, or this process lost a race:
					// the task is there. A different event with the same
					// short key gets a longer one.
					prev, gerr := s.Get(c.Context, workorder.Key(doc))
					if gerr != nil {
						return err
					}
					if prev["source_event_id"] == event {
						doc, existing = prev, true
						return nil
					}
					doc["_key"] = eventKey(event, 16)
					_, warnings, err = storeNew(c, s, []workorder.Document{doc}, "create")
					if store.IsExists(err) {
						if prev, gerr := s.Get(c.Context, workorder.Key(doc)); gerr == nil && prev["source_event_id"] == event {
							doc, existing, err = prev, true, nil
						}
					}
				}
				return err
			})
			if err != nil {
				return result{}, err
			}
			if seedMode != nil {
				// Seed 000's own warnings, as stored in task_context.
				warnings = []workorder.Report{{Key: workorder.Key(doc), Problems: workorder.Report{Problems: seedMode}.Warnings()}}
			}
			if !existing {
				writeWarnings(f, warnings)
			}
			var msgs []string
			for _, r := range warnings {
				for _, p := range r.Problems {
					msgs = append(msgs, p.String())
				}
			}
			key := workorder.Key(doc)
			// The seed's success shape, inside the envelope's data.
			data := map[string]any{
				"success":     true,
				"task_id":     key,
				"description": firstNonEmpty(workorder.String(doc, "description"), workorder.String(doc, "work_order.objective")),
				"priority":    doc["priority"],
				"status":      doc["status"],
				"validation":  map[string]any{"performed": true, "warnings": nonNil(msgs)},
				"existing":    existing,
			}
			return result{data: data, human: func(w io.Writer) error {
				if existing {
					_, err := fmt.Fprintf(w, "%s exists already for event %s\n", key, event)
					return err
				}
				_, err := fmt.Fprintf(w, "created %s\n", key)
				return err
			}}, nil
		}),
	}
}

// createInput builds the new document from -f, --params or the flags. For
// the seed-000 forms it also returns the problems found.
func createInput(c *cli.Context, f *Factory) (workorder.Document, []workorder.Problem, error) {
	flagsUsed := c.IsSet("description") || c.IsSet("background-context") || c.IsSet("expected-deliverable") ||
		c.IsSet("success-criterion") || c.IsSet("constraint") || c.IsSet("relevant-file") || c.IsSet("related-doc")
	modes := 0
	for _, used := range []bool{c.String("file") != "", c.String("params") != "", flagsUsed} {
		if used {
			modes++
		}
	}
	switch {
	case modes == 0:
		return nil, nil, usagef("missing task: give -f FILE (or -f - for stdin), --params FILE, or --description TEXT")
	case modes > 1:
		return nil, nil, usagef("give one of -f FILE, --params FILE, or the --description flags")
	case c.String("file") != "":
		data, source, err := f.readInput(c.String("file"))
		if err != nil {
			return nil, nil, err
		}
		doc, err := workorder.DecodeDocument(source, data)
		return doc, nil, err
	}
	var p workorder.CreateParams
	if file := c.String("params"); file != "" {
		data, source, err := f.readInput(file)
		if err != nil {
			return nil, nil, err
		}
		if _, err := workorder.DecodeDocument(source, data); err != nil {
			return nil, nil, err
		}
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, nil, usagef(fmt.Sprintf("%s: %v (seed 000's parameters: description, priority, … as strings and lists of strings)", source, err))
		}
	} else {
		p = workorder.CreateParams{
			Description: c.String("description"), Priority: c.String("priority"), ClientCWD: c.String("cwd"),
			BackgroundContext: c.String("background-context"), ExpectedDeliverables: c.StringSlice("expected-deliverable"),
			SuccessCriteria: c.StringSlice("success-criterion"), Constraints: c.StringSlice("constraint"),
			RelevantFiles: c.StringSlice("relevant-file"), RelatedDocumentation: c.StringSlice("related-doc"),
		}
	}
	if c.String("cwd") != "" && p.ClientCWD == "" {
		p.ClientCWD = c.String("cwd")
	}
	if c.String("title") != "" {
		p.Title = c.String("title")
	}
	doc, probs := workorder.FromCreateParams(p, workorder.Now())
	if probs == nil {
		probs = []workorder.Problem{}
	}
	return doc, probs, nil
}

func firstError(probs []workorder.Problem) workorder.Problem {
	for _, p := range probs {
		if p.Severity == workorder.SeverityError {
			return p
		}
	}
	return workorder.Problem{}
}

// eventKey derives a task key from a source event id.
func eventKey(event string, digits int) string {
	h := sha256.Sum256([]byte(event))
	return "task_" + hex.EncodeToString(h[:])[:digits]
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
