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
	"slices"
	"strings"
	"sync/atomic"
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
	client arangodb.Client
	db     arangodb.Database
	// closeIdle closes the transport's idle connections (Close).
	closeIdle func()
	cols      Collections
	logs      arangodb.Collection
	endpoint  string // for messages: scheme, host and port only
	database  string
	timeout   time.Duration
}

var (
	_ store.Store         = (*Store)(nil)
	_ store.LoggedUpdater = (*Store)(nil)
	_ store.DetailLister  = (*Store)(nil)
)

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
		return "http://" + withPort(u), base, hostRequired(u)
	case "arangodb+https", "https":
		return "https://" + withPort(u), base, hostRequired(u)
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

// DefaultPort is ArangoDB's port, for a store URL that names none (over
// HTTPS too: ArangoDB serves TLS on the same port).
const DefaultPort = "8529"

// withPort is the URL's host and port, with DefaultPort when it has none.
func withPort(u *url.URL) string {
	if u.Host == "" || u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), DefaultPort)
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
	t.Proxy = nil // a socket on this machine is never reached through a proxy
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
	var closeIdle func()
	if t, ok := transport.(interface{ CloseIdleConnections() }); ok {
		closeIdle = t.CloseIdleConnections
	}
	db, err := client.GetDatabase(ctx, cfg.Database, &arangodb.GetDatabaseOptions{SkipExistCheck: true})
	if err != nil {
		return nil, err
	}
	s := &Store{client: client, db: db, cols: CollectionsFor(cfg.Collection), endpoint: redact(cfg.URL), database: cfg.Database, timeout: cfg.Timeout, closeIdle: closeIdle}
	skip := &arangodb.GetCollectionOptions{SkipExistCheck: true}
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

// Close closes the transport's idle connections, so that a wo process that
// is done with the store leaves no sockets open on the server.
func (s *Store) Close() error {
	if s.closeIdle != nil {
		s.closeIdle()
	}
	return nil
}

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

// The queries. Constant texts: bind variables carry every value.
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
	queryRemove         = `REMOVE { _key: @key, _rev: @rev } IN @@tasks OPTIONS { ignoreRevs: false }`
	queryRemoveEdges    = `FOR e IN @@edges FILTER e._from == @from REMOVE e IN @@edges`
	queryExisting       = `FOR k IN @keys FILTER DOCUMENT(@@tasks, k) != null RETURN k`
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

