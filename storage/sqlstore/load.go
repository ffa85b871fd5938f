package sqlstore

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// ColumnDef is one column of a table that LoadTable creates.
type ColumnDef struct {
	Name string
	Type query.Type
	// NotNull declares the column NOT NULL: the rows hold no null in it (a null fails the
	// load). The translation reads it back from the catalog: a sort on such a column needs
	// no NULLS LAST, which SQLite cannot read from an ascending index.
	NotNull bool
	// RowOrdered declares that the column's values strictly ascend in row order, with no
	// null (strings in byte order): sorting by the column is sorting by RowColumn, which
	// ends every index. LoadTable records it with the import; the KM store's row pages
	// then sort by RowColumn in its place, so that an index ending with RowColumn serves a
	// sort whose ties are broken by the column (a record's key, say). It is trusted as
	// given: a column declared so that does not ascend pages in the wrong order.
	RowOrdered bool
}

// Rows yields the rows LoadTable inserts: Next advances (false at the end) and Values
// returns the current row's cells in the columns' order: nil, string, int64, float64 or
// bool. Dates are days since 1970-01-01, date-times and timestamps microseconds since the
// epoch, times microseconds since midnight (query.Value's encoding).
type Rows interface {
	Next() bool
	Values() []any
}

// sqlType returns the column type storing t.
func (db *DB) sqlType(t query.Type) string {
	switch t {
	case query.TypeString:
		return db.d.types("TEXT_C")
	case query.TypeFloat:
		if db.d.name() == "postgres" {
			return "DOUBLE PRECISION"
		}
		return "REAL"
	case query.TypeBoolean:
		return db.d.types("BOOL")
	}
	return db.d.types("BIGINT")
}

// LoadTable is LoadIndexedTable with one ascending single-column index per name in indexed.
func (db *DB) LoadTable(ctx context.Context, table string, cols []ColumnDef, rows Rows, indexed []string, digest string) error {
	indexes := make([]Index, len(indexed))
	for i, c := range indexed {
		indexes[i] = Index{Columns: []km.IndexColumn{{Field: c}}}
	}
	return db.LoadIndexedTable(ctx, table, cols, rows, indexes, digest)
}

// Index is an index LoadIndexedTable creates: its columns in order, each ascending or
// descending with nulls last (the API's order in both directions), then RowColumn
// ascending. An index serves filters on a prefix of its columns and sorts on the rest in
// its directions, its ties in row order. Read backwards, it serves the opposite
// directions too, with the ties reversed, which the database then puts back in row order
// one run of equal values at a time (PostgreSQL's incremental sort, SQLite's sort of the
// right part of the ORDER BY): cheap where values rarely repeat (NET_VALUE), a read of the
// whole first run where they do (a descending page sorted by a STATUS of five values), for
// which a record declares the column descending ([-STATUS]).
//
// A Lookup index serves equality lookups only (the key, a relationship field: the joins
// and semi-joins of filters across records): on PostgreSQL it holds no RowColumn (the
// rows of one value, a parent's children, are few to sort) and keeps PostgreSQL's
// deduplication of repeated values, which makes it smaller and faster to build.
type Index struct {
	Columns []km.IndexColumn
	Lookup  bool
}

// ddl returns the CREATE INDEX statement of idx on table for dialect d; notNull holds the
// columns declared NOT NULL.
//
// On SQLite RowColumn is the rowid, which every index entry ends with (ascending, in
// either direction of the columns), and the planner knows it: the index orders its rows
// as one ending with RowColumn would, without storing and sorting the row number twice.
// SQLite's nulls sort first, so its descending columns have them last. PostgreSQL's
// descending columns say NULLS LAST where a column can hold nulls; a NOT NULL column is
// plain DESC, as the statements sort it (see postgresDialect.sortDir), so that the index
// also serves the ascending sort read backwards.
func (idx Index) ddl(d dialect, table string, notNull map[string]bool) string {
	pg := d.name() == "postgres"
	quoted := make([]string, 0, len(idx.Columns)+1)
	for _, c := range idx.Columns {
		q := quoteIdent(c.Field)
		if c.Descending {
			q += " DESC"
			if pg && !notNull[c.Field] {
				q += " NULLS LAST"
			}
		}
		quoted = append(quoted, q)
	}
	with := ""
	switch {
	case pg && idx.Lookup:
		with = " WITH (fillfactor = 100)"
	case pg:
		quoted = append(quoted, quoteIdent(RowColumn))
		// The entries are unique (RowColumn ends them), so deduplication would only
		// compare each entry with the one before it for nothing; and the table is not
		// written to until the next import replaces it, so the pages are filled.
		with = " WITH (fillfactor = 100, deduplicate_items = off)"
	}
	return "CREATE INDEX " + quoteIdent(IndexName(table, idx.names())) + " ON " + quoteIdent(table) + " (" + strings.Join(quoted, ", ") + ")" + with
}

// names returns the index's columns as km.IndexColumn.String writes them.
func (idx Index) names() []string {
	out := make([]string, len(idx.Columns))
	for i, c := range idx.Columns {
		out[i] = c.String()
	}
	return out
}

// LoadIndexedTable loads a new generation of table with the given columns and rows, in
// one transaction that records digest for it (see Imported) and makes table a view of it
// (see "Generations and read replicas" in the package documentation); when the current
// generation of table holds digest already (loaded by another replica, say), it does
// nothing, and when a kept generation does, it makes that one current. RowColumn is added and numbered from 0 in
// the rows' order; indexes lists the indexes to create after the rows are in (see Index:
// RowColumn ends each, so that rows of one key come in row order). PostgreSQL loads with
// COPY; SQLite with prepared multi-row inserts.
func (db *DB) LoadIndexedTable(ctx context.Context, table string, cols []ColumnDef, rows Rows, indexes []Index, digest string) error {
	return db.LoadDistributedTable(ctx, table, cols, rows, indexes, Distribution{}, digest)
}

