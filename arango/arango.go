// Package arango is the ArangoDB store: the Persephone database that teams
// and CI fleets share. It speaks ArangoDB's HTTP API through
// github.com/arangodb/go-driver/v2.
//
// Every query is a constant AQL text with bind variables; values never
// become part of the query string.
//
// Store keeps the contract of store.Store (package store states it). The
// package is split by concern, and each file opens with what it promises:
//
//   - connection.go: Open, the store URL, credentials, TLS and time limits;
//   - documents.go: one task read by key, and every write (create, replace,
//     update with its edges and log entries, a log entry alone);
//   - queries.go: the AQL that reads many documents (lists, an epic's
//     children, blockers, logs) and the cursor that carries their rows;
//   - init.go: collections, indexes and the check of a cluster's sharding;
//   - errors.go: how the server's answers become store errors.
package arango

import (
	"time"

	"github.com/arangodb/go-driver/v2/arangodb"

	"github.com/wo-runner/wo/store"
)

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
