package arango

// The documents: one task read by key, and every write.
//
//   - A key travels as a bind variable of an AQL query, never in a URL: the
//     driver puts a key into a document URL unescaped, and keys may hold
//     '+' and '%', which the server would decode.
//   - Every write of an existing task is conditional on the revision read
//     (_rev with ignoreRevs: false). An empty revision is a conflict, never
//     "any revision", and a stale one changes nothing: not the document,
//     not its edges, not the log.
//   - A write that touches more than one collection is one AQL query or one
//     stream transaction; a failure before the commit aborts it (abort), so
//     nothing is written. The one gap is a commit that fails part way in a
//     sharded cluster database that is not OneShard: Create then takes back
//     what it inserted (compensate), Replace and an Update of blocked_by
//     can stay part written, and Init warns about such databases.
//   - Leases and run state are Updates of work_order.state like any other:
//     package store builds leases on these conditional writes.
//   - The log entries wo writes carry created_at in store.LogTimeLayout and
//     a seq that orders this process's entries of the same time.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/arangodb/go-driver/v2/arangodb"
	"github.com/arangodb/go-driver/v2/arangodb/shared"

	"github.com/wo-runner/wo/store"
)

// Get reads one document. It asks by AQL with the key as a bind variable,
// not by the document URL: the driver puts a key into the URL unescaped,
// and keys may hold '+' and '%', which the server would decode.
func (s *Store) Get(ctx context.Context, key string) (map[string]any, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	rows, err := s.query(ctx, queryGet, map[string]any{"@tasks": s.cols.Tasks, "key": key})
	if err != nil {
		return nil, s.mapErr(key, err)
	}
	if len(rows) != 1 || string(rows[0]) == "null" {
		return nil, store.NotFound(key)
	}
	return decode(rows[0])
}

// The document queries. Constant texts: bind variables carry every value.
const (
	queryGet = `RETURN DOCUMENT(@@tasks, @key)`
	// queryUpdate writes on the condition that _rev is still @rev.
	queryUpdate = `UPDATE { _key: @key, _rev: @rev } WITH @patch IN @@tasks OPTIONS { ignoreRevs: false, keepNull: true, mergeObjects: true } RETURN NEW._rev`
	// queryUpdateLogged is queryUpdate and the log entries in one query:
	// a stale revision fails the whole query, so nothing is logged.
	queryUpdateLogged = `LET updated = (UPDATE { _key: @key, _rev: @rev } WITH @patch IN @@tasks OPTIONS { ignoreRevs: false, keepNull: true, mergeObjects: true } RETURN NEW._rev)
LET logged = (FOR e IN @entries INSERT e INTO @@logs RETURN 1)
RETURN FIRST(updated)`
	// queryInsertLogs appends log entries inside a stream transaction.
	queryInsertLogs = `FOR e IN @entries INSERT e INTO @@logs`
	// Create runs one of these in a stream transaction. Each returns the
	// key and revision of every task it inserted, so that a commit that
	// fails can be compensated (queryCompensate). An edge that exists
	// already is left as it is.
	queryCreate          = `FOR d IN @docs INSERT d INTO @@tasks OPTIONS { overwriteMode: "conflict" } RETURN { _key: NEW._key, _rev: NEW._rev }`
	queryCreateWithEdges = `LET created = (FOR d IN @docs INSERT d INTO @@tasks OPTIONS { overwriteMode: "conflict" } RETURN { _key: NEW._key, _rev: NEW._rev })
LET linked = (FOR e IN @edges INSERT e INTO @@edges OPTIONS { overwriteMode: "ignore" } RETURN 1)
FOR c IN created RETURN c`
	// queryCompensate takes back the tasks a failed Create inserted, each
	// only if it still has the revision the insert gave it (a task someone
	// changed since stays), and the edges of the tasks it took back.
	queryCompensate = `LET removed = (FOR d IN @created REMOVE d IN @@tasks OPTIONS { ignoreRevs: false, ignoreErrors: true } RETURN OLD._key)
FOR e IN @edges FILTER PARSE_IDENTIFIER(e._from).key IN removed REMOVE e._key IN @@edges OPTIONS { ignoreErrors: true }`
	// queryRemove removes a task at a revision (a moved one is a
	// conflict, a missing one not found); queryRemoveEdges its edges.
	queryRemove      = `REMOVE { _key: @key, _rev: @rev } IN @@tasks OPTIONS { ignoreRevs: false }`
	queryRemoveEdges = `FOR e IN @@edges FILTER e._from == @from REMOVE e IN @@edges`
	queryExisting    = `FOR k IN @keys FILTER DOCUMENT(@@tasks, k) != null RETURN k`

	// An Update whose patch sets blocked_by runs these two in one stream
	// transaction. AQL allows one write per collection in a query, and the
	// edges need a REMOVE and an INSERT, hence two queries. The first
	// writes the document on the condition that _rev is still @rev (a
	// conflict aborts the query before any edge is read) and removes the
	// edges to blockers no longer listed; the second inserts the edges
	// that are missing. Edges are matched by the key they point to, as
	// BlockedBy reads them, so an edge still listed is left as it is.
	queryUpdateDropEdges = `LET updated = (UPDATE { _key: @key, _rev: @rev } WITH @patch IN @@tasks OPTIONS { ignoreRevs: false, keepNull: true, mergeObjects: true } RETURN NEW._rev)
LET dropped = (FOR e IN @@edges FILTER e._from == @from AND e.type == "blocked_by" AND PARSE_IDENTIFIER(e._to).key NOT IN @blockers REMOVE e IN @@edges RETURN 1)
RETURN updated[0]`
	queryAddEdges = `LET have = (FOR e IN @@edges FILTER e._from == @from AND e.type == "blocked_by" RETURN PARSE_IDENTIFIER(e._to).key)
FOR e IN @edges FILTER PARSE_IDENTIFIER(e._to).key NOT IN have INSERT e INTO @@edges OPTIONS { overwriteMode: "ignore" }`
)