// Distribution is how a distributed database places the rows of a table (see
// km.Record.Distribution and km.Record.Reference): hash-distributed by Column, co-located
// with the other tables distributed by a column of its type, or (Reference) copied to
// every node. The zero Distribution, and any on a database without distribution, keeps the
// table on the one server.
type Distribution struct {
	Column    string
	Reference bool
}

// String returns the distribution as a definition declares it: "distribution: COL",
// "reference: true", or "".
func (d Distribution) String() string {
	switch {
	case d.Column != "":
		return "distribution: " + d.Column
	case d.Reference:
		return "reference: true"
	}
	return ""
}

// LoadDistributedTable is LoadIndexedTable placing the table as dist says when the
// database has the citus extension: create_distributed_table or create_reference_table
// after CREATE TABLE, before the rows are copied in (then COPY writes them to the shards).
// A distributed table has no primary key (Citus wants the distribution column in every
// unique key, and RowColumn alone identifies a row): RowColumn gets a plain index, which
// serves the same reads in row order. Without citus, dist changes nothing.
func (db *DB) LoadDistributedTable(ctx context.Context, table string, cols []ColumnDef, rows Rows, indexes []Index, dist Distribution, digest string) error {
	if err := db.loadGeneration(ctx, table, cols, rows, indexes, dist, digest, false); err != nil {
		return err
	}
	db.dropReplaced(ctx)
	return nil
}

// loadGeneration is LoadDistributedTable without dropReplaced; staged, it leaves the
// source's current generation as it is (see tableLoad.staged) for switchGenerations.
func (db *DB) loadGeneration(ctx context.Context, table string, cols []ColumnDef, rows Rows, indexes []Index, dist Distribution, digest string, staged bool) error {
	pg := db.d.name() == "postgres"
	if pg && len(table) > maxIdentifier {
		// The view of the source's name would be PostgreSQL's cut of it, and a first load
		// drops a table of that name: another source's, or the host's own.
		return fmt.Errorf("sqlstore: source %q is %d bytes long, and PostgreSQL cuts names to %d bytes (%q, which another table may hold): name it in %d bytes",
			table, len(table), maxIdentifier, cutIdentifier(table), maxIdentifier)
	}
	gen := generationTable(table, digest)
	ddl := []string{"DROP TABLE IF EXISTS " + quoteIdent(gen)}
	// On SQLite, INTEGER PRIMARY KEY makes RowColumn the rowid: every index then holds it,
	// in order within equal keys, so a filtered page in row order streams from the index.
	// PostgreSQL's primary key is added after the rows, as the other indexes are: one
	// sorted build instead of an index entry, and its WAL record, inserted per row.
	rowDef := quoteIdent(RowColumn) + " " + db.d.types("BIGINT") + " PRIMARY KEY"
	var after []string
	hasCitus := false
	if pg {
		var err error
		if hasCitus, err = db.HasCitus(ctx); err != nil {
			return err
		}
	}
	citus := hasCitus && dist != (Distribution{}) // the table is placed
	if pg {
		rowDef = quoteIdent(RowColumn) + " BIGINT NOT NULL"
		if citus && dist.Column != "" {
			after = append(after, "CREATE INDEX "+quoteIdent(IndexName(gen, []string{RowColumn}))+" ON "+quoteIdent(gen)+" ("+quoteIdent(RowColumn)+") WITH (fillfactor = 100, deduplicate_items = off)")
		} else {
			after = append(after, "ALTER TABLE "+quoteIdent(gen)+" ADD PRIMARY KEY ("+quoteIdent(RowColumn)+")")
		}
	}
	defs := []string{rowDef}
	names := []string{RowColumn}
	types := make([]query.Type, len(cols))
	notNull := map[string]bool{}
	var ordered []string
	for i, c := range cols {
		if c.RowOrdered {
			ordered = append(ordered, c.Name)
		}
		def := quoteIdent(c.Name) + " " + db.sqlType(c.Type)
		if c.NotNull {
			def += " NOT NULL"
		}
		defs = append(defs, def)
		names = append(names, c.Name)
		types[i] = c.Type
		notNull[c.Name] = c.NotNull
	}
	ddl = append(ddl, "CREATE TABLE "+quoteIdent(gen)+" ("+strings.Join(defs, ", ")+")")
	// COPY FREEZE writes the rows frozen into a table created in the same transaction;
	// Citus's COPY into shards takes no FREEZE.
	copyOpts := "FORMAT binary, FREEZE"
	switch {
	case citus && dist.Column != "":
		typ := ""
		for _, c := range cols {
			if c.Name == dist.Column {
				typ = db.sqlType(c.Type)
			}
		}
		if typ == "" {
			return fmt.Errorf("sqlstore: table %s has no column %s to distribute by", table, dist.Column)
		}
		anchor, err := db.colocationAnchor(ctx, typ)
		if err != nil {
			return err
		}
		ddl = append(ddl, "SELECT create_distributed_table("+quoteLiteral(quoteIdent(gen))+", "+quoteLiteral(dist.Column)+
			", colocate_with => "+quoteLiteral(quoteIdent(anchor))+")")
		copyOpts = "FORMAT binary"
	case citus && dist.Reference:
		ddl = append(ddl, "SELECT create_reference_table("+quoteLiteral(quoteIdent(gen))+")")
		copyOpts = "FORMAT binary"
	}
	for _, idx := range indexes {
		after = append(after, idx.ddl(db.d, gen, notNull))
	}
	orderedJSON := ""
	if ordered != nil {
		b, err := json.Marshal(ordered)
		if err != nil {
			return err
		}
		orderedJSON = string(b)
	}
	// The row-ordered columns are written with the digest, in the transaction that
	// creates the table, so that no reader sees a table with another's.
	l := &tableLoad{source: table, table: gen, digest: digest, ordered: orderedJSON, citus: hasCitus, staged: staged}
	defer db.loads.Add(1)
	if pg {
		return db.copyTable(ctx, l, names, types, ddl, after, rows, copyOpts)
	}
	return db.insertTable(ctx, l, names, types, ddl, after, rows)
}

