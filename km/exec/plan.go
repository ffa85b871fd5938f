package exec

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/query/fuzzy"
)

// Source runs km.Plans over the tables of one KM's records. It keeps, each built on first
// use, the frames filters are evaluated on and the indexes of the relationships (for each
// child row its parent row; for each parent row its children). A Source is immutable once
// built, safe for concurrent use, and valid while its tables do not change.
//
// How a plan runs (the semantics are km.Plan's):
//
//   - Filter: each conjunct is evaluated once over the rows of its home record (a frame
//     joining the parents it reads) into a bitmap, then carried along its Reach path to
//     every record the plan reads: a step up marks the parent of every marked child, a step
//     down marks every child of a marked parent. A record's passing rows are the AND of
//     its conjuncts' bitmaps. A quantified condition (OData's any and all) of a conjunct
//     is its body's bitmap over the related record carried up to the parent record
//     first, then read like a column of the parent (withQuantified).
//   - Rows: a frame of the grain record joining its parents (RowJoin), with the passing
//     rows as its selection, then sort, search, distinct and paging (compileRows). With RowChecks
//     the request reads a frame of its own whose join indexes drop the parents that fail
//     their tests (dropFailingParents).
//   - KPIs: per aggregate, tuples of row numbers start at the passing grain rows and grow
//     along Expand (a parent row, or every passing child, or one null); the tuples are
//     grouped by the dimension columns' codes; the (group, grain row) pairs are made
//     distinct; the aggregate runs over the grain table with those pairs. Groups of all
//     aggregates are merged by their dimension values.
type Source struct {
	m      *km.KnowledgeModel
	tables map[string]*column.Table // by record id
	cache  sync.Map                 // string -> *lazy
	rel    *sync.Map                // relationship indexes: relKey -> *lazy
	// referrals holds, once a relationship's children index is built, the key a child's
	// field refers to with that index: column.Column (the field) -> *referral.
	referrals *sync.Map
	sorts     *sync.Map   // sort indexes of table columns: column.Column -> *sortIndex
	scores    *scoreCache // fuzzy scores of dictionaries by term
	scratch   *scratch    // the runs' buffers, kept between runs
	conds     *condCache  // the rows where aggregates' conditions hold
}

// relKey names a relationship index by the columns it joins, not by record ids, so that
// Sources of different KMs over the same tables share it (NewSourceSharing).
type relKey struct {
	from, key column.Column // the child's field, the parent's key
	children  bool          // the parent's children, else each child's parent
}

// lazy is a cached value built once.
type lazy struct {
	once sync.Once
	v    any
	err  error
}

// NewSource returns the source of m's records; tables maps each record id to its table,
// which holds a column per field of the record, named by the field id.
func NewSource(m *km.KnowledgeModel, tables map[string]*column.Table) *Source {
	return &Source{m: m, tables: tables, rel: &sync.Map{}, referrals: &sync.Map{}, sorts: &sync.Map{}, scores: newScoreCache(scoreCacheBytes),
		scratch: newScratch(tables), conds: &condCache{maxBytes: condCacheBytes}}
}

// NewSourceSharing is NewSource for a store of several KMs over the same tables: the new
// Source shares other's relationship indexes, sort indexes, scratch memory and fuzzy scores (all keyed
// by memory and by column, never by record, so any two Sources may share them), so that
// its Warm builds and touches nothing the other has and the store keeps one of each. The
// scratch is sized by other's tables: a larger table of the new Source's takes memory
// beyond its bound. A nil other gives a Source of its own, as NewSource.
func NewSourceSharing(m *km.KnowledgeModel, tables map[string]*column.Table, other *Source) *Source {
	s := NewSource(m, tables)
	if other != nil {
		s.rel, s.sorts, s.scores, s.scratch = other.rel, other.sorts, other.scores, other.scratch
	}
	return s
}

// Warm readies s for its first requests, so that they run as later ones do: it builds
// the indexes of the KM's relationships (each child row's parent, each parent row's
// children), which the first request crossing a relationship would otherwise build, and
// touches scratch buffers for runs over each table's rows, which the first heavy request
// would otherwise take from fresh memory, a page fault per 4 KiB (see scratch), and finds
// the range of each integer column, which the first request grouping or counting distinct
// values of it would otherwise scan for (about 1 ms at 1M rows), and builds the sort
// indexes a served KM's pages are likely to walk (warmSorts), which the first page sorted
// by such a column would otherwise build (about 50 ms at 1M rows), the fuzzy indexes of
// the string dictionaries of up to warmSearchValues values (warmSearch), which the first
// search of such a column would otherwise build, and evaluates the conditions of the KM's
// KPIs (warmConds), which each KPI request would otherwise evaluate over every row. A
// store calls it once after loading; it costs about five int32s per row of each table
// size (see warmRuns), at most two int32s a row per column sorted (see warmSorts), twice
// the text plus about 30 bytes a value of each dictionary indexed (fuzzy.Index) and a bit
// a row per KPI condition (at most condCacheBytes), kept for the Source's life, and
// leaves the sorts' keys as garbage (it collects the hash maps of the indexes' builds
// itself, once, before the sorts).
// Errors are left to the requests that meet them. A request running meanwhile waits
// only for an index it needs that Warm is building, never builds one twice.
func (s *Source) Warm() {
	for _, r := range s.m.Relationships {
		down := km.Step{From: r.To.Record, FromField: r.To.Field, To: r.From.Record, ToField: r.From.Field}
		_, _ = s.children(down) // builds the parent index (the step up) first
	}
	classes := map[int]int{} // the largest row count of each size class
	for _, t := range s.tables {
		k := class(max(t.Rows(), 1))
		classes[k] = max(classes[k], t.Rows())
	}
	for _, n := range classes {
		s.scratch.warm(n, warmRuns)
		s.scratch.warm((n+31)/32, 1) // the bitmap of a grouping's first rows (mergeFirsts)
		s.scratch.warm((n+3)/4, 1)   // a search's scores, a byte a row (zeroedBytes)
	}
	// The key and row blocks of a dense grouping (blockKeys), and those of the aggregates
	// that compute group ids from keys (groupIDs.blocks), held at once: two a goroutine
	// each.
	s.scratch.warm(firstsBlock, 4*chunks())
	for _, t := range s.tables {
		for _, c := range t.Columns() {
			if c, ok := c.(*column.Int64s); ok {
				c.Range()
			}
		}
	}
	// The relationship indexes' hash maps are garbage now; collect them before the sort
	// builds take their key buffers, or both count toward the process's peak (at 1M
	// orders, 730 MiB with this collection against 832 MiB without).
	runtime.GC()
	s.warmSorts()
	s.warmSearch()
	s.warmConds()
}

