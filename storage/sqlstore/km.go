package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/fuzzy"
)

// RowColumn is the column every record source must have: a unique integer that orders
// its rows (ties of a sort keep this order, so paging is deterministic). Import creates
// it, numbering the rows from 0 in file order; a host's own table or view provides it,
// for example as row_number() OVER (ORDER BY key) - 1. A plan's row key (km.RowField,
// the OData service's generated key of a record without a key) is RowColumn + 1: the
// row's 1-based position when RowColumn numbers the rows from 0 without gaps, and in any
// case unique and stable while RowColumn is.
const RowColumn = "kmkit_row"

// KMStore is the km.Store of a DB: KM definitions are held in memory (they are small and
// loaded from files), the records' data are tables or views of the database, and every
// query is translated into SQL that the database runs: nothing loads a table into the
// server. A KMStore is safe for concurrent use.
type KMStore struct {
	db *DB

	mu     sync.RWMutex
	models map[string]*km.KnowledgeModel

	// counts caches RowCount per source (rowCount values) for rowCountTTL, so that the
	// cost estimate of a request costs no statement; PutModel clears it.
	counts sync.Map
	// columns caches the NOT NULL and the row-ordered columns per source (cachedColumns
	// values) for rowCountTTL; PutModel (and so every import) clears it.
	columns sync.Map

	// tables are the generation tables of the sources the store imported (Import,
	// ImportGenerated), which it reads them from: the generation of the data it serves,
	// which a read replica must hold to serve its reads (see AddReplicas and read). Set
	// under mu, and replaced rather than changed, so that a read keeps the map it got.
	tables tableNames
	// unique are the relationship targets an import checked (setTables); PutModel checks
	// the others with a statement. Set under mu, replaced rather than changed.
	unique map[uniqueField]bool

	// dicts are the searched columns' dictionaries of generation tables (searchDicts).
	dicts searchDicts
}

// uniqueField is a field of a table that holds each non-null value at most once.
type uniqueField struct{ table, field string }

// sourceColumns is what the translation knows of a source's columns (a nil map: none
// known).
type sourceColumns struct {
	// notNull are the columns declared NOT NULL in the catalog.
	notNull map[string]bool
	// rowOrdered are the columns whose values strictly ascend in row order, as the
	// source's import recorded them (ColumnDef.RowOrdered).
	rowOrdered map[string]bool
}

// cachedColumns is a cached answer of columns.
type cachedColumns struct {
	cols  sourceColumns
	read  time.Time
	loads int64 // DB.loads when read
}

// rowCountTTL is how long a record's row count is reused. Counts change at import, and
// another replica's import shows within this time.
const rowCountTTL = 30 * time.Second

// rowCount is a cached answer of RowCount.
type rowCount struct {
	n    int64
	ok   bool
	read time.Time
}

// KM returns the DB's km.Store, with no models yet (see PutModel and Import).
func (db *DB) KM() *KMStore { return &KMStore{db: db, models: map[string]*km.KnowledgeModel{}} }

// PutModel adds or replaces a KM. Every record's source must be a table or view holding
// RowColumn and a column per field.
func (s *KMStore) PutModel(ctx context.Context, m *km.KnowledgeModel) error {
	if err := s.checkModel(ctx, s.db.sql, m, s.generationTables(), nil); err != nil {
		return err
	}
	s.registerModels([]*km.KnowledgeModel{m})
	return nil
}

// checkModel checks on q that the store can serve m from tables: every record's table
// holds RowColumn and a column per field, and every relationship's target holds each
// non-null value once (checkTarget; known lists targets found unique beyond the store's
// own).
func (s *KMStore) checkModel(ctx context.Context, q querier, m *km.KnowledgeModel, tables tableNames, known map[uniqueField]bool) error {
	for _, r := range m.Records {
		cols := []string{quoteIdent(RowColumn)}
		for _, f := range r.Fields {
			cols = append(cols, quoteIdent(f.ID))
		}
		rows, err := q.QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+quoteIdent(tables.of(r.Source))+" WHERE 1 = 0")
		if err != nil {
			return fmt.Errorf("sqlstore: KM %s: record %s: source %q: %w", m.ID, r.ID, r.Source, err)
		}
		rows.Close()
	}
	for _, rel := range m.Relationships {
		if err := s.checkTarget(ctx, q, m, rel, tables, known); err != nil {
			return err
		}
	}
	return nil
}

// registerModels adds or replaces the KMs of models, each checked (checkModel).
func (s *KMStore) registerModels(models []*km.KnowledgeModel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range models {
		s.models[m.ID] = m
	}
	s.counts.Clear()
	s.columns.Clear()
}

