// Package intake is how tasks enter the store: wo create, wo import and
// wo split all come through here. It fills defaults, validates every new
// document with the one validator (workorder.Validate) against the store
// and the rest of its batch, writes all or none, and logs each created
// task. It neither reads flags nor prints: what went wrong after a write
// comes back in the result's Warnings for the command to show.
package intake

import (
	"context"
	"fmt"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// Vocabulary is what the engine can run, for validation: its actions,
// conditions, and the placeholders that steps fill in while running.
type Vocabulary struct {
	Actions    []string
	Conditions []string
	LaterNames []string
	// ReadBy names the actions that read a field (workorder.Options.ReadBy).
	ReadBy func(path string) []string
	// Advice adds the engine's warnings (workorder.Options.Advice).
	Advice func(workorder.Document) []workorder.Problem
}

// Intake creates tasks in one store.
type Intake struct {
	// Store is where the tasks go. Without one, Check checks the
	// documents alone (workorder.Options.Offline): a lint that needs no
	// store.
	Store store.Store
	// Vocabulary is checked against every procedure.
	Vocabulary Vocabulary
	// Session is who creates the tasks: the session_key of log entries.
	Session string
}

// Origin says where new documents come from, for messages and the log.
type Origin struct {
	Source  string // a file name, "stdin", "create", "split"
	Command string // the wo command
}

// Created is what Create did.
type Created struct {
	Keys []string
	// Validation holds the reports that carry warnings (never errors: an
	// error stops the creation).
	Validation []workorder.Report
	// Warnings are what went wrong after the tasks were stored, such as an
	// activity log entry that could not be written.
	Warnings []string
}

// Options are the validation options that let a document see other tasks:
// first the batch it arrives with, then the store.
func (in *Intake) Options(ctx context.Context, batch map[string]workorder.Document) workorder.Options {
	return workorder.Options{
		Actions:    in.Vocabulary.Actions,
		Conditions: in.Vocabulary.Conditions,
		LaterNames: in.Vocabulary.LaterNames,
		ReadBy:     in.Vocabulary.ReadBy,
		Advice:     in.Vocabulary.Advice,
		Offline:    in.Store == nil,
		Lookup: func(key string) (workorder.Dependencies, bool) {
			doc, ok := batch[key]
			if !ok && in.Store == nil {
				return workorder.Dependencies{}, false
			}
			if !ok {
				var err error
				if doc, err = in.Store.Get(ctx, key); err != nil {
					return workorder.Dependencies{}, false
				}
			}
			return DependenciesOf(doc), true
		},
	}
}

// DependenciesOf reads both dependency lists of a document.
func DependenciesOf(doc workorder.Document) workorder.Dependencies {
	d := workorder.Dependencies{BlockedBy: store.BlockedByOf(doc), Parent: workorder.String(doc, "parent_key")}
	if list, ok := workorder.Get(doc, "work_order.dependencies.blocks").([]any); ok {
		for _, x := range list {
			if s, ok := x.(string); ok {
				d.Blocks = append(d.Blocks, s)
			}
		}
	}
	return d
}

// Check fills the defaults an import would fill and validates the
// documents against the store and each other, changing nothing in the
// store. There is one report per document, in order, after one for every
// key that appears twice.
func (in *Intake) Check(ctx context.Context, docs []workorder.Document, source string) []workorder.Report {
	batch := map[string]workorder.Document{}
	var reports []workorder.Report
	unkeyed := map[int]string{}
	for i, d := range docs {
		if _, ok := d["_key"]; !ok {
			title, _ := d["title"].(string)
			unkeyed[i] = workorder.Unkeyed(source, i, len(docs), title)
		}
		workorder.ApplyDefaults(d)
		key := workorder.Key(d)
		if _, seen := batch[key]; seen {
			reports = append(reports, workorder.Report{Key: key, Problems: []workorder.Problem{{
				Path: "_key", Message: "appears more than once in " + source, Severity: workorder.SeverityError}}})
		}
		batch[key] = d
	}
	opts := in.Options(ctx, batch)
	for i, d := range docs {
		r := workorder.Validate(d, opts)
		r.Document = unkeyed[i]
		reports = append(reports, r)
	}
	return reports
}

// Create fills defaults, validates the documents, and stores them all or
// none, with an activity log entry for each.
func (in *Intake) Create(ctx context.Context, docs []workorder.Document, from Origin) (*Created, error) {
	reports := in.Check(ctx, docs, from.Source)
	if err := Invalid(reports); err != nil {
		return nil, err
	}
	res, err := in.store(ctx, docs, withWarnings(reports), from)
	return res, nothingImported(err, from)
}

// Replace is Create for documents some of which take the place of stored
// tasks (remove: key → the revision each must still be at), in one
// transaction: the stored ones go, with their edges, and all the
// documents come, or nothing changes. Their activity logs stay, and each
// replaced task's gets a task_replaced entry.
func (in *Intake) Replace(ctx context.Context, docs []workorder.Document, remove map[string]string, from Origin) (*Created, error) {
	r, ok := in.Store.(store.Replacer)
	if !ok {
		return nil, fmt.Errorf("this store cannot remove tasks, so it cannot replace them")
	}
	reports := in.Check(ctx, docs, from.Source)
	if err := Invalid(reports); err != nil {
		return nil, err
	}
	res, err := in.storeWith(ctx, docs, withWarnings(reports), from, remove, func() error { return r.Replace(ctx, remove, docs) })
	return res, nothingImported(err, from)
}

// nothingImported explains a taken key to someone who gave documents.
func nothingImported(err error, from Origin) error {
	if store.IsExists(err) {
		return fmt.Errorf("%w; nothing was imported (remove the document from %s, or give it another _key)", err, from.Source)
	}
	return err
}

// store writes documents that passed validation and logs their creation.
func (in *Intake) store(ctx context.Context, docs []workorder.Document, validation []workorder.Report, from Origin) (*Created, error) {
	return in.storeWith(ctx, docs, validation, from, nil, func() error { return in.Store.Create(ctx, docs...) })
}

// storeWith is store with write storing the documents (all or none), and
// the keys in replaced logged as replaced, not created.
func (in *Intake) storeWith(ctx context.Context, docs []workorder.Document, validation []workorder.Report, from Origin, replaced map[string]string, write func() error) (*Created, error) {
	if err := write(); err != nil {
		return nil, err
	}
	res := &Created{Validation: validation}
	for _, d := range docs {
		key := workorder.Key(d)
		res.Keys = append(res.Keys, key)
		action, done := "task_created", "created"
		if _, ok := replaced[key]; ok {
			action, done = "task_replaced", "replaced"
		}
		entry := store.LogEntry{Action: action, TaskKey: key, SessionKey: in.Session,
			Details: map[string]any{"source": from.Source, "command": from.Command}}
		if err := in.Store.AppendLog(ctx, entry); err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s was %s but its activity log entry was not written: %v", key, done, err))
		}
	}
	return res, nil
}

// Invalid returns the error for reports that contain errors, or nil.
func Invalid(reports []workorder.Report) error {
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

// withWarnings keeps the warnings of reports that have some.
func withWarnings(reports []workorder.Report) []workorder.Report {
	var out []workorder.Report
	for _, r := range reports {
		if w := r.Warnings(); len(w) > 0 {
			out = append(out, workorder.Report{Key: r.Key, Document: r.Document, Problems: w})
		}
	}
	return out
}
