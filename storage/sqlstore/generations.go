package sqlstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"slices"
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
	// staged: the load leaves the source's current generation as it is and records the
	// table as not current (stage), for an import that makes all its sources current at
	// once afterwards (DB.switchGenerations).
	staged bool
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
// server loaded it), nor when l's generation table is kept from an earlier load (one that
// a later load replaced, or one that an import staged and did not make current): unless
// l is staged, it becomes current again.
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
	if l.staged {
		return false, current, nil
	}
	return false, current, l.makeCurrent(ctx, tx, d, rows, current)
}

// finish ends the load of l's rows rows in its transaction: a staged load records the
// table as a generation that is not current (stage), any other makes it current in
// place of currentTable (makeCurrent).
func (l *tableLoad) finish(ctx context.Context, tx loadTx, d dialect, rows int64, currentTable string) error {
	if l.staged {
		return l.stage(ctx, tx, d, rows)
	}
	return l.makeCurrent(ctx, tx, d, rows, currentTable)
}

// stage records l's generation table, of rows rows, as one that is not current: replaced
// now, as if a later load had replaced it at once. So it is kept as replaced generations
// are (DB.SetKeepReplaced), for the import that loaded it to make it current
// (switchGenerations) or for a later load of the same data to find it; and an import that
// failed or ended after loading it leaves no table that dropReplaced does not collect.
func (l *tableLoad) stage(ctx context.Context, tx loadTx, d dialect, rows int64) error {
	return tx.exec(ctx, d.rebind(`INSERT INTO km_generations (table_name, source, digest, rows_loaded, row_ordered, replaced_at) VALUES (?, ?, ?, ?, ?, ?)`),
		l.table, l.source, l.digest, rows, l.ordered, time.Now().Unix())
}

// generation is a source and the generation table an import makes current for it.
type generation struct{ source, table string }

// switchAttempts bounds the tries of switchGenerations's transaction that waited too long
// for a lock (switchLockTimeout) or met a conflict (dialect.retryable).
const switchAttempts = 20

// switchLockTimeout bounds each wait of switchGenerations's transaction for the lock of a
// view that readers hold, below PostgreSQL's deadlock_timeout (a second by default): a
// reader's statement that holds one of the views and waits for another that the switch
// replaced already is a deadlock, which the switch then ends by giving up its locks
// (and trying again) before the server would end either.
const switchLockTimeout = "100ms"

// switchGenerations makes each generation's table the current one of its source, all in
// one transaction, so that another server process (its imports, a host's SQL through
// the sources' views) sees the sources of an import all before it or all after it,
// never some of each; of two imports at once, the one that commits last is current
// whole. Each table must be a generation recorded in km_generations: one staged by the
// import, or one current or kept already. It returns the generations whose tables are
// no longer there (collected by another process's dropReplaced since they were staged,
// or dropped by hand), having changed nothing: the import loads them again and switches
// again. It does nothing for a source whose current generation is the table already.
// check, unless nil, runs in the transaction once every table is found, before any view
// changes: its error rolls the switch back and is returned.
func (db *DB) switchGenerations(ctx context.Context, gens []generation, check func(context.Context, querier) error) (missing []generation, err error) {
	// The sources in one order, so that two imports at once lock their rows of
	// km_imports without a deadlock.
	gens = slices.SortedFunc(slices.Values(gens), func(a, b generation) int { return strings.Compare(a.source, b.source) })
	pg := db.d.name() == "postgres"
	citus := false
	if pg {
		if citus, err = db.HasCitus(ctx); err != nil {
			return nil, err
		}
	}
	lock := ""
	if pg {
		lock = " FOR UPDATE"
	}
	for attempt := 0; ; attempt++ {
		err = db.tx(ctx, func(tx *sql.Tx) error {
			missing = nil
			ltx := sqlLoadTx{tx}
			current := make([]string, len(gens))
			for i, g := range gens {
				if err := ltx.scan(ctx, db.d.rebind(claimGeneration), []any{g.source}, &current[i]); err != nil {
					return err
				}
			}
			var changes []viewChange
			for i, g := range gens {
				if current[i] == g.table {
					continue
				}
				l := &tableLoad{source: g.source, table: g.table, citus: citus}
				var rows int64
				err := ltx.scan(ctx, db.d.rebind(`SELECT digest, rows_loaded, row_ordered FROM km_generations WHERE table_name = ?`+lock), []any{g.table}, &l.digest, &rows, &l.ordered)
				if err == nil {
					var exists bool
					if exists, err = tableExists(ctx, ltx, db.d, g.table); err == nil && !exists {
						err = sql.ErrNoRows
					}
				}
				if errors.Is(err, sql.ErrNoRows) {
					missing = append(missing, g)
					continue
				}
				if err != nil {
					return err
				}
				if err := l.record(ctx, ltx, db.d, rows); err != nil {
					return err
				}
				change, err := l.viewChange(ctx, ltx, db.d, current[i])
				if err != nil {
					return err
				}
				changes = append(changes, change)
			}
			if missing != nil {
				return errMissingGenerations
			}
			if check != nil {
				if err := check(ctx, tx); err != nil {
					return err
				}
			}
			if pg {
				// The rows of km_imports are held, which only imports wait for; the
				// views' locks, which readers hold, are waited for briefly.
				if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '"+switchLockTimeout+"'"); err != nil {
					return err
				}
			}
			if attempt > 0 {
				// A reader that holds one view and waits for another that the switch
				// holds makes it give up (switchLockTimeout): the views in another
				// order this time, so that readers of several views in one order of
				// their own stop only the tries that take them in the other.
				mrand.Shuffle(len(changes), func(i, j int) { changes[i], changes[j] = changes[j], changes[i] })
			}
			for _, c := range changes {
				if err := c.run(ctx, ltx); err != nil {
					return err
				}
			}
			return nil
		})
		if errors.Is(err, errMissingGenerations) {
			return missing, nil
		}
		if err == nil || attempt+1 >= switchAttempts || !lockTimedOut(err) {
			if err == nil {
				db.loads.Add(1)
			}
			return nil, err
		}
		// Readers held a view: let them finish, a little longer each time.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 10 * time.Millisecond):
		}
	}
}