// Replace removes tasks at their revisions, with their blocked_by edges,
// and inserts docs, in one stream transaction (see store.Replacer): a
// failure before the commit writes nothing. Like Create, a commit that
// fails part way in a sharded cluster can leave part of it written.
func (s *Store) Replace(ctx context.Context, remove map[string]string, docs []map[string]any) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
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
	var edges []map[string]any
	clean := make([]map[string]any, 0, len(docs))
	for _, doc := range docs {
		key, _ := doc["_key"].(string)
		c := make(map[string]any, len(doc))
		for k, v := range doc {
			if k != "_rev" && k != "_id" {
				c[k] = v
			}
		}
		clean = append(clean, c)
		edges = append(edges, s.edges(key, store.BlockedByOf(doc))...)
	}
	if len(clean) > 0 {
		query, bind := queryCreate, map[string]any{"docs": clean, "@tasks": s.cols.Tasks}
		if len(edges) > 0 {
			query, bind["edges"], bind["@edges"] = queryCreateWithEdges, edges, s.cols.Edges
		}
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

// Init makes sure the three collections and the indexes behind wo's
// queries exist, and that existing collections have the type wo needs. It
// is idempotent and safe to run concurrently: a collection another wo init
// creates at the same moment is waited for, and indexes are ensured by
// name, built in the background so that writers are not blocked.
//
// On a cluster it checks that a multi-collection write can be atomic: the
// database is OneShard, or the edges and logs collections follow the tasks
// collection's sharding (distributeShardsLike) and it has one shard. Where
// wo creates the collections on a cluster that is not OneShard, it creates
// them that way. Otherwise the store works, and Init returns a
// store.Warning that says what can happen and how to fix it.
func (s *Store) Init(ctx context.Context) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	cluster, oneShard, err := s.deployment(ctx)
	if err != nil {
		return s.mapErr("", err)
	}
	docType, edgeType := arangodb.CollectionTypeDocument, arangodb.CollectionTypeEdge
	one := 1
	want := []struct {
		name    string
		typ     arangodb.CollectionType
		indexes [][]string
	}{
		{s.cols.Tasks, docType, [][]string{{"parent_key"}, {"status"}}},
		// No index of wo's own on the edges: the edge index on _from is
		// what BlockedBy and Update use, and one on type (blocked_by on
		// every edge) would only cost writes.
		{s.cols.Edges, edgeType, nil},
		{s.cols.Logs, docType, [][]string{{"task_key", "created_at"}, {"action", "created_at"}}},
	}
	props := make(map[string]arangodb.CollectionProperties, len(want))
	for _, w := range want {
		create := &arangodb.CreateCollectionPropertiesV2{Type: &w.typ}
		if cluster && !oneShard {
			if w.name == s.cols.Tasks {
				create.NumberOfShards = &one
			} else {
				create.DistributeShardsLike = &s.cols.Tasks
			}
		}
		col, p, err := s.ensureCollection(ctx, w.name, create)
		if err != nil {
			return err
		}
		if p.Type != w.typ {
			return fmt.Errorf("ArangoDB database %s: collection %s is %s, but wo needs %s: rename or drop it (in arangosh: db._drop(%q)) and run wo init again, or pass --collection to use other collections",
				s.database, w.name, typeName(p.Type), typeName(w.typ), w.name)
		}
		props[w.name] = p
		yes := true
		for _, fields := range w.indexes {
			opts := &arangodb.CreatePersistentIndexOptions{Name: "wo_" + strings.Join(fields, "_"), InBackground: &yes}
			_, _, err := col.EnsurePersistentIndex(ctx, fields, opts)
			if shared.IsConflict(err) { // a concurrent wo init made it: ensuring again finds it
				_, _, err = col.EnsurePersistentIndex(ctx, fields, opts)
			}
			if err != nil {
				return s.mapErr("", fmt.Errorf("index on %s(%s): %w", w.name, strings.Join(fields, ", "), err))
			}
		}
	}
	if cluster && !oneShard {
		return s.shardingWarning(props)
	}
	return nil
}

// deployment asks the server whether it is a cluster's coordinator and,
// if so, whether the database is OneShard.
func (s *Store) deployment(ctx context.Context) (cluster, oneShard bool, err error) {
	role, err := s.client.ServerRole(ctx)
	if err != nil {
		return false, false, err
	}
	if role != arangodb.ServerRoleCoordinator {
		return false, false, nil
	}
	info, err := s.db.Info(ctx)
	if err != nil {
		return true, false, err
	}
	return true, info.Sharding == arangodb.DatabaseShardingSingle, nil
}

