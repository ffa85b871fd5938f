package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// DB is an open kmkit database: SQLite or PostgreSQL with the kmkit schema applied. Its
// stores (KM, SCIM, Reporting, Limiter) share the connection pool. A DB is safe for
// concurrent use; several processes may open the same database.
type DB struct {
	sql *sql.DB
	d   dialect
	// loads counts the tables LoadIndexedTable has replaced, so that what a KMStore
	// caches about a table's form (KMStore.notNull) is read again after a load.
	loads atomic.Int64
	// citus caches HasCitus: citusUnknown, citusNo or citusYes.
	citus atomic.Int32
	// replicas are the read replicas of KM reads (AddReplicas), or nil.
	replicas *replicas
	// keepReplaced is how long a replaced generation table is kept, in nanoseconds
	// (SetKeepReplaced).
	keepReplaced atomic.Int64
}

// sqliteCacheKiB is the page cache of each SQLite connection, in KiB, and
// sqliteImportCacheKiB that of an import's connection while it loads (see insertTable).
const (
	sqliteCacheKiB       = 65536
	sqliteImportCacheKiB = 2048
	// sqliteAnalysisLimit is the rows of each index that the ANALYZE of an import
	// reads (PRAGMA analysis_limit; SQLite's documentation suggests 100 to 1000):
	// enough to tell a key from a column of few values, in milliseconds per index.
	sqliteAnalysisLimit = 1000
)

// DefaultMaxConns bounds the PostgreSQL connections of one DB (one server process).
const DefaultMaxConns = 16

// Open opens the database named by dsn and applies the pending schema migrations:
//
//	sqlite:PATH              a SQLite file (created when missing), in WAL mode
//	postgres://... or postgresql://...   a PostgreSQL server (pgx)
func Open(ctx context.Context, dsn string) (*DB, error) {
	var (
		db  *sql.DB
		d   dialect
		err error
	)
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			return nil, errors.New("sqlstore: sqlite: empty path")
		}
		// _txlock=immediate: a write transaction takes the write lock when it begins, so
		// that two writers never deadlock upgrading read locks; busy_timeout makes a
		// waiting writer retry instead of failing at once.
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(30000)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		q.Add("_pragma", "foreign_keys(1)")
		// Sorts and groupings of large tables stay in memory (64 MiB of page cache per
		// connection, temporary b-trees in memory) instead of spilling to temporary files.
		q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", sqliteCacheKiB))
		q.Add("_pragma", "temp_store(MEMORY)")
		q.Set("_txlock", "immediate")
		db, err = sql.Open("sqlite", "file:"+path+"?"+q.Encode())
		d = sqliteDialect{}
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		db, err = openPostgresPool(dsn)
		d = postgresDialect{}
	default:
		return nil, fmt.Errorf("sqlstore: unsupported database %q: want sqlite:PATH or a postgres:// URL", redact(dsn))
	}
	if err != nil {
		return nil, fmt.Errorf("sqlstore: open: %w", err)
	}
	s := &DB{sql: db, d: d}
	s.keepReplaced.Store(int64(DefaultKeepReplaced))
	if err := s.connect(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlstore: connect to %s: %w", redact(dsn), err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// connectWait bounds how long connect waits for SQLite connections that other processes
// hold busy, as busy_timeout bounds a statement's wait.
const connectWait = 30 * time.Second

// connect makes the pool's first connection. A SQLite connection that finds the file
// busy while it sets its pragmas (two processes switching a new file to WAL at once,
// where SQLite answers busy at once rather than wait) tries again until connectWait.
func (db *DB) connect(ctx context.Context) error {
	deadline := time.Now().Add(connectWait)
	for {
		err := db.sql.PingContext(ctx)
		if err == nil || !db.d.retryable(err) || db.d.name() != "sqlite" || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// redact hides the password of a URL for error messages.
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		return u.Redacted()
	}
	return dsn
}

// Close closes the connection pool, and those of the read replicas.
func (db *DB) Close() error {
	err := db.sql.Close()
	if db.replicas != nil {
		err = errors.Join(err, closeReplicas(db.replicas.list))
	}
	return err
}

// SQL returns the underlying pool (the primary's, see AddReplicas), for hosts that keep
// their own tables next to kmkit's.
func (db *DB) SQL() *sql.DB { return db.sql }

// Dialect returns "sqlite" or "postgres".
func (db *DB) Dialect() string { return db.d.name() }

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one versioned schema change.
type migration struct {
	version    int
	statements []string
}

// migrations returns the embedded migrations in version order, written for d.
func migrations(d dialect) ([]migration, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		v, err := strconv.Atoi(base[:strings.IndexByte(base, '_')])
		if err != nil {
			return nil, fmt.Errorf("sqlstore: migration %s: no version number", name)
		}
		text, err := migrationFS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		m := migration{version: v}
		for _, stmt := range strings.Split(string(text), "\n--;\n") {
			if stmt = strings.TrimSpace(d.types(stmt)); stmt != "" {
				m.statements = append(m.statements, stmt)
			}
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	return out, nil
}

// migrate applies the migrations not yet recorded in kmkit_migrations, each in its own
// transaction together with its record. Replicas starting at once are safe: the insert of
// the version row waits for (or conflicts with) the replica applying it.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.sql.ExecContext(ctx, db.d.types(
		`CREATE TABLE IF NOT EXISTS kmkit_migrations (version BIGINT PRIMARY KEY, applied_us BIGINT NOT NULL)`)); err != nil {
		// PostgreSQL can fail a CREATE TABLE IF NOT EXISTS that races another one; the
		// table is there all the same.
		if _, err2 := db.sql.ExecContext(ctx, `SELECT 1 FROM kmkit_migrations WHERE 1 = 0`); err2 != nil {
			return fmt.Errorf("sqlstore: create kmkit_migrations: %w", err)
		}
	}
	ms, err := migrations(db.d)
	if err != nil {
		return err
	}
	for _, m := range ms {
		err := db.tx(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, db.d.rebind(
				`INSERT INTO kmkit_migrations (version, applied_us) VALUES (?, ?) ON CONFLICT (version) DO NOTHING`),
				m.version, time.Now().UnixMicro())
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return err // applied before
			}
			for _, stmt := range m.statements {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("%w\n%s", err, stmt)
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("sqlstore: migration %d: %w", m.version, err)
		}
	}
	return nil
}

