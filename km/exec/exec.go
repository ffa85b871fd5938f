// Package exec runs queries over tables held in memory by package column: filter, fuzzy
// search, sort, distinct, paging, projection, and KPIs grouped by the selected fields.
//
// A Source runs the km.Plans the request layer (km.Service) compiles, over the tables of a
// KM's records, with the plan's semantics (filters carried across relationships, every
// aggregate at its grain; see Source and package km), reading the plan itself: its
// columns, sort keys, search and page compile straight into the executor's plan
// (compileRows), with no second request model in between. A plan is valid by
// construction: the executor checks nothing km.NewPlan has checked, and its errors
// (ErrInvalidRequest, ErrUnknownField) mean a plan and the Source's tables disagree.
//
// How it works: a filter conjunct is compiled once into closures over the columns of the
// frame of its record (the record's table, joined to the parents it reads). Each node
// evaluates over all rows at once into two bitmaps, the rows where it is true and the rows
// where it is false; rows in neither are unknown, which gives SQL's three-valued logic
// with word-wise and/or/not (see truth). Bitmaps beat selection vectors here: a leaf
// is one tight loop over a column writing 64 rows per word, combining nodes costs n/64
// word operations, and negation needs the false set that a selection vector cannot carry.
// The surviving rows become a selection vector ([]int32) for search, sort and grouping.
// String predicates (comparisons, in, contains/startswith/endswith) and search scores are
// computed once per dictionary value and looked up by code per row. Columns of joined
// tables are evaluated over their own rows and read through the frame's join index.
//
// A frame keeps two kinds of index, each built on first use and kept for the frame's life
// (never results): per sorted column, the rows in sort order with the bounds of each run of
// equal values (4 bytes a row, plus 4 a distinct value); per string column of at most 32
// distinct values, the rows of each value as a bitmap (at most 4 bytes a row). A page
// sorted on a column then walks its order, tests each row against the filter's bitmap and
// stops at the page's end, when that is likely to be soon (see plan.indexTop); a string
// predicate ORs the bitmaps of the values it accepts instead of reading every row's code.
// A sorted page that needs no count (nor distinct or search) first skips the bitmaps:
// it walks the sort index evaluating the filter on each walked row only (Source.rowFilter)
// and stops after the page's end, giving up for the bitmaps past about n/16 rows, or
// sooner when the share of rows passing so far says the page's end lies further (see
// plan.earlyTop). A distinct page in row order that needs no count walks the rows from
// the first and stops once it has the page's combinations (firstsUpTo), giving up for the
// whole grouping past 64Ki rows. The top of a filter computes only its true rows: the
// false rows, which only NOT reads, are left out below its ANDs and ORs (compileTrue).
// Unfiltered pages allocate nothing per row.
//
// Grouping combines the dimension columns' dictionary codes (or small integer ranges) into
// one key per row in mixed radix, column by column, gathering a parent's codes through the
// relationship index in the same loop; the keys index an array of group ids. It works a
// block of rows at a time and writes only the group ids: over every row in order (a KPI
// request without a filter) no vector of row numbers is written or read, in the grouping
// or in the aggregates' loops, which matters most to a first request, whose caches hold
// none of its buffers. countdistinct
// over such a column marks one bit per (group, code) in per-group bitmaps (up to 32 MiB of
// them); over other columns, or past that size, it buckets the values by group, sorts each
// bucket and counts the runs; over a column whose sort index, when built, shows a value
// of its own in every row (a record's key), it counts the rows. A KPI's condition (ratio(DAYS_LATE gt 0), sum(V, S eq
// 'X')) is evaluated once per Source into a bitmap over its grain's rows and kept (at
// most condCacheBytes; Source.Warm evaluates those of the KM's KPIs); a sum and an avg of
// the same values in one request add them once.
//
// Behaviours chosen where the specification is silent:
//
//   - Search: without search fields the searched fields are the string and time fields
//     among the selected fields; a time is searched as its HH:MM:SS text (query.TimeText),
//     as the API presents it. A null cell scores 0. Without a sort, rows come best score
//     first, ties in row order; with Distinct a distinct row takes the best score of its
//     rows; with KPIs a group is scored by its (selected) dimension values.
//   - Distinct keeps the first row of each distinct combination in the result order. With
//     KPIs it changes nothing: groups are distinct already.
//   - Search precision is used as given: above 100 nothing matches, 0 or less everything.
//   - KPIs: with no field selected there is exactly one group, also over zero rows (count()
//     is then 0, sum null). Groups come in order of first appearance (after the search
//     order), and a sort on them is stable. count, countdistinct and the sum of an
//     integer field give integers, min and max the field's type, everything else floats;
//     median of an even count is the mean of the middle two (stats.Midpoint). ratio over
//     a group of no rows is null. sum and avg of a float field add with Neumaier's compensation (see
//     compensated): sums of decimal amounts are the double nearest to their true sum (but
//     where huge values cancel). Integers add exactly (package km's doc, "Numbers"): in
//     int64, taken again counting the wraps past ±2^63 only where an addition overflowed;
//     a sum that does not fit in int64 is null, the avg the double nearest to the mean.
//   - An integer field against a float literal, and a date field against a datetime, compare
//     exactly; a datetime field against a date literal compares the day (UTC).
//   - "in" with null in its list: rows matching no other value are unknown, as in SQL.
//   - Page beyond the end: no rows and no error.
//
// A Source is safe for concurrent use.
package exec

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/query/fuzzy"
)