// insertTable is LoadTable for SQLite: one IMMEDIATE transaction on a connection of its
// own that creates the table, inserts the rows in batches (insertBatches) and builds the
// indexes, in WAL mode with the database's synchronous setting, so that an import that
// returned survives a crash and one that did not leaves the previous table.
//
// An index build sorts every row of the table. The pool's connections keep temporary data
// in memory (temp_store=MEMORY), which makes SQLite sort a whole table as one list on one
// thread; for its index builds the import's connection sorts in runs of the cache's size
// (spilled to temporary files) on several threads and merges them (temp_store=FILE,
// threads), and restores the pool's settings afterwards. Its cache is small (2 MiB): runs
// that size sort within the processor's caches and keep the cores busy, where runs of the
// pool's 64 MiB made the index builds of the 1M-order demo a fifth slower (the inserts
// only append pages, which a small cache writes out as early).
func (db *DB) insertTable(ctx context.Context, l *tableLoad, names []string, types []query.Type, ddl, after []string, rows Rows) error {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	restore := func() error {
		for _, s := range []string{"PRAGMA temp_store = MEMORY", "PRAGMA threads = 0", fmt.Sprintf("PRAGMA cache_size = -%d", sqliteCacheKiB), "PRAGMA analysis_limit = 0"} {
			if _, err := conn.ExecContext(context.WithoutCancel(ctx), s); err != nil {
				return err
			}
		}
		return nil
	}
	defer func() {
		if restore() != nil {
			// A connection whose settings could not be restored leaves the pool.
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	for _, s := range []string{"PRAGMA temp_store = FILE", fmt.Sprintf("PRAGMA threads = %d", min(4, runtime.GOMAXPROCS(0))), fmt.Sprintf("PRAGMA cache_size = -%d", sqliteImportCacheKiB), fmt.Sprintf("PRAGMA analysis_limit = %d", sqliteAnalysisLimit)} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	// A busy database is retried, but only before the rows were read: they cannot be
	// read twice.
	for attempt := 0; ; attempt++ {
		read, err := insertTx(ctx, conn, db.d, l, names, types, ddl, after, rows)
		if err == nil || read || attempt >= 5 || !db.d.retryable(err) {
			return err
		}
	}
}

// insertTx runs the transaction of insertTable and reports whether it began reading rows.
func insertTx(ctx context.Context, conn *sql.Conn, d dialect, l *tableLoad, names []string, types []query.Type, ddl, after []string, rows Rows) (bool, error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	ltx := sqlLoadTx{tx}
	load, current, err := l.claim(ctx, ltx, d)
	if err != nil {
		return false, err
	}
	if !load {
		return false, tx.Commit()
	}
	for _, s := range ddl {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return false, err
		}
	}
	n, err := insertBatches(ctx, tx, l.table, names, types, rows)
	if err != nil {
		return true, err
	}
	for _, s := range after {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return true, err
		}
	}
	// Statistics (sqlite_stat1) for the table and its indexes, so that the planner
	// knows how many rows an equality on each index selects: without them it assumes a
	// few, and probes the index of a two-valued column for every row of an outer query.
	// The import's connection samples each index (analysis_limit), which bounds the cost
	// whatever the table's size.
	if _, err = tx.ExecContext(ctx, "ANALYZE "+quoteIdent(l.table)); err != nil {
		return true, err
	}
	if err := l.finish(ctx, ltx, d, n, current); err != nil {
		return true, err
	}
	return true, tx.Commit()
}

// IndexName is the name of the index LoadIndexedTable creates on the columns of table,
// each written as km.IndexColumn.String does: table_COL1_-COL2..., or table_idx_<hash>
// when that is longer than PostgreSQL's 63 bytes.
func IndexName(table string, cols []string) string {
	name := table + "_" + strings.Join(cols, "_")
	if len(name) <= maxIdentifier {
		return name
	}
	h := sha256.Sum256([]byte(strings.Join(cols, "\x00")))
	return table[:min(len(table), 40)] + "_idx_" + hex.EncodeToString(h[:8])
}

// maxInsertParams bounds the parameters of one SQLite insert (SQLite allows 32766), and
// maxInsertRows its rows: larger statements no longer load faster.
const (
	maxInsertParams = 32000
	maxInsertRows   = 512
)

