package sqlstore

import (
	"context"
	"strings"
)

// HasCitus reports whether the database has the citus extension, which distributes
// tables over several nodes (see Distribution): imports then place the tables of records
// that declare a distribution, and the KM translation writes the shapes Citus plans. The
// answer is read once per DB; SQLite has no citus.
//
// The other tables of the schema (SCIM users and groups, rate limits, import bookkeeping,
// reporting) stay coordinator-local: they are small, written one row at a time in their
// own transactions, and never joined with a record's table, which is where Citus plans
// every statement on them, constraints, sequences and ON CONFLICT included.
func (db *DB) HasCitus(ctx context.Context) (bool, error) {
	switch db.citus.Load() {
	case citusYes:
		return true, nil
	case citusNo:
		return false, nil
	}
	if db.d.name() != "postgres" {
		db.citus.Store(citusNo)
		return false, nil
	}
	var has bool
	if err := db.sql.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`).Scan(&has); err != nil {
		return false, err
	}
	if has {
		db.citus.Store(citusYes)
	} else {
		db.citus.Store(citusNo)
	}
	return has, nil
}

// The values of DB.citus: not read yet, or HasCitus's answer.
const (
	citusUnknown int32 = iota
	citusNo
	citusYes
)

// quoteLiteral quotes a string as an SQL literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
