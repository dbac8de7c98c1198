package arango

// The connection: where the store is, and how wo reaches it.
//
//   - Open does not contact the server; the first operation does, so a
//     wrong endpoint or database is that operation's error (errors.go).
//   - Credentials travel only as basic authentication on each request: a
//     store URL that holds them is refused, and every message names the
//     endpoint through redact, never with a password.
//   - Every operation runs under bound: one deadline (Config.Timeout,
//     DefaultTimeout when zero) over dialling, the TLS handshake, the wait
//     for the answer and reading it, so a server that accepts connections
//     and never answers cannot hang wo.
//   - Close leaves no idle connection open on the server.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/arangodb/go-driver/v2/arangodb"
	"github.com/arangodb/go-driver/v2/connection"
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

// Open connects to the database. It does not contact the server: the first
// operation does, and maps a failure to a clear error.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Database == "" {
		return nil, noDatabase(redact(cfg.URL), "")
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