// ErrUnknownField is wrapped by errors about names that are not columns of the frame.
var ErrUnknownField = errors.New("unknown field")

// ErrInvalidRequest is wrapped by errors about plans the executor cannot run: a literal
// of the wrong type, a sum, avg or median of a non-numeric field (km.NewPlan refuses them
// first).
var ErrInvalidRequest = errors.New("invalid request")

// plan is the rows of a km.Plan compiled against the frame of its grain (compileRows).
type plan struct {
	f *Frame
	// page and pageSize select the page; distinct drops repeated rows; count asks for the
	// count before paging.
	page, pageSize  int
	distinct, count bool
	search          *km.Search           // nil: no search
	refs            []ref                // the selected columns
	cols            []query.ColumnHeader // the result columns, one per ref
	keys            []sortKey            // the sort keys, in priority order
	filter          pred                 // nil: every row
	searched        []ref                // the columns a search looks at
	scores          *scoreCache          // the Source's dictionary scores (nil: none)
	arena           *arena               // the run's scratch buffers (nil: allocate)
	// lend, when set, takes the cells of the projected page from the pool and lends them
	// to the caller's results (query.Recycling).
	lend *query.Recycling
	// stop ends the loops once the run's context is done (nil: never; see stop).
	stop *stop
}

// sortKey is a compiled sort key: the result column it sorts by (-1 for a value
// expression), the column it reads (a selected one, or the expression's values) and its
// direction.
type sortKey struct {
	col  int
	ref  ref
	desc bool
}

// rowSet is a set of frame rows: every row (all), the rows set in bits, or, when bits is
// nil, the rows of sel (ascending, or in search order).
type rowSet struct {
	bits column.Bitmap
	sel  []int32
	all  bool // every one of the n rows of the frame, without a bitmap
	n    int
}

// len is the number of rows in the set.
func (s rowSet) len() int {
	if s.all {
		return s.n
	}
	if s.bits != nil {
		return popcount(s.bits)
	}
	return len(s.sel)
}

// vector returns the rows as a selection vector, in a buffer of a when it makes one.
func (s rowSet) vector(a *arena) []int32 {
	if s.all {
		return rowRangeIn(a, 0, s.n)
	}
	if s.bits != nil {
		return selectionIn(a, s.bits)
	}
	return s.sel
}

// keep returns the test of a frame row's membership in the set, nil for every row.
func (s rowSet) keep(n int) func(r int32) bool {
	if s.all {
		return nil
	}
	in := s.bits
	if in == nil {
		in = bitmapOf(s.sel, n)
	}
	return func(r int32) bool { return in[r>>6]&(1<<(uint32(r)&63)) != 0 }
}

