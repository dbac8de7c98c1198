package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/wo-runner/wo/internal/cores"
)

// SQLite is the embedded default store: one file, WAL journal, writers
// serialised by BEGIN IMMEDIATE and waiting on each other through
// busy_timeout, so several wo processes can share it.
//
// Nested merges are done in Go inside the write transaction rather than with
// json_patch, because json_patch deletes keys whose patch value is null and
// Persephone keeps them (worktree_path: null is meaningful).
type SQLite struct {
	db   *sql.DB
	path string
}

var (
	_ Store         = (*SQLite)(nil)
	_ LoggedUpdater = (*SQLite)(nil)
	_ SummaryLister = (*SQLite)(nil)
	_ DetailLister  = (*SQLite)(nil)
)

// DefaultPath is the SQLite file wo uses when no store is named:
// $XDG_STATE_HOME/wo/wo.db, else ~/.local/state/wo/wo.db, read from getenv
// (the process's environment, or the one a caller passes in its place).
func DefaultPath(getenv func(string) string) (string, error) {
	if dir := getenv("XDG_STATE_HOME"); dir != "" {
		return filepath.Join(dir, "wo", "wo.db"), nil
	}
	home := "HOME"
	if runtime.GOOS == "windows" {
		home = "USERPROFILE"
	}
	if dir := getenv(home); dir != "" {
		return filepath.Join(dir, ".local", "state", "wo", "wo.db"), nil
	}
	return "", errors.New("finding the default store: neither XDG_STATE_HOME nor " + home + " is set (set WO_STORE or XDG_STATE_HOME)")
}

// OpenSQLite opens (and on first use creates) the database file at path.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("store path %q: '?' and '#' are not allowed in the file name", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, &PermissionError{Path: path, Doing: "creating the store's folder", Err: unwrapPath(err)}
		}
		return nil, Unavailable(path, err)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, &ForeignError{Path: path, Why: "it is a folder"}
	} else if err == nil && !fi.Mode().IsRegular() {
		return nil, &ForeignError{Path: path, Why: "it is not a regular file"}
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
		// Look before the WAL pragma and the schema change anything: a
		// SQLite file of some other program is refused, not converted.
		if err := refuseForeign(ctx, path); err != nil {
			return nil, err
		}
	}
	dsn := path + "?_pragma=busy_timeout(15000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, Unavailable(path, err)
	}
	s := &SQLite{db: db, path: path}
	if err := s.Init(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// MissingError says there is no store at a path that a command only reads.
type MissingError struct{ Path string }

func (e *MissingError) Error() string {
	return fmt.Sprintf("no store at %s: run wo import or wo create first", e.Path)
}

// ForeignError says a file is not a wo store: not SQLite at all, or a
// SQLite database without wo's tables.
type ForeignError struct {
	Path string
	Why  string
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("%s is not a wo store: %s; pass --store with a wo store's path", e.Path, e.Why)
}

// PermissionError is a store file or folder that this user may not read or
// write. Retrying does not help, so it is not Unavailable.
type PermissionError struct {
	Path  string
	Doing string
	Err   error
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("%s %s: permission denied (%v): check the owner and mode of the file and its folder", e.Doing, e.Path, e.Err)
}

func (e *PermissionError) Unwrap() error { return fs.ErrPermission }

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

// OpenSQLiteReadOnly opens an existing store for reading. Unlike OpenSQLite
// it never creates the file or its folder, never changes the journal mode
// and never adds tables, so pointing a read-only command at a foreign SQLite
// file leaves that file exactly as it was; and it works on a store whose
// file or folder this user may not write.
func OpenSQLiteReadOnly(ctx context.Context, path string) (*SQLite, error) {
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("store path %q: '?' and '#' are not allowed in the file name", path)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &MissingError{Path: path}
	case errors.Is(err, fs.ErrPermission):
		return nil, &PermissionError{Path: path, Doing: "reading the store", Err: unwrapPath(err)}
	case err != nil:
		return nil, Unavailable(path, err)
	case fi.IsDir():
		return nil, &ForeignError{Path: path, Why: "it is a folder"}
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, &PermissionError{Path: path, Doing: "reading the store", Err: unwrapPath(err)}
		}
		return nil, Unavailable(path, err)
	}
	f.Close()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	// A file: URI, so that SQLite applies mode=ro; query_only guards the
	// connection as well.
	uri := (&url.URL{Scheme: "file", Path: abs}).String() + "?mode=ro&_pragma=busy_timeout(15000)&_pragma=query_only(1)"
	s, err := openChecked(ctx, path, uri)
	var se *sqlite.Error
	if errors.As(err, &se) && cannotMakeSharedMemory(se) && !hasWAL(path) {
		// A WAL store in a folder this user may not write: SQLite cannot
		// make the -shm file it reads through. With no -wal file there is
		// nothing beyond the main file, and no writer can add one to a
		// folder nobody may write, so the file is read as immutable.
		s, err = openChecked(ctx, path, uri+"&immutable=1")
	}
	return s, err
}