// errMissingGenerations rolls back switchGenerations's transaction when a table is
// missing.
var errMissingGenerations = errors.New("sqlstore: generation tables missing")

// lockTimedOut reports whether err is PostgreSQL's lock_not_available (lock_timeout).
func lockTimedOut(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "55P03"
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
// (viewChange).
func (l *tableLoad) makeCurrent(ctx context.Context, tx loadTx, d dialect, rows int64, currentTable string) error {
	if err := l.record(ctx, tx, d, rows); err != nil {
		return err
	}
	change, err := l.viewChange(ctx, tx, d, currentTable)
	if err != nil {
		return err
	}
	return change.run(ctx, tx)
}

// record is makeCurrent's part in km_generations and km_imports.
func (l *tableLoad) record(ctx context.Context, tx loadTx, d dialect, rows int64) error {
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
	return nil
}

// sameColumns reports, on PostgreSQL, whether its two relations (quoted names) have the
// same columns in the same order, of the same types and collations.
const sameColumns = `SELECT (SELECT string_agg(format('%I %s %s', attname, atttypid, attcollation), ',' ORDER BY attnum)
	FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped) IS NOT DISTINCT FROM
	(SELECT string_agg(format('%I %s %s', attname, atttypid, attcollation), ',' ORDER BY attnum)
	FROM pg_attribute WHERE attrelid = to_regclass($2) AND attnum > 0 AND NOT attisdropped)`

// viewStatement is a statement of a viewChange: a DROP of the table or view (kind) name
// explains its failure with dependedOn.
type viewStatement struct{ q, kind, name string }

// viewChange is the statements that replace a source's view, which take its lock.
// They are worked out first (viewChange reads the catalog) and run after, so that the
// changes of the views of an import follow each other closely: see switchGenerations.
type viewChange []viewStatement

// run runs the statements in tx.
func (c viewChange) run(ctx context.Context, tx loadTx) error {
	for _, s := range c {
		if err := tx.exec(ctx, s.q); err != nil {
			if s.kind != "" {
				return dependedOn(s.kind, s.name, err)
			}
			return err
		}
	}
	return nil
}

// viewChange returns the statements that make the source's name a view of l's generation
// table in place of the view of currentTable ("" for a table loaded before generations,
// which is dropped). On PostgreSQL a view whose columns stay the same is replaced in
// place (CREATE OR REPLACE VIEW), so that the views a host defined over the source's name
// keep reading it, the new generation now; one whose columns the load changes is dropped
// and created again, which PostgreSQL refuses while other views depend on it (dependedOn
// says so). SQLite binds a view's names when a statement reads it: dependent views read
// the new view whatever its columns.
func (l *tableLoad) viewChange(ctx context.Context, tx loadTx, d dialect, currentTable string) (viewChange, error) {
	view, table := quoteIdent(l.source), quoteIdent(l.table)
	create := viewStatement{q: "CREATE VIEW " + view + " AS SELECT * FROM " + table}
	var c viewChange
	if currentTable == "" {
		c = append(c, viewStatement{"DROP TABLE IF EXISTS " + view, "table", l.source})
	}
	if l.citus {
		// The view stays on the coordinator, which plans every read: Citus refuses to
		// propagate a view command to the workers after the load's parallel COPY into
		// the shards of a distributed table.
		c = append(c, viewStatement{q: "SET LOCAL citus.enable_ddl_propagation = off"})
	}
	if currentTable == "" {
		return append(c, create), nil
	}
	if d.name() == "postgres" {
		var same bool
		if err := tx.scan(ctx, sameColumns, []any{view, table}, &same); err != nil {
			return nil, err
		}
		if same {
			return append(c, viewStatement{q: "CREATE OR REPLACE VIEW " + view + " AS SELECT * FROM " + table}), nil
		}
	}
	return append(c, viewStatement{"DROP VIEW IF EXISTS " + view, "view", l.source}, create), nil
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

// dropReplaced collects the generation tables replaced longer ago than the DB keeps them
// (collectReplaced). It fails nothing: the load that called it has committed, and what it
// cannot drop is left to a later load; an error other than the end of ctx is logged
// (slog.Default), so that tables piling up do not go unseen.
func (db *DB) dropReplaced(ctx context.Context) {
	if err := db.collectReplaced(ctx); err != nil && ctx.Err() == nil {
		slog.Warn("sqlstore: replaced generation tables not dropped; a later load tries again", "error", err)
	}
}

// collectReplaced drops the generation tables replaced longer ago than the DB keeps them,
// each with its km_generations row in a transaction of its own. A table that readers hold
// longer than a few seconds on PostgreSQL, or that a view of the host reads, is left to a
// later load; another error ends it.
func (db *DB) collectReplaced(ctx context.Context) error {
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
	citus, err := db.HasCitus(ctx)
	if err != nil {
		return err
	}
	for _, table := range tables {
		err := db.tx(ctx, func(tx *sql.Tx) error {
			if citus {
				// A drop takes its turn with the loads (see copyTable).
				if _, err := tx.ExecContext(ctx, takePlacementTurn); err != nil {
					return err
				}
			}
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
