package sqlstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultKeepReplaced is how long a generation table that a later load replaced is kept
// (see DB.SetKeepReplaced).
const DefaultKeepReplaced = time.Hour

// SetKeepReplaced sets how long the DB keeps the generation table of a source after a
// load replaced it: a server that loaded the older generation keeps answering from it
// until it reloads or until then, and its reads answer ErrGenerationReplaced after.
// Replaced generations are dropped by the next load of any table once that time has
// passed; 0 drops them at the next load. The default is DefaultKeepReplaced. Each kept
// generation is a full copy of its table, indexes included.
func (db *DB) SetKeepReplaced(d time.Duration) { db.keepReplaced.Store(int64(max(d, 0))) }

// maxIdentifier is the length in bytes past which PostgreSQL cuts a name.
const maxIdentifier = 63

// generationTable returns the name of the table holding the load of source with digest:
// the source's name, '@' and twelve hex digits of the SHA-256 of both (of a random value
// for a load without digest), the source's name cut so that the whole fits PostgreSQL's
// 63-byte identifiers.
func generationTable(source, digest string) string {
	if digest == "" {
		digest = rand.Text()
	}
	sum := sha256.Sum256([]byte(source + "\x00" + digest))
	suffix := "@" + hex.EncodeToString(sum[:6])
	return cutTo(source, maxIdentifier-len(suffix)) + suffix
}

// cutIdentifier returns name as PostgreSQL reads it: cut to maxIdentifier bytes.
func cutIdentifier(name string) string { return cutTo(name, maxIdentifier) }