func openChecked(ctx context.Context, path, uri string) (*SQLite, error) {
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, Unavailable(path, err)
	}
	s := &SQLite{db: db, path: path}
	if err := s.checkSchema(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// refuseForeign reads an existing file read-only and refuses it when it is
// not SQLite, or is a SQLite database with tables and none of wo's.
func refuseForeign(ctx context.Context, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: abs}).String()+"?mode=ro&_pragma=busy_timeout(15000)")
	if err != nil {
		return nil // OpenSQLite reports it
	}
	defer db.Close()
	var all, ours int
	err = db.QueryRowContext(ctx, `SELECT count(*), count(CASE WHEN name IN ('persephone_tasks', 'persephone_edges', 'persephone_logs') THEN 1 END) FROM sqlite_master WHERE type = 'table'`).Scan(&all, &ours)
	var se *sqlite.Error
	switch {
	case errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_NOTADB:
		return &ForeignError{Path: path, Why: "it is not a SQLite database"}
	case err == nil && all > 0 && ours == 0:
		return &ForeignError{Path: path, Why: "it is a SQLite database without wo's tables (persephone_tasks, persephone_edges, persephone_logs)"}
	}
	return nil // anything else: OpenSQLite finds and reports it
}

func cannotMakeSharedMemory(se *sqlite.Error) bool {
	return se.Code() == sqlite3.SQLITE_READONLY_CANTINIT || se.Code() == sqlite3.SQLITE_READONLY_DIRECTORY
}

func hasWAL(path string) bool {
	fi, err := os.Stat(path + "-wal")
	return err == nil && fi.Size() > 0
}

// checkSchema makes sure the file is a wo store: SQLite, with wo's tables.
func (s *SQLite) checkSchema(ctx context.Context) error {
	var n int
	err := s.db.QueryRowContext(ctx,
		`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('persephone_tasks', 'persephone_edges', 'persephone_logs')`).Scan(&n)
	var se *sqlite.Error
	switch {
	case errors.As(err, &se) && cannotMakeSharedMemory(se):
		return err // the caller retries
	case err != nil:
		return s.wrap(err)
	case n < 3:
		return &ForeignError{Path: s.path, Why: "it is a SQLite database without wo's tables (persephone_tasks, persephone_edges, persephone_logs)"}
	}
	return nil
}

const schema = `
CREATE TABLE IF NOT EXISTS persephone_tasks (
	key        TEXT PRIMARY KEY,
	rev        INTEGER NOT NULL,
	parent_key TEXT,
	status     TEXT,
	body       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS persephone_tasks_parent_key ON persephone_tasks(parent_key);
CREATE INDEX IF NOT EXISTS persephone_tasks_status ON persephone_tasks(status);
CREATE TABLE IF NOT EXISTS persephone_edges (
	key      TEXT PRIMARY KEY,
	from_key TEXT NOT NULL,
	to_key   TEXT NOT NULL,
	type     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS persephone_edges_from ON persephone_edges(from_key, type);
CREATE TABLE IF NOT EXISTS persephone_logs (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	task_key   TEXT NOT NULL,
	created_at TEXT NOT NULL,
	body       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS persephone_logs_task ON persephone_logs(task_key, id);
CREATE INDEX IF NOT EXISTS persephone_logs_action ON persephone_logs(json_extract(body, '$.action'), id);
`