// warmSearchValues bounds the dictionaries whose fuzzy indexes warmSearch builds: names,
// labels and codes, not the ids of a large table (a dictionary of 128Ki values of 20
// bytes takes about 9 MiB and 0.1 s to index); those are indexed on their first search.
const warmSearchValues = 1 << 17

// warmSearch builds the fuzzy index of every string dictionary of the tables of up to
// warmSearchValues values, so that the first search of a process runs as a new term on a
// warm store does: it scores the term over the index instead of folding, summarising
// and sorting the dictionary first.
func (s *Source) warmSearch() {
	for _, t := range s.tables {
		for _, c := range t.Columns() {
			if c, ok := c.(*column.Strings); ok && len(c.Dict) <= warmSearchValues {
				s.scores.index(c)
			}
		}
	}
}

// warmSortColumns bounds the columns of a record whose sort indexes warmSorts builds,
// unless the record has at most warmSortAllRows rows: then every column's are built.
const warmSortColumns = 8

// warmSortAllRows is the most rows of a record whose every column warmSorts sorts (a
// variable for the tests).
var warmSortAllRows = 1 << 16

// warmSorts builds the sort indexes of the columns each record's pages are likely to be
// sorted by: its key, then the fields of the indexes it declares (km.Record.Indexes, as
// the SQL stores create them), each once, at most warmSortColumns a record; and of every
// column of a record of at most warmSortAllRows rows (a dimension such as the demo's
// 10,000 customers, whose pages a client sorts by any field: building the index of an
// undeclared one took the first such page 0.7 ms against 0.03 ms once built). Each costs
// an int32 a row (the permutation) and one per distinct value (the runs' bounds): at
// most 8 bytes a row, kept for the Source's life (at most 512 KiB a column of a small
// record); the builds share one pair of key buffers (24 bytes a row of the largest
// table, let go once it is sorted), garbage once Warm returns.
func (s *Source) warmSorts() {
	// The records by size, largest first. The largest table's builds take key buffers of
	// its size; once they are done, the buffers are let go and collected, so that the
	// smaller tables' buffers (and their indexes) reuse that memory instead of adding
	// to the process's peak, which Warm's builds set (at 1M orders, 731 MiB with the
	// largest table's buffers kept to the end).
	var records []*km.Record
	for _, r := range s.m.Records {
		if _, ok := s.tables[r.ID]; ok {
			records = append(records, r)
		}
	}
	slices.SortStableFunc(records, func(a, b *km.Record) int { return cmp.Compare(s.tables[b.ID].Rows(), s.tables[a.ID].Rows()) })
	bufs := new(sortBufs) // grown by the builds to each table's size (see build)
	for i, r := range records {
		t := s.tables[r.ID]
		if i == 1 {
			bufs = new(sortBufs)
			runtime.GC()
		}
		var fields []string
		if r.Key != "" {
			fields = append(fields, r.Key)
		}
		for _, ix := range r.Indexes {
			for _, c := range ix {
				if !slices.Contains(fields, c.Field) {
					fields = append(fields, c.Field)
				}
			}
		}
		fields = fields[:min(len(fields), warmSortColumns)]
		if t.Rows() <= warmSortAllRows {
			fields = t.Names()
		}
		for _, name := range fields {
			if c, ok := t.Column(name); ok {
				tableSortIndex(s.sorts, c, bufs)
			}
		}
	}
}

// cached returns the value of key, building it with build on first use.
func (s *Source) cached(key string, build func() (any, error)) (any, error) {
	return cachedIn(&s.cache, key, build)
}

// cachedIn returns the value of key in cache, building it with build on first use.
func cachedIn(cache *sync.Map, key any, build func() (any, error)) (any, error) {
	v, ok := cache.Load(key)
	if !ok {
		v, _ = cache.LoadOrStore(key, &lazy{})
	}
	l := v.(*lazy)
	l.once.Do(func() { l.v, l.err = build() })
	return l.v, l.err
}

func (s *Source) table(record string) (*column.Table, error) {
	t, ok := s.tables[record]
	if !ok {
		return nil, fmt.Errorf("exec: no table for record %s", record)
	}
	return t, nil
}

// frame returns the frame of record root joined to its parents along steps (all up),
// columns named "RECORD.FIELD"; with rowKey it also has root's row key, "ROOT.#row"
// (km.RowField).
func (s *Source) frame(root string, steps []km.Step, rowKey bool) (*Frame, error) {
	var key strings.Builder
	key.WriteString("frame " + root)
	if rowKey {
		key.WriteString(" +" + km.RowField)
	}
	for _, st := range steps {
		key.WriteString(" " + st.String())
	}
	v, err := s.cached(key.String(), func() (any, error) {
		base, err := s.table(root)
		if err != nil {
			return nil, err
		}
		joins := make([]Join, len(steps))
		for i, st := range steps {
			if !st.Up {
				return nil, fmt.Errorf("exec: frame of %s: step %s goes down", root, st)
			}
			t, err := s.table(st.To)
			if err != nil {
				return nil, err
			}
			joins[i] = Join{From: st.From + "." + st.FromField, Record: st.To, Table: t, Key: st.ToField}
		}
		f, err := NewFrame(root, base, joins...)
		if err == nil {
			f.tableIndexes, f.referrals = s.sorts, s.referrals
		}
		if err == nil && rowKey {
			f.addRowKey(root+"."+km.RowField, s.rowKeys(root, base.Rows()))
		}
		return f, err
	})
	if err != nil {
		return nil, err
	}
	return v.(*Frame), nil
}