// Create inserts documents and their blocked_by edges in one AQL query,
// inside a stream transaction over the tasks and edges collections.
//
// A failure before the commit (an existing key, a store timeout, a lost
// server) aborts the transaction: nothing is written, on any deployment.
// A failed commit is all or nothing on a single server and in a OneShard
// database; in a sharded cluster it can leave some DB-Servers written, so
// Create then takes back what it inserted (queryCompensate) before it
// reports the failure.
func (s *Store) Create(ctx context.Context, docs ...map[string]any) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	if len(docs) == 0 {
		return nil
	}
	query, bind, keys, edges, err := s.insertion(docs)
	if err != nil {
		return err
	}
	trx, err := s.db.BeginTransaction(ctx, arangodb.TransactionCollections{Write: []string{s.cols.Tasks, s.cols.Edges}}, nil)
	if err != nil {
		return s.mapErr("", err)
	}
	created, err := s.queryIn(ctx, trx, query, bind)
	if err != nil {
		aerr := s.abort(ctx, trx)
		if isKeyTaken(err) {
			return errors.Join(store.Exists(s.firstExisting(ctx, keys)), aerr)
		}
		return errors.Join(s.mapErr("", err), aerr)
	}
	if err := trx.Commit(ctx, nil); err != nil {
		return errors.Join(fmt.Errorf("committing the new tasks: %w", s.mapErr("", err)), s.compensate(ctx, created, edges))
	}
	return nil
}

// insertion is the query that inserts docs (without the _rev and _id
// they were read with) and their blocked_by edges, with its bind
// variables; keys are the docs' keys, edges the edges it inserts.
func (s *Store) insertion(docs []map[string]any) (query string, bind map[string]any, keys []string, edges []map[string]any, err error) {
	clean := make([]map[string]any, len(docs))
	keys = make([]string, len(docs))
	for i, doc := range docs {
		key, _ := doc["_key"].(string)
		if key == "" {
			return "", nil, nil, nil, fmt.Errorf("creating a task: the document has no _key")
		}
		keys[i] = key
		c := make(map[string]any, len(doc))
		for k, v := range doc {
			if k != "_rev" && k != "_id" {
				c[k] = v
			}
		}
		clean[i] = c
		edges = append(edges, s.edges(key, store.BlockedByOf(doc))...)
	}
	query, bind = queryCreate, map[string]any{"docs": clean, "@tasks": s.cols.Tasks}
	if len(edges) > 0 {
		query, bind["edges"], bind["@edges"] = queryCreateWithEdges, edges, s.cols.Edges
	}
	return query, bind, keys, edges, nil
}

// Replace removes tasks at their revisions, with their blocked_by edges,
// and inserts docs, in one stream transaction (see store.Replacer): a
// failure before the commit writes nothing. Like Create, a commit that
// fails part way in a sharded cluster can leave part of it written.
func (s *Store) Replace(ctx context.Context, remove map[string]string, docs []map[string]any) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	query, bind, _, _, err := s.insertion(docs)
	if err != nil {
		return err
	}
	trx, err := s.db.BeginTransaction(ctx, arangodb.TransactionCollections{Write: []string{s.cols.Tasks, s.cols.Edges}}, nil)
	if err != nil {
		return s.mapErr("", err)
	}
	for key, rev := range remove {
		_, err = s.queryIn(ctx, trx, queryRemove, map[string]any{"@tasks": s.cols.Tasks, "key": key, "rev": rev})
		if err == nil {
			_, err = s.queryIn(ctx, trx, queryRemoveEdges, map[string]any{"@edges": s.cols.Edges, "from": s.cols.Tasks + "/" + key})
		}
		if err != nil {
			return errors.Join(s.mapErr(key, err), s.abort(ctx, trx))
		}
	}
	if len(docs) > 0 {
		if _, err = s.queryIn(ctx, trx, query, bind); err != nil {
			return errors.Join(s.mapErr("", err), s.abort(ctx, trx))
		}
	}
	if err := trx.Commit(ctx, nil); err != nil {
		return s.mapErr("", err)
	}
	return nil
}

