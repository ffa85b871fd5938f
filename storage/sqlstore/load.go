package sqlstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// Column is one column of a table that LoadTable creates.
type Column struct {
	Name string
	Type query.Type
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
func (db *DB) LoadTable(ctx context.Context, table string, cols []Column, rows Rows, indexed []string, digest string) error {
	indexes := make([]Index, len(indexed))
	for i, c := range indexed {
		indexes[i] = Index{Columns: []string{c}}
	}
	return db.LoadIndexedTable(ctx, table, cols, rows, indexes, digest)
}

// Index is an index LoadIndexedTable creates: its columns in order, every one ascending
// with nulls last or, when Descending, every one descending with nulls last, then
// RowColumn ascending. An ascending index serves filters on a prefix of its columns and
// sorts on the rest in ascending order; its descending twin serves the same filters with
// the sorts descending, the API's nulls-last order in both directions (PostgreSQL reads an
// ascending index backwards only as DESC NULLS FIRST, with the row order reversed too).
type Index struct {
	Columns    []string
	Descending bool
}

// ddl returns the CREATE INDEX statement of idx on table for dialect d.
func (idx Index) ddl(d dialect, table string) string {
	dir := ""
	if idx.Descending {
		dir = " DESC" // SQLite sorts nulls first, so its descending order has them last
		if d.name() == "postgres" {
			dir = " DESC NULLS LAST"
		}
	}
	quoted := make([]string, 0, len(idx.Columns)+1)
	for _, c := range idx.Columns {
		quoted = append(quoted, quoteIdent(c)+dir)
	}
	quoted = append(quoted, quoteIdent(RowColumn))
	name := IndexName(table, idx.Columns)
	if idx.Descending {
		name = IndexName(table, append(slices.Clone(idx.Columns), "desc"))
	}
	return "CREATE INDEX " + quoteIdent(name) + " ON " + quoteIdent(table) + " (" + strings.Join(quoted, ", ") + ")"
}

// LoadIndexedTable replaces table with the given columns and rows, in one transaction,
// and records digest for it (see Imported); when the table was loaded with digest already
// (by another replica, say), it does nothing. RowColumn is added and numbered from 0 in
// the rows' order; indexes lists the indexes to create after the rows are in (see Index:
// RowColumn is appended to each, so that rows of one key come in row order). PostgreSQL loads with COPY; SQLite with prepared multi-row inserts.
func (db *DB) LoadIndexedTable(ctx context.Context, table string, cols []Column, rows Rows, indexes []Index, digest string) error {
	ddl := []string{"DROP TABLE IF EXISTS " + quoteIdent(table)}
	// On SQLite, INTEGER PRIMARY KEY makes RowColumn the rowid: every index then holds it,
	// in order within equal keys, so a filtered page in row order streams from the index.
	defs := []string{quoteIdent(RowColumn) + " " + db.d.types("BIGINT") + " PRIMARY KEY"}
	names := []string{RowColumn}
	for _, c := range cols {
		defs = append(defs, quoteIdent(c.Name)+" "+db.sqlType(c.Type))
		names = append(names, c.Name)
	}
	ddl = append(ddl, "CREATE TABLE "+quoteIdent(table)+" ("+strings.Join(defs, ", ")+")")
	var after []string
	for _, idx := range indexes {
		after = append(after, idx.ddl(db.d, table))
	}
	record := db.d.rebind(recordImport)
	claim := db.d.rebind(claimImport)
	if db.d.name() == "postgres" {
		return db.copyTable(ctx, table, names, ddl, after, rows, claim, record, digest)
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		var current string
		if err := tx.QueryRowContext(ctx, claim, table).Scan(&current); err != nil {
			return err
		}
		if current == digest {
			return nil
		}
		for _, s := range ddl {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		n, err := insertBatches(ctx, tx, table, names, rows)
		if err != nil {
			return err
		}
		for _, s := range after {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, record, digest, n, table)
		return err
	})
}

// IndexName is the name of the index LoadIndexedTable creates on the columns of table:
// table_COL1_COL2..., or table_idx_<hash> when that is longer than PostgreSQL's 63 bytes.
func IndexName(table string, cols []string) string {
	name := table + "_" + strings.Join(cols, "_")
	if len(name) <= 63 {
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
// in the first column.
func insertBatches(ctx context.Context, tx *sql.Tx, table string, names []string, rows Rows) (int64, error) {
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
	args := make([]any, 0, per*len(names))
	n := int64(0)
	flush := func(stmt *sql.Stmt) error {
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("rows %d to %d: %w", n-int64(len(args)/len(names))+1, n, err)
		}
		args = args[:0]
		return nil
	}
	for rows.Next() {
		args = append(args, n)
		args = append(args, rows.Values()...)
		n++
		if len(args) == cap(args) {
			if err := flush(full); err != nil {
				return n, err
			}
		}
	}
	if len(args) > 0 {
		rest, err := tx.PrepareContext(ctx, insert(len(args)/len(names)))
		if err != nil {
			return n, err
		}
		defer rest.Close()
		if err := flush(rest); err != nil {
			return n, err
		}
	}
	return n, nil
}

// claimImport locks the row of a source in km_imports for the transaction and returns the
// digest it holds, so that replicas starting at once import a source once: the second waits
// for the first and then finds its digest. Every import (KM tables, reporting elements)
// claims its source this way.
const claimImport = `INSERT INTO km_imports (source, digest, rows_loaded) VALUES (?, '', 0)
	ON CONFLICT (source) DO UPDATE SET source = excluded.source RETURNING digest`

// recordImport records the digest and row count of an imported source.
const recordImport = `UPDATE km_imports SET digest = ?, rows_loaded = ? WHERE source = ?`

// copyTable is LoadTable for PostgreSQL: one pgx transaction on a pooled connection.
func (db *DB) copyTable(ctx context.Context, table string, names, ddl, after []string, rows Rows, claim, record, digest string) error {
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
		var current string
		if err := tx.QueryRow(ctx, claim, table).Scan(&current); err != nil {
			return err
		}
		if current == digest {
			return tx.Commit(ctx)
		}
		for _, s := range ddl {
			if _, err := tx.Exec(ctx, s); err != nil {
				return err
			}
		}
		// Index builds sort in memory up to maintenance_work_mem (64 MB by default).
		if _, err := tx.Exec(ctx, "SET LOCAL maintenance_work_mem = '256MB'"); err != nil {
			return err
		}
		n := int64(0)
		row := make([]any, len(names))
		src := pgx.CopyFromFunc(func() ([]any, error) {
			if !rows.Next() {
				return nil, nil
			}
			row[0] = n
			copy(row[1:], rows.Values())
			n++
			return row, nil
		})
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{table}, names, src); err != nil {
			return err
		}
		for _, s := range after {
			if _, err := tx.Exec(ctx, s); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, record, digest, n, table); err != nil {
			return err
		}
		return tx.Commit(ctx)
	})
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