// rowRange returns the rows from, from+1, ..., to-1.
func rowRange(from, to int) []int32 { return rowRangeIn(nil, from, to) }

// rowRangeIn is rowRange in a buffer of the arena a.
func rowRangeIn(a *arena, from, to int) []int32 {
	sel := a.int32s(to - from)
	for i := range sel {
		sel[i] = int32(from + i)
	}
	return sel
}

// selectRows returns the rows that pass the filter and the search, and the search order
// (best score first) when there is a search. Without a search the rows are a bitmap.
func (p *plan) selectRows() (rowSet, rowCmp) {
	var rows rowSet
	if p.filter != nil {
		rows.bits = p.filter().t
		if rows.bits == nil {
			rows.bits = column.NewBitmap(p.f.rows)
		}
	} else {
		rows = rowSet{all: true, n: p.f.rows}
	}
	if p.search == nil {
		return rows, nil
	}
	sel, score := search(p.f.rows, rows.vector(p.arena), p.searched, p.search, p.scores, p.stop, p.arena)
	return rowSet{sel: sel}, func(a, b int32) int { return int(score[b]) - int(score[a]) }
}

// rowPage orders rows (sort keys, else the search order, else row order), removes
// duplicates when asked, and returns the requested page and the number of rows before
// paging. With sort keys it walks the first key's sort index when that is likely to find
// the page's end early (see indexTop); otherwise only the rows up to the page's end are
// sorted when that is far fewer than all.
func (p *plan) rowPage(rows rowSet, order rowCmp) ([][]query.Value, int) {
	if len(p.keys) > 0 {
		order = chain(p.keyCmps(0))
	} else if order != nil {
		order = chain([]rowCmp{order})
	}
	order = p.stop.order(order)
	if p.distinct {
		var sel []int32 // nil: every row, in row order
		if !rows.all || order != nil && len(p.keys) == 0 {
			sel = rows.vector(p.arena)
		}
		parts := make([]keyPart, len(p.refs))
		for i, c := range p.refs {
			parts[i] = newKeyPart(c)
		}
		if order != nil && len(p.keys) == 0 {
			// Search order: the best-scoring row of each distinct combination represents it.
			slices.SortFunc(sel, order)
			order = nil
		}
		// With sort keys, all selected, duplicates sort together: the first row of each
		// combination in row order is also first in sorted order. In row order without a
		// count, the page's rows are among the first: the walk stops at the page's end.
		var first []int32
		ok := false
		if end, fits := pageEnd(p.page, p.pageSize); fits && order == nil && len(p.keys) == 0 && !p.count {
			first, ok = firstsUpTo(parts, sel, rows.n, end, p.stop, p.arena)
		}
		if !ok {
			first = groupFirsts(parts, sel, rows.n, p.stop, p.arena)
		}
		if sel != nil {
			for i, pos := range first {
				first[i] = sel[pos]
			}
		}
		rows = rowSet{sel: first}
	}
	count := rows.len()
	start, end := pageBounds(count, p.page, p.pageSize)
	if len(p.keys) > 0 && p.keys[0].col >= 0 && start < end {
		if top, ok := p.indexTop(rows, count, end); ok {
			return p.project(top[start:end]), count
		}
	}
	if rows.all && order == nil {
		return p.project(rowRange(start, end)), count // row order: no selection of all rows
	}
	sel := rows.vector(p.arena)
	if order != nil {
		sel = sortTop(sel, order, end)
	}
	return p.project(sel[start:end]), count
}

// keyCmps compiles the sort keys from the from'th on over the selected columns.
func (p *plan) keyCmps(from int) []rowCmp {
	cmps := make([]rowCmp, 0, len(p.keys)-from)
	for _, k := range p.keys[from:] {
		cmps = append(cmps, keyCmp(k.ref, k.desc))
	}
	return cmps
}

