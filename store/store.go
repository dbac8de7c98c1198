// Package store defines where task documents live: the Store interface that
// every backend implements, its errors, and the embedded SQLite backend.
// The ArangoDB backend lives in package arango; both pass the conformance
// suite in store/storetest.
package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Store holds Persephone task documents, their blocked_by edges and the
// activity log. Documents are generic JSON objects (map[string]any): a
// backend keeps every field it is given, known to wo or not.
//
// Every method is safe for concurrent use, also by several processes sharing
// one database.
type Store interface {
	// Get returns the document with the given key, with "_key" and "_rev"
	// set. A missing document is an error for which IsNotFound is true.
	Get(ctx context.Context, key string) (map[string]any, error)

	// Create stores new documents, all or none. Each needs a "_key"; any
	// "_rev" or "_id" given is replaced. If a key already exists nothing is
	// stored and IsExists is true for the error. The dependencies in
	// work_order.dependencies.blocked_by are also written as edges.
	Create(ctx context.Context, docs ...map[string]any) error

	// Update merges patch into the document if its revision is still ifRev
	// and returns the new revision. An empty ifRev matches no revision: it
	// is a conflict, never an unconditional write. Objects merge at every level, so
	// siblings of a patched field are kept; arrays and scalars are replaced
	// whole; a null value is stored as null. A revision that moved on is an
	// error for which IsConflict is true: read again and retry.
	//
	// The blocked_by edges follow the document. When the patch contains
	// work_order.dependencies.blocked_by, the task's edges are made to match
	// the new array in the same write: edges to blockers no longer listed
	// are deleted, edges to new ones created, edges to blockers still listed
	// kept as they are. A null (or any non-array) blocked_by means no
	// blockers. A patch that does not contain that path leaves the edges
	// alone, and so does one that sets work_order.dependencies to an object
	// without blocked_by: objects merge, so the old array survives. A patch
	// that replaces work_order or work_order.dependencies with a non-object
	// drops the array, and with it every blocked_by edge. BlockersInPatch
	// is the rule.
	//
	// A failed Update, a conflict included, changes neither the document
	// nor its edges. SQLite writes both in one transaction. ArangoDB writes
	// both in one stream transaction over the tasks and edges collections
	// when the patch contains blocked_by (and with one conditional PATCH
	// otherwise): all or nothing on a single server and in OneShard
	// databases; in a sharded cluster a commit that fails part way can
	// leave some shards written, but a stale revision is detected before
	// any edge is touched, so a conflict still changes nothing.
	Update(ctx context.Context, key, ifRev string, patch map[string]any) (rev string, err error)

	// List returns the documents that match every non-empty field of the
	// filter, ordered by key.
	List(ctx context.Context, filter Filter) ([]map[string]any, error)

	// BlockedBy returns the keys of the tasks that key's blocked_by edges
	// point to (persephone_edges), ordered.
	BlockedBy(ctx context.Context, key string) ([]string, error)

	// AppendLog adds an entry to the activity log (persephone_logs). Its
	// created_at is written in LogTimeLayout (UTC, nanoseconds, fixed
	// width).
	AppendLog(ctx context.Context, entry LogEntry) error

	// Logs returns the activity of one task, oldest first: in the order of
	// the times the entries carry, whatever their precision (Persephone
	// writes trimmed fractions), and entries of the same time in the order
	// they were written.
	Logs(ctx context.Context, taskKey string) ([]LogEntry, error)

	// LogsByAction returns the latest entries of one action across all
	// tasks, newest first, at most limit (for estimates from history).
	LogsByAction(ctx context.Context, action string, limit int) ([]LogEntry, error)

	// Init creates what the store needs (tables, collections, indexes). It is
	// idempotent and safe to run concurrently. When the store is usable but
	// weaker than the user may expect (an ArangoDB cluster whose collections
	// may be written part way), the error is a warning: IsWarning is true,
	// the store is ready, and Warned hands the message to the caller.
	Init(ctx context.Context) error

	// Describe names the store for messages, without secrets.
	Describe() string

	Close() error
}

// LoggedUpdater is a Store that writes an Update and activity-log entries
// in one round trip. The engine writes a step's state and its
// step_completed entry this way: on a remote store every round trip is
// a network wait, and a step that costs three of them is slow.
//
// UpdateLogged is Update, and when the update is written the entries are
// appended (as AppendLog would) in the same write: one transaction in
// SQLite, one AQL query (or the stream transaction that Update uses for
// blocked_by) in ArangoDB. When it fails, a conflict included, neither the
// document nor any entry is written. Stores without it are written with
// Update and then AppendLog.
type LoggedUpdater interface {
	UpdateLogged(ctx context.Context, key, ifRev string, patch map[string]any, entries []LogEntry) (rev string, err error)
}

