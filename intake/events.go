package intake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wo-runner/wo/store"
)

// Formation events are what the planner of a task tells a person while it
// forms the task: a question (clarify) or how far it got (plan_progress).
// They go on the task's timeline (the activity log) before anyone is told,
// so the record never misses what a person was shown.
const (
	EventClarify      = "clarify"
	EventPlanProgress = "plan_progress"
)

// EventKinds lists the formation events a person or planner may record.
var EventKinds = []string{EventClarify, EventPlanProgress}

// MaxEventMessage bounds the message of one event.
const MaxEventMessage = 4000

// RecordEvent writes a formation event onto the task's timeline.
func (in *Intake) RecordEvent(ctx context.Context, key, kind, message string, at time.Time) error {
	if !slices.Contains(EventKinds, kind) {
		return &BadRequestError{Err: fmt.Errorf("%q is not a formation event: use one of %s", kind, strings.Join(EventKinds, ", "))}
	}
	message = strings.TrimSpace(message)
	switch {
	case message == "":
		return &BadRequestError{Err: errors.New("the event needs a message: what the person is asked or told")}
	case len(message) > MaxEventMessage:
		return &BadRequestError{Err: fmt.Errorf("the message has %d bytes; at most %d", len(message), MaxEventMessage)}
	}
	if _, err := in.Store.Get(ctx, key); err != nil {
		return err
	}
	return in.Store.AppendLog(ctx, store.LogEntry{Action: kind, TaskKey: key, SessionKey: in.Session, CreatedAt: at,
		Details: map[string]any{"message": message}})
}