// rowKeys returns the row key column of record, whose table has n rows: 1, 2, ... n, the
// rows' 1-based positions (km.RowField). It is not part of the table: it is built on
// first use, once per record, and shared by the frames that need it.
func (s *Source) rowKeys(record string, n int) *column.Int64s {
	v, _ := s.cached("rowkey "+record, func() (any, error) {
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = int64(i) + 1
		}
		return &column.Int64s{T: query.TypeInteger, Vals: vals}, nil
	})
	return v.(*column.Int64s)
}

// namesRowKey reports whether e names the row key of record.
func namesRowKey(e query.Expr, record string) bool {
	found := false
	_, _ = query.MapFields(e, func(r query.FieldRef) (query.FieldRef, error) {
		found = found || km.RowKeyRecord(r.Name) == record
		return r, nil
	})
	return found
}

// parents returns, for each row of child, the row of parent whose key equals the child's
// field, or -1.
func (s *Source) parents(child, field, parent, key string) ([]int32, error) {
	fc, kc, err := s.relColumns(child, field, parent, key)
	if err != nil {
		return nil, err
	}
	v, err := cachedIn(s.rel, relKey{from: fc, key: kc}, func() (any, error) {
		rel := km.Relationship{From: km.FieldPath{Record: child, Field: field}, To: km.FieldPath{Record: parent, Field: key}}
		idx, err := joinIndex(fc.Len(), ref{col: fc}, kc, rel)
		if err != nil {
			return nil, fmt.Errorf("exec: relationship %s.%s to %s.%s: %w", child, field, parent, key, err)
		}
		return idx, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]int32), nil
}

// relColumns returns the columns a relationship joins: child's field and parent's key.
func (s *Source) relColumns(child, field, parent, key string) (from, to column.Column, err error) {
	ct, err := s.table(child)
	if err != nil {
		return nil, nil, err
	}
	pt, err := s.table(parent)
	if err != nil {
		return nil, nil, err
	}
	fc, ok := ct.Column(field)
	if !ok {
		return nil, nil, fmt.Errorf("exec: %w %q", ErrUnknownField, child+"."+field)
	}
	kc, ok := pt.Column(key)
	if !ok {
		return nil, nil, fmt.Errorf("exec: %w %q", ErrUnknownField, parent+"."+key)
	}
	return fc, kc, nil
}

// stepIndex returns the parent index of the relationship a step crosses, over the child's
// rows.
func (s *Source) stepIndex(st km.Step) ([]int32, error) {
	if st.Up {
		return s.parents(st.From, st.FromField, st.To, st.ToField)
	}
	return s.parents(st.To, st.ToField, st.From, st.FromField)
}

// referral is a child's field with the key it refers to (unique: joinIndex refuses
// duplicates) and the relationship's children index: the rows whose field holds the
// key of parent row p are the children of p.
type referral struct {
	key      column.Column
	children *children
}

// children lists the children of every parent row of a step down: the children of parent
// row p are rows[off[p]:off[p+1]], ascending.
type children struct {
	off  []int32
	rows []int32
}