// Replacer is a Store that can remove tasks (wo delete, wo import
// --replace).
//
// Replace removes each task in remove (key → the revision it must still
// be at) with its blocked_by edges, and creates docs as Create does, in
// one transaction: all or none. A task whose revision moved is a
// conflict, one that is gone is not found, and then nothing changes. The
// tasks' activity-log entries stay: the history of a task outlives it.
type Replacer interface {
	Replace(ctx context.Context, remove map[string]string, docs []map[string]any) error
}

// SummaryLister is a Store that can list documents cut to what a summary
// of them reads (wo status of an epic): see Summary. A task's procedure, inputs
// and context are most of its size, and decoding a thousand whole
// documents was most of wo status's time.
//
// ListSummaries selects and orders as List does, and returns for each
// document what Summary makes of it.
type SummaryLister interface {
	ListSummaries(ctx context.Context, filter Filter) ([]map[string]any, error)
}

// Summary cuts a document to SummaryFields.
func Summary(doc map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"_key", "_id", "_rev", "title", "type", "status", "block_reason", "priority", "labels",
		"parent_key", "created_at", "updated_at"} {
		if v, ok := doc[k]; ok {
			out[k] = v
		}
	}
	v, ok := doc["work_order"]
	wo, isObj := v.(map[string]any)
	if !ok || !isObj {
		if ok {
			out["work_order"] = v
		}
		return out
	}
	w := map[string]any{}
	for _, k := range []string{"state", "dependencies"} {
		if v, ok := wo[k]; ok {
			w[k] = v
		}
	}
	if v, ok := wo["context"]; ok {
		if c, isObj := v.(map[string]any); isObj {
			kept := map[string]any{}
			for _, k := range []string{"repo_path", "split_mode"} {
				if v, ok := c[k]; ok {
					kept[k] = v
				}
			}
			v = kept
		}
		w["context"] = v
	}
	if v, ok := wo["procedure"]; ok {
		if steps, isList := v.([]any); isList {
			cut := make([]any, len(steps))
			for i, st := range steps {
				cut[i] = st
				if m, isObj := st.(map[string]any); isObj {
					kept := map[string]any{}
					for _, k := range []string{"step", "action"} {
						if v, ok := m[k]; ok {
							kept[k] = v
						}
					}
					cut[i] = kept
				}
			}
			v = cut
		}
		w["procedure"] = v
	}
	out["work_order"] = w
	return out
}

// ListSummaries lists summaries when the store can, else whole documents.
func ListSummaries(ctx context.Context, s Store, f Filter) ([]map[string]any, error) {
	if sl, ok := s.(SummaryLister); ok {
		return sl.ListSummaries(ctx, f)
	}
	return s.List(ctx, f)
}

// DetailLister is a Store that can read chosen details of one action's
// latest log entries without decoding whole entries: the estimates of wo
// status read the durations of 2,000 past steps, and decoding each entry
// was most of their time.
//
// LogDetails selects and orders as LogsByAction does, and returns for each
// entry its task key and, in Details, only the keys asked for that the
// entry has (strings, and numbers as int64 or float64; other values as a
// store has them). Keys are plain names (letters, digits, underscores).
type DetailLister interface {
	LogDetails(ctx context.Context, action string, limit int, keys ...string) ([]LogEntry, error)
}

// LogDetails reads chosen details when the store can, else whole entries.
func LogDetails(ctx context.Context, s Store, action string, limit int, keys ...string) ([]LogEntry, error) {
	for _, k := range keys {
		if !plainName(k) {
			return nil, fmt.Errorf("log detail %q: not a plain name", k)
		}
	}
	if dl, ok := s.(DetailLister); ok {
		return dl.LogDetails(ctx, action, limit, keys...)
	}
	return s.LogsByAction(ctx, action, limit)
}

func plainName(k string) bool {
	for _, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return k != ""
}

// Filter selects documents in List.
type Filter struct {
	ParentKey string
	Status    string
}

// LogEntry is one record of persephone_logs.
type LogEntry struct {
	Action     string         `json:"action"`
	TaskKey    string         `json:"task_key"`
	SessionKey string         `json:"session_key"`
	Details    map[string]any `json:"details"`
	CreatedAt  time.Time      `json:"created_at"`
}

// Edge is a persephone_edges document: task is blocked by dep.
type Edge struct {
	Key  string `json:"_key"`
	From string `json:"_from"`
	To   string `json:"_to"`
	Type string `json:"type"`
}

// Kind classifies store errors so that no caller compares strings.
type Kind int

const (
	KindNotFound    Kind = iota + 1 // no such document
	KindExists                      // a document with that key exists
	KindConflict                    // the revision moved on: reread and retry
	KindUnavailable                 // the store cannot be reached: retry later
	KindWarning                     // done, but read the message: the store is weaker than expected
	KindNoDatabase                  // the store's database is not named, or not there: fix the configuration
)