// tableRows yields the rows of a column.Table.
type tableRows struct {
	cols []column.Column
	n, i int
	vals []any
}

func (r *tableRows) Next() bool {
	if r.i >= r.n {
		return false
	}
	for j, c := range r.cols {
		v := c.Value(r.i)
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
	r.i++
	return true
}

func (r *tableRows) Values() []any { return r.vals }

// Import loads a data directory, models/*.yaml (km.Load) and data/<source>.csv per record
// source, into the database and registers its KMs. A source whose file, columns and
// indexes are unchanged since it was last imported (same SHA-256 digest) is not loaded
// again, so Import is idempotent and cheap on restart; a changed one is replaced in one
// transaction. The table of a source gets RowColumn (the CSV row order) and the indexes
// of sourceIndexes.
func (s *KMStore) Import(ctx context.Context, fsys fs.FS) error {
	models, err := km.Load(fsys)
	if err != nil {
		return err
	}
	srcs, err := sourceSchemas(models)
	if err != nil {
		return err
	}
	for _, src := range srcs {
		name := "data/" + src.name + ".csv"
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return fmt.Errorf("sqlstore: the data of source %s: %w", src.name, err)
		}
		digest := src.digest(data)
		if old, err := s.db.Imported(ctx, src.name); err != nil {
			return err
		} else if old == digest {
			continue
		}
		t, err := column.LoadCSV(bytes.NewReader(data), src.schema)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := s.loadTable(ctx, src, t, digest); err != nil {
			return fmt.Errorf("sqlstore: import %s: %w", name, err)
		}
	}
	return s.putModels(ctx, models)
}

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
	for _, src := range srcs {
		if old, err := s.db.Imported(ctx, src.name); err != nil {
			return false, err
		} else if old != src.digest([]byte(version)) {
			stale = append(stale, src)
		}
	}
	if len(stale) > 0 {
		tables, err := generate()
		if err != nil {
			return true, err
		}
		for _, src := range stale {
			t, ok := tables[src.name]
			if !ok {
				return true, fmt.Errorf("sqlstore: no table for source %s", src.name)
			}
			if err := s.loadTable(ctx, src, t, src.digest([]byte(version))); err != nil {
				return true, fmt.Errorf("sqlstore: import %s: %w", src.name, err)
			}
		}
	}
	return len(stale) > 0, s.putModels(ctx, models)
}

