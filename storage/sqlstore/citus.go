package sqlstore

import (
	"context"
	"fmt"
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

// citusDialect is PostgreSQL's dialect on a database with the citus extension: the
// planner writes the statement shapes Citus plans where PostgreSQL's would not be (see
// planner.citus).
type citusDialect struct{ dialect }

// planDialect returns the dialect KM statements are written in: citusDialect when the
// database has citus (an error asking is taken as no citus: the single-node shapes are
// valid SQL on Citus too, only some are not distributed).
func (db *DB) planDialect(ctx context.Context) dialect {
	if has, err := db.HasCitus(ctx); err == nil && has {
		return citusDialect{db.d}
	}
	return db.d
}

// colocationAnchor returns the table that the distributed tables whose distribution column
// has the SQL type typ are co-located with, creating it (empty, distributed by its one
// column) when the schema has none: one co-location group per key domain of the schema's
// KMs. Citus's default group for a type would also take unrelated tables of the database,
// and refuses one whose column's collation differs (kmkit's text columns are C).
//
// The anchor is claimed in km_imports as a source is, so that replicas starting at once
// create it once.
func (db *DB) colocationAnchor(ctx context.Context, typ string) (string, error) {
	name := "km_colocation_" + strings.ToLower(strings.NewReplacer(" ", "_", `"`, "").Replace(typ))
	const done = "colocation anchor"
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	var current string
	if err := tx.QueryRowContext(ctx, db.d.rebind(claimImport), name).Scan(&current); err != nil {
		return "", err
	}
	if current == done {
		return name, tx.Commit()
	}
	for _, s := range []string{
		"DROP TABLE IF EXISTS " + quoteIdent(name),
		"CREATE TABLE " + quoteIdent(name) + " (k " + typ + ")",
		"SELECT create_distributed_table(" + quoteLiteral(quoteIdent(name)) + ", 'k', colocate_with => 'none')",
	} {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return "", fmt.Errorf("co-location anchor %s: %w", name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, db.d.rebind(recordImport), done, 0, "", name); err != nil {
		return "", err
	}
	return name, tx.Commit()
}

// takePlacementTurn takes the transaction-level advisory lock with which the loads and
// drops of tables on Citus take turns (copyTable, dropReplaced); its key is the bytes
// of "kmkitCPL".
const takePlacementTurn = "SELECT pg_advisory_xact_lock(7740961435186057292)"