// Error is a store failure of a known kind.
type Error struct {
	Kind Kind
	Key  string
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	msg := e.Msg
	if msg == "" {
		switch e.Kind {
		case KindNotFound:
			msg = "no such task"
		case KindExists:
			msg = "a task with this key already exists"
		case KindConflict:
			msg = "the task was changed by another writer since it was read"
		case KindUnavailable:
			msg = "store unavailable"
		case KindNoDatabase:
			msg = "the store has no such database"
		}
	}
	if e.Key != "" {
		msg = fmt.Sprintf("task %s: %s", e.Key, msg)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

func kindOf(err error) Kind {
	var se *Error
	if errors.As(err, &se) {
		return se.Kind
	}
	return 0
}

// IsNotFound reports whether err says a document does not exist.
func IsNotFound(err error) bool { return kindOf(err) == KindNotFound }

// IsExists reports whether err says a key is already taken.
func IsExists(err error) bool { return kindOf(err) == KindExists }

// IsConflict reports whether err is a stale revision; the operation can be
// retried after reading the document again.
func IsConflict(err error) bool { return kindOf(err) == KindConflict }

// IsUnavailable reports whether the store could not be reached.
func IsUnavailable(err error) bool { return kindOf(err) == KindUnavailable }

// IsNoDatabase reports whether err says that the store's database is not
// named, or that the server has no database of that name: a mistake in the
// configuration, not an outage, so a rerun with the same settings fails the
// same way. A backend whose store is a single file (SQLite) has no database
// name to miss; a missing or foreign file is MissingError or ForeignError.
func IsNoDatabase(err error) bool { return kindOf(err) == KindNoDatabase }

// IsWarning reports whether err only warns: the operation was done.
func IsWarning(err error) bool { return kindOf(err) == KindWarning }

// Warning builds the error of an operation that was done but whose outcome
// the user should know about.
func Warning(msg string) error { return &Error{Kind: KindWarning, Msg: msg} }

// Warned passes a warning's message to warn and returns nil; any other
// error it returns as it is.
func Warned(err error, warn func(msg string)) error {
	if !IsWarning(err) {
		return err
	}
	warn(err.Error())
	return nil
}

// LogTimeLayout is how wo writes a log entry's created_at: UTC with every
// nanosecond digit, so that all of wo's entries have the same width and
// sort as strings in time order.
const LogTimeLayout = "2006-01-02T15:04:05.000000000Z"

// LogTime formats t in LogTimeLayout.
func LogTime(t time.Time) string { return t.UTC().Format(LogTimeLayout) }

// NotFound, Exists, Conflict and Unavailable build typed errors for backends.
func NotFound(key string) error { return &Error{Kind: KindNotFound, Key: key} }
func Exists(key string) error   { return &Error{Kind: KindExists, Key: key} }
func Conflict(key string) error { return &Error{Kind: KindConflict, Key: key} }
func Unavailable(where string, err error) error {
	return &Error{Kind: KindUnavailable, Msg: "cannot reach the store at " + where, Err: err}
}

// NoDatabase builds the error of a store whose database is not named or
// not there (IsNoDatabase); msg names the store and the database and says
// how to fix the setting.
func NoDatabase(msg string) error { return &Error{Kind: KindNoDatabase, Msg: msg} }

// EdgeKey is the persephone_edges key of "task is blocked by dep".
func EdgeKey(task, dep string) string { return task + "__blocked_by__" + dep }

// BlockedByOf reads work_order.dependencies.blocked_by of a document.
func BlockedByOf(doc map[string]any) []string {
	wo, _ := doc["work_order"].(map[string]any)
	deps, _ := wo["dependencies"].(map[string]any)
	return keysIn(deps["blocked_by"])
}

// BlockersInPatch reports whether merging patch into a document decides the
// document's work_order.dependencies.blocked_by (ok), and if so which
// blockers the document has afterwards: the strings of the new array,
// sorted, each once. It is the rule by which Update keeps the blocked_by
// edges in step with the document:
//
//   - the patch sets blocked_by: the new array; null or a non-array means
//     no blockers;
//   - the patch replaces work_order or work_order.dependencies with a
//     non-object (null included): the array is gone, so no blockers;
//   - anything else, an object without blocked_by included: not decided,
//     because objects merge and the old array survives.
func BlockersInPatch(patch map[string]any) (blockers []string, ok bool) {
	v, ok := patch["work_order"]
	if !ok {
		return nil, false
	}
	wo, isObj := v.(map[string]any)
	if !isObj {
		return nil, true
	}
	if v, ok = wo["dependencies"]; !ok {
		return nil, false
	}
	deps, isObj := v.(map[string]any)
	if !isObj {
		return nil, true
	}
	if v, ok = deps["blocked_by"]; !ok {
		return nil, false
	}
	blockers = keysIn(v)
	slices.Sort(blockers)
	return slices.Compact(blockers), true
}

// keysIn returns the strings of a JSON array, decoded ([]any) or built in
// Go ([]string); anything else has none.
func keysIn(v any) []string {
	switch list := v.(type) {
	case []string:
		return slices.Clone(list)
	case []any:
		var out []string
		for _, x := range list {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