// isKeyTaken says an insert failed because the key exists: a unique
// constraint violation, or in a cluster a 409 conflict with a concurrent
// insert of the same key.
func isKeyTaken(err error) bool {
	ok, ae := shared.IsArangoError(err)
	return ok && (ae.ErrorNum == shared.ErrArangoUniqueConstraintViolated ||
		(ae.ErrorNum == shared.ErrArangoConflict && ae.Code == http.StatusConflict))
}

// compensate takes back what a Create whose commit failed may have
// written: each created task that still has the revision the insert gave
// it, and that task's new edges. Like abort, it runs even when ctx is done.
func (s *Store) compensate(ctx context.Context, created []json.RawMessage, edges []map[string]any) error {
	if len(created) == 0 {
		return nil
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	if edges == nil {
		edges = []map[string]any{}
	}
	_, err := s.query(cctx, queryCompensate, map[string]any{
		"@tasks": s.cols.Tasks, "@edges": s.cols.Edges, "created": created, "edges": edges,
	})
	if err != nil {
		return fmt.Errorf("taking back the tasks of the failed create (check them with wo show, remove them by hand if they are there): %w", s.mapErr("", err))
	}
	return nil
}

// edges are the persephone_edges documents of "key is blocked by dep".
func (s *Store) edges(key string, deps []string) []map[string]any {
	out := make([]map[string]any, 0, len(deps))
	for _, dep := range deps {
		out = append(out, map[string]any{
			"_key":  store.EdgeKey(key, dep),
			"_from": s.cols.Tasks + "/" + key,
			"_to":   s.cols.Tasks + "/" + dep,
			"type":  "blocked_by",
		})
	}
	return out
}

// firstExisting names the key that made an insert fail, for the message.
func (s *Store) firstExisting(ctx context.Context, keys []string) string {
	rows, err := s.query(ctx, queryExisting, map[string]any{"keys": keys, "@tasks": s.cols.Tasks})
	if err != nil || len(rows) == 0 {
		return strings.Join(keys, ", ")
	}
	var k string
	if json.Unmarshal(rows[0], &k) != nil || k == "" {
		return strings.Join(keys, ", ")
	}
	return k
}

// Update merges patch into the document if its _rev is still ifRev. A
// patch that sets blocked_by also rewrites the task's edges, in one stream
// transaction with the document (see updateWithEdges); any other patch is
// one conditional AQL UPDATE (by AQL, not by the document URL: see Get).
// An empty ifRev is a conflict: ArangoDB would take it as "any revision".
func (s *Store) Update(ctx context.Context, key, ifRev string, patch map[string]any) (string, error) {
	return s.UpdateLogged(ctx, key, ifRev, patch, nil)
}

// UpdateLogged is Update with log entries written by the same request: one
// AQL query, or with blocked_by in the patch the same stream transaction.
func (s *Store) UpdateLogged(ctx context.Context, key, ifRev string, patch map[string]any, entries []store.LogEntry) (string, error) {
	if ifRev == "" {
		return "", store.Conflict(key)
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	logs := make([]logDoc, len(entries))
	for i, e := range entries {
		logs[i] = newLogDoc(e)
	}
	if blockers, ok := store.BlockersInPatch(patch); ok {
		return s.updateWithEdges(ctx, key, ifRev, patch, blockers, logs)
	}
	query, bind := queryUpdate, map[string]any{"@tasks": s.cols.Tasks, "key": key, "rev": ifRev, "patch": patch}
	if len(logs) > 0 {
		query, bind["@logs"], bind["entries"] = queryUpdateLogged, s.cols.Logs, logs
	}
	rows, err := s.query(ctx, query, bind)
	if err != nil {
		return "", s.mapErr(key, err)
	}
	var rev string
	if len(rows) != 1 || json.Unmarshal(rows[0], &rev) != nil || rev == "" {
		return "", fmt.Errorf("ArangoDB at %s: updating task %s returned no revision", s.endpoint, key)
	}
	return rev, nil
}

// updateWithEdges writes the document and makes its blocked_by edges point
// to exactly blockers, in one stream transaction over the tasks and edges
// collections, so that a conflict or a failure leaves both as they were.
//
// Atomicity is ArangoDB's: on a single server and in a OneShard database
// the transaction is all or nothing. In a sharded cluster a multi-collection
// commit is not atomic across DB-Servers; a commit that fails part way can
// leave the document written and the edges not (or the reverse). A stale
// revision is still caught before anything is written, because the first
// query's UPDATE fails and the transaction is aborted.
func (s *Store) updateWithEdges(ctx context.Context, key, ifRev string, patch map[string]any, blockers []string, logs []logDoc) (string, error) {
	cols := []string{s.cols.Tasks, s.cols.Edges}
	if len(logs) > 0 {
		cols = append(cols, s.cols.Logs)
	}
	trx, err := s.db.BeginTransaction(ctx, arangodb.TransactionCollections{Write: cols}, nil)
	if err != nil {
		return "", s.mapErr(key, err)
	}
	from := s.cols.Tasks + "/" + key
	if blockers == nil {
		blockers = []string{} // bind an empty array, not null: the query wants a list
	}
	rows, err := s.queryIn(ctx, trx, queryUpdateDropEdges, map[string]any{
		"@tasks": s.cols.Tasks, "@edges": s.cols.Edges,
		"key": key, "rev": ifRev, "patch": patch, "from": from, "blockers": blockers,
	})
	if err == nil && len(blockers) > 0 {
		_, err = s.queryIn(ctx, trx, queryAddEdges, map[string]any{
			"@edges": s.cols.Edges, "from": from, "edges": s.edges(key, blockers),
		})
	}
	if err == nil && len(logs) > 0 {
		_, err = s.queryIn(ctx, trx, queryInsertLogs, map[string]any{"@logs": s.cols.Logs, "entries": logs})
	}
	var rev string
	if err == nil && (len(rows) != 1 || json.Unmarshal(rows[0], &rev) != nil || rev == "") {
		err = fmt.Errorf("ArangoDB at %s: updating task %s returned no revision", s.endpoint, key)
	}
	if err != nil {
		return "", errors.Join(s.mapErr(key, err), s.abort(ctx, trx))
	}
	if err := trx.Commit(ctx, nil); err != nil {
		return "", s.mapErr(key, err)
	}
	return rev, nil
}

// abort ends a stream transaction that failed, so that its locks are not
// held until the server's idle timeout. It runs even when ctx is done (a
// store timeout is the usual reason to abort), with its own short limit. A
// transaction the server has already aborted or forgotten is no error:
// nothing of it was written either way.
func (s *Store) abort(ctx context.Context, trx arangodb.Transaction) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	err := trx.Abort(actx, nil)
	if err == nil || shared.IsArangoErrorWithErrorNum(err, shared.ErrTransactionAborted, shared.ErrTransactionNotFound) {
		return nil
	}
	return fmt.Errorf("aborting ArangoDB transaction %s (the server aborts it after its idle timeout): %w", trx.ID(), err)
}

// abortTimeout bounds the abort of a failed transaction.
const abortTimeout = 10 * time.Second

// logDoc is the persephone_logs shape wo writes: created_at in
// store.LogTimeLayout, and seq, which orders entries of the same time.
type logDoc struct {
	Action     string         `json:"action"`
	TaskKey    string         `json:"task_key"`
	SessionKey string         `json:"session_key"`
	Details    map[string]any `json:"details"`
	CreatedAt  string         `json:"created_at"`
	Seq        int64          `json:"seq"`
}

// lastSeq is the seq of this process's latest log entry.
var lastSeq atomic.Int64

// nextSeq is a log entry's seq: its time in nanoseconds since 1970, raised
// past the previous entry's, so that this process's entries are strictly
// increasing and other processes' fall in time order around them. _key is
// no tie-breaker: a cluster's key generator is not monotonic.
func nextSeq(t time.Time) int64 {
	for {
		last, seq := lastSeq.Load(), t.UnixNano()
		if seq <= last {
			seq = last + 1
		}
		if lastSeq.CompareAndSwap(last, seq) {
			return seq
		}
	}
}

// AppendLog writes one persephone_logs document.
func (s *Store) AppendLog(ctx context.Context, e store.LogEntry) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	_, err := s.logs.CreateDocument(ctx, newLogDoc(e))
	return s.mapErr(e.TaskKey, err)
}

// newLogDoc is the persephone_logs document of an entry.
func newLogDoc(e store.LogEntry) logDoc {
	if e.CreatedAt.IsZero() {
		e.CreatedAt = time.Now()
	}
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	return logDoc{Action: e.Action, TaskKey: e.TaskKey, SessionKey: e.SessionKey, Details: e.Details,
		CreatedAt: store.LogTime(e.CreatedAt), Seq: nextSeq(e.CreatedAt)}
}
