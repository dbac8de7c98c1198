package arango

// The queries: AQL that reads many documents.
//
//   - Each query is a constant text; bind variables carry every value,
//     collection names included (@@tasks).
//   - Lists come ordered by _key. An epic's children are the List of its
//     parent_key, which the index that Init ensures serves.
//   - Logs come back in time order as parsed in Go, whatever form or
//     precision another tool gave created_at; an entry of an odd shape is
//     still returned (logEntry) and never makes a log unreadable.
//   - Every row is read through the cursor to its end. A cursor the server
//     lost is store.Unavailable (cursorError, errors.go), never "not found".

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/arangodb/go-driver/v2/arangodb"
	"github.com/arangodb/go-driver/v2/arangodb/shared"

	"github.com/wo-runner/wo/store"
)

// The list and log queries. Constant texts: bind variables carry every
// value.
const (
	queryByParent       = `FOR d IN @@tasks FILTER d.parent_key == @parent SORT d._key RETURN d`
	queryByStatus       = `FOR d IN @@tasks FILTER d.status == @status SORT d._key RETURN d`
	queryByParentStatus = `FOR d IN @@tasks FILTER d.parent_key == @parent AND d.status == @status SORT d._key RETURN d`
	queryAll            = `FOR d IN @@tasks SORT d._key RETURN d`
	queryBlockedBy      = `FOR e IN @@edges FILTER e._from == @from AND e.type == "blocked_by" SORT e._to RETURN PARSE_IDENTIFIER(e._to).key`
	// Logs sort by time, parsed: DATE_TIMESTAMP gives milliseconds for
	// any ISO 8601 form (trimmed fractions, offsets), the digits of the
	// fraction past the millisecond give the rest, and seq (wo's own
	// entries) orders entries of the same time as they were written.
	// created_at as text would not do: "05Z" sorts after "05.1Z".
	queryLogs = `FOR l IN @@logs FILTER l.task_key == @key
LET frac = REGEX_MATCHES(TO_STRING(l.created_at), "[.]([0-9]+)")
SORT DATE_TIMESTAMP(l.created_at), TO_NUMBER(SUBSTRING(CONCAT(frac[1], "000000000"), 3, 6)), l.seq
RETURN l`
	queryLogsByAction = `FOR l IN @@logs FILTER l.action == @action
LET frac = REGEX_MATCHES(TO_STRING(l.created_at), "[.]([0-9]+)")
SORT DATE_TIMESTAMP(l.created_at) DESC, TO_NUMBER(SUBSTRING(CONCAT(frac[1], "000000000"), 3, 6)) DESC, l.seq DESC
LIMIT @limit RETURN l`

	// queryLogDetails is queryLogsByAction returning only the details
	// asked for: the server cuts them, so less is sent and decoded.
	queryLogDetails = `FOR l IN @@logs FILTER l.action == @action
LET frac = REGEX_MATCHES(TO_STRING(l.created_at), "[.]([0-9]+)")
SORT DATE_TIMESTAMP(l.created_at) DESC, TO_NUMBER(SUBSTRING(CONCAT(frac[1], "000000000"), 3, 6)) DESC, l.seq DESC
LIMIT @limit RETURN {action: l.action, task_key: l.task_key, session_key: l.session_key, created_at: l.created_at, details: KEEP(l.details, @keys)}`
)

// List returns documents matching the filter in one query.
func (s *Store) List(ctx context.Context, f store.Filter) ([]map[string]any, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	bind := map[string]any{"@tasks": s.cols.Tasks}
	query := queryAll
	switch {
	case f.ParentKey != "" && f.Status != "":
		query = queryByParentStatus
		bind["parent"], bind["status"] = f.ParentKey, f.Status
	case f.ParentKey != "":
		query = queryByParent
		bind["parent"] = f.ParentKey
	case f.Status != "":
		query = queryByStatus
		bind["status"] = f.Status
	}
	rows, err := s.query(ctx, query, bind)
	if err != nil {
		return nil, s.mapErr("", err)
	}
	out := make([]map[string]any, 0, len(rows))
	for _, r := range rows {
		doc, err := decode(r)
		if err != nil {
			return nil, err
		}
		out = append(out, doc)
	}
	return out, nil
}

