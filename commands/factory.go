// Package commands is wo's command line: one file per subcommand, each an
// options struct filled from flags and a run function that sees only the
// options and the Factory. Nothing below this package reads flags or prints.
package commands

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/arango"
	"github.com/wo-runner/wo/redact"
	"github.com/wo-runner/wo/store"
)

// Factory holds the I/O streams and builds dependencies lazily, so a command
// opens the store only if it needs one and tests can replace any part.
type Factory struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv is wo's only way to its environment (env.go): os.Getenv in
	// the real process, a test's own map in a test.
	Getenv func(string) string

	// Now is the clock the human views count ages from (time.Now when
	// nil): a test fixes it to compare output byte for byte.
	Now func() time.Time

	// OpenStore opens the store the flags and environment name.
	OpenStore func(ctx context.Context, cfg StoreConfig) (store.Store, error)
}

// NewFactory returns the factory of a real process.
func NewFactory(stdin io.Reader, stdout, stderr io.Writer) *Factory {
	f := &Factory{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}
	f.OpenStore = func(ctx context.Context, cfg StoreConfig) (store.Store, error) { return openStore(ctx, cfg, f.Getenv) }
	return f
}

// StoreConfig is what the --store, --database and --collection flags and
// their environment variables say.
type StoreConfig struct {
	URL        string
	Database   string
	Collection string
	User       string
	Password   string
	// Timeout bounds each store operation (--store-timeout,
	// WO_STORE_TIMEOUT); zero means the backend's default.
	Timeout  time.Duration
	ReadOnly bool // the command only reads: never create or change a SQLite file
}

// storeConfig reads the store flags with their fallbacks.
func (f *Factory) storeConfig(c *cli.Context) StoreConfig {
	return f.storeFrom(c.String("store"), c.String("database"), c.String("collection"), c.Duration("store-timeout"))
}

// storeFrom is the store configuration of the given store, database and
// collection, with what they leave empty from the names other tools use
// (ARANGO_URL, HADES_DATABASE) and the credentials from the environment.
func (f *Factory) storeFrom(url, database, collection string, timeout time.Duration) StoreConfig {
	return StoreConfig{
		URL:        cmp.Or(url, f.Getenv("ARANGO_URL")),
		Database:   cmp.Or(database, f.Getenv("HADES_DATABASE")),
		Collection: collection,
		User:       cmp.Or(f.Getenv("ARANGO_USER"), f.Getenv("ARANGO_USERNAME")),
		Password:   f.Getenv("ARANGO_PASSWORD"),
		Timeout:    timeout,
	}
}

// IsArangoURL reports whether a store URL names an ArangoDB server.
func IsArangoURL(u string) bool {
	for _, p := range []string{"arangodb+", "http://", "https://", "unix://"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// schemeLike is the start of a URL: a scheme and "://".
var schemeLike = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`)

// checkStoreURL refuses a store URL whose scheme wo does not know, which
// would otherwise be taken for a file name (arango://db:8529 made a
// SQLite file named "arango:").
func checkStoreURL(u string) error {
	m := schemeLike.FindStringSubmatch(u)
	if m == nil || IsArangoURL(u) || strings.HasPrefix(u, "sqlite://") {
		return nil
	}
	return usagef(fmt.Sprintf("the store %q: wo does not know the scheme %s://; a store is one of:\n"+
		"  a SQLite file: ./wo.db, /path/to/wo.db, sqlite:./wo.db\n"+
		"  ArangoDB: arangodb+http://HOST:PORT, arangodb+https://HOST:PORT, arangodb+unix:///PATH.sock (with --database)",
		u, m[1]))
}

// openStore opens ArangoDB for an arangodb+… URL, else the SQLite file at
// the path given (sqlite: prefix optional), else the default SQLite file
// (XDG_STATE_HOME, HOME) of getenv, the factory's environment.
func openStore(ctx context.Context, cfg StoreConfig, getenv func(string) string) (store.Store, error) {
	if err := checkStoreURL(cfg.URL); err != nil {
		return nil, err
	}
	if IsArangoURL(cfg.URL) {
		return arango.Open(ctx, arango.Config{
			URL: cfg.URL, Database: cfg.Database, Collection: cfg.Collection,
			User: cfg.User, Password: cfg.Password, Timeout: cfg.Timeout,
		})
	}
	path := strings.TrimPrefix(strings.TrimPrefix(cfg.URL, "sqlite://"), "sqlite:")
	if path == "" {
		var err error
		if path, err = store.DefaultPath(getenv); err != nil {
			return nil, err
		}
	}
	if cfg.ReadOnly {
		return store.OpenSQLiteReadOnly(ctx, path)
	}
	return store.OpenSQLite(ctx, path)
}

// secrets are the credentials wo was given, in every form it sends them:
// removed from everything the commands print.
func (f *Factory) secrets() *redact.Secrets {
	user := cmp.Or(f.Getenv("ARANGO_USER"), f.Getenv("ARANGO_USERNAME"), "root")
	return redact.New().Token(f.Getenv("GITHUB_TOKEN")).Token(f.Getenv("GH_TOKEN")).Basic(user, f.Getenv("ARANGO_PASSWORD"))
}

// readInput reads a file, or standard input for "-", up to the default
// size limit (input.go).
func (f *Factory) readInput(name string) ([]byte, string, error) {
	return f.readInputLimit(name, DefaultMaxInputSize)
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// useStore opens the store that cfg names for one command run and closes
// it afterwards; run functions, which see options and not flags, use it.
func (f *Factory) useStore(ctx context.Context, cfg StoreConfig, fn func(store.Store) error) error {
	s, err := f.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}