// checkTarget returns a *km.DuplicateTargetError when the target of rel in tables holds
// a non-null value in more than one row (read on q). A target an import checked (the
// store's, or known) costs nothing; another (a host's table or view, or an imported table
// that no imported KM made a target) costs one statement, a GROUP BY of the field that
// the index on a relationship field serves.
func (s *KMStore) checkTarget(ctx context.Context, q querier, m *km.KnowledgeModel, rel km.Relationship, tables tableNames, known map[uniqueField]bool) error {
	r := m.Record(rel.To.Record)
	var f *km.Field
	if r != nil {
		f = r.Field(rel.To.Field)
	}
	if f == nil {
		return fmt.Errorf("sqlstore: KM %s: relationship %s -> %s: no field %s", m.ID, rel.From, rel.To, rel.To)
	}
	table := tables.of(r.Source)
	s.mu.RLock()
	checked := s.unique[uniqueField{table, f.ID}] || known[uniqueField{table, f.ID}]
	s.mu.RUnlock()
	if checked {
		return nil
	}
	col := quoteIdent(f.ID)
	var v any
	err := q.QueryRowContext(ctx, "SELECT "+col+" FROM "+quoteIdent(table)+" WHERE "+col+" IS NOT NULL GROUP BY "+col+" HAVING count(*) > 1 LIMIT 1").Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("sqlstore: KM %s: relationship %s -> %s: %w", m.ID, rel.From, rel.To, err)
	}
	dup, err := toValue(v, f.Type)
	if err != nil {
		return fmt.Errorf("sqlstore: KM %s: relationship %s -> %s: %w", m.ID, rel.From, rel.To, err)
	}
	return fmt.Errorf("sqlstore: KM %s: source %q: %w", m.ID, r.Source, &km.DuplicateTargetError{Relationship: rel, Value: dup})
}

// Models implements km.Store.
func (s *KMStore) Models(context.Context) ([]*km.KnowledgeModel, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*km.KnowledgeModel, 0, len(s.models))
	for _, m := range s.models {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *km.KnowledgeModel) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Model implements km.Store.
func (s *KMStore) Model(_ context.Context, id string) (*km.KnowledgeModel, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.models[id]
	if !ok {
		return nil, fmt.Errorf("sqlstore: KM %q: %w", id, km.ErrModelNotFound)
	}
	return m, nil
}

// statement translates p for the store's database, with what it knows of the columns of
// the grain's table when p sorts rows: both dialects write the sort of a column without
// nulls so that the import's ascending indexes serve it (read backwards for a descending
// sort), and a column that ascends in row order is sorted as the row order.
func (s *KMStore) statement(ctx context.Context, p *km.Plan, tables tableNames, score *searchScore, wide bool) (*statement, error) {
	var cols sourceColumns
	if len(p.KPIs) == 0 && len(p.Sort) > 0 {
		if r := p.KM.Record(p.Grain); r != nil {
			cols = s.sourceColumns(ctx, tables.of(r.Source))
		}
	}
	return translate(s.db.planDialect(ctx), p, tables, score, cols, wide)
}

// Query implements km.Store: the plan is translated into one statement for the page and,
// when asked, one for the count (see the package documentation); a search first reads
// the distinct values of the searched columns among the filtered rows and scores them
// with query/fuzzy (the memory backend's scorer).
func (s *KMStore) Query(ctx context.Context, p *km.Plan) (*query.Result, error) {
	var res *query.Result
	run := func(wide bool) error {
		return s.read(ctx, p, func(db querier, tables tableNames) error {
			var err error
			res, err = s.query(ctx, db, tables, p, wide)
			return err
		})
	}
	err := run(false)
	if isOutOfRange(err) && len(p.Aggregates) > 0 {
		// PostgreSQL's sum of doubles refused a total beyond a double's range (or the
		// filter's arithmetic did): once more with the sums in numeric, as a read of its
		// own.
		err = run(true)
	}
	return res, outOfRange(err)
}

