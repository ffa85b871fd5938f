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

// LoadTable replaces table with the given columns and rows, in one transaction, and
// records digest for it (see Imported); when the table was loaded with digest already
// (by another replica, say), it does nothing. RowColumn is added and numbered from 0 in the
// rows' order; indexed lists the columns to index (each with RowColumn after it, so that
// rows of one key come in row order). PostgreSQL loads with COPY, SQLite
// with one prepared insert.
func (db *DB) LoadTable(ctx context.Context, table string, cols []Column, rows Rows, indexed []string, digest string) error {
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
	for _, c := range indexed {
		after = append(after, "CREATE INDEX "+quoteIdent(table+"_"+c)+" ON "+quoteIdent(table)+" ("+quoteIdent(c)+", "+quoteIdent(RowColumn)+")")
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
		marks := make([]string, len(names))
		for i := range marks {
			marks[i] = "?"
		}
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = quoteIdent(n)
		}
		stmt, err := tx.PrepareContext(ctx, "INSERT INTO "+quoteIdent(table)+" ("+strings.Join(quoted, ", ")+") VALUES ("+strings.Join(marks, ", ")+")")
		if err != nil {
			return err
		}
		defer stmt.Close()
		n := int64(0)
		args := make([]any, len(names))
		for rows.Next() {
			args[0] = n
			copy(args[1:], rows.Values())
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("row %d: %w", n+1, err)
			}
			n++
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
		n := int64(0)
		src := pgx.CopyFromFunc(func() ([]any, error) {
			if !rows.Next() {
				return nil, nil
			}
			row := append([]any{n}, rows.Values()...)
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
// source, into the database and registers its KMs. A source whose file and columns are
// unchanged since it was last imported (same SHA-256 digest) is not loaded again, so
// Import is idempotent and cheap on restart; a changed one is replaced in one
// transaction. The table of a source gets RowColumn (the CSV row order) and an index on
// every field.
func (s *KMStore) Import(ctx context.Context, fsys fs.FS) error {
	models, err := km.Load(fsys)
	if err != nil {
		return err
	}
	schemas, sources, err := sourceSchemas(models)
	if err != nil {
		return err
	}
	for _, src := range sources {
		name := "data/" + src + ".csv"
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return fmt.Errorf("sqlstore: the data of source %s: %w", src, err)
		}
		digest := sourceDigest(schemas[src], data)
		if old, err := s.db.Imported(ctx, src); err != nil {
			return err
		} else if old == digest {
			continue
		}
		t, err := column.LoadCSV(bytes.NewReader(data), schemas[src])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := s.loadTable(ctx, src, schemas[src], t, digest); err != nil {
			return fmt.Errorf("sqlstore: import %s: %w", name, err)
		}
	}
	return s.putModels(ctx, models)
}

// ImportTables is Import for data already in memory: the tables of the models' sources,
// each holding (at least) the fields of the records using it. version identifies the
// data (for example how it was generated): a source already imported with the same
// version and columns is not loaded again.
func (s *KMStore) ImportTables(ctx context.Context, models []*km.KnowledgeModel, tables map[string]*column.Table, version string) error {
	schemas, sources, err := sourceSchemas(models)
	if err != nil {
		return err
	}
	for _, src := range sources {
		t, ok := tables[src]
		if !ok {
			return fmt.Errorf("sqlstore: no table for source %s", src)
		}
		digest := sourceDigest(schemas[src], []byte(version))
		if old, err := s.db.Imported(ctx, src); err != nil {
			return err
		} else if old == digest {
			continue
		}
		if err := s.loadTable(ctx, src, schemas[src], t, digest); err != nil {
			return fmt.Errorf("sqlstore: import %s: %w", src, err)
		}
	}
	return s.putModels(ctx, models)
}

func (s *KMStore) putModels(ctx context.Context, models []*km.KnowledgeModel) error {
	for _, m := range models {
		if err := s.PutModel(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// sourceSchemas returns the fields each source must hold (the union over the records
// using it) and the sources in order. Two records giving one field different types is an
// error.
func sourceSchemas(models []*km.KnowledgeModel) (map[string]column.Schema, []string, error) {
	schemas := map[string]column.Schema{}
	var sources []string
	for _, m := range models {
		for _, r := range m.Records {
			sc := schemas[r.Source]
			if sc == nil {
				sc = column.Schema{}
				schemas[r.Source] = sc
				sources = append(sources, r.Source)
			}
			for _, f := range r.Fields {
				if t, ok := sc[f.ID]; ok && t != f.Type {
					return nil, nil, fmt.Errorf("sqlstore: source %s: field %s is %s in one record and %s in another (KM %s, record %s)",
						r.Source, f.ID, t, f.Type, m.ID, r.ID)
				}
				sc[f.ID] = f.Type
			}
		}
	}
	slices.Sort(sources)
	return schemas, sources, nil
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

// sourceDigest identifies a source's columns and data.
func sourceDigest(sc column.Schema, data []byte) string {
	h := sha256.New()
	for _, c := range sortedColumns(sc) {
		fmt.Fprintf(h, "%s:%s\n", c.Name, c.Type)
	}
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// loadTable loads the schema's columns of t as table src, with an index on every column.
func (s *KMStore) loadTable(ctx context.Context, src string, sc column.Schema, t *column.Table, digest string) error {
	cols := sortedColumns(sc)
	rows := &tableRows{n: t.Rows(), vals: make([]any, len(cols))}
	var indexed []string
	for _, c := range cols {
		col, ok := t.Column(c.Name)
		if !ok {
			return fmt.Errorf("the table has no column %s", c.Name)
		}
		if col.Type() != c.Type {
			return fmt.Errorf("column %s is %s, the field is %s", c.Name, col.Type(), c.Type)
		}
		rows.cols = append(rows.cols, col)
		indexed = append(indexed, c.Name)
	}
	return s.db.LoadTable(ctx, src, cols, rows, indexed, digest)
}