func (s *Source) children(st km.Step) (*children, error) {
	fc, kc, err := s.relColumns(st.To, st.ToField, st.From, st.FromField)
	if err != nil {
		return nil, err
	}
	v, err := cachedIn(s.rel, relKey{from: fc, key: kc, children: true}, func() (any, error) {
		idx, err := s.stepIndex(st)
		if err != nil {
			return nil, err
		}
		c := &children{off: make([]int32, kc.Len()+1), rows: make([]int32, 0, len(idx))}
		for _, p := range idx {
			if p >= 0 {
				c.off[p+1]++
			}
		}
		for i := 1; i < len(c.off); i++ {
			c.off[i] += c.off[i-1]
		}
		c.rows = c.rows[:c.off[len(c.off)-1]]
		next := slices.Clone(c.off[:len(c.off)-1])
		for r, p := range idx {
			if p >= 0 {
				c.rows[next[p]] = int32(r)
				next[p]++
			}
		}
		s.referrals.Store(fc, &referral{key: kc, children: c})
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*children), nil
}

// filterState holds the passing rows of every record a plan reads; a nil bitmap (or a
// record absent) means every row passes.
type filterState struct {
	pass map[string]column.Bitmap
}

// holds evaluates a conjunct over its home rows: the rows where it is true.
func (s *Source) holds(ctx context.Context, cj *km.Conjunct) (column.Bitmap, error) {
	f, err := s.frame(cj.Home, cj.Reads, namesRowKey(cj.Expr, cj.Home))
	if err != nil {
		return nil, err
	}
	qctx, err := s.withQuantified(ctx, cj)
	if err != nil {
		return nil, err
	}
	pr, err := f.compileTrue(qctx, cj.Expr)
	if err != nil {
		return nil, err
	}
	t := pr().t
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t == nil {
		t = column.NewBitmap(f.rows)
	}
	return t, nil
}

// carry moves a set of rows of path's first record along path to its last record.
func (s *Source) carry(set column.Bitmap, path km.Path) (column.Bitmap, error) {
	for _, st := range path {
		idx, err := s.stepIndex(st)
		if err != nil {
			return nil, err
		}
		to, err := s.table(st.To)
		if err != nil {
			return nil, err
		}
		out := column.NewBitmap(to.Rows())
		if st.Up {
			for c, p := range idx {
				if p >= 0 && set.Get(c) {
					out.Set(int(p))
				}
			}
		} else {
			for c, p := range idx {
				if p >= 0 && set.Get(int(p)) {
					out.Set(c)
				}
			}
		}
		set = out
	}
	return set, nil
}

// filter computes the passing rows of every record of records (of p.Records).
func (s *Source) filter(ctx context.Context, p *km.Plan, records []string) (*filterState, error) {
	return s.filterOf(ctx, p.Filter, records)
}

// filterOf computes the rows of every record of records that pass every conjunct of cjs
// (conjuncts of one plan, which reach those records).
func (s *Source) filterOf(ctx context.Context, cjs []*km.Conjunct, records []string) (*filterState, error) {
	fs := &filterState{pass: map[string]column.Bitmap{}}
	for _, cj := range cjs {
		home, err := s.holds(ctx, cj)
		if err != nil {
			return nil, err
		}
		for _, rec := range records {
			path, ok := cj.Reach[rec]
			if !ok {
				return nil, fmt.Errorf("exec: conjunct on %s has no path to %s", cj.Home, rec)
			}
			b, err := s.carry(home, path)
			if err != nil {
				return nil, err
			}
			if prev := fs.pass[rec]; prev != nil {
				for i := range prev {
					prev[i] &= b[i]
				}
			} else {
				// b is this request's own: a fresh bitmap of holds or carry (the home
				// record's is holds' itself, which no later step of this loop changes).
				fs.pass[rec] = b
			}
		}
	}
	return fs, nil
}

// Selection returns the rows of p.Grain that pass p's filter, ascending, or nil when the
// plan has no filter (every row). p must be a plan without KPIs.
func (s *Source) Selection(p *km.Plan) ([]int32, error) {
	if len(p.Filter) == 0 {
		return nil, nil
	}
	fs, err := s.filter(context.Background(), p, []string{p.Grain})
	if err != nil {
		return nil, err
	}
	return selection(fs.pass[p.Grain]), nil
}

// Run executes p and returns its page of rows (or groups).
func (s *Source) Run(p *km.Plan) (*query.Result, error) {
	return s.RunContext(context.Background(), p)
}

// RunContext is Run bounded by ctx: once ctx is done (client gone, time limit, shutdown)
// the work stops at the next check, each at most one pass over a column or a few thousand
// rows of a grouping, a sort or a search apart (see stop), and RunContext returns
// ctx.Err(). Sort indexes, built once per frame and column and shared by later requests,
// are always completed (one radix sort of the column).
func (s *Source) RunContext(ctx context.Context, p *km.Plan) (res *query.Result, err error) {
	defer recoverHalt(&err)
	a := &arena{s: s.scratch}
	defer a.release() // after the run: the result holds values, never the buffers
	st := newStop(ctx)
	if len(p.KPIs) == 0 {
		return s.runRows(ctx, p, st, a)
	}
	fs, err := s.filter(ctx, p, p.Records)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.runKPIs(ctx, p, fs, st, a)
}

// runRows lists the rows of the grain with the executor's plan over the grain's frame. A
// sorted page without a count first tries earlyTop with the filter evaluated row by row
// (rowFilter); otherwise, or when the walk gives up, the filter's bitmap over the grain
// rows selects them.
func (s *Source) runRows(ctx context.Context, p *km.Plan, st *stop, a *arena) (*query.Result, error) {
	rowKey := slices.ContainsFunc(p.Fields, func(c km.ColumnRef) bool { return c.Field == km.RowField && c.Record == p.Grain })
	f, err := s.frame(p.Grain, p.RowJoin, rowKey)
	if err != nil {
		return nil, err
	}
	if f, err = s.dropFailingParents(ctx, p, f); err != nil {
		return nil, err
	}
	pl, err := compileRows(f, p)
	if err != nil {
		return nil, err
	}
	pl.lend = query.RecyclingFrom(ctx)
	pl.stop = st
	pl.scores = s.scores
	pl.arena = a
	res := &query.Result{Columns: pl.cols}
	for i := range res.Columns {
		res.Columns[i].Name = p.Columns[i].Name
	}
	if len(p.Filter) > 0 && pl.earlyPageFits() {
		keep, err := s.rowFilter(p)
		if err != nil {
			return nil, err
		}
		if keep != nil {
			if top, ok := pl.earlyTop(keep); ok {
				res.Rows = pl.pageOf(top)
				return res, nil
			}
		}
	}
	fs, err := s.filter(ctx, p, []string{p.Grain})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b := fs.pass[p.Grain]; b != nil {
		// fs is this request's: its bitmap is the run's to change.
		pl.filter = func() truth { return truth{t: b} }
	}
	if top, count, ok := pl.searchTop(); ok {
		res.Rows = pl.pageOf(top)
		if p.Count {
			res.Count = count
		}
		return res, nil
	}
	rows, order := pl.selectRows()
	var count int
	res.Rows, count = pl.rowPage(rows, order)
	if p.Count {
		res.Count = count
	}
	return res, nil
}

// compileRows compiles the rows of p, a plan without KPIs, over f, the frame of its grain
// and RowJoin: the plan's columns, its sort keys (a column of the plan, or a value
// expression), its search and its page, read from the plan as the planner checked them.
func compileRows(f *Frame, p *km.Plan) (*plan, error) {
	if p.Page < 0 || p.PageSize < 1 {
		return nil, fmt.Errorf("exec: %w: page %d, page size %d", ErrInvalidRequest, p.Page, p.PageSize)
	}
	pl := &plan{f: f, page: p.Page, pageSize: p.PageSize, distinct: p.Distinct, count: p.Count}
	names := make([]string, len(p.Fields))
	pl.refs = make([]ref, len(p.Fields))
	pl.cols = make([]query.ColumnHeader, len(p.Fields))
	for i, c := range p.Fields {
		names[i] = c.Name()
		r, err := f.lookup(names[i])
		if err != nil {
			return nil, err
		}
		pl.refs[i] = r
		pl.cols[i] = query.ColumnHeader{Name: names[i], Type: r.col.Type()}
	}
	pl.keys = make([]sortKey, len(p.Sort))
	for i, k := range p.Sort {
		pl.keys[i].desc = k.Desc
		if k.Expr != nil {
			col, err := f.scalarColumn(k.Expr)
			if err != nil {
				return nil, err
			}
			pl.keys[i].col, pl.keys[i].ref = -1, ref{col: col}
			continue
		}
		if k.Column < 0 || k.Column >= len(pl.refs) {
			return nil, fmt.Errorf("exec: %w: sort key on column %d of %d", ErrInvalidRequest, k.Column, len(pl.refs))
		}
		pl.keys[i].col, pl.keys[i].ref = k.Column, pl.refs[k.Column]
	}
	if s := p.Search; s != nil {
		pl.search = s
		searched, err := f.searchedColumns(s, names)
		if err != nil {
			return nil, err
		}
		pl.searched = searched
	}
	return pl, nil
}

// dropFailingParents returns the frame f of p's grain and RowJoin with the parent rows
// that fail p.RowChecks read as missing, and with them every row reached through them:
// f itself when the plan has no RowChecks, else a frame of this request whose joined
// columns read through new indexes (its sort indexes are built anew when a sort walks
// them).
func (s *Source) dropFailingParents(ctx context.Context, p *km.Plan, f *Frame) (*Frame, error) {
	if p.RowChecks == nil {
		return f, nil
	}
	// dropped[rec] marks the frame rows whose row of rec is dropped (nil: none).
	dropped := map[string]column.Bitmap{}
	indexes := map[string][]int32{}
	for i, st := range p.RowJoin {
		var pass column.Bitmap
		if len(p.RowChecks[i]) > 0 {
			fs, err := s.filterOf(ctx, p.RowChecks[i], []string{st.To})
			if err != nil {
				return nil, err
			}
			pass = fs.pass[st.To]
		}
		from := dropped[st.From]
		if pass == nil && from == nil {
			continue
		}
		c, ok := f.refs[st.To+"."+st.ToField]
		if !ok || c.index == nil {
			return nil, fmt.Errorf("exec: the frame of %s does not join %s", p.Grain, st.To)
		}
		d := column.NewBitmap(f.rows)
		idx := make([]int32, f.rows)
		for r, t := range c.index {
			if t >= 0 && (from != nil && from.Get(r) || pass != nil && !pass.Get(int(t))) {
				t = -1
				d.Set(r)
			}
			idx[r] = t
		}
		dropped[st.To] = d
		indexes[st.To] = idx
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return f.reindexed(indexes), nil
}

// rowFilter compiles p's filter into a test of one grain row, or nil when a conjunct
// has no row form: its expression (see compileRow), or its path to the grain, which may
// only go down (a grain row passes when its ancestor along the path does; a step up
// would make a grain row pass when any of its children does).
func (s *Source) rowFilter(p *km.Plan) (func(r int32) bool, error) {
	type conj struct {
		test rowPred
		up   [][]int32 // the parent indexes from the grain back to the home record
	}
	conjs := make([]conj, 0, len(p.Filter))
	for _, cj := range p.Filter {
		path, ok := cj.Reach[p.Grain]
		if !ok {
			return nil, fmt.Errorf("exec: conjunct on %s has no path to %s", cj.Home, p.Grain)
		}
		var up [][]int32
		for i := len(path) - 1; i >= 0; i-- {
			if path[i].Up {
				return nil, nil
			}
			idx, err := s.stepIndex(path[i])
			if err != nil {
				return nil, err
			}
			up = append(up, idx)
		}
		f, err := s.frame(cj.Home, cj.Reads, namesRowKey(cj.Expr, cj.Home))
		if err != nil {
			return nil, err
		}
		test, ok := f.compileRow(cj.Expr)
		if !ok {
			return nil, nil
		}
		conjs = append(conjs, conj{test: test, up: up})
	}
	if len(conjs) == 1 && len(conjs[0].up) == 0 {
		// One condition on the grain itself (a small page's usual filter): one call less
		// per walked row.
		test := conjs[0].test
		return func(r int32) bool { return test(r) == triTrue }, nil
	}
	return func(r int32) bool {
		for _, c := range conjs {
			h := r
			for _, idx := range c.up {
				if h = idx[h]; h < 0 {
					return false
				}
			}
			if c.test(h) != triTrue {
				return false
			}
		}
		return true
	}, nil
}

// groupSet numbers the groups of all aggregates by their dimension values.
type groupSet struct {
	ids   map[string]int32
	vals  [][]query.Value // dimension values per group
	first []int           // the first aggregate that found the group
	minG  []int32         // the least grain row of that aggregate paired with the group
	buf   []byte
}

// id returns the group of the dimension values read from tuple row r of the parts.
func (gs *groupSet) id(parts []keyPart, r int32, agg int) int32 {
	gs.buf = gs.buf[:0]
	for _, k := range parts {
		v, null := k.part(r)
		if null {
			gs.buf = append(gs.buf, 1)
			v = 0
		} else {
			gs.buf = append(gs.buf, 0)
		}
		gs.buf = binary.LittleEndian.AppendUint64(gs.buf, v)
	}
	if id, ok := gs.ids[string(gs.buf)]; ok {
		return id
	}
	id := int32(len(gs.vals))
	gs.ids[string(gs.buf)] = id
	vals := make([]query.Value, len(parts))
	for i, k := range parts {
		vals[i] = k.ref.value(r)
	}
	gs.vals = append(gs.vals, vals)
	gs.first = append(gs.first, agg)
	gs.minG = append(gs.minG, -1)
	return id
}

// pairs are the distinct (group, grain row) pairs of one aggregate.
type pairs struct {
	g   []int32   // grain rows; nil: every grain row in order, one pair each (g[i] == i)
	ids *groupIDs // global group ids
}

// runKPIs computes the KPIs per group of the dimensions.
func (s *Source) runKPIs(ctx context.Context, p *km.Plan, fs *filterState, st *stop, ar *arena) (*query.Result, error) {
	gs := &groupSet{ids: map[string]int32{}}
	if len(p.Fields) == 0 {
		gs.vals, gs.first, gs.minG = [][]query.Value{{}}, []int{0}, []int32{-1}
	}
	all := make([]pairs, len(p.Aggregates))
	byJoin := map[string]pairs{} // aggregates with the same grain and join share their pairs
	for i, a := range p.Aggregates {
		var key strings.Builder
		key.WriteString(a.Grain)
		for _, st := range a.Expand {
			key.WriteString(" " + st.String())
		}
		if pr, ok := byJoin[key.String()]; ok {
			all[i] = pr
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pr, err := s.expand(p, fs, a, gs, st, ar)
		if err != nil {
			return nil, err
		}
		all[i] = pr
		byJoin[key.String()] = pr
	}
	n := len(gs.vals)
	values, err := s.aggregates(ctx, p.Aggregates, all, n)
	if err != nil {
		return nil, err
	}
	k := len(p.Fields)
	rows := make([][]query.Value, n)
	for gi := range rows {
		st.check(1)
		row := make([]query.Value, 0, len(p.Columns))
		row = append(row, gs.vals[gi]...)
		for _, kp := range p.KPIs {
			row = append(row, metricValue(kp.Metric, values, gi, kp.Type))
		}
		rows[gi] = row
	}
	// Natural order: by the first aggregate that found the group, the least grain row it
	// paired with it, then the dimension values ascending, nulls last.
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	natural := func(a, b int32) int {
		if c := cmp.Compare(gs.first[a], gs.first[b]); c != 0 {
			return c
		}
		if c := cmp.Compare(gs.minG[a], gs.minG[b]); c != 0 {
			return c
		}
		for j := range k {
			if c := compareValues(rows[a][j], rows[b][j], false); c != 0 {
				return c
			}
		}
		return 0
	}
	var score []uint8
	if p.Search != nil {
		order, score = searchGroups(p, rows, order, st)
	}
	slices.SortStableFunc(order, st.order(func(a, b int32) int {
		for _, sk := range p.Sort {
			if c := compareValues(rows[a][sk.Column], rows[b][sk.Column], sk.Desc); c != 0 {
				return c
			}
		}
		if score != nil && len(p.Sort) == 0 {
			if c := cmp.Compare(score[b], score[a]); c != 0 {
				return c
			}
		}
		return natural(a, b)
	}))
	res := &query.Result{Columns: make([]query.ColumnHeader, len(p.Columns))}
	for i, c := range p.Columns {
		res.Columns[i] = query.ColumnHeader{Name: c.Name, Type: c.Type, KPI: c.KPI != nil}
	}
	start, end := pageBounds(len(order), p.Page, p.PageSize)
	res.Rows = make([][]query.Value, 0, end-start)
	for _, gi := range order[start:end] {
		res.Rows = append(res.Rows, rows[gi])
	}
	if p.Count {
		res.Count = len(order)
	}
	return res, nil
}

// searchGroups keeps the groups whose best score over the searched dimensions reaches the
// precision, and returns them with every group's score.
func searchGroups(p *km.Plan, rows [][]query.Value, order []int32, st *stop) ([]int32, []uint8) {
	m := fuzzy.New(p.Search.Term)
	var cols []int
	for _, f := range p.Search.Fields {
		cols = append(cols, slices.Index(p.Fields, f))
	}
	score := make([]uint8, len(rows))
	kept := order[:0]
	for _, gi := range order {
		st.check(64) // a fuzzy score costs about as much as 64 rows of a loop
		for _, j := range cols {
			if v := rows[gi][j]; !v.Null {
				text := v.Str
				if v.Type == query.TypeTime {
					text = query.TimeText(v.Int)
				}
				score[gi] = max(score[gi], uint8(m.Score(text)))
			}
		}
		if int(score[gi]) >= p.Search.Precision {
			kept = append(kept, gi)
		}
	}
	return kept, score
}

// expand builds the tuples of one aggregate, groups them, and returns its distinct
// (group, grain row) pairs. Its buffers, the pairs' among them, are ar's.
func (s *Source) expand(p *km.Plan, fs *filterState, a *km.Aggregate, gs *groupSet, stp *stop, ar *arena) (pairs, error) {
	gt, err := s.table(a.Grain)
	if err != nil {
		return pairs{}, err
	}
	// The grain rows the tuples start from; nil for every row in order, which only a step
	// that gathers through them (down, or up to a filtered parent) needs written out.
	every := fs.pass[a.Grain] == nil
	var grain []int32
	if !every {
		grain = selectionIn(ar, fs.pass[a.Grain])
	} else if slices.ContainsFunc(a.Expand, func(st km.Step) bool {
		return !st.Up || st.From == a.Grain && fs.pass[st.To] != nil
	}) {
		grain = rowRangeIn(ar, 0, gt.Rows())
		every = false
	}
	if len(p.Fields) == 0 {
		n := len(grain)
		if every {
			n = gt.Rows()
		}
		return pairs{g: grain, ids: &groupIDs{keyed: true, count: n}}, nil // one group
	}
	// The tuples: one row number per record, -1 for null.
	idx := map[string][]int32{a.Grain: grain}
	recs := []string{a.Grain}
	down := false
	for _, st := range a.Expand {
		from := idx[st.From]
		if st.Up {
			pi, err := s.stepIndex(st)
			if err != nil {
				return pairs{}, err
			}
			pass := fs.pass[st.To]
			if !down && st.From == a.Grain && fs.pass[a.Grain] == nil && pass == nil {
				// Every grain row in order, each parent passing: the tuples' parents are
				// the relationship's index itself (read only), not a gather of it.
				idx[st.To] = pi
				recs = append(recs, st.To)
				continue
			}
			to := ar.int32s(len(from))
			up := func(_, lo, hi int) {
				for t, r := range from[lo:hi] {
					q := int32(-1)
					if r >= 0 {
						q = pi[r]
					}
					if q >= 0 && pass != nil && !pass.Get(int(q)) {
						q = -1
					}
					to[lo+t] = q
				}
			}
			if n := chunks(); len(from) >= parallelRows && n > 1 {
				inChunks(len(from), n, up) // a gather: each tuple's parent on its own
			} else {
				up(0, 0, len(from))
			}
			idx[st.To] = to
			recs = append(recs, st.To)
			continue
		}
		down = true
		ch, err := s.children(st)
		if err != nil {
			return pairs{}, err
		}
		// rep[t'] is the tuple t that tuple t' copies; to[t'] the child row.
		rep := make([]int32, 0, len(from))
		to := make([]int32, 0, len(from))
		pass := fs.pass[st.To]
		for t, r := range from {
			stp.check(1)
			n := 0
			if r >= 0 {
				for _, c := range ch.rows[ch.off[r]:ch.off[r+1]] {
					if pass == nil || pass.Get(int(c)) {
						rep = append(rep, int32(t))
						to = append(to, c)
						n++
					}
				}
			}
			if n == 0 {
				rep = append(rep, int32(t))
				to = append(to, -1)
			}
		}
		for _, rec := range recs {
			stp.check(len(rep))
			old := idx[rec]
			nw := ar.int32s(len(rep))
			for i, t := range rep {
				nw[i] = old[t]
			}
			idx[rec] = nw
		}
		idx[st.To] = to
		recs = append(recs, st.To)
	}
	// The tuple frame: the dimension columns read through the tuples' row numbers.
	nt := len(idx[a.Grain])
	if every {
		nt = gt.Rows()
	}
	parts := make([]keyPart, len(p.Fields))
	for i, c := range p.Fields {
		t, err := s.table(c.Record)
		if err != nil {
			return pairs{}, err
		}
		col, ok := t.Column(c.Field)
		if !ok {
			return pairs{}, fmt.Errorf("exec: %w %q", ErrUnknownField, c.Name())
		}
		rows, ok := idx[c.Record]
		if !ok {
			return pairs{}, fmt.Errorf("exec: aggregate at %s does not reach %s", a.Grain, c.Record)
		}
		if c.Record == a.Grain && !down && fs.pass[a.Grain] == nil {
			rows = nil // every grain row, in order: read the column directly
		}
		parts[i] = newKeyPart(ref{col: col, index: rows})
	}
	g := idx[a.Grain]
	// least notes the least grain row of each group this aggregate found first.
	least := func(gi, g int32) {
		if gs.first[gi] == a.Index && (gs.minG[gi] < 0 || g < gs.minG[gi]) {
			gs.minG[gi] = g
		}
	}
	direct := !slices.ContainsFunc(parts, func(k keyPart) bool { return k.ref.index != nil })
	if dense := denseKeys(parts); direct && dense > 0 && dense <= keyedLimit {
		// Every grain row, a pair each, its key read from the grain's own columns, and
		// few keys: the aggregates compute each row's group from its key (groupIDs
		// keyed), so only the keys' first rows are found here. (Keys read through a join
		// index cost more to combine again for each aggregate than the written ids cost
		// to read.) The grain rows ascend, so a group's least is its first row.
		first := denseFirsts(parts, nil, nt, dense, nil, stp, ar)
		keys := blockKeys(parts, first, 0, len(first), nil, ar.int32s(len(first)))
		byKey := ar.int32s(dense) // read only at the keys present, each set below
		for l, t := range first {
			stp.check(1)
			gi := gs.id(parts, t, a.Index)
			byKey[keys[l]] = gi
			if g != nil {
				t = g[t]
			}
			least(gi, t)
		}
		return pairs{g: g, ids: &groupIDs{keyed: true, count: nt, parts: parts, byKey: byKey}}, nil
	}
	local, first := groupRows(parts, nil, nt, stp, ar) // the tuples 0..nt-1
	global := make([]int32, len(first))
	for l, t := range first {
		stp.check(1)
		global[l] = gs.id(parts, t, a.Index)
	}
	if !isIdentity(global) {
		for t, l := range local {
			local[t] = global[l]
		}
	}
	if !down {
		// The grain rows ascend: a group's least is the row of its first tuple.
		for l, t := range first {
			if g != nil {
				t = g[t]
			}
			least(global[l], t)
		}
		return pairs{g: g, ids: writtenIDs(local)}, nil
	}
	// Distinct (group, grain row) pairs. The tuples of a grain row are contiguous (the
	// expansion keeps the grain's order), so a group seen with the current grain row is
	// remembered by stamping it with that row.
	stamp := make([]int32, len(gs.vals))
	kept, keptIDs := ar.int32s(nt)[:0], ar.int32s(nt)[:0] // at most nt pairs: no growth
	for t, gi := range local {
		if r := g[t]; stamp[gi] != r+1 {
			stamp[gi] = r + 1
			kept = append(kept, r)
			keptIDs = append(keptIDs, gi)
			least(gi, r)
		}
	}
	return pairs{g: kept, ids: writtenIDs(keptIDs)}, nil
}

// isIdentity reports whether ids[i] == i for every i.
func isIdentity(ids []int32) bool {
	for i, id := range ids {
		if id != int32(i) {
			return false
		}
	}
	return true
}

// parallelPairs is the number of (group, row) pairs from which runKPIs computes its
// aggregates on several cores: below it the goroutines cost more than they save.
var parallelPairs = 1 << 16

// sumKey names the values a sum or an avg adds: one field of the grain over the same
// pairs (pairs are shared between aggregates, never copied: their group ids name them)
// with the same condition.
type sumKey struct {
	ids   *groupIDs
	field string
	cond  string
}

// sumKeyOf returns the sumKey of a, a sum or an avg over pr, or false for any other
// aggregate, no pairs, or a condition without a key (condKey).
func sumKeyOf(a *km.Aggregate, pr pairs) (sumKey, bool) {
	if (a.Func != query.AggSum && a.Func != query.AggAvg) || a.Field == nil || pr.ids.len() == 0 {
		return sumKey{}, false
	}
	k := sumKey{ids: pr.ids, field: a.Field.Name()}
	if a.Cond != nil {
		c, ok := condKey(a)
		if !ok {
			return sumKey{}, false
		}
		k.cond = c
	}
	return k, true
}

// aggregates computes each aggregate of aggs over its pairs (all[i]) for n groups. The
// aggregates are independent, so with enough pairs they run on up to GOMAXPROCS
// goroutines, each aggregate on one (its values are the same as computed alone). A sum
// and an avg of the same values (TOTAL_NET and AVG_NET) add them once: the second reads
// the first's sums, and runs after every aggregate that adds its own, so that it rarely
// waits for them.
func (s *Source) aggregates(ctx context.Context, aggs []*km.Aggregate, all []pairs, n int) ([][]query.Value, error) {
	values := make([][]query.Value, len(aggs))
	if len(aggs) == 0 { // KPIs of constants only ("3")
		return values, nil
	}
	keys := make([]*sumKey, len(aggs))
	order := make([]int, 0, len(aggs))
	var twins []int
	seen := map[sumKey]bool{}
	for i, a := range aggs {
		if k, ok := sumKeyOf(a, all[i]); ok {
			keys[i] = &k
			if seen[k] {
				twins = append(twins, i)
				continue
			}
			seen[k] = true
		}
		order = append(order, i)
	}
	order = append(order, twins...)
	var sums sync.Map // sumKey -> *lazy holding groupSums
	errs := make([]error, len(aggs))
	run := func(i int) {
		if errs[i] = ctx.Err(); errs[i] == nil {
			values[i], errs[i] = s.aggregate(ctx, aggs[i], all[i], n, &sums, keys[i])
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(aggs))
	if total := all[0].ids.len() * len(aggs); workers < 2 || total < parallelPairs {
		for _, i := range order {
			if run(i); errs[i] != nil {
				return nil, errs[i]
			}
		}
		return values, nil
	}
	var next atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := int(next.Add(1)) - 1; j < len(order); j = int(next.Add(1)) - 1 {
				run(order[j])
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return values, nil
}

// aggregate computes one aggregate over its pairs for n groups. A sum or an avg with a
// key takes the sums of its values from sums, adding them there when no other aggregate
// of the run has.
func (s *Source) aggregate(ctx context.Context, a *km.Aggregate, pr pairs, n int, sums *sync.Map, key *sumKey) ([]query.Value, error) {
	gt, err := s.table(a.Grain)
	if err != nil {
		return nil, err
	}
	f := FromTable(gt)
	qa := &query.Aggregate{Func: a.Func}
	if a.Field != nil {
		qa.Field = a.Field.Field
		if a.Func == query.AggCountDistinct && s.distinctValues(gt, a.Field.Field) {
			// Every row holds a value of its own, and the pairs hold a grain row once
			// per group: the distinct values of a group are its rows' values.
			qa.Func = query.AggCount
		}
	}
	var cond pred
	if a.Cond != nil {
		b, err := s.condRows(ctx, a)
		if err != nil {
			return nil, err
		}
		cond = func() truth { return truth{t: b} }
	}
	cm, err := f.aggregateWith(qa, cond)
	if err != nil {
		return nil, err
	}
	// An arena of this call's own: aggregates runs aggregate on several goroutines, and an
	// arena is one goroutine's. The values computed never point into its buffers.
	ar := &arena{s: s.scratch}
	defer ar.release()
	g := groups{sel: pr.g, ids: pr.ids, n: n, arena: ar}
	if key != nil && cm.sums != nil {
		v, _ := cachedIn(sums, *key, func() (any, error) { return cm.sums.add(g), nil })
		return cm.sums.finish(v.(groupSums)), nil
	}
	return cm.eval(g), nil
}

// distinctValues reports whether every row of t's column field holds a value no other
// row holds (none null), as the column's sort index says (a run per row), when Warm or
// a page has built it: a record's key, which Warm sorts, usually does. Without an index
// it reports false (building one would cost more than the count it saves).
func (s *Source) distinctValues(t *column.Table, field string) bool {
	c, ok := t.Column(field)
	if !ok {
		return false
	}
	if _, ok := s.sorts.Load(c); !ok {
		return false
	}
	ix := tableSortIndex(s.sorts, c, nil) // built, or being built: waits for it
	return ix.nonNull == c.Len() && ix.runs() == c.Len()
}

// metricValue computes a KPI's value in group gi from its aggregates' values.
func metricValue(m km.Metric, values [][]query.Value, gi int, t query.Type) query.Value {
	switch x := m.(type) {
	case *km.Aggregate:
		return values[x.Index][gi]
	case *km.Number:
		return query.Float(x.V)
	case *km.Arith:
		l := metricValue(x.L, values, gi, query.TypeFloat)
		r := metricValue(x.R, values, gi, query.TypeFloat)
		if l.Null || r.Null {
			return query.Null(query.TypeFloat)
		}
		op, err := arith(x.Op)
		if err != nil {
			return query.Null(query.TypeFloat)
		}
		return op(asFloat(l), asFloat(r))
	}
	return query.Null(t)
}
