// Package arango is the ArangoDB store: the Persephone database that teams
// and CI fleets share. It speaks ArangoDB's HTTP API through
// github.com/arangodb/go-driver/v2.
//
// Every query is a constant AQL text with bind variables; values never
// become part of the query string.
package arango

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/arangodb/go-driver/v2/arangodb"
	"github.com/arangodb/go-driver/v2/arangodb/shared"
	"github.com/arangodb/go-driver/v2/connection"

	"github.com/wo-runner/wo/store"
)

// Config says where the Persephone database is.
type Config struct {
	// URL is arangodb+http://host:8529, arangodb+https://host:8529,
	// arangodb+unix:///path/to/arangodb.sock, or a plain http(s) URL.
	URL      string
	Database string
	User     string
	Password string
	// Collection is the tasks collection; the edges and logs collections
	// are named after it (see Collections).
	Collection string
	// Transport replaces the HTTP transport (tests, proxies).
	Transport http.RoundTripper
	// Timeout bounds each store operation: connecting, waiting for the
	// answer and reading it (DefaultTimeout when zero), so that a server
	// that accepts connections and never answers cannot hang wo.
	Timeout time.Duration
}

// DefaultTimeout bounds one store operation when Config sets none
// (--store-timeout, WO_STORE_TIMEOUT).
const DefaultTimeout = 30 * time.Second

// Collections are the three Persephone collections wo uses.
type Collections struct {
	Tasks, Edges, Logs string
}

// CollectionsFor derives the edges and logs collections from the tasks
// collection: persephone_tasks gives persephone_edges and persephone_logs;
// a name without the _tasks suffix gives NAME_edges and NAME_logs.
func CollectionsFor(tasks string) Collections {
	if tasks == "" {
		tasks = "persephone_tasks"
	}
	base := strings.TrimSuffix(tasks, "_tasks")
	return Collections{Tasks: tasks, Edges: base + "_edges", Logs: base + "_logs"}
}

// Store is the ArangoDB backend.
type Store struct {
	db       arangodb.Database
	cols     Collections
	tasks    arangodb.Collection
	logs     arangodb.Collection
	endpoint string // for messages: scheme, host and port only
	database string
	timeout  time.Duration
}

var _ store.Store = (*Store)(nil)

// Endpoint turns a wo store URL into the HTTP endpoint and transport to use.
func Endpoint(raw string, base http.RoundTripper) (endpoint string, transport http.RoundTripper, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", nil, fmt.Errorf("store URL %q: %v", redact(raw), err)
	}
	if u.User != nil {
		return "", nil, fmt.Errorf("store URL %s: do not put credentials in the URL; set ARANGO_USER and ARANGO_PASSWORD", redact(raw))
	}
	if base == nil {
		base = newHTTPTransport(DefaultTimeout)
	}
	switch u.Scheme {
	case "arangodb+http", "http":
		return "http://" + u.Host, base, hostRequired(u)
	case "arangodb+https", "https":
		return "https://" + u.Host, base, hostRequired(u)
	case "arangodb+unix", "unix":
		if u.Path == "" {
			return "", nil, fmt.Errorf("store URL %s: give the socket path, as in arangodb+unix:///var/run/arangodb.sock", raw)
		}
		return "http://localhost", unixTransport(u.Path, base), nil
	default:
		return "", nil, fmt.Errorf("store URL %s: unknown scheme %q; use arangodb+http://, arangodb+https:// or arangodb+unix://", redact(raw), u.Scheme)
	}
}

// newHTTPTransport bounds dialling, the TLS handshake and the wait for an
// answer's headers; the per-operation deadline bounds the rest.
func newHTTPTransport(timeout time.Duration) *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: min(timeout, 30*time.Second), KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   min(timeout, 10*time.Second),
		ResponseHeaderTimeout: timeout,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
	}
}

func hostRequired(u *url.URL) error {
	if u.Host == "" {
		return fmt.Errorf("store URL %s: no host: write it as arangodb+http://HOST:8529", u.String())
	}
	return nil
}

// unixTransport sends every request over the Unix socket at path.
func unixTransport(path string, base http.RoundTripper) http.RoundTripper {
	t, ok := base.(*http.Transport)
	if !ok {
		t = &http.Transport{}
	} else {
		t = t.Clone()
	}
	t.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}
	return t
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = url.User("REDACTED")
	return u.String()
}