// indexTop returns the first end of the count rows in sort order, end <= count, by walking
// the sort index of the first sort key: each run of equal values in turn, the rows of the
// set in it ordered by the other keys, until end rows are found. Unless the filter favours
// the rows at the far end of the order, the walk stops after about end*n/count index
// entries, against count comparisons at least for sorting the rows. It is not tried when
// that estimate exceeds 2*count, and gives up (false) past 4*count+end entries.
func (p *plan) indexTop(rows rowSet, count, end int) ([]int32, bool) {
	n := p.f.rows
	if int64(end)*int64(n) > 2*int64(count)*int64(count) {
		return nil, false
	}
	top, complete := p.walkTop(rows.keep(n), end, 4*count+end, false)
	if !complete || len(top) != end {
		return nil, false
	}
	return top, true
}

// earlyMinWalk is the number of index entries an early walk reads before it may judge,
// from the share of rows kept so far, that the page lies too far down the order.
const earlyMinWalk = 1024

// earlyFixed is the number of rows an early walk may test for the fixed cost of the
// bitmap path (its allocations, the selection), whatever the table's size.
const earlyFixed = 256

// earlyPageFits reports a request whose page earlyTop can find: rows (no KPIs) sorted
// first by a column (an expression has no sort index), without a count, distinct or
// search, and a page end that fits an int32.
func (p *plan) earlyPageFits() bool {
	return len(p.keys) > 0 && p.keys[0].col >= 0 && !p.count && !p.distinct &&
		p.search == nil && p.page <= (math.MaxInt32-p.pageSize)/p.pageSize
}

// earlyTop finds a filtered sorted page without evaluating the filter over every row:
// it walks the first sort key's index testing each row with keep (the filter on that one
// row), and stops once the rows up to the page's end are found. It returns those rows in
// order (fewer when the walk reached the index's end: every row that passes) or false
// when the walk gave up: past n/16 + earlyFixed + end entries, or, after earlyMinWalk
// entries, when the share of rows kept so far puts the page's end beyond that. The bitmap
// path then costs about a pass over each filtered column (a few words a row), which
// testing that many rows one by one (closure calls, a null check and a cell each) would
// exceed.
func (p *plan) earlyTop(keep func(r int32) bool) ([]int32, bool) {
	end := (p.page + 1) * p.pageSize
	return p.walkTop(keep, end, p.f.rows/16+earlyFixed+end, true)
}

// pageOf returns the projected page of the rows top, the first rows of the sorted result.
func (p *plan) pageOf(top []int32) [][]query.Value {
	start := min(p.page*p.pageSize, len(top))
	return p.project(top[start:])
}

// walkTop walks the first sort key's index, each run of equal values in turn, the rows
// keep accepts (every row for a nil keep) in it ordered by the other keys, until end rows
// are found. It returns them and true, or fewer and true when the index ends first; false
// when it gave up past budget entries (or, with project, when the share of rows kept
// after earlyMinWalk entries puts the end beyond the budget).
func (p *plan) walkTop(keep func(r int32) bool, end, budget int, project bool) ([]int32, bool) {
	j := p.keys[0].col
	ix := p.f.sortIndex(p.cols[j].Name, p.refs[j])
	var rest rowCmp
	if len(p.keys) > 1 {
		rest = chain(p.keyCmps(1))
	}
	out := make([]int32, 0, min(end, 1024))
	var run []int32 // with rest: the rows of the set in the current run
	seen, gaveUp := 0, false
	ix.walk(p.keys[0].desc, func(r []int32) bool {
		switch {
		case rest == nil && keep == nil:
			k := min(len(r), end-len(out))
			out = append(out, r[:k]...)
			seen += k
			if len(out) == end {
				return false
			}
		case rest == nil:
			for _, row := range r {
				seen++
				if keep(row) {
					out = append(out, row)
					if len(out) == end {
						return false
					}
				}
				if seen&1023 == 0 && p.walkTooLong(seen, len(out), end, budget, project) {
					gaveUp = true
					return false
				}
			}
		default:
			if project && keep != nil && seen+len(r) > budget {
				gaveUp = true // a run too long to test row by row
				return false
			}
			run = run[:0]
			for _, row := range r {
				if keep == nil || keep(row) {
					run = append(run, row)
				}
			}
			seen += len(r)
			if len(run) > 0 {
				out = append(out, sortTop(run, rest, end-len(out))...)
				if len(out) == end {
					return false
				}
			}
		}
		if p.walkTooLong(seen, len(out), end, budget, project) {
			gaveUp = true
			return false
		}
		return true
	})
	if gaveUp {
		return nil, false
	}
	return out, true
}

