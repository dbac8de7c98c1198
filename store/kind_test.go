package store

import (
	"errors"
	"fmt"
	"testing"
)

// Each kind of store error is told apart by its own predicate alone, also
// when a caller wrapped it: commands maps them to different exit codes, so
// a missing database that looked unavailable would tell the user to rerun
// what can only fail again.
func TestEachKindHasOnePredicate(t *testing.T) {
	preds := map[string]func(error) bool{
		"IsNotFound": IsNotFound, "IsExists": IsExists, "IsConflict": IsConflict,
		"IsUnavailable": IsUnavailable, "IsWarning": IsWarning, "IsNoDatabase": IsNoDatabase,
	}
	for _, c := range []struct {
		err  error
		pred string
	}{
		{NotFound("task_a"), "IsNotFound"},
		{Exists("task_a"), "IsExists"},
		{Conflict("task_a"), "IsConflict"},
		{Unavailable("db:8529", errors.New("connection refused")), "IsUnavailable"},
		{Warning("sharded"), "IsWarning"},
		{NoDatabase(`ArangoDB at http://db:8529 has no database "nope"`), "IsNoDatabase"},
	} {
		for _, err := range []error{c.err, fmt.Errorf("listing tasks: %w", c.err)} {
			for name, pred := range preds {
				if got := pred(err); got != (name == c.pred) {
					t.Errorf("%s(%v) = %v", name, err, got)
				}
			}
		}
	}
	for name, pred := range preds {
		if pred(nil) || pred(errors.New("plain")) {
			t.Errorf("%s is true of an error that is no store error", name)
		}
	}
}

// A missing database's message is the backend's, word for word: it names
// the server, the database and the setting to fix.
func TestNoDatabaseKeepsTheBackendsMessage(t *testing.T) {
	msg := `ArangoDB at http://db:8529 has no database "nope": create it, or set --database / WO_DATABASE`
	if got := NoDatabase(msg).Error(); got != msg {
		t.Errorf("message = %q, want %q", got, msg)
	}
	if got := (&Error{Kind: KindNoDatabase}).Error(); got != "the store has no such database" {
		t.Errorf("message without one = %q", got)
	}
}