// cutTo returns the longest prefix of s of whole characters in n bytes.
func cutTo(s string, n int) string {
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// tableLoad is one load of a table into a generation table of its own: what the load's
// transaction claims, creates and records.
type tableLoad struct {
	source  string // the name the load replaces: a view of the generation table after it
	table   string // the generation table (generationTable)
	digest  string
	ordered string // the row-ordered columns, a JSON array or ""
	citus   bool   // the database has the citus extension
}

// loadTx is a load's transaction: database/sql's (SQLite) or pgx's (PostgreSQL).
type loadTx interface {
	exec(ctx context.Context, q string, args ...any) error
	// scan reads the row of q into dest; no row is sql.ErrNoRows.
	scan(ctx context.Context, q string, args []any, dest ...any) error
}

// sqlLoadTx is a loadTx of database/sql.
type sqlLoadTx struct{ tx *sql.Tx }

func (t sqlLoadTx) exec(ctx context.Context, q string, args ...any) error {
	_, err := t.tx.ExecContext(ctx, q, args...)
	return err
}

func (t sqlLoadTx) scan(ctx context.Context, q string, args []any, dest ...any) error {
	return t.tx.QueryRowContext(ctx, q, args...).Scan(dest...)
}

// pgxLoadTx is a loadTx of pgx.
type pgxLoadTx struct{ tx pgx.Tx }

func (t pgxLoadTx) exec(ctx context.Context, q string, args ...any) error {
	_, err := t.tx.Exec(ctx, q, args...)
	return err
}

func (t pgxLoadTx) scan(ctx context.Context, q string, args []any, dest ...any) error {
	err := t.tx.QueryRow(ctx, q, args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sql.ErrNoRows
	}
	return err
}

// claimGeneration locks the row of a source in km_imports for the transaction, as
// claimImport does, and returns its current generation table.
const claimGeneration = `INSERT INTO km_imports (source, digest, rows_loaded) VALUES (?, '', 0)
	ON CONFLICT (source) DO UPDATE SET source = excluded.source RETURNING table_name`

// claim claims l's source and reports whether its rows are to be loaded, and the
// source's current generation table ("" for none). Not when that is l's already (another
// server loaded it), nor when l's generation table is kept from an earlier load that a
// later one replaced: it becomes current again.
func (l *tableLoad) claim(ctx context.Context, tx loadTx, d dialect) (load bool, current string, err error) {
	if err := tx.scan(ctx, d.rebind(claimGeneration), []any{l.source}, &current); err != nil {
		return false, "", err
	}
	if current == l.table {
		return false, current, nil
	}
	if current == "" {
		// A first load drops a table under the source's name (one loaded before
		// generations), which must not be another source's generation.
		var owner string
		err := tx.scan(ctx, d.rebind(`SELECT source FROM km_generations WHERE table_name = ?`), []any{l.source}, &owner)
		if err == nil {
			return false, "", fmt.Errorf("sqlstore: source %s is named like a generation table of source %s: rename it", l.source, owner)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return false, "", err
		}
	}
	// The kept generation's row is locked, so that no load drops its table meanwhile
	// (dropReplaced); SQLite runs one write transaction at a time.
	lock := ""
	if d.name() == "postgres" {
		lock = " FOR UPDATE"
	}
	var rows int64
	var ordered string
	err = tx.scan(ctx, d.rebind(`SELECT rows_loaded, row_ordered FROM km_generations WHERE table_name = ?`+lock), []any{l.table}, &rows, &ordered)
	if errors.Is(err, sql.ErrNoRows) {
		if current == "" {
			// A table loaded before generations holds the source's name, and the
			// names of its indexes: it goes first.
			if err := tx.exec(ctx, "DROP TABLE IF EXISTS "+quoteIdent(l.source)); err != nil {
				return false, "", dependedOn("table", l.source, err)
			}
		}
		return true, current, nil
	}
	if err != nil {
		return false, "", err
	}
	if exists, err := tableExists(ctx, tx, d, l.table); err != nil {
		return false, "", err
	} else if !exists {
		// Dropped by hand: its record goes, and the rows are loaded again.
		return true, current, tx.exec(ctx, d.rebind(`DELETE FROM km_generations WHERE table_name = ?`), l.table)
	}
	l.ordered = ordered
	return false, current, l.makeCurrent(ctx, tx, d, rows, current)
}

// tableExists reports whether the database holds the table name.
func tableExists(ctx context.Context, tx loadTx, d dialect, name string) (bool, error) {
	q, arg := `SELECT count(*) > 0 FROM sqlite_schema WHERE type = 'table' AND name = ?`, name
	if d.name() == "postgres" {
		q, arg = `SELECT to_regclass($1) IS NOT NULL`, quoteIdent(name)
	}
	var exists bool
	err := tx.scan(ctx, q, []any{arg}, &exists)
	return exists, err
}

// makeCurrent records l's generation table as its source's current one, with rows rows,
// marks the one it replaces (currentTable, "" for none or a table loaded before
// generations, which is dropped) replaced now, and makes the source's name a view of it
// (replaceView).
func (l *tableLoad) makeCurrent(ctx context.Context, tx loadTx, d dialect, rows int64, currentTable string) error {
	now := time.Now().Unix()
	for _, s := range []struct {
		q    string
		args []any
	}{
		{`UPDATE km_generations SET replaced_at = ? WHERE source = ? AND replaced_at IS NULL AND table_name <> ?`, []any{now, l.source, l.table}},
		{`INSERT INTO km_generations (table_name, source, digest, rows_loaded, row_ordered) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (table_name) DO UPDATE SET replaced_at = NULL`, []any{l.table, l.source, l.digest, rows, l.ordered}},
		{`UPDATE km_imports SET digest = ?, rows_loaded = ?, row_ordered = ?, table_name = ? WHERE source = ?`, []any{l.digest, rows, l.ordered, l.table, l.source}},
	} {
		if err := tx.exec(ctx, d.rebind(s.q), s.args...); err != nil {
			return err
		}
	}
	return l.replaceView(ctx, tx, d, currentTable)
}

// sameColumns reports, on PostgreSQL, whether its two relations (quoted names) have the
// same columns in the same order, of the same types and collations.
const sameColumns = `SELECT (SELECT string_agg(format('%I %s %s', attname, atttypid, attcollation), ',' ORDER BY attnum)
	FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped) IS NOT DISTINCT FROM
	(SELECT string_agg(format('%I %s %s', attname, atttypid, attcollation), ',' ORDER BY attnum)
	FROM pg_attribute WHERE attrelid = to_regclass($2) AND attnum > 0 AND NOT attisdropped)`

// replaceView makes the source's name a view of l's generation table in place of the view
// of currentTable ("" for a table loaded before generations, which is dropped). On
// PostgreSQL a view whose columns stay the same is replaced in place (CREATE OR REPLACE
// VIEW), so that the views a host defined over the source's name keep reading it, the new
// generation now; one whose columns the load changes is dropped and created again, which
// PostgreSQL refuses while other views depend on it (dependedOn says so). SQLite binds a
// view's names when a statement reads it: dependent views read the new view whatever its
// columns.
func (l *tableLoad) replaceView(ctx context.Context, tx loadTx, d dialect, currentTable string) error {
	view, table := quoteIdent(l.source), quoteIdent(l.table)
	create := "CREATE VIEW " + view + " AS SELECT * FROM " + table
	if currentTable == "" {
		if err := tx.exec(ctx, "DROP TABLE IF EXISTS "+view); err != nil {
			return dependedOn("table", l.source, err)
		}
	}
	if l.citus {
		// The view stays on the coordinator, which plans every read: Citus refuses to
		// propagate a view command to the workers after the load's parallel COPY into
		// the shards of a distributed table.
		if err := tx.exec(ctx, "SET LOCAL citus.enable_ddl_propagation = off"); err != nil {
			return err
		}
	}
	if currentTable == "" {
		return tx.exec(ctx, create)
	}
	if d.name() == "postgres" {
		var same bool
		if err := tx.scan(ctx, sameColumns, []any{view, table}, &same); err != nil {
			return err
		}
		if same {
			return tx.exec(ctx, "CREATE OR REPLACE VIEW "+view+" AS SELECT * FROM "+table)
		}
	}
	if err := tx.exec(ctx, "DROP VIEW IF EXISTS "+view); err != nil {
		return dependedOn("view", l.source, err)
	}
	return tx.exec(ctx, create)
}

// dependedOn explains the error of a load's DROP of the table or view (kind) name that
// other objects of the database depend on (PostgreSQL's 2BP01, views of the host's own):
// the load cannot replace it. Other errors are returned as they are.
func dependedOn(kind, name string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "2BP01" {
		return fmt.Errorf("sqlstore: the load replaces the %s %s, which other objects of the database depend on, with columns of its own: drop them, load, and create them again (%w)", kind, name, err)
	}
	return err
}

// dropReplaced drops the generation tables replaced longer ago than the DB keeps them,
// each with its km_generations row in a transaction of its own. A table that readers hold
// longer than a few seconds on PostgreSQL, or that a view of the host reads, is left to a
// later load: the load that called it has committed, and a table that cannot be dropped
// yet must fail neither it nor the loads after it.
func (db *DB) dropReplaced(ctx context.Context) error {
	cutoff := time.Now().Add(-time.Duration(db.keepReplaced.Load())).Unix()
	rows, err := db.sql.QueryContext(ctx, db.d.rebind(`SELECT table_name FROM km_generations WHERE replaced_at <= ?`), cutoff)
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	pg := db.d.name() == "postgres"
	for _, table := range tables {
		err := db.tx(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, db.d.rebind(`DELETE FROM km_generations WHERE table_name = ? AND replaced_at <= ?`), table, cutoff)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return err // made current again, or dropped by another server
			}
			if pg {
				if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '5s'"); err != nil {
					return err
				}
			}
			_, err = tx.ExecContext(ctx, "DROP TABLE IF EXISTS "+quoteIdent(table))
			return err
		})
		var pe *pgconn.PgError
		if errors.As(err, &pe) && (pe.Code == "55P03" || pe.Code == "2BP01") {
			// lock_not_available: still read; dependent_objects_still_exist: a view of
			// the host's own reads it. A later load drops it.
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// undefinedTable reports whether err is the error of a statement that named a table the
// database does not hold (a generation table dropped since a store loaded it).
func undefinedTable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "42P01"
	}
	return err != nil && strings.Contains(err.Error(), "no such table")
}
