package intake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/workorder"
)

// NewTask is one task for wo create.
type NewTask struct {
	Doc workorder.Document
	// FromParams says Doc was built by workorder.FromCreateParams: its
	// problems are named by parameter, and its warnings are kept in
	// task_context.validation_warnings.
	FromParams bool
	// SourceEvent, when set, is the event the task comes from. The key
	// derives from it, so the same event makes the same task, never two,
	// also when two processes race.
	SourceEvent string
}

// TaskCreated is what CreateTask did.
type TaskCreated struct {
	// Doc is the stored task: the new one, or the one the same event made
	// before.
	Doc      workorder.Document
	Existing bool
	// Problems are every problem found in a task built from parameters,
	// named by parameter; set also when the task was refused.
	Problems []workorder.Problem
	// Validation holds the warnings, by task.
	Validation []workorder.Report
	// Warnings are what went wrong after the task was stored.
	Warnings []string
}

var createOrigin = Origin{Source: "create", Command: "create"}

// CreateTask validates and stores one task. An invalid task is refused
// with a *workorder.InvalidError, and for a task from parameters the
// result still says what was found.
func (in *Intake) CreateTask(ctx context.Context, t NewTask) (*TaskCreated, error) {
	doc := t.Doc
	if t.SourceEvent != "" {
		doc["source_event_id"] = t.SourceEvent
		if _, has := doc["_key"]; !has {
			doc["_key"] = EventKey(t.SourceEvent, 6)
		}
	}
	reports := in.Check(ctx, []workorder.Document{doc}, createOrigin.Source)
	res := &TaskCreated{Doc: doc}
	var problems []workorder.Problem
	if t.FromParams {
		res.Problems = workorder.ParamProblems(doc, reports[0].Problems)
		if err := Invalid([]workorder.Report{{Key: "(new task)", Problems: res.Problems}}); err != nil {
			return res, err
		}
		workorder.RecordWarnings(doc, reports[0])
		problems = res.Problems
	} else {
		if err := Invalid(reports); err != nil {
			return nil, err
		}
		problems = reports[0].Problems
	}
	created, err := in.store(ctx, []workorder.Document{doc}, nil, createOrigin)
	if store.IsExists(err) && t.SourceEvent != "" {
		created, err = in.retryEvent(ctx, doc, t.SourceEvent, res, err)
	}
	if err != nil {
		return nil, nothingImported(err, createOrigin)
	}
	if created != nil {
		res.Warnings = created.Warnings
	}
	if w := (workorder.Report{Problems: problems}).Warnings(); len(w) > 0 {
		res.Validation = []workorder.Report{{Key: workorder.Key(res.Doc), Problems: w}}
	}
	return res, nil
}

// retryEvent handles a key that is taken when the task comes from an
// event: the same event again, or this process lost a race, means the task
// is there; a different event with the same short key gets a longer one.
// A nil Created with a nil error means the task existed (res says which).
func (in *Intake) retryEvent(ctx context.Context, doc workorder.Document, event string, res *TaskCreated, taken error) (*Created, error) {
	prev, err := in.Store.Get(ctx, workorder.Key(doc))
	if err != nil {
		// Unread, it may be this event's task: a second key could
		// make a second task.
		return nil, taken
	}
	if prev["source_event_id"] == event {
		res.Doc, res.Existing = prev, true
		return nil, nil
	}
	doc["_key"] = EventKey(event, 16)
	created, err := in.store(ctx, []workorder.Document{doc}, nil, createOrigin)
	if store.IsExists(err) {
		if prev, gerr := in.Store.Get(ctx, workorder.Key(doc)); gerr == nil && prev["source_event_id"] == event {
			res.Doc, res.Existing = prev, true
			return nil, nil
		}
	}
	return created, err
}

// EventKey derives a task key from a source event id: task_ and the first
// digits of its SHA-256.
func EventKey(event string, digits int) string {
	h := sha256.Sum256([]byte(event))
	return "task_" + hex.EncodeToString(h[:])[:digits]
}
