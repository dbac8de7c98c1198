package arango

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/wo-runner/wo/store"
)

// The log queries sort by parsed time, then the sub-millisecond digits,
// then seq; never by created_at as text, nor by _key.
const (
	wantLogs = `FOR l IN @@logs FILTER l.task_key == @key
LET frac = REGEX_MATCHES(TO_STRING(l.created_at), "[.]([0-9]+)")
SORT DATE_TIMESTAMP(l.created_at), TO_NUMBER(SUBSTRING(CONCAT(frac[1], "000000000"), 3, 6)), l.seq
RETURN l`
	wantLogsByAction = `FOR l IN @@logs FILTER l.action == @action
LET frac = REGEX_MATCHES(TO_STRING(l.created_at), "[.]([0-9]+)")
SORT DATE_TIMESTAMP(l.created_at) DESC, TO_NUMBER(SUBSTRING(CONCAT(frac[1], "000000000"), 3, 6)) DESC, l.seq DESC
LIMIT @limit RETURN l`
	wantLogDetails = `FOR l IN @@logs FILTER l.action == @action
LET frac = REGEX_MATCHES(TO_STRING(l.created_at), "[.]([0-9]+)")
SORT DATE_TIMESTAMP(l.created_at) DESC, TO_NUMBER(SUBSTRING(CONCAT(frac[1], "000000000"), 3, 6)) DESC, l.seq DESC
LIMIT @limit RETURN {action: l.action, task_key: l.task_key, session_key: l.session_key, created_at: l.created_at, details: KEEP(l.details, @keys)}`
)

func logRow(name string, createdAt, details any) map[string]any {
	return map[string]any{"_key": name, "action": "tick", "task_key": "task_l", "session_key": "p", "created_at": createdAt, "details": details}
}

// Persephone trims fractions (05.5Z, 05Z, 05.12Z, 05.1Z). Whatever order the
// server returns them in, Logs gives time order; same-time entries keep the
// server's (seq) order.
func TestLogsOfMixedPrecisionInTimeOrder(t *testing.T) {
	f := newFakeArango(t)
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{
		logRow("half", "2026-01-02T03:04:05.5Z", map[string]any{}),
		logRow("whole", "2026-01-02T03:04:05Z", map[string]any{}),
		logRow("twelve", "2026-01-02T03:04:05.12Z", map[string]any{}),
		logRow("same", "2026-01-02T03:04:05.120000000Z", map[string]any{}),
		logRow("tenth", "2026-01-02T03:04:05.1Z", map[string]any{}),
		logRow("offset", "2026-01-02T04:04:05.3+01:00", map[string]any{}),
	}, ""), query(wantLogs, map[string]any{"@logs": "persephone_logs", "key": "task_l"}))
	logs, err := open(t, f.url()).Logs(context.Background(), "task_l")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range logs {
		got = append(got, e.CreatedAt.Format("05.000"))
	}
	if want := []string{"05.000", "05.100", "05.120", "05.120", "05.300", "05.500"}; !slices.Equal(got, want) {
		t.Errorf("times in order %v, want %v", got, want)
	}
}

// An entry another tool wrote with a created_at that is not a string, or
// details that are not an object, is shown as well as it can be; it does
// not make wo log fail.
func TestLogsOfOddShapeAreShownNotFatal(t *testing.T) {
	f := newFakeArango(t)
	f.expect("POST", db+"/_api/cursor", 201, cursorReply([]any{
		logRow("ms", 1767323045000, "just text"),
		logRow("obj", map[string]any{"$date": "x"}, []any{1, 2}),
		logRow("ok", "2026-01-02T03:04:06Z", nil),
	}, ""), query(wantLogs, map[string]any{"@logs": "persephone_logs", "key": "task_l"}))
	logs, err := open(t, f.url()).Logs(context.Background(), "task_l")
	if err != nil {
		t.Fatalf("an odd entry made the whole log unreadable: %v", err)
	}
	if len(logs) != 3 {
		t.Fatalf("%d entries, want 3: %+v", len(logs), logs)
	}
	byTime := map[string]store.LogEntry{}
	for _, e := range logs {
		byTime[e.CreatedAt.Format(time.RFC3339)] = e
	}
	ms := byTime["2026-01-02T03:04:05Z"]
	if ms.Details["value"] != "just text" {
		t.Errorf("a created_at in milliseconds and text details: %+v", ms)
	}
	odd := byTime["0001-01-01T00:00:00Z"]
	if odd.Details["created_at_raw"] == nil || odd.Details["value"] == nil {
		t.Errorf("an unreadable created_at and list details must be kept in details: %+v", odd)
	}
}

// wo's own entries carry a seq that rises within a process even when the
// clock gives the same time twice.
func TestLogSeqRisesForTheSameTime(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a, b := nextSeq(now), nextSeq(now)
	if b <= a {
		t.Errorf("seq %d then %d for the same time: want rising", a, b)
	}
}