// DatabaseError is a configuration mistake, not an outage: no database
// named, or one the server does not have.
type DatabaseError struct {
	Endpoint string
	Database string // "" when none was given
}

func (e *DatabaseError) Error() string {
	if e.Database == "" {
		return fmt.Sprintf("ArangoDB store %s: no database given: pass --database or set WO_DATABASE (or HADES_DATABASE)", e.Endpoint)
	}
	return fmt.Sprintf("ArangoDB at %s has no database %q: create it, or set --database / WO_DATABASE", e.Endpoint, e.Database)
}

// Open connects to the database. It does not contact the server: the first
// operation does, and maps a failure to a clear error.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Database == "" {
		return nil, &DatabaseError{Endpoint: redact(cfg.URL)}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Transport == nil {
		cfg.Transport = newHTTPTransport(cfg.Timeout)
	}
	endpoint, transport, err := Endpoint(cfg.URL, cfg.Transport)
	if err != nil {
		return nil, err
	}
	user := cfg.User
	if user == "" {
		user = "root"
	}
	conn := connection.NewHttpConnection(connection.HttpConfiguration{
		Endpoint:       connection.NewRoundRobinEndpoints([]string{endpoint}),
		Authentication: connection.NewBasicAuth(user, cfg.Password),
		ContentType:    connection.ApplicationJSON,
		Transport:      transport,
	})
	client := arangodb.NewClient(conn)
	db, err := client.GetDatabase(ctx, cfg.Database, &arangodb.GetDatabaseOptions{SkipExistCheck: true})
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, cols: CollectionsFor(cfg.Collection), endpoint: redact(cfg.URL), database: cfg.Database, timeout: cfg.Timeout}
	skip := &arangodb.GetCollectionOptions{SkipExistCheck: true}
	if s.tasks, err = db.GetCollection(ctx, s.cols.Tasks, skip); err != nil {
		return nil, err
	}
	if s.logs, err = db.GetCollection(ctx, s.cols.Logs, skip); err != nil {
		return nil, err
	}
	return s, nil
}

// Describe names the endpoint, database and collection, never credentials.
func (s *Store) Describe() string {
	return fmt.Sprintf("%s database %s collection %s", s.endpoint, s.database, s.cols.Tasks)
}

// bound gives one store operation its deadline.
func (s *Store) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// Close releases nothing: HTTP connections are pooled by the transport.
func (s *Store) Close() error { return nil }

// Get reads one document.
func (s *Store) Get(ctx context.Context, key string) (map[string]any, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var raw json.RawMessage
	if _, err := s.tasks.ReadDocument(ctx, key, &raw); err != nil {
		return nil, s.mapErr(key, err)
	}
	return decode(raw)
}