// Init creates the tables and indexes; it is idempotent.
func (s *SQLite) Init(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, schema); err != nil {
		return s.wrap(err)
	}
	// The summary column came later: stores made before get it here (and
	// two processes adding it at once is fine).
	var has int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('persephone_tasks') WHERE name = 'summary'`).Scan(&has); err != nil {
		return s.wrap(err)
	}
	if has == 0 {
		if _, err := s.db.ExecContext(ctx, `ALTER TABLE persephone_tasks ADD COLUMN summary TEXT`); err != nil && !strings.Contains(err.Error(), "duplicate column name") {
			return s.wrap(err)
		}
	}
	// A writer that does not know the column (an older wo, another tool)
	// rewrites the body and leaves the summary as it was: the trigger
	// empties it then, and the document is summarised from its body.
	if _, err := s.db.ExecContext(ctx, summaryTrigger); err != nil {
		return s.wrap(err)
	}
	return nil
}

// summaryTrigger empties a summary that an update of the body left as it
// was. wo writes both; when its new summary equals the old one, the row is
// merely read from its body until the next write.
const summaryTrigger = `CREATE TRIGGER IF NOT EXISTS persephone_tasks_summary_stale
AFTER UPDATE OF body ON persephone_tasks
WHEN NEW.summary IS OLD.summary AND NEW.summary IS NOT NULL AND NEW.body IS NOT OLD.body
BEGIN
	UPDATE persephone_tasks SET summary = NULL WHERE key = NEW.key;
END`

// Describe names the database file.
func (s *SQLite) Describe() string { return "sqlite:" + s.path }

// Path is the database file.
func (s *SQLite) Path() string { return s.path }

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

// Get returns one document.
func (s *SQLite) Get(ctx context.Context, key string) (map[string]any, error) {
	var rev int64
	var body string
	err := s.db.QueryRowContext(ctx, `SELECT rev, body FROM persephone_tasks WHERE key = ?`, key).Scan(&rev, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound(key)
	}
	if err != nil {
		return nil, s.wrap(err)
	}
	return decodeBody(key, rev, body)
}

// Create stores documents all or none.
func (s *SQLite) Create(ctx context.Context, docs ...map[string]any) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return s.create(ctx, tx, docs) })
}

// Replace removes tasks at their revisions and creates docs, in one
// transaction (see Replacer).
func (s *SQLite) Replace(ctx context.Context, remove map[string]string, docs []map[string]any) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for key, ifRev := range remove {
			var rev int64
			err := tx.QueryRowContext(ctx, `SELECT rev FROM persephone_tasks WHERE key = ?`, key).Scan(&rev)
			if errors.Is(err, sql.ErrNoRows) {
				return NotFound(key)
			}
			if err != nil {
				return s.wrap(err)
			}
			if strconv.FormatInt(rev, 10) != ifRev {
				return Conflict(key)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM persephone_edges WHERE from_key = ?`, key); err != nil {
				return s.wrap(err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM persephone_tasks WHERE key = ?`, key); err != nil {
				return s.wrap(err)
			}
		}
		return s.create(ctx, tx, docs)
	})
}

func (s *SQLite) create(ctx context.Context, tx *sql.Tx, docs []map[string]any) error {
	for _, doc := range docs {
		key, _ := doc["_key"].(string)
		if key == "" {
			return fmt.Errorf("creating a task: the document has no _key")
		}
		body, err := encodeBody(doc)
		if err != nil {
			return fmt.Errorf("task %s: %w", key, err)
		}
		summary, err := encodeBody(Summary(doc))
		if err != nil {
			return fmt.Errorf("task %s: %w", key, err)
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO persephone_tasks (key, rev, parent_key, status, body, summary) VALUES (?, 1, ?, ?, ?, ?)`,
			key, nullable(doc["parent_key"]), nullable(doc["status"]), body, summary)
		if isUniqueViolation(err) {
			return Exists(key)
		}
		if err != nil {
			return s.wrap(err)
		}
		for _, dep := range BlockedByOf(doc) {
			if _, err := tx.ExecContext(ctx,
				`INSERT OR IGNORE INTO persephone_edges (key, from_key, to_key, type) VALUES (?, ?, ?, 'blocked_by')`,
				EdgeKey(key, dep), key, dep); err != nil {
				return s.wrap(err)
			}
		}
	}
	return nil
}