// SchemaVersion returns the highest applied migration.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := db.sql.QueryRowContext(ctx, `SELECT max(version) FROM kmkit_migrations`).Scan(&v)
	return int(v.Int64), err
}

// querier runs statements: a pool (*sql.DB) or one of its transactions (*sql.Tx).
type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

// readTx runs f in a read-only transaction on pool that sees one snapshot of the
// database: REPEATABLE READ on PostgreSQL, and on SQLite a read transaction, one snapshot
// of the file from its first read in WAL mode (BEGIN DEFERRED: it takes no write lock).
func readTx(ctx context.Context, pool *sql.DB, d dialect, f func(*sql.Tx) error) error {
	opts := &sql.TxOptions{ReadOnly: true}
	if d.name() == "postgres" {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := pool.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// tx runs f in a transaction, committing when f returns nil. A PostgreSQL serialization
// failure or deadlock is retried a few times.
func (db *DB) tx(ctx context.Context, f func(*sql.Tx) error) error {
	for attempt := 0; ; attempt++ {
		tx, err := db.sql.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		err = f(tx)
		if err == nil {
			err = tx.Commit()
		} else {
			tx.Rollback()
		}
		if err == nil || attempt >= 5 || !db.d.retryable(err) {
			return err
		}
	}
}

// openPostgresPool opens a pool of connections to the PostgreSQL server of dsn. The pool
// is bounded: database/sql's default is unbounded, and many replicas each opening a
// connection per concurrent request would exhaust the server's max_connections (hosts
// tune it through SQL()).
//
// Each connection asks the server to check, every second while it runs a statement,
// that the connection is still open (client_connection_check_interval, PostgreSQL 14 and
// later). A request whose context ends closes its connection and sends the server a
// cancel request; should that request be lost (it travels on a connection of its own),
// the server still stops the statement within a second of the close instead of running
// it to its end.
func openPostgresPool(dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(checkClientEverySecond))
	db.SetMaxOpenConns(DefaultMaxConns)
	db.SetMaxIdleConns(DefaultMaxConns / 2)
	return db, nil
}

// checkClientEverySecond sets client_connection_check_interval on c; a server before
// PostgreSQL 14, which lacks the setting (undefined_object), runs without it.
func checkClientEverySecond(ctx context.Context, c *pgx.Conn) error {
	_, err := c.Exec(ctx, "SET client_connection_check_interval = 1000")
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "42704" {
		return nil
	}
	return err
}