// walkTooLong reports a walk of walkTop to give up: past budget entries seen, or, with
// project, when after earlyMinWalk entries the rate of rows found so far would need more
// than budget entries to find end rows.
func (p *plan) walkTooLong(seen, found, end, budget int, project bool) bool {
	if seen > budget {
		return true
	}
	return project && seen >= earlyMinWalk && int64(found)*int64(budget) < int64(end)*int64(seen)
}

// project returns the selected columns of the rows sel, filled column by column into
// one block of cells: with p.lend, a recycled one for a page of up to maxPooledCells
// cells (see cellBlock), else a new one.
func (p *plan) project(sel []int32) [][]query.Value {
	k := len(p.refs)
	var rows [][]query.Value
	var cells []query.Value
	if n := len(sel) * k; n > 0 && n <= maxPooledCells && p.lend != nil {
		blk := cellPool.Get().(*cellBlock)
		if cap(blk.cells) < n || cap(blk.rows) < len(sel) {
			blk.cells = make([]query.Value, max(n, minPooledCells))
			blk.rows = make([][]query.Value, max(len(sel), minPooledCells/4))
		}
		p.lend.Lend(blk)
		rows, cells = blk.rows[:len(sel)], blk.cells[:n]
	} else {
		rows = make([][]query.Value, len(sel))
		cells = make([]query.Value, len(sel)*k)
	}
	for i := range rows {
		rows[i] = cells[i*k : (i+1)*k : (i+1)*k]
	}
	if len(sel) == 0 {
		return rows
	}
	for j, c := range p.refs {
		fillColumn(cells[j:], k, sel, c)
	}
	return rows
}

// Pages of at most maxPooledCells cells, for a caller that hands them back
// (query.Recycling), are projected into recycled blocks of at least minPooledCells
// cells: a small page's cells (about 12 KB for 50 rows of 5 columns) are otherwise
// allocated, zeroed and written per request. project writes every cell it returns, so a
// block is reused without clearing.
const (
	maxPooledCells = 1 << 13
	minPooledCells = 512
)

// cellBlock is the memory of a projected page: the cells and the row slices over them.
type cellBlock struct {
	cells []query.Value
	rows  [][]query.Value
}

var cellPool = sync.Pool{New: func() any { return new(cellBlock) }}

// Recycle hands b back to the pool (query.Recycling.Release of the caller it was lent
// to).
func (b *cellBlock) Recycle() { cellPool.Put(b) }

// fillColumn sets out[i*stride] to the cell of c in row sel[i], as ref.value does, without
// a method call per cell for the base table's string and float columns.
func fillColumn(out []query.Value, stride int, sel []int32, c ref) {
	if c.index == nil {
		switch col := c.col.(type) {
		case *column.Strings:
			for i, r := range sel {
				if col.Nulls.Get(int(r)) {
					out[i*stride] = query.Null(query.TypeString)
				} else {
					out[i*stride] = query.String(col.Dict[col.Codes.At(int(r))])
				}
			}
			return
		case *column.Float64s:
			for i, r := range sel {
				if col.Nulls.Get(int(r)) {
					out[i*stride] = query.Null(query.TypeFloat)
				} else {
					out[i*stride] = query.Float(col.Vals[r])
				}
			}
			return
		}
	}
	for i, r := range sel {
		out[i*stride] = c.value(r)
	}
}

// pageEnd returns the end of page (rows before it and in it), false when that is beyond
// an int.
func pageEnd(page, size int) (int, bool) {
	if page > math.MaxInt/size-1 {
		return 0, false
	}
	return (page + 1) * size, true
}

// pageBounds returns the slice bounds of page (0-based) of size rows out of n.
func pageBounds(n, page, size int) (start, end int) {
	if page > n/size {
		return n, n
	}
	start = page * size
	return start, min(start+size, n)
}