// Update merges patch into the document at revision ifRev and, when the
// patch sets blocked_by, brings the edges in step in the same transaction.
func (s *SQLite) Update(ctx context.Context, key, ifRev string, patch map[string]any) (string, error) {
	return s.UpdateLogged(ctx, key, ifRev, patch, nil)
}

// UpdateLogged is Update with activity-log entries in the same transaction.
func (s *SQLite) UpdateLogged(ctx context.Context, key, ifRev string, patch map[string]any, entries []LogEntry) (string, error) {
	var newRev int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var rev int64
		var body string
		err := tx.QueryRowContext(ctx, `SELECT rev, body FROM persephone_tasks WHERE key = ?`, key).Scan(&rev, &body)
		if errors.Is(err, sql.ErrNoRows) {
			return NotFound(key)
		}
		if err != nil {
			return s.wrap(err)
		}
		if strconv.FormatInt(rev, 10) != ifRev {
			return Conflict(key)
		}
		doc, err := decodeBody(key, rev, body)
		if err != nil {
			return err
		}
		Merge(doc, patch)
		out, err := encodeBody(doc)
		if err != nil {
			return fmt.Errorf("task %s: %w", key, err)
		}
		summary, err := encodeBody(Summary(doc))
		if err != nil {
			return fmt.Errorf("task %s: %w", key, err)
		}
		newRev = rev + 1
		if _, err := tx.ExecContext(ctx,
			`UPDATE persephone_tasks SET rev = ?, parent_key = ?, status = ?, body = ?, summary = ? WHERE key = ?`,
			newRev, nullable(doc["parent_key"]), nullable(doc["status"]), out, summary, key); err != nil {
			return s.wrap(err)
		}
		if blockers, ok := BlockersInPatch(patch); ok {
			if err := s.setBlockedBy(ctx, tx, key, blockers); err != nil {
				return err
			}
		}
		for _, e := range entries {
			if err := s.appendLog(ctx, tx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(newRev, 10), nil
}

// setBlockedBy makes key's blocked_by edges point to exactly blockers,
// inside the caller's transaction: stale edges go, missing ones are added,
// the others stay untouched.
func (s *SQLite) setBlockedBy(ctx context.Context, tx *sql.Tx, key string, blockers []string) error {
	want := make(map[string]bool, len(blockers))
	for _, b := range blockers {
		want[b] = true
	}
	rows, err := tx.QueryContext(ctx,
		`SELECT key, to_key FROM persephone_edges WHERE from_key = ? AND type = 'blocked_by'`, key)
	if err != nil {
		return s.wrap(err)
	}
	have := map[string]bool{}
	var stale []string
	for rows.Next() {
		var edge, to string
		if err := rows.Scan(&edge, &to); err != nil {
			rows.Close()
			return s.wrap(err)
		}
		if want[to] {
			have[to] = true
		} else {
			stale = append(stale, edge)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s.wrap(err)
	}
	for _, edge := range stale {
		if _, err := tx.ExecContext(ctx, `DELETE FROM persephone_edges WHERE key = ?`, edge); err != nil {
			return s.wrap(err)
		}
	}
	for _, dep := range blockers {
		if have[dep] {
			continue
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT OR IGNORE INTO persephone_edges (key, from_key, to_key, type) VALUES (?, ?, ?, 'blocked_by')`,
			EdgeKey(key, dep), key, dep); err != nil {
			return s.wrap(err)
		}
	}
	return nil
}

// List returns matching documents ordered by key, in one query.
func (s *SQLite) List(ctx context.Context, f Filter) ([]map[string]any, error) {
	return s.list(ctx, f, "NULL, body", false)
}

// ListSummaries is List with each document cut to SummaryFields. The
// summary is kept in its own column, written with the body, so a summary
// list decodes a few hundred bytes a task, not the whole document; a row
// written before the column existed is summarised from its body.
func (s *SQLite) ListSummaries(ctx context.Context, f Filter) ([]map[string]any, error) {
	docs, err := s.list(ctx, f, "summary, CASE WHEN summary IS NULL THEN body END", true)
	if err != nil && strings.Contains(err.Error(), "no such column: summary") {
		// A store made by an older wo, opened read-only: no column yet.
		return s.list(ctx, f, "NULL, body", true)
	}
	return docs, err
}

// list reads the documents (or their summaries: the columns name the
// summary and, where it is missing, the body to cut one from).
func (s *SQLite) list(ctx context.Context, f Filter, columns string, summaries bool) ([]map[string]any, error) {
	q := `SELECT key, rev, ` + columns + ` FROM persephone_tasks`
	var where []string
	var args []any
	if f.ParentKey != "" {
		where = append(where, "parent_key = ?")
		args = append(args, f.ParentKey)
	}
	if f.Status != "" {
		where = append(where, "status = ?")
		args = append(args, f.Status)
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY key"
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	type row struct {
		key           string
		rev           int64
		summary, body sql.NullString
	}
	var raw []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.key, &r.rev, &r.summary, &r.body); err != nil {
			return nil, s.wrap(err)
		}
		raw = append(raw, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap(err)
	}
	// Decoding is most of a long list's time: on every core.
	out := make([]map[string]any, len(raw))
	errs := make([]error, len(raw))
	cores.Each(len(raw), func(i int) {
		r := raw[i]
		if r.summary.Valid {
			out[i], errs[i] = decodeBody(r.key, r.rev, r.summary.String)
			return
		}
		out[i], errs[i] = decodeBody(r.key, r.rev, r.body.String)
		if errs[i] == nil && summaries {
			out[i] = Summary(out[i])
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// BlockedBy reads blocked_by edges.
func (s *SQLite) BlockedBy(ctx context.Context, key string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT to_key FROM persephone_edges WHERE from_key = ? AND type = 'blocked_by' ORDER BY to_key`, key)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, s.wrap(err)
		}
		out = append(out, k)
	}
	return out, s.wrap(rows.Err())
}

// AppendLog adds an activity entry.
func (s *SQLite) AppendLog(ctx context.Context, e LogEntry) error {
	return s.appendLog(ctx, s.db, e)
}

// execer is a database or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (s *SQLite) appendLog(ctx context.Context, db execer, e LogEntry) error {
	if e.CreatedAt.IsZero() {
		e.CreatedAt = time.Now()
	}
	e.CreatedAt = e.CreatedAt.UTC()
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, `INSERT INTO persephone_logs (task_key, created_at, body) VALUES (?, ?, ?)`,
		e.TaskKey, LogTime(e.CreatedAt), string(body))
	return s.wrap(err)
}

