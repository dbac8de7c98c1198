package arango

// Errors: how the server's answers become store errors. mapErr is the one
// place that maps; every failure of the server or the network passes
// through it.
//
//   - Callers classify with package store (IsNotFound, IsExists,
//     IsConflict, IsUnavailable, IsNoDatabase), never by comparing
//     messages or by importing this package.
//   - A failure that rerunning may cure (no answer in time, a refused
//     connection, a lost cursor, a write concern not met) is
//     store.Unavailable. A configuration mistake is not: a database not
//     named or not there is store.IsNoDatabase (from Open too), bad
//     credentials or a missing collection a plain error that says what to
//     set or run.
//   - The messages of the failures mapErr knows name the endpoint, the
//     cause and, where there is one, the fix; never a credential.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/arangodb/go-driver/v2/arangodb/shared"

	"github.com/wo-runner/wo/store"
)

// noDatabase is a configuration mistake, not an outage
// (store.IsNoDatabase): no database named (database ""), or one the server
// does not have.
func noDatabase(endpoint, database string) error {
	if database == "" {
		return store.NoDatabase(fmt.Sprintf("ArangoDB store %s: no database given: pass --database or set WO_DATABASE (or HADES_DATABASE)", endpoint))
	}
	return store.NoDatabase(fmt.Sprintf("ArangoDB at %s has no database %q: create it, or set --database / WO_DATABASE", endpoint, database))
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
			return noDatabase(s.endpoint, s.database)
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