func (s *KMStore) putModels(ctx context.Context, models []*km.KnowledgeModel) error {
	for _, m := range models {
		if err := s.PutModel(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// source is one table to import: the fields it must hold (the union over the records
// using it) and its indexes.
type source struct {
	name    string
	schema  column.Schema
	indexes [][]string
	// descending are the indexes created a second time, every column descending: the
	// declared ones, whose columns the KM sorts on in either direction.
	descending [][]string
}

// sourceSchemas returns the sources of the models' records in name order. Two records
// giving one field different types is an error.
//
// The indexes of a source are, over the records using it: the key, every field of a
// relationship, and the indexes the records declare (km.Record.Indexes). When no record
// of the source declares indexes, every field gets a single-column index instead, so that
// definitions written before indexes: keep the indexes they had. Each declared index is
// also created descending (source.descending), so that sorts in either direction read it
// in order.
func sourceSchemas(models []*km.KnowledgeModel) ([]source, error) {
	bySource := map[string]*source{}
	declared := map[string]bool{}
	fields := map[string][]string{} // single-column candidates: keys and relationship fields
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
				fields[r.Source] = append(fields[r.Source], r.Key)
			}
			fields[r.Source] = append(fields[r.Source], onRecord[r.ID]...)
			if len(r.Indexes) > 0 {
				declared[r.Source] = true
			}
			src.indexes = append(src.indexes, r.Indexes...)
			src.descending = append(src.descending, r.Indexes...)
		}
	}
	slices.Sort(names)
	out := make([]source, 0, len(names))
	for _, name := range names {
		src := bySource[name]
		if declared[name] {
			for _, f := range fields[name] {
				src.indexes = append(src.indexes, []string{f})
			}
		} else {
			for _, c := range sortedColumns(src.schema) {
				src.indexes = append(src.indexes, []string{c.Name})
			}
		}
		// One index per list of columns, in a stable order.
		slices.SortFunc(src.indexes, func(a, b []string) int { return slices.Compare(a, b) })
		src.indexes = slices.CompactFunc(src.indexes, slices.Equal)
		slices.SortFunc(src.descending, func(a, b []string) int { return slices.Compare(a, b) })
		src.descending = slices.CompactFunc(src.descending, slices.Equal)
		out = append(out, *src)
	}
	return out, nil
}

// sortedColumns returns the columns of a schema by name.
func sortedColumns(sc column.Schema) []Column {
	cols := make([]Column, 0, len(sc))
	for f, t := range sc {
		cols = append(cols, Column{Name: f, Type: t})
	}
	slices.SortFunc(cols, func(a, b Column) int { return strings.Compare(a.Name, b.Name) })
	return cols
}

// digest identifies a source's columns, indexes and data.
func (src source) digest(data []byte) string {
	h := sha256.New()
	for _, c := range sortedColumns(src.schema) {
		fmt.Fprintf(h, "%s:%s\n", c.Name, c.Type)
	}
	for _, idx := range src.indexes {
		fmt.Fprintf(h, "index:%s\n", strings.Join(idx, ","))
	}
	for _, idx := range src.descending {
		fmt.Fprintf(h, "index desc:%s\n", strings.Join(idx, ","))
	}
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// loadTable loads the source's columns of t as its table, with its indexes.
func (s *KMStore) loadTable(ctx context.Context, src source, t *column.Table, digest string) error {
	cols := sortedColumns(src.schema)
	rows := &tableRows{n: t.Rows(), vals: make([]any, len(cols))}
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
	indexes := make([]Index, 0, len(src.indexes)+len(src.descending))
	for _, idx := range src.indexes {
		indexes = append(indexes, Index{Columns: idx})
	}
	for _, idx := range src.descending {
		indexes = append(indexes, Index{Columns: idx, Descending: true})
	}
	return s.db.LoadIndexedTable(ctx, src.name, cols, rows, indexes, digest)
}