// The queries. Constant texts: bind variables carry every value.
const (
	queryCreate = `FOR d IN @docs INSERT d INTO @@tasks OPTIONS { overwriteMode: "conflict" } RETURN NEW._key`
	// Edges go in with the tasks in one query, so the import is atomic on
	// a single server; an edge that exists already is left as it is.
	queryCreateWithEdges = `LET created = (FOR d IN @docs INSERT d INTO @@tasks OPTIONS { overwriteMode: "conflict" } RETURN NEW._key)
FOR e IN @edges INSERT e INTO @@edges OPTIONS { overwriteMode: "ignore" }
RETURN e._key`
	queryExisting       = `FOR k IN @keys FILTER DOCUMENT(@@tasks, k) != null RETURN k`
	queryByParent       = `FOR d IN @@tasks FILTER d.parent_key == @parent SORT d._key RETURN d`
	queryByStatus       = `FOR d IN @@tasks FILTER d.status == @status SORT d._key RETURN d`
	queryByParentStatus = `FOR d IN @@tasks FILTER d.parent_key == @parent AND d.status == @status SORT d._key RETURN d`
	queryAll            = `FOR d IN @@tasks SORT d._key RETURN d`
	queryBlockedBy      = `FOR e IN @@edges FILTER e._from == @from AND e.type == "blocked_by" SORT e._to RETURN PARSE_IDENTIFIER(e._to).key`
	queryLogs           = `FOR l IN @@logs FILTER l.task_key == @key SORT l.created_at, l._key RETURN l`
	queryLogsByAction   = `FOR l IN @@logs FILTER l.action == @action SORT l.created_at DESC LIMIT @limit RETURN l`

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

// Create inserts documents and their blocked_by edges in one AQL query.
func (s *Store) Create(ctx context.Context, docs ...map[string]any) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	if len(docs) == 0 {
		return nil
	}
	clean := make([]map[string]any, len(docs))
	var edges []map[string]any
	keys := make([]string, len(docs))
	for i, doc := range docs {
		key, _ := doc["_key"].(string)
		if key == "" {
			return fmt.Errorf("creating a task: the document has no _key")
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
	query := queryCreate
	bind := map[string]any{"docs": clean, "@tasks": s.cols.Tasks}
	if len(edges) > 0 {
		query = queryCreateWithEdges
		bind["edges"] = edges
		bind["@edges"] = s.cols.Edges
	}
	if _, err := s.query(ctx, query, bind); err != nil {
		if ok, ae := shared.IsArangoError(err); ok && ae.ErrorNum == shared.ErrArangoUniqueConstraintViolated {
			return store.Exists(s.firstExisting(ctx, keys))
		}
		return s.mapErr("", err)
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
// one conditional PATCH request.
func (s *Store) Update(ctx context.Context, key, ifRev string, patch map[string]any) (string, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	if blockers, ok := store.BlockersInPatch(patch); ok {
		return s.updateWithEdges(ctx, key, ifRev, patch, blockers)
	}
	yes := true
	resp, err := s.tasks.UpdateDocumentWithOptions(ctx, key, patch, &arangodb.CollectionDocumentUpdateOptions{
		IfMatch:      ifRev,
		KeepNull:     &yes,
		MergeObjects: &yes,
	})
	if err != nil {
		return "", s.mapErr(key, err)
	}
	return resp.Rev, nil
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
func (s *Store) updateWithEdges(ctx context.Context, key, ifRev string, patch map[string]any, blockers []string) (string, error) {
	trx, err := s.db.BeginTransaction(ctx, arangodb.TransactionCollections{Write: []string{s.cols.Tasks, s.cols.Edges}}, nil)
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

// logDoc is the persephone_logs shape, with the time as Persephone writes it.
type logDoc struct {
	Action     string         `json:"action"`
	TaskKey    string         `json:"task_key"`
	SessionKey string         `json:"session_key"`
	Details    map[string]any `json:"details"`
	CreatedAt  string         `json:"created_at"`
}

// AppendLog writes one persephone_logs document.
func (s *Store) AppendLog(ctx context.Context, e store.LogEntry) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	if e.CreatedAt.IsZero() {
		e.CreatedAt = time.Now()
	}
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	_, err := s.logs.CreateDocument(ctx, logDoc{
		Action: e.Action, TaskKey: e.TaskKey, SessionKey: e.SessionKey, Details: e.Details,
		CreatedAt: e.CreatedAt.UTC().Format(time.RFC3339Nano),
	})
	return s.mapErr(e.TaskKey, err)
}

// Logs reads one task's activity, oldest first.
func (s *Store) Logs(ctx context.Context, key string) ([]store.LogEntry, error) {
	return s.readLogs(ctx, key, queryLogs, map[string]any{"@logs": s.cols.Logs, "key": key})
}

// LogsByAction reads the newest entries of one action.
func (s *Store) LogsByAction(ctx context.Context, action string, limit int) ([]store.LogEntry, error) {
	return s.readLogs(ctx, "", queryLogsByAction, map[string]any{"@logs": s.cols.Logs, "action": action, "limit": limit})
}

func (s *Store) readLogs(ctx context.Context, key, query string, bind map[string]any) ([]store.LogEntry, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	rows, err := s.query(ctx, query, bind)
	if err != nil {
		return nil, s.mapErr(key, err)
	}
	out := make([]store.LogEntry, 0, len(rows))
	for _, r := range rows {
		var l logDoc
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.UseNumber()
		if err := dec.Decode(&l); err != nil {
			return nil, err
		}
		t, _ := time.Parse(time.RFC3339Nano, l.CreatedAt)
		out = append(out, store.LogEntry{Action: l.Action, TaskKey: l.TaskKey, SessionKey: l.SessionKey, Details: l.Details, CreatedAt: t})
	}
	return out, nil
}

// Init makes sure the three collections and the indexes behind wo's
// queries exist. It is idempotent.
func (s *Store) Init(ctx context.Context) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	docType, edgeType := arangodb.CollectionTypeDocument, arangodb.CollectionTypeEdge
	want := []struct {
		name    string
		typ     *arangodb.CollectionType
		indexes [][]string
	}{
		{s.cols.Tasks, &docType, [][]string{{"parent_key"}, {"status"}}},
		{s.cols.Edges, &edgeType, [][]string{{"type"}}},
		{s.cols.Logs, &docType, [][]string{{"task_key", "created_at"}, {"action", "created_at"}}},
	}
	for _, w := range want {
		col, err := s.db.GetCollection(ctx, w.name, nil)
		if shared.IsNotFound(err) {
			col, err = s.db.CreateCollectionV2(ctx, w.name, &arangodb.CreateCollectionPropertiesV2{Type: w.typ})
			if shared.IsConflict(err) { // created by a concurrent wo init
				col, err = s.db.GetCollection(ctx, w.name, nil)
			}
		}
		if err != nil {
			return s.mapErr("", fmt.Errorf("collection %s: %w", w.name, err))
		}
		for _, fields := range w.indexes {
			if _, _, err := col.EnsurePersistentIndex(ctx, fields, &arangodb.CreatePersistentIndexOptions{
				Name: "wo_" + strings.Join(fields, "_"),
			}); err != nil {
				return s.mapErr("", fmt.Errorf("index on %s(%s): %w", w.name, strings.Join(fields, ", "), err))
			}
		}
	}
	return nil
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
			return nil, err
		}
		rows = append(rows, raw)
	}
	return rows, nil
}

// mapErr turns driver errors into store errors with a message that says
// what to do.
func (s *Store) mapErr(key string, err error) error {
	if err == nil {
		return nil
	}
	if ok, ae := shared.IsArangoError(err); ok && ae.HasError {
		switch {
		case ae.Code == http.StatusPreconditionFailed || ae.ErrorNum == shared.ErrArangoConflict:
			return store.Conflict(key)
		case ae.ErrorNum == shared.ErrArangoUniqueConstraintViolated:
			return store.Exists(key)
		case ae.ErrorNum == shared.ErrArangoDatabaseNotFound:
			return &DatabaseError{Endpoint: s.endpoint, Database: s.database}
		case ae.ErrorNum == shared.ErrArangoDataSourceNotFound:
			return fmt.Errorf("ArangoDB database %s lacks a collection wo uses (%s): run wo init (%s)", s.database, strings.Join([]string{s.cols.Tasks, s.cols.Edges, s.cols.Logs}, ", "), ae.ErrorMessage)
		case ae.ErrorNum == shared.ErrArangoDocumentNotFound || ae.Code == http.StatusNotFound:
			return store.NotFound(key)
		case ae.Code == http.StatusUnauthorized:
			return fmt.Errorf("ArangoDB at %s refused the credentials: set ARANGO_USER and ARANGO_PASSWORD", s.endpoint)
		case ae.Code == http.StatusForbidden:
			return fmt.Errorf("ArangoDB at %s: the user may not access database %s (%s)", s.endpoint, s.database, ae.ErrorMessage)
		case ae.Code == http.StatusServiceUnavailable || ae.Code == http.StatusGatewayTimeout:
			return store.Unavailable(s.endpoint, err)
		}
		return fmt.Errorf("ArangoDB at %s: %s (HTTP %d, error %d)", s.endpoint, ae.ErrorMessage, ae.Code, ae.ErrorNum)
	}
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return store.Unavailable(s.endpoint, fmt.Errorf("no answer within %s: check that ArangoDB answers there, or raise --store-timeout (WO_STORE_TIMEOUT)", s.timeout))
	}
	if errors.As(err, &netErr) {
		return store.Unavailable(s.endpoint, err)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) || strings.Contains(err.Error(), "connection refused") {
		return store.Unavailable(s.endpoint, err)
	}
	return err
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