// insertBatches inserts rows into table with prepared statements of many rows each (one
// for full batches, one for the rest) and returns how many it inserted, numbering them
// in the first column. Values of rows that are not the import's own (cellRows) are
// checked against the columns' types (SQLite would store a string in a REAL column).
//
// The rows are read into batches of arguments on another goroutine (see readBatches)
// while SQLite inserts the batch before, so that the inserting goroutine, which the
// whole load waits on, only binds and steps.
func insertBatches(ctx context.Context, tx *sql.Tx, table string, names []string, types []query.Type, rows Rows) (int64, error) {
	per := max(1, min(maxInsertRows, maxInsertParams/len(names)))
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = quoteIdent(n)
	}
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ") + ")"
	insert := func(k int) string {
		return "INSERT INTO " + quoteIdent(table) + " (" + strings.Join(quoted, ", ") + ") VALUES " +
			strings.TrimSuffix(strings.Repeat(tuple+", ", k), ", ")
	}
	full, err := tx.PrepareContext(ctx, insert(per))
	if err != nil {
		return 0, err
	}
	defer full.Close()
	batches, free, stop, done := readBatches(rows, types, per*len(names))
	defer func() {
		close(stop)
		for range batches { // let the reader finish: rows are not read after we return
		}
		<-done
	}()
	n := int64(0)
	for b := range batches {
		if b.err != nil {
			return n, b.err
		}
		stmt := full
		if k := len(b.args) / len(names); k < per {
			rest, err := tx.PrepareContext(ctx, insert(k))
			if err != nil {
				return n, err
			}
			defer rest.Close()
			stmt = rest
		}
		if _, err := stmt.ExecContext(ctx, b.args...); err != nil {
			return n, fmt.Errorf("rows %d to %d: %w", n+1, b.rows, err)
		}
		n = b.rows
		free <- b.args
	}
	return n, nil
}

// argBatch is a batch of insert arguments: the row number (nil: the next), then the
// row's values, row after row; rows is the number of rows read so far, or err why reading stopped.
type argBatch struct {
	args []any
	rows int64
	err  error
}

// readBatches reads rows into batches of size arguments on a goroutine of its own,
// sending each on batches (closed after the last) and reusing the slices sent back on
// free (two are in use at a time). Closing stop ends it early; done is closed when it has
// returned and reads rows no more.
func readBatches(rows Rows, types []query.Type, size int) (batches chan argBatch, free chan []any, stop, done chan struct{}) {
	_, checked := rows.(cellRows)
	batches, free = make(chan argBatch, 1), make(chan []any, 2)
	stop, done = make(chan struct{}), make(chan struct{})
	free <- make([]any, 0, size)
	free <- make([]any, 0, size)
	go func() {
		defer close(done)
		defer close(batches)
		n := int64(0)
		for {
			var args []any
			select {
			case args = <-free:
			case <-stop:
				return
			}
			args = args[:0]
			for len(args) < size && rows.Next() {
				vals := rows.Values()
				if !checked {
					if err := checkValues(types, vals); err != nil {
						batches <- argBatch{err: fmt.Errorf("row %d: %w", n+1, err)}
						return
					}
				}
				// Row 0 is numbered; after it SQLite numbers each row one past the
				// largest (RowColumn is the rowid), which appends it to the table
				// without the look-up of an explicit rowid, a sixth of the inserts'
				// time for the demo.
				if n == 0 {
					args = append(args, n)
				} else {
					args = append(args, nil)
				}
				args = append(args, vals...)
				n++
			}
			if len(args) > 0 {
				select {
				case batches <- argBatch{args: args, rows: n}:
				case <-stop:
					return
				}
			}
			if len(args) < size {
				return
			}
		}
	}()
	return batches, free, stop, done
}

// claimImport locks the row of a source in km_imports for the transaction and returns the
// digest it holds, so that replicas starting at once import a source once: the second waits
// for the first and then finds its digest. Every import (KM tables, reporting elements)
// claims its source this way.
const claimImport = `INSERT INTO km_imports (source, digest, rows_loaded) VALUES (?, '', 0)
	ON CONFLICT (source) DO UPDATE SET source = excluded.source RETURNING digest`

// recordImport records the digest, the row count and the row-ordered columns (a JSON
// array, or "" for none; see ColumnDef.RowOrdered) of an imported source.
const recordImport = `UPDATE km_imports SET digest = ?, rows_loaded = ?, row_ordered = ? WHERE source = ?`

// copyTable is LoadTable for PostgreSQL: one pgx transaction on a pooled connection that
// creates the table, streams the rows in COPY's binary format (encoded straight from the
// values, see copyReader), builds the indexes and gathers the planner's statistics.
//
// COPY ... FREEZE writes the rows already frozen and marks the pages all-visible (the
// table is created in the same transaction, which FREEZE requires), so that neither a later
// VACUUM rewrites every page nor index-only scans wait for one. The table is an ordinary,
// WAL-logged table from the start: an import the server has acknowledged survives a crash.
// (Loading UNLOGGED and then SET LOGGED would not save the logging: SET LOGGED rewrites and
// logs the whole table again unless wal_level is minimal.)
func (db *DB) copyTable(ctx context.Context, l *tableLoad, names []string, types []query.Type, ddl, after []string, rows Rows, copyOpts string) error {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		tx, err := pc.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		if l.citus {
			// The coordinator holds a placement of every reference table: executed
			// locally, a drop (of a table loaded before generations, by the claim) or a
			// creation would forbid the COPY that follows in the transaction.
			if _, err := tx.Exec(ctx, "SET LOCAL citus.enable_local_execution = off"); err != nil {
				return err
			}
			// Citus places, and drops, a table with locks on the tables of its
			// colocation group (every reference table is in one): two loads that place
			// or drop tables at once deadlock. The loads take turns, across processes,
			// each for its whole transaction, from before the claim (which may drop a
			// table loaded before generations).
			if _, err := tx.Exec(ctx, takePlacementTurn); err != nil {
				return err
			}
		}
		ltx := pgxLoadTx{tx}
		load, current, err := l.claim(ctx, ltx, db.d)
		if err != nil {
			return err
		}
		if !load {
			return tx.Commit(ctx)
		}
		for _, s := range ddl {
			if _, err := tx.Exec(ctx, s); err != nil {
				return err
			}
		}
		// Each index build sorts in one process, in runs of 32 MB merged at the end:
		// the loads of ParallelLoads tables at once keep the cores busy, and runs that
		// size sort within the processor's caches. Measured on the 1M-order demo, two
		// cores, alternating runs: 27-29 s and 40 s of server CPU, against 31 s and 45 s
		// with the server's default (64 MB, one parallel worker) and 31 s with 256 MB
		// (two workers); 256 MB without workers was slower still.
		for _, set := range []string{"SET LOCAL maintenance_work_mem = '32MB'", "SET LOCAL max_parallel_maintenance_workers = 0"} {
			if _, err := tx.Exec(ctx, set); err != nil {
				return err
			}
		}
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = quoteIdent(n)
		}
		src := newCopyReader(types, rows)
		tag, err := tx.Conn().PgConn().CopyFrom(ctx, src,
			"COPY "+quoteIdent(l.table)+" ("+strings.Join(quoted, ", ")+") FROM STDIN ("+copyOpts+")")
		if err != nil {
			return err
		}
		for _, s := range after {
			if _, err := tx.Exec(ctx, s); err != nil {
				return err
			}
		}
		// Statistics now, so that the first queries are planned for the rows loaded
		// rather than for an empty table (autovacuum would gather them later).
		if _, err := tx.Exec(ctx, "ANALYZE "+quoteIdent(l.table)); err != nil {
			return err
		}
		if err := l.finish(ctx, ltx, db.d, tag.RowsAffected(), current); err != nil {
			return err
		}
		return tx.Commit(ctx)
	})
}