// Logs returns one task's activity, oldest first.
func (s *SQLite) Logs(ctx context.Context, taskKey string) ([]LogEntry, error) {
	// created_at is fixed-width (LogTimeLayout), so text order is time
	// order; id breaks ties in the order of writing.
	return s.logs(ctx, `SELECT body FROM persephone_logs WHERE task_key = ? ORDER BY created_at, id`, taskKey)
}

// LogsByAction returns the newest entries of one action.
func (s *SQLite) LogsByAction(ctx context.Context, action string, limit int) ([]LogEntry, error) {
	return s.logs(ctx, `SELECT body FROM persephone_logs WHERE json_extract(body, '$.action') = ? ORDER BY created_at DESC, id DESC LIMIT ?`, action, limit)
}

// LogDetails reads the keys asked for out of each entry inside SQLite
// (json_extract), so that no entry is decoded whole.
func (s *SQLite) LogDetails(ctx context.Context, action string, limit int, keys ...string) ([]LogEntry, error) {
	cols := []string{"json_extract(body, '$.task_key')"}
	args := make([]any, 0, len(keys)+2)
	for _, k := range keys {
		if !plainName(k) {
			return nil, fmt.Errorf("log detail %q: not a plain name", k)
		}
		cols = append(cols, "json_extract(body, ?)")
		args = append(args, "$.details."+k)
	}
	args = append(args, action, limit)
	rows, err := s.db.QueryContext(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM persephone_logs
		WHERE json_extract(body, '$.action') = ? ORDER BY created_at DESC, id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	var out []LogEntry
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, s.wrap(err)
		}
		e := LogEntry{Action: action, Details: make(map[string]any, len(keys))}
		e.TaskKey, _ = vals[0].(string)
		for i, k := range keys {
			switch v := vals[i+1].(type) {
			case nil:
			case []byte:
				e.Details[k] = string(v)
			default:
				e.Details[k] = v
			}
		}
		out = append(out, e)
	}
	return out, s.wrap(rows.Err())
}

