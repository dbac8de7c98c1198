package store

import "database/sql"

// DBOf exposes the SQL handle to the external tests of this package.
func DBOf(s *SQLite) *sql.DB { return s.db }