// query is Query on db: the primary or a read replica, or a read transaction of one.
// The sums of KPIs are computed in numeric when wide is set.
func (s *KMStore) query(ctx context.Context, db querier, tables tableNames, p *km.Plan, wide bool) (*query.Result, error) {
	var score *searchScore
	if p.Search != nil {
		var err error
		if score, err = s.score(ctx, db, tables, p); err != nil {
			return nil, err
		}
	}
	st, err := s.statement(ctx, p, tables, score, wide)
	if err != nil {
		return nil, err
	}
	res := &query.Result{Columns: st.cols, Rows: [][]query.Value{}}
	if st.firstSeen != nil && !st.empty {
		return res, s.firstSeenPage(ctx, db, p, st, res)
	}
	counted := false
	if !st.empty {
		if counted, err = s.page(ctx, db, st, res); err != nil {
			return nil, err
		}
	}
	if p.Count && !counted {
		q, args, err := s.db.fit(st.count, st.countArgs)
		if err != nil {
			return nil, err
		}
		if err := db.QueryRowContext(ctx, q, args...).Scan(&res.Count); err != nil {
			return nil, fmt.Errorf("sqlstore: count: %w", err)
		}
	}
	return res, nil
}

// firstSeenRows is the number of passing rows whose distinct rows firstSeenPage groups
// first (at least firstSeenPerRow per row of the page's end), and firstSeenGrowth the
// factor of the one further try before the grouping of every row.
var (
	firstSeenRows   int64 = 4096
	firstSeenPerRow int64 = 16
	firstSeenGrowth int64 = 32
)

// firstSeenPage runs the page of a distinct without sort keys on a database that groups
// by sorting (statement.firstSeen): it counts the distinct rows, then groups the first
// rows passing the filter, and more of them while they hold fewer distinct rows than the
// page needs, before it groups them all. res.Count is set when p counts.
func (s *KMStore) firstSeenPage(ctx context.Context, db querier, p *km.Plan, st *statement, res *query.Result) error {
	q, args, err := s.db.fit(st.count, st.countArgs)
	if err != nil {
		return err
	}
	var total int
	if err := db.QueryRowContext(ctx, q, args...).Scan(&total); err != nil {
		return fmt.Errorf("sqlstore: count: %w", err)
	}
	// translate set st.empty where the page's start overflows.
	start := int64(p.Page) * int64(p.PageSize)
	need := min(start+int64(p.PageSize), int64(total))
	if need > start {
		rows := max(firstSeenRows, firstSeenPerRow*need)
		done := false
		for try := 0; try < 2 && !done; try, rows = try+1, rows*firstSeenGrowth {
			// The rows end with the number of distinct rows among the first ones.
			prefix := *st
			prefix.page, prefix.pageCounts = st.firstSeen(rows), true
			scan := &query.Result{Rows: res.Rows[:0]}
			if _, err := s.page(ctx, db, &prefix, scan); err != nil {
				return err
			}
			res.Rows, done = scan.Rows, int64(scan.Count) >= need
		}
		if !done {
			scan := &query.Result{Rows: res.Rows[:0]}
			if _, err := s.page(ctx, db, st, scan); err != nil {
				return err
			}
			res.Rows = scan.Rows
		}
	}
	if p.Count {
		res.Count = total
	}
	return nil
}

// page runs the page statement into res and reports whether it set res.Count (a page
// that counts and has rows).
func (s *KMStore) page(ctx context.Context, db querier, st *statement, res *query.Result) (bool, error) {
	q, args, err := s.db.fit(st.page, st.pageArgs)
	if err != nil {
		return false, err
	}
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("sqlstore: query: %w", err)
	}
	defer rows.Close()
	n := len(st.cols)
	raw := make([]any, n, n+1)
	ptrs := make([]any, n, n+1)
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if st.pad {
		var pad any
		ptrs = append([]any{&pad}, ptrs...)
	}
	if st.pageCounts {
		ptrs = append(ptrs, &res.Count)
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return false, err
		}
		row := make([]query.Value, n)
		for i, c := range st.cols {
			if row[i], err = toValue(raw[i], c.Type); err != nil {
				return false, fmt.Errorf("sqlstore: column %s: %w", c.Name, err)
			}
		}
		res.Rows = append(res.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	return st.pageCounts && len(res.Rows) > 0, nil
}

// toValue converts a scanned cell to a value of type t.
func toValue(v any, t query.Type) (query.Value, error) {
	if v == nil {
		return query.Null(t), nil
	}
	out := query.Value{Type: t}
	switch t {
	case query.TypeString:
		switch v := v.(type) {
		case string:
			out.Str = v
		case []byte:
			out.Str = string(v)
		default:
			return out, fmt.Errorf("%T for a string", v)
		}
	case query.TypeFloat:
		switch v := v.(type) {
		case float64:
			out.Float = v
		case int64:
			out.Float = float64(v)
		default:
			return out, fmt.Errorf("%T for a float", v)
		}
	case query.TypeBoolean:
		switch v := v.(type) {
		case bool:
			out.Bool = v
		case int64:
			out.Bool = v != 0
		default:
			return out, fmt.Errorf("%T for a boolean", v)
		}
	default:
		switch v := v.(type) {
		case int64:
			out.Int = v
		case float64:
			out.Int = int64(v)
		default:
			return out, fmt.Errorf("%T for an integer", v)
		}
	}
	return out, nil
}