// CurrentTable returns the table holding the current generation of source (see
// "Generations and read replicas" in the package documentation), or "" when no load made
// one: where a DBA adds an index of the host's own (which the next load of a changed
// source does not carry over).
func (db *DB) CurrentTable(ctx context.Context, source string) (string, error) {
	var table string
	err := db.sql.QueryRowContext(ctx, db.d.rebind(`SELECT table_name FROM km_imports WHERE source = ?`), source).Scan(&table)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return table, err
}

// Imported returns the digest recorded when table was last loaded, or "".
func (db *DB) Imported(ctx context.Context, table string) (string, error) {
	var digest string
	err := db.sql.QueryRowContext(ctx, db.d.rebind(`SELECT digest FROM km_imports WHERE source = ?`), table).Scan(&digest)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return digest, err
}

// tableRows yields the rows of a column.Table, as query.Values (Cells) or as Values.
type tableRows struct {
	cols  []column.Column
	n, i  int
	cells []query.Value
	vals  []any
}

func (r *tableRows) Next() bool {
	if r.i >= r.n {
		return false
	}
	for j, c := range r.cols {
		r.cells[j] = c.Value(r.i)
	}
	r.i++
	return true
}

// Cells returns the current row.
func (r *tableRows) Cells() []query.Value { return r.cells }

// Values returns the current row as Rows promises.
func (r *tableRows) Values() []any {
	for j, v := range r.cells {
		switch {
		case v.Null:
			r.vals[j] = nil
		case v.Type == query.TypeString:
			r.vals[j] = v.Str
		case v.Type == query.TypeFloat:
			r.vals[j] = v.Float
		case v.Type == query.TypeBoolean:
			r.vals[j] = v.Bool
		default:
			r.vals[j] = v.Int
		}
	}
	return r.vals
}

// Import loads a data directory, models/*.yaml (km.Load) and data/<source>.csv per record
// source, into the database and registers its KMs. A source whose file, columns and
// indexes are unchanged since it was last imported (same SHA-256 digest) is not loaded
// again, so Import is idempotent and cheap on restart; a changed one is loaded into a new
// generation table in one transaction, and the store reads the generations it loaded or
// found, whatever later imports of other stores replace. The import is all or nothing:
// the generations of all its sources become current at once, in one transaction after
// the last load, so that an import that fails (a file refused, its context ended) changes
// nothing that other server processes or a host's SQL see (see importWhole). The table of
// a source gets RowColumn (the CSV row order) and the indexes of sourceIndexes.
func (s *KMStore) Import(ctx context.Context, fsys fs.FS) error {
	models, err := km.Load(fsys)
	if err != nil {
		return err
	}
	srcs, err := sourceSchemas(models)
	if err != nil {
		return err
	}
	// The sources whose digest changed, found by hashing the files (cheap next to parsing
	// and loading them).
	var (
		stale []source
		sizes = map[string]int64{}
		gens  = tableNames{} // the generation tables served
	)
	for _, src := range srcs {
		name := "data/" + src.name + ".csv"
		h := src.hash()
		size, err := hashFile(h, fsys, name)
		if err != nil {
			return fmt.Errorf("sqlstore: the data of source %s: %w", src.name, err)
		}
		gens[src.name] = generationTable(src.name, hex.EncodeToString(h.Sum(nil)))
		if cur, err := s.db.CurrentTable(ctx, src.name); err != nil {
			return err
		} else if cur != gens[src.name] {
			stale = append(stale, src)
			sizes[src.name] = size
		}
	}
	return s.importWhole(ctx, models, srcs, gens, stale, func(ctx context.Context, stale []source) error {
		largestFirst(stale, func(src source) int64 { return sizes[src.name] })
		digests := make([]string, len(stale))
		err := s.loadSources(ctx, len(stale), func(i int) (*column.Table, error) {
			name := "data/" + stale[i].name + ".csv"
			data, err := fs.ReadFile(fsys, name)
			if err != nil {
				return nil, fmt.Errorf("sqlstore: the data of source %s: %w", stale[i].name, err)
			}
			digests[i] = stale[i].digest(data)
			t, err := column.LoadCSV(bytes.NewReader(data), stale[i].schema)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			return t, nil
		}, func(ctx context.Context, i int, t *column.Table) error {
			if err := s.loadTable(ctx, stale[i], t, digests[i]); err != nil {
				return fmt.Errorf("sqlstore: import data/%s.csv: %w", stale[i].name, err)
			}
			return nil
		})
		// A file that changed since it was hashed (written while a reload began) was
		// loaded with the digest of its new data, which becomes current.
		for i, src := range stale {
			if digests[i] != "" {
				gens[src.name] = generationTable(src.name, digests[i])
			}
		}
		return err
	})
}