// shardingWarning says what a cluster database that is not OneShard gives
// up, unless the collections share one shard's placement.
func (s *Store) shardingWarning(props map[string]arangodb.CollectionProperties) error {
	tasks := props[s.cols.Tasks]
	var problems []string
	if tasks.NumberOfShards != 1 { // as the server reports it: its prototype's, when it follows one

		problems = append(problems, fmt.Sprintf("%s has %d shards", s.cols.Tasks, tasks.NumberOfShards))
	}
	for _, name := range []string{s.cols.Edges, s.cols.Logs} {
		p := props[name]
		if p.DistributeShardsLike != s.cols.Tasks && (tasks.DistributeShardsLike == "" || p.DistributeShardsLike != tasks.DistributeShardsLike) {
			problems = append(problems, fmt.Sprintf("%s does not follow the sharding of %s (distributeShardsLike)", name, s.cols.Tasks))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return store.Warning(fmt.Sprintf("ArangoDB database %s is a sharded cluster database, not OneShard, and %s: "+
		"a task and its edges are written in one transaction that can fail part way at commit (wo then removes the tasks it created; an update of dependencies can leave the document and its edges out of step). "+
		"For all-or-nothing writes, use a OneShard database (created with sharding \"single\") or recreate %s with one shard and %s and %s with distributeShardsLike %q",
		s.database, strings.Join(problems, "; "), s.cols.Tasks, s.cols.Edges, s.cols.Logs, s.cols.Tasks))
}

// initRetries bounds the wait for a collection that a concurrent wo init
// created: in a cluster, the coordinator that refused ours with 409 may
// not see it yet and answer 404 for a moment.
const (
	initRetries = 10
	initBackoff = 100 * time.Millisecond
)

// ensureCollection returns the collection and its properties, creating it
// with create when it does not exist.
func (s *Store) ensureCollection(ctx context.Context, name string, create *arangodb.CreateCollectionPropertiesV2) (arangodb.Collection, arangodb.CollectionProperties, error) {
	col, err := s.db.GetCollection(ctx, name, &arangodb.GetCollectionOptions{SkipExistCheck: true})
	if err != nil {
		return nil, arangodb.CollectionProperties{}, err
	}
	created := false
	for attempt := 0; ; attempt++ {
		p, err := col.Properties(ctx)
		if err == nil {
			return col, p, nil
		}
		if !shared.IsNotFound(err) {
			return nil, p, s.mapErr("", fmt.Errorf("collection %s: %w", name, err))
		}
		if !created {
			_, err := s.db.CreateCollectionV2(ctx, name, create)
			if err != nil && !shared.IsConflict(err) {
				return nil, p, s.mapErr("", fmt.Errorf("creating collection %s: %w", name, err))
			}
			created = true // by us or, on a conflict, by a concurrent wo init
			if err == nil {
				continue
			}
		}
		if attempt >= initRetries {
			return nil, p, fmt.Errorf("ArangoDB database %s: collection %s exists (creating it said so) but cannot be read; run wo init again", s.database, name)
		}
		select {
		case <-time.After(initBackoff):
		case <-ctx.Done():
			return nil, p, s.mapErr("", ctx.Err())
		}
	}
}

func typeName(t arangodb.CollectionType) string {
	switch t {
	case arangodb.CollectionTypeEdge:
		return "an edge collection"
	case arangodb.CollectionTypeDocument:
		return "a document collection"
	}
	return fmt.Sprintf("a collection of type %d", t)
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

// cursorError is a failure to fetch a query's next batch: a 404 there
// means the cursor is gone, never that a task is.
type cursorError struct{ err error }

func (e cursorError) Error() string { return e.err.Error() }
func (e cursorError) Unwrap() error { return e.err }

// ArangoDB error numbers that the driver has no constant for.
const (
	errReadOnly                 = 1004 // with 403: the write concern is not met (too few in-sync replicas)
	errWriteConcernNotFulfilled = 1429
	errCursorNotFound           = 1600
)

// mapErr turns driver errors into store errors with a message that says
// what to do.
func (s *Store) mapErr(key string, err error) error {
	if err == nil {
		return nil
	}
	var ce cursorError
	if errors.As(err, &ce) {
		if ok, ae := shared.IsArangoError(err); ok && (ae.Code == http.StatusNotFound || ae.ErrorNum == errCursorNotFound) {
			return store.Unavailable(s.endpoint, fmt.Errorf("the server no longer has the query's cursor (it expired, or another coordinator answered): run the command again (%s)", ae.ErrorMessage))
		}
	}
	if ok, ae := shared.IsArangoError(err); ok && ae.HasError {
		switch {
		case ae.ErrorNum == errCursorNotFound:
			return store.Unavailable(s.endpoint, fmt.Errorf("the server no longer has the query's cursor: run the command again (%s)", ae.ErrorMessage))
		case ae.ErrorNum == errWriteConcernNotFulfilled || (ae.Code == http.StatusForbidden && ae.ErrorNum == errReadOnly):
			return store.Unavailable(s.endpoint, fmt.Errorf("the write concern is not met (too few in-sync replicas): retry later (%s)", ae.ErrorMessage))
		case ae.Code == http.StatusPreconditionFailed || ae.ErrorNum == shared.ErrArangoConflict:
			return store.Conflict(key)
		case ae.ErrorNum == shared.ErrArangoUniqueConstraintViolated:
			return store.Exists(key)
		case ae.ErrorNum == shared.ErrArangoDatabaseNotFound:
			return &DatabaseError{Endpoint: s.endpoint, Database: s.database}
		case ae.ErrorNum == shared.ErrArangoDataSourceNotFound:
			return fmt.Errorf("ArangoDB database %s lacks a collection wo uses (%s): run wo init (%s)", s.database, strings.Join([]string{s.cols.Tasks, s.cols.Edges, s.cols.Logs}, ", "), ae.ErrorMessage)
		case ae.ErrorNum == shared.ErrArangoDocumentNotFound:
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