// score scores the distinct values of the searched columns: what SQL decides (the
// filter, the distinct values) is pushed down, and the same scorer as the memory backend
// decides the score of each value. Without KPIs the values are those of the listed rows;
// with KPIs, those of the searched field's record among its rows that pass the filter (a
// superset of the groups' values). The page statement then reads each column as the
// expression of searchScore.cols.
func (s *KMStore) score(ctx context.Context, db querier, tables tableNames, p *km.Plan) (*searchScore, error) {
	sc := &searchScore{}
	m := fuzzy.New(p.Search.Term)
	for _, f := range p.Search.Fields {
		t := newPlanner(s.db.planDialect(ctx), p, tables)
		var values, expr string
		var unfiltered bool // values reads every row of f's record
		if len(p.KPIs) == 0 {
			rows, err := t.rows()
			if err != nil {
				return nil, err
			}
			c := col(t.rowAlias(f.Record), f.Field)
			if f.Type == query.TypeTime {
				c = timeText(s.db.d.name() == "postgres", c)
			}
			values = "SELECT DISTINCT " + c + " FROM " + rows.from.String() + " WHERE " + c + " IS NOT NULL AND " + rows.cond()
			expr = c
			unfiltered = f.Record == p.Grain && len(p.RowJoin) == 0 && len(rows.where) == 0
		} else {
			i := slices.Index(p.Fields, f)
			if i < 0 {
				return nil, fmt.Errorf("%w: search field %s is not selected", errInternal, f.Name())
			}
			src, err := t.source(f.Record)
			if err != nil {
				return nil, err
			}
			rows := &scope{}
			rows.from.WriteString(src + " r0")
			if rows.where, err = t.filter(f.Record, "r0", rows); err != nil {
				return nil, err
			}
			c := col("r0", f.Field)
			expr = "q.k" + strconv.Itoa(i)
			if f.Type == query.TypeTime {
				c = timeText(s.db.d.name() == "postgres", c)
				expr = timeText(s.db.d.name() == "postgres", expr)
			}
			values = "SELECT DISTINCT " + c + " FROM " + rows.from.String() + " WHERE " + c + " IS NOT NULL AND " + rows.cond()
			unfiltered = len(rows.where) == 0
		}
		// The values of a generation table's column, read without a filter, are the same
		// on every search: kept with their index.
		key := searchDictKey{table: tables[p.KM.Record(f.Record).Source], field: f.Field}
		keep := unfiltered && key.table != ""
		d, ok := s.dicts.get(key)
		if !keep || !ok {
			vals, err := s.strings(ctx, db, values, t.b.args)
			if err != nil {
				return nil, fmt.Errorf("sqlstore: search values: %w", err)
			}
			if keep {
				d = s.dicts.put(key, vals)
			} else {
				d = &searchDict{values: vals, index: fuzzy.NewIndex(vals)}
			}
		}
		// Only the values that reach the precision: the statements keep the rows whose
		// score does (a score below it, exact or not, reads as 0 there).
		byScore := map[int][]string{}
		for i, sv := range m.ScoreIndex(d.index, p.Search.Precision, nil) {
			if sv > 0 && int(sv) >= p.Search.Precision {
				byScore[int(sv)] = append(byScore[int(sv)], d.values[i])
			}
		}
		var buckets []scoreBucket
		for score, vs := range byScore {
			buckets = append(buckets, scoreBucket{score: score, values: vs})
		}
		slices.SortFunc(buckets, func(a, b scoreBucket) int { return b.score - a.score })
		sc.cols = append(sc.cols, frameCol{expr: expr, typ: query.TypeString})
		sc.buckets = append(sc.buckets, buckets)
	}
	return sc, nil
}

// strings runs a statement of one string column on db and returns its values.
func (s *KMStore) strings(ctx context.Context, db querier, stmt string, args []any) ([]string, error) {
	stmt, args, err := s.db.fit(stmt, args)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var vals []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		vals = append(vals, v)
	}
	return vals, rows.Err()
}

var _ km.Store = (*KMStore)(nil)