// BlockedBy reads the persephone_edges of a task.
func (s *Store) BlockedBy(ctx context.Context, key string) ([]string, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	rows, err := s.query(ctx, queryBlockedBy, map[string]any{"@edges": s.cols.Edges, "from": s.cols.Tasks + "/" + key})
	if err != nil {
		return nil, s.mapErr(key, err)
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		var k string
		if err := json.Unmarshal(r, &k); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// Logs reads one task's activity, oldest first.
func (s *Store) Logs(ctx context.Context, key string) ([]store.LogEntry, error) {
	return s.readLogs(ctx, key, queryLogs, map[string]any{"@logs": s.cols.Logs, "key": key}, false)
}

// LogsByAction reads the newest entries of one action.
func (s *Store) LogsByAction(ctx context.Context, action string, limit int) ([]store.LogEntry, error) {
	return s.readLogs(ctx, "", queryLogsByAction, map[string]any{"@logs": s.cols.Logs, "action": action, "limit": limit}, true)
}

// LogDetails reads the newest entries of one action with only the details
// asked for (store.DetailLister).
func (s *Store) LogDetails(ctx context.Context, action string, limit int, keys ...string) ([]store.LogEntry, error) {
	if keys == nil {
		keys = []string{}
	}
	return s.readLogs(ctx, "", queryLogDetails, map[string]any{"@logs": s.cols.Logs, "action": action, "limit": limit, "keys": keys}, true)
}

// readLogs runs a log query and puts its entries in time order again, as
// parsed in Go (stable, so the query's seq order of same-time entries
// stays): the order holds even where the server's date parsing differs.
func (s *Store) readLogs(ctx context.Context, key, query string, bind map[string]any, newestFirst bool) ([]store.LogEntry, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	rows, err := s.query(ctx, query, bind)
	if err != nil {
		return nil, s.mapErr(key, err)
	}
	out := make([]store.LogEntry, 0, len(rows))
	for _, r := range rows {
		doc, err := decode(r)
		if err != nil {
			return nil, err
		}
		out = append(out, logEntry(doc))
	}
	slices.SortStableFunc(out, func(a, b store.LogEntry) int {
		if newestFirst {
			return b.CreatedAt.Compare(a.CreatedAt)
		}
		return a.CreatedAt.Compare(b.CreatedAt)
	})
	return out, nil
}

// logEntry reads a persephone_logs document as best it can: other tools
// write there too, and an entry of an unexpected shape is still shown
// rather than making the whole log unreadable. A created_at that is not a
// time is left zero (and kept in details as created_at_raw); details that
// are not an object are kept under details.value.
func logEntry(doc map[string]any) store.LogEntry {
	str := func(k string) string {
		switch v := doc[k].(type) {
		case string:
			return v
		case nil:
			return ""
		default:
			return fmt.Sprint(v)
		}
	}
	e := store.LogEntry{Action: str("action"), TaskKey: str("task_key"), SessionKey: str("session_key")}
	switch d := doc["details"].(type) {
	case map[string]any:
		e.Details = d
	case nil:
	default:
		e.Details = map[string]any{"value": d}
	}
	if t, ok := parseLogTime(doc["created_at"]); ok {
		e.CreatedAt = t
	} else if raw, present := doc["created_at"]; present && raw != nil {
		if e.Details == nil {
			e.Details = map[string]any{}
		}
		e.Details["created_at_raw"] = raw
	}
	return e
}

// parseLogTime reads the created_at forms seen in persephone_logs: RFC 3339
// with any fraction, ISO 8601 without a zone (taken as UTC), and a number
// of milliseconds since 1970 (what AQL's DATE_NOW gives).
func parseLogTime(v any) (time.Time, bool) {
	switch x := v.(type) {
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
			if t, err := time.Parse(layout, x); err == nil {
				return t.UTC(), true
			}
		}
	case json.Number:
		if ms, err := x.Int64(); err == nil {
			return time.UnixMilli(ms).UTC(), true
		}
		if f, err := x.Float64(); err == nil {
			return time.UnixMicro(int64(f * 1000)).UTC(), true
		}
	}
	return time.Time{}, false
}

// query runs an AQL query and returns every result row.
func (s *Store) query(ctx context.Context, aql string, bind map[string]any) ([]json.RawMessage, error) {
	return s.queryIn(ctx, s.db, aql, bind)
}

// queryIn runs an AQL query in db, the database or a stream transaction.
func (s *Store) queryIn(ctx context.Context, db arangodb.DatabaseQuery, aql string, bind map[string]any) ([]json.RawMessage, error) {
	cursor, err := db.Query(ctx, aql, &arangodb.QueryOptions{BindVars: bind})
	if err != nil {
		return nil, err
	}
	defer cursor.CloseWithContext(ctx)
	var rows []json.RawMessage
	for cursor.HasMore() {
		var raw json.RawMessage
		if _, err := cursor.ReadDocument(ctx, &raw); err != nil {
			if shared.IsNoMoreDocuments(err) {
				break
			}
			return nil, cursorError{err}
		}
		rows = append(rows, raw)
	}
	return rows, nil
}

func decode(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("ArangoDB returned a document that is not a JSON object: %w", err)
	}
	return doc, nil
}