func (s *SQLite) logs(ctx context.Context, query string, args ...any) ([]LogEntry, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	var bodies []string
	for rows.Next() {
		var body string
		if err := rows.Scan(&body); err != nil {
			return nil, s.wrap(err)
		}
		bodies = append(bodies, body)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap(err)
	}
	out := make([]LogEntry, len(bodies))
	errs := make([]error, len(bodies))
	cores.Each(len(bodies), func(i int) {
		dec := json.NewDecoder(strings.NewReader(bodies[i]))
		dec.UseNumber()
		if err := dec.Decode(&out[i]); err != nil {
			errs[i] = fmt.Errorf("activity log entry: %w", err)
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *SQLite) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return s.wrap(tx.Commit())
}

// wrap marks errors that mean "try again later" (a lock held too long, a
// file that cannot be opened) as unavailable, and leaves the rest.
func (s *SQLite) wrap(err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_READONLY:
			return &PermissionError{Path: s.path, Doing: "writing to the store", Err: err}
		case sqlite3.SQLITE_CANTOPEN:
			if perm := s.permissionProblem(); perm != nil {
				return perm
			}
			return Unavailable(s.path, err)
		case sqlite3.SQLITE_NOTADB:
			return &ForeignError{Path: s.path, Why: "it is not a SQLite database"}
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR:
			return Unavailable(s.path, err)
		}
	}
	return err
}

// permissionProblem says whether the store file or its folder cannot be
// opened for writing by this user.
func (s *SQLite) permissionProblem() error {
	f, err := os.OpenFile(s.path, os.O_RDWR, 0)
	if err == nil {
		f.Close()
		return nil
	}
	if errors.Is(err, fs.ErrPermission) {
		return &PermissionError{Path: s.path, Doing: "opening the store", Err: unwrapPath(err)}
	}
	if errors.Is(err, fs.ErrNotExist) {
		if f, err := os.CreateTemp(filepath.Dir(s.path), ".wo-probe-*"); err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return &PermissionError{Path: s.path, Doing: "creating the store", Err: unwrapPath(err)}
			}
		} else {
			f.Close()
			os.Remove(f.Name())
		}
	}
	return nil
}

func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE)
}

// encodeBody stores the document without its revision: the rev column is
// the truth.
func encodeBody(doc map[string]any) (string, error) {
	clean := make(map[string]any, len(doc))
	for k, v := range doc {
		if k == "_rev" || k == "_id" {
			continue
		}
		clean[k] = v
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(clean); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

func decodeBody(key string, rev int64, body string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("task %s: stored document is not valid JSON: %w", key, err)
	}
	doc["_key"] = key
	doc["_id"] = "persephone_tasks/" + key
	doc["_rev"] = strconv.FormatInt(rev, 10)
	return doc, nil
}

func nullable(v any) any {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return nil
}