// searchedColumns resolves the fields a search looks at.
func (f *Frame) searchedColumns(s *km.Search, selected []string) ([]ref, error) {
	var out []ref
	if len(s.Fields) > 0 {
		for _, field := range s.Fields {
			name := field.Name()
			c, err := f.lookup(name)
			if err != nil {
				return nil, err
			}
			if !c.col.Type().Searchable() {
				return nil, fmt.Errorf("exec: %w: search field %q is a %v field, not a string or time field", ErrInvalidRequest, name, c.col.Type())
			}
			out = append(out, c)
		}
		return out, nil
	}
	if len(selected) == 0 {
		selected = f.names
	}
	for _, name := range selected {
		c, err := f.lookup(name)
		if err != nil {
			return nil, err
		}
		if c.col.Type().Searchable() {
			out = append(out, c)
		}
	}
	return out, nil
}

// scoreRows gives each row of sel the score of its code, byCode[codes[r]], or the larger
// of that and the score it has when not first. The first column searched takes its
// scores without a max, whose branch the scores below the precision (0, see scoreCache)
// make unpredictable.
func scoreRows[T column.Code](score []uint8, sel []int32, codes []T, byCode []uint8, first bool) {
	if first {
		for _, r := range sel {
			score[r] = byCode[codes[r]]
		}
		return
	}
	for _, r := range sel {
		score[r] = max(score[r], byCode[codes[r]])
	}
}

// scoreDict scores every value of a dictionary, prepared as ix, exactly from least on
// (fuzzy.Matcher's ScoreIndex), letting st stop the run between chunks of values: a
// dictionary of a million values takes a good fraction of a second.
func scoreDict(m *fuzzy.Matcher, ix *fuzzy.Index, least int, st *stop) []uint8 {
	if st == nil {
		return m.ScoreIndex(ix, least, nil)
	}
	// A value costs at most about as much as 64 rows of a loop (most cost a few).
	return m.ScoreIndex(ix, least, func(values int) { st.check(64 * values) })
}

// search keeps the rows of sel whose best score over the columns reaches the precision.
// Each column's dictionary is scored once, or its scores are found in cache; rows look
// their score up by code. It returns the kept rows (in sel's order) and the score of
// every kept row, indexed by frame row. The kept rows and the scores are in buffers of a.
func search(n int, sel []int32, cols []ref, s *km.Search, cache *scoreCache, st *stop, a *arena) ([]int32, []uint8) {
	m := fuzzy.New(s.Term)
	score := a.zeroedBytes(n)
	for i, c := range cols {
		col, ok := c.col.(*column.Strings)
		if !ok {
			// A time column: its HH:MM:SS text, scored once per distinct value.
			byValue := map[int64]uint8{}
			for _, r := range sel {
				cr := c.row(r)
				if cr < 0 {
					continue
				}
				v := c.col.Value(int(cr))
				if v.Null {
					continue
				}
				sv, ok := byValue[v.Int]
				if !ok {
					sv = uint8(m.Score(query.TimeText(v.Int)))
					byValue[v.Int] = sv
					st.check(64) // as scoreDict counts a score
				}
				score[r] = max(score[r], sv)
			}
			continue
		}
		byCode := cache.scores(col, s.Term, m, s.Precision, st)
		if c.index == nil && col.Nulls == nil {
			switch codes := col.Codes; {
			case codes.U8 != nil:
				scoreRows(score, sel, codes.U8, byCode, i == 0)
			case codes.U16 != nil:
				scoreRows(score, sel, codes.U16, byCode, i == 0)
			default:
				scoreRows(score, sel, codes.U32, byCode, i == 0)
			}
			continue
		}
		for _, r := range sel {
			cr := c.row(r)
			if cr >= 0 && !col.Nulls.Get(int(cr)) {
				score[r] = max(score[r], byCode[col.Codes.At(int(cr))])
			}
		}
	}
	kept := a.int32s(len(sel))[:0] // at most every row: appends stay in the buffer
	for _, r := range sel {
		if int(score[r]) >= s.Precision {
			kept = append(kept, r)
		}
	}
	return kept, score
}