// hashFile writes the file name of fsys into h and returns its size.
func hashFile(h hash.Hash, fsys fs.FS, name string) (int64, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(h, f)
}

// largestFirst orders sources by the work of loading them, the most first (ties keep
// their order): size(src) measures the data (bytes of a file, or cells of a table) and
// each index costs about as much again as the rows (an index build reads and sorts them
// all). With several loads at once (PostgreSQL), the longest starts first instead of
// last, so that the import does not end waiting for one table while the other
// connections are idle.
func largestFirst(srcs []source, size func(source) int64) {
	work := func(src source) int64 { return size(src) * int64(1+len(src.indexes)) }
	slices.SortStableFunc(srcs, func(a, b source) int { return cmp.Compare(work(b), work(a)) })
}

// loadSources loads n sources: prepare(i) makes the table of source i (parsing its file,
// say) and load(i) loads it, in the order of i (see largestFirst). Preparing runs one
// source ahead of the loads, on another core. On SQLite (one writer at a time) the loads
// run one after the other; on PostgreSQL up to ParallelLoads at once, each in its own
// transaction on its own connection, so that the server copies and indexes several tables
// on several cores. The first error stops the rest: a source that fails to prepare (a
// broken CSV file) lets the loads under way finish, a failed load cancels them; the
// sources already loaded stay staged (each is its own transaction, not current: see
// importWhole), and a rerun finds them by their digest.
func (s *KMStore) loadSources(ctx context.Context, n int, prepare func(i int) (*column.Table, error), load func(ctx context.Context, i int, t *column.Table) error) error {
	workers := 1
	if s.db.d.name() == "postgres" {
		workers = ParallelLoads
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		loaded   int
	)
	// fail records the first error; a failed load cancels the loads under way, a failed
	// preparation only stops the next ones (the sources before it stay imported).
	fail := func(err error, stop bool) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
			if stop {
				cancel()
			}
		}
	}
	type ready struct {
		i int
		t *column.Table
	}
	ch := make(chan ready)
	go func() {
		defer close(ch)
		for i := range n {
			t, err := prepare(i)
			if err != nil {
				fail(err, false)
				return
			}
			select {
			case ch <- ready{i, t}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for r := range ch {
				if ctx.Err() != nil {
					continue // drain: the producer stops at the cancellation
				}
				if err := load(ctx, r.i, r.t); err != nil {
					fail(err, true)
					continue
				}
				mu.Lock()
				loaded++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr == nil && loaded < n {
		return ctx.Err()
	}
	return firstErr
}

// ParallelLoads is how many tables an import loads at once into PostgreSQL.
const ParallelLoads = 3

// ImportTables is Import for data already in memory: the tables of the models' sources,
// each holding (at least) the fields of the records using it. version identifies the
// data (for example how it was generated): a source already imported with the same
// version, columns and indexes is not loaded again.
func (s *KMStore) ImportTables(ctx context.Context, models []*km.KnowledgeModel, tables map[string]*column.Table, version string) error {
	_, err := s.ImportGenerated(ctx, models, version, func() (map[string]*column.Table, error) { return tables, nil })
	return err
}

// ImportGenerated is ImportTables for generated data: generate is called only when some
// source of the models is not in the database with this version (a fingerprint of the
// generator's parameters, such as "demo-rows=1000000"), columns and indexes, so that a
// restart neither generates nor loads anything. It reports whether it called generate.
func (s *KMStore) ImportGenerated(ctx context.Context, models []*km.KnowledgeModel, version string, generate func() (map[string]*column.Table, error)) (bool, error) {
	srcs, err := sourceSchemas(models)
	if err != nil {
		return false, err
	}
	var stale []source
	gens := tableNames{} // the generation tables served
	for _, src := range srcs {
		gens[src.name] = generationTable(src.name, src.digest([]byte(version)))
		if cur, err := s.db.CurrentTable(ctx, src.name); err != nil {
			return false, err
		} else if cur != gens[src.name] {
			stale = append(stale, src)
		}
	}
	generated := len(stale) > 0
	var tables map[string]*column.Table
	if generated {
		if tables, err = generate(); err != nil {
			return true, err
		}
	}
	err = s.importWhole(ctx, models, srcs, gens, stale, func(ctx context.Context, stale []source) error {
		if tables == nil {
			// A generation that was current when the import began was collected
			// since: the data are generated after all.
			var err error
			if tables, err = generate(); err != nil {
				return err
			}
			generated = true
		}
		largestFirst(stale, func(src source) int64 {
			if t, ok := tables[src.name]; ok {
				return int64(t.Rows()) * int64(len(src.schema))
			}
			return 0
		})
		return s.loadSources(ctx, len(stale), func(i int) (*column.Table, error) {
			t, ok := tables[stale[i].name]
			if !ok {
				return nil, fmt.Errorf("sqlstore: no table for source %s", stale[i].name)
			}
			return t, nil
		}, func(ctx context.Context, i int, t *column.Table) error {
			if err := s.loadTable(ctx, stale[i], t, stale[i].digest([]byte(version))); err != nil {
				return fmt.Errorf("sqlstore: import %s: %w", stale[i].name, err)
			}
			return nil
		})
	})
	return generated, err
}

// importWhole makes an import's generations (gens, one per source of srcs) current all at
// once, with the import's models: load loads the stale sources into generation tables
// that are not current yet (staged; it may correct gens for data that changed since they
// were hashed), and then one transaction checks the models against those tables
// (checkModel) and makes every source of the import current (DB.switchGenerations), the
// unchanged ones too, so that another import that committed meanwhile leaves no mix of
// its sources and this one's. An import that fails or ends before that changes nothing
// any reader sees; the tables it loaded are kept as replaced generations are (see
// stage): the import run again finds them and does not load them again. Once the switch
// has committed, the import has taken effect and nothing fails it: the store reads the
// new tables and serves the models, and the replaced generations are collected as far as
// they can be (dropReplaced). A source whose generation table another process collected
// meanwhile (its KeepReplaced shorter than this import) is loaded again, a few times at
// most.
func (s *KMStore) importWhole(ctx context.Context, models []*km.KnowledgeModel, srcs []source, gens tableNames, stale []source, load func(ctx context.Context, stale []source) error) error {
	byName := make(map[string]source, len(srcs))
	for _, src := range srcs {
		byName[src.name] = src
	}
	check := func(ctx context.Context, q querier) error {
		// The targets the loads checked, as setTables records them.
		known := map[uniqueField]bool{}
		for _, src := range srcs {
			for _, rel := range src.targets {
				known[uniqueField{gens.of(src.name), rel.To.Field}] = true
			}
		}
		for _, m := range models {
			if err := s.checkModel(ctx, q, m, gens, known); err != nil {
				return err
			}
		}
		return nil
	}
	done := func() {
		s.setTables(gens, srcs)
		s.registerModels(models)
	}
	if len(stale) == 0 {
		// Every source was current at its check: the import changes no table (an import
		// that committed since is current whole, as the last to commit).
		if err := check(ctx, s.db.sql); err != nil {
			return err
		}
		done()
		return nil
	}
	for attempt := 0; ; attempt++ {
		if err := load(ctx, stale); err != nil {
			return err
		}
		all := make([]generation, 0, len(srcs))
		for _, src := range srcs {
			all = append(all, generation{source: src.name, table: gens[src.name]})
		}
		missing, err := s.db.switchGenerations(ctx, all, check)
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			done()
			s.db.dropReplaced(ctx)
			return nil
		}
		stale = stale[:0:0]
		var tables []string
		for _, g := range missing {
			stale = append(stale, byName[g.source])
			tables = append(tables, g.table)
		}
		if attempt >= 2 {
			return fmt.Errorf("sqlstore: the generation tables %s were dropped by other server processes while this import loaded them, %d times: their KeepReplaced (SetKeepReplaced) is shorter than this import takes",
				strings.Join(tables, ", "), attempt+1)
		}
	}
}

// source is one table to import: the fields it must hold (the union over the records
// using it) and its indexes.
type source struct {
	name    string
	schema  column.Schema
	indexes []Index
	dist    Distribution
	// targets are the relationships whose To field is one of the source's, one per field
	// (the first by field, then From), whose data must hold each value at most once.
	targets []km.Relationship
}

// sourceSchemas returns the sources of the models' records in name order. Two records
// giving one field different types is an error.
//
// The indexes of a source are, over the records using it, the indexes the records declare
// (km.Record.Indexes) and a Lookup index on the key and on every field of a relationship,
// unless a declared index begins with that field already (it serves the lookups). When no
// record of the source declares indexes, every field gets an ascending single-column index
// instead, so that definitions written before indexes: keep the indexes they had.
func sourceSchemas(models []*km.KnowledgeModel) ([]source, error) {
	bySource := map[string]*source{}
	declared := map[string][]km.Index{}
	lookups := map[string][]string{} // the keys and relationship fields
	targets := map[string][]km.Relationship{}
	var names []string
	for _, m := range models {
		onRecord := map[string][]string{}
		for _, rel := range m.Relationships {
			onRecord[rel.From.Record] = append(onRecord[rel.From.Record], rel.From.Field)
			onRecord[rel.To.Record] = append(onRecord[rel.To.Record], rel.To.Field)
		}
		for _, r := range m.Records {
			src := bySource[r.Source]
			if src == nil {
				src = &source{name: r.Source, schema: column.Schema{}}
				bySource[r.Source] = src
				names = append(names, r.Source)
			}
			for _, f := range r.Fields {
				if t, ok := src.schema[f.ID]; ok && t != f.Type {
					return nil, fmt.Errorf("sqlstore: source %s: field %s is %s in one record and %s in another (KM %s, record %s)",
						r.Source, f.ID, t, f.Type, m.ID, r.ID)
				}
				src.schema[f.ID] = f.Type
			}
			if r.Key != "" {
				lookups[r.Source] = append(lookups[r.Source], r.Key)
			}
			lookups[r.Source] = append(lookups[r.Source], onRecord[r.ID]...)
			for _, rel := range m.Relationships {
				if rel.To.Record == r.ID {
					targets[r.Source] = append(targets[r.Source], rel)
				}
			}
			declared[r.Source] = append(declared[r.Source], r.Indexes...)
			if d := (Distribution{Column: r.Distribution, Reference: r.Reference}); d != (Distribution{}) {
				if src.dist != (Distribution{}) && src.dist != d {
					return nil, fmt.Errorf("sqlstore: source %s: one record declares %s and another %s (KM %s, record %s)",
						r.Source, src.dist, d, m.ID, r.ID)
				}
				src.dist = d
			}
		}
	}
	slices.Sort(names)
	out := make([]source, 0, len(names))
	for _, name := range names {
		src := bySource[name]
		src.targets = targets[name]
		slices.SortFunc(src.targets, func(a, b km.Relationship) int {
			return cmp.Or(strings.Compare(a.To.Field, b.To.Field), strings.Compare(a.From.String(), b.From.String()))
		})
		src.targets = slices.CompactFunc(src.targets, func(a, b km.Relationship) bool { return a.To.Field == b.To.Field })
		if len(declared[name]) == 0 {
			for _, c := range sortedColumns(src.schema) {
				src.indexes = append(src.indexes, Index{Columns: []km.IndexColumn{{Field: c.Name}}})
			}
			out = append(out, *src)
			continue
		}
		covered := map[string]bool{}
		for _, idx := range declared[name] {
			src.indexes = append(src.indexes, Index{Columns: idx})
			covered[idx[0].Field] = true
		}
		for _, f := range lookups[name] {
			if !covered[f] {
				src.indexes = append(src.indexes, Index{Columns: []km.IndexColumn{{Field: f}}, Lookup: true})
			}
		}
		// One index per list of columns, in a stable order.
		slices.SortFunc(src.indexes, func(a, b Index) int {
			return slices.CompareFunc(a.Columns, b.Columns, func(x, y km.IndexColumn) int { return strings.Compare(x.String(), y.String()) })
		})
		src.indexes = slices.CompactFunc(src.indexes, func(a, b Index) bool { return slices.Equal(a.Columns, b.Columns) })
		out = append(out, *src)
	}
	return out, nil
}

// hasNull reports whether a column holds a null.
func hasNull(c column.Column) bool {
	var nulls column.Bitmap
	switch c := c.(type) {
	case *column.Strings:
		nulls = c.Nulls
	case *column.Int64s:
		nulls = c.Nulls
	case *column.Float64s:
		nulls = c.Nulls
	case *column.Bools:
		nulls = c.Nulls
	}
	return slices.ContainsFunc(nulls, func(w uint64) bool { return w != 0 })
}

// ascends reports whether the values of a column without nulls strictly ascend in row
// order, as the database orders them (strings byte by byte; integers, dates and times as
// their integers). Floats and booleans are left out: there the answer is rarely yes.
func ascends(c column.Column) bool {
	switch c := c.(type) {
	case *column.Strings:
		for i := 1; i < c.Codes.Len(); i++ {
			if c.Dict[c.Codes.At(i-1)] >= c.Dict[c.Codes.At(i)] {
				return false
			}
		}
		return true
	case *column.Int64s:
		for i := 1; i < len(c.Vals); i++ {
			if c.Vals[i-1] >= c.Vals[i] {
				return false
			}
		}
		return true
	}
	return false
}

// sortedColumns returns the columns of a schema by name.
func sortedColumns(sc column.Schema) []ColumnDef {
	cols := make([]ColumnDef, 0, len(sc))
	for f, t := range sc {
		cols = append(cols, ColumnDef{Name: f, Type: t})
	}
	slices.SortFunc(cols, func(a, b ColumnDef) int { return strings.Compare(a.Name, b.Name) })
	return cols
}

// digest identifies a source's columns, indexes and data.
func (src source) digest(data []byte) string {
	h := src.hash()
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// hash returns the hash of digest with the columns and indexes written, for the data.
func (src source) hash() hash.Hash {
	h := sha256.New()
	// The table's form: the columns without nulls are declared NOT NULL (since this
	// line; a table imported before is loaded again once).
	fmt.Fprintf(h, "columns without nulls: NOT NULL\n")
	for _, c := range sortedColumns(src.schema) {
		fmt.Fprintf(h, "%s:%s\n", c.Name, c.Type)
	}
	for _, idx := range src.indexes {
		kind := "index"
		if idx.Lookup {
			kind = "lookup index"
		}
		fmt.Fprintf(h, "%s:%s\n", kind, strings.Join(idx.names(), ","))
	}
	if d := src.dist.String(); d != "" {
		// Only when declared, so that the tables of definitions without one keep their
		// digests.
		fmt.Fprintf(h, "%s\n", d)
	}
	// The fields checked unique (relationship targets): a field that becomes a target is
	// checked, so its table is loaded again even where its indexes stay the same (and a
	// table imported before the check is loaded again once).
	for _, rel := range src.targets {
		fmt.Fprintf(h, "unique:%s\n", rel.To.Field)
	}
	return h
}

// loadTable loads the source's columns of t as its table, with its indexes. Data whose
// relationship target holds a value twice (km.CheckTarget) is refused before the database
// sees it.
func (s *KMStore) loadTable(ctx context.Context, src source, t *column.Table, digest string) error {
	cols := sortedColumns(src.schema)
	rows := &tableRows{n: t.Rows(), cells: make([]query.Value, len(cols)), vals: make([]any, len(cols))}
	for _, c := range cols {
		col, ok := t.Column(c.Name)
		if !ok {
			return fmt.Errorf("the table has no column %s", c.Name)
		}
		if col.Type() != c.Type {
			return fmt.Errorf("column %s is %s, the field is %s", c.Name, col.Type(), c.Type)
		}
		rows.cols = append(rows.cols, col)
	}
	for _, rel := range src.targets {
		col, _ := t.Column(rel.To.Field) // one of the columns checked above
		if err := km.CheckTarget(rel, col); err != nil {
			return err
		}
	}
	for i, col := range rows.cols {
		cols[i].NotNull = !hasNull(col)
		cols[i].RowOrdered = cols[i].NotNull && ascends(col)
		if cols[i].Name == src.dist.Column && !cols[i].NotNull {
			if citus, err := s.db.HasCitus(ctx); err != nil {
				return err
			} else if citus {
				return fmt.Errorf("the distribution field %s has empty values: a distributed table holds no row without one (distribute the record by another field, or declare it reference: true)", cols[i].Name)
			}
		}
	}
	return s.db.loadGeneration(ctx, src.name, cols, rows, src.indexes, src.dist, digest, true)
}