// RowCount implements km.RowCounter, for the cost estimate of a plan, without counting
// rows: the count recorded when the record's table was loaded (one lookup by primary
// key); for a table or view of the host's own, PostgreSQL's estimate (pg_class.reltuples,
// kept by ANALYZE and autovacuum) when it has one. Otherwise the count is unknown
// (km.AssumedRows is taken). An answer is reused for 30 seconds (and until PutModel), so
// a request's cost estimate runs no statement.
func (s *KMStore) RowCount(ctx context.Context, m *km.KnowledgeModel, record string) (int64, bool) {
	r := m.Record(record)
	if r == nil {
		return 0, false
	}
	table := s.generationTables().of(r.Source)
	if v, found := s.counts.Load(table); found {
		if c := v.(rowCount); time.Since(c.read) < rowCountTTL {
			return c.n, c.ok
		}
	}
	n, ok := s.readRowCount(ctx, table)
	if ctx.Err() == nil {
		s.counts.Store(table, rowCount{n: n, ok: ok, read: time.Now()})
	}
	return n, ok
}

// loadRecord is what a load recorded of a table: the generation table, its row count and
// its row-ordered columns (a JSON array, or "").
type loadRecord struct {
	table   string
	rows    int64
	ordered string
}

// readLoad reads the loadRecord of table, a generation table (km_generations) or a name
// a load made a view of its source's current generation (km_imports); ok is false for
// a table no load made.
func (s *KMStore) readLoad(ctx context.Context, table string) (rec loadRecord, ok bool, err error) {
	err = s.db.sql.QueryRowContext(ctx, s.db.d.rebind(`SELECT table_name, rows_loaded, row_ordered FROM km_generations WHERE table_name = ?
		UNION ALL SELECT table_name, rows_loaded, row_ordered FROM km_imports WHERE source = ? AND table_name <> ''`), table, table).Scan(&rec.table, &rec.rows, &rec.ordered)
	if errors.Is(err, sql.ErrNoRows) {
		return rec, false, nil
	}
	return rec, err == nil, err
}

// readRowCount reads the row count of table for RowCount.
func (s *KMStore) readRowCount(ctx context.Context, table string) (int64, bool) {
	if rec, ok, err := s.readLoad(ctx, table); ok {
		return rec.rows, true
	} else if err != nil || s.db.d.name() != "postgres" {
		return 0, false
	}
	var est float64
	err := s.db.sql.QueryRowContext(ctx, `SELECT reltuples FROM pg_class WHERE oid = to_regclass($1) AND relkind IN ('r', 'p', 'm')`, quoteIdent(table)).Scan(&est)
	if err != nil || est < 0 {
		return 0, false
	}
	return int64(est), true
}

var _ km.RowCounter = (*KMStore)(nil)

// sourceColumns returns the columns of table declared NOT NULL, as the catalog says
// (a load declares every column without nulls so; a host's table may too; a view's
// columns are all nullable), and those its load recorded as ascending in row order (none
// for a table no LoadTable loaded). Only a generation table, which never changes, has
// the facts of its load: the view a load makes of a source's name (a KM registered over
// it with PutModel) reads whatever generation another process made current since, even
// between this and the statement, so it has none. An answer is reused for 30 seconds,
// until PutModel and until the DB loads a table (LoadIndexedTable, which every import
// calls), like RowCount's; an error reads as none, which only costs the index.
func (s *KMStore) sourceColumns(ctx context.Context, table string) sourceColumns {
	loads := s.db.loads.Load()
	if v, found := s.columns.Load(table); found {
		if c := v.(cachedColumns); c.loads == loads && time.Since(c.read) < rowCountTTL {
			return c.cols
		}
	}
	rec, loaded, err := s.readLoad(ctx, table)
	if err != nil {
		return sourceColumns{}
	}
	var cols sourceColumns
	if loaded && rec.table == table {
		if rec.ordered != "" {
			var names []string
			if err := json.Unmarshal([]byte(rec.ordered), &names); err != nil {
				return sourceColumns{}
			}
			cols.rowOrdered = make(map[string]bool, len(names))
			for _, n := range names {
				cols.rowOrdered[n] = true
			}
		}
	}
	if cols.notNull, err = s.readNotNull(ctx, table); err != nil {
		return sourceColumns{}
	}
	s.columns.Store(table, cachedColumns{cols: cols, read: time.Now(), loads: loads})
	return cols
}

// readNotNull reads the NOT NULL columns of source from the catalog.
func (s *KMStore) readNotNull(ctx context.Context, source string) (map[string]bool, error) {
	q := `SELECT name FROM pragma_table_info(?) WHERE "notnull" <> 0`
	arg := source
	if s.db.d.name() == "postgres" {
		q = `SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped AND attnotnull`
		arg = quoteIdent(source)
	}
	rows, err := s.db.sql.QueryContext(ctx, q, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols[c] = true
	}
	return cols, rows.Err()
}
