package exec

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// sortTable has a row id and a column of each type with ties and nulls; F also holds NaN,
// both zeros and both infinities.
func sortTable(t testing.TB) *one {
	nan := math.NaN()
	return kmOf(t, "T", table(t,
		[]string{"ID", "F", "I", "S", "B"},
		[]query.Type{query.TypeInteger, query.TypeFloat, query.TypeInteger, query.TypeString, query.TypeBoolean},
		[][]any{
			{0, 2.0, 5, "b", true},
			{1, nan, nil, "a", false},
			{2, math.Copysign(0, -1), 5, nil, nil},
			{3, 0.0, -3, "b", true},
			{4, nil, 7, "c", false},
			{5, -1.0, nil, "a", nil},
			{6, 2.0, -3, "", true},
			{7, math.Inf(1), 5, "c", false},
			{8, math.Inf(-1), 0, nil, true},
			{9, nan, 7, "b", false},
			{10, nil, -3, "a", true},
		}))
}

// pageIDs runs req and returns the ID column of the page.
func pageIDs(t *testing.T, f *one, req *km.PlanRequest) []int64 {
	t.Helper()
	req.Fields = append([]string{"ID"}, req.Fields...)
	res, err := f.run(*req)
	if err != nil {
		t.Fatal(err)
	}
	out := []int64{}
	for _, row := range res.Rows {
		out = append(out, row[0].Int)
	}
	return out
}

// TestSortIndexOrder pins the order a sort on one column gives, through the sort index
// (the whole table, pages of it, a filter) and through the comparator path: NaN below
// every float, -0 equal to 0, ties in row order and nulls last in both directions.
func TestSortIndexOrder(t *testing.T) {
	tests := []struct {
		field string
		desc  bool
		want  []int64
	}{
		{"F", false, []int64{1, 9, 8, 5, 2, 3, 0, 6, 7, 4, 10}},
		{"F", true, []int64{7, 0, 6, 2, 3, 5, 8, 1, 9, 4, 10}},
		{"I", false, []int64{3, 6, 10, 8, 0, 2, 7, 4, 9, 1, 5}},
		{"I", true, []int64{4, 9, 0, 2, 7, 8, 3, 6, 10, 1, 5}},
		{"S", false, []int64{6, 1, 5, 10, 0, 3, 9, 4, 7, 2, 8}},
		{"S", true, []int64{4, 7, 0, 3, 9, 1, 5, 10, 6, 2, 8}},
		{"B", false, []int64{1, 4, 7, 9, 0, 3, 6, 8, 10, 2, 5}},
		{"B", true, []int64{0, 3, 6, 8, 10, 1, 4, 7, 9, 2, 5}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s desc=%v", tt.field, tt.desc), func(t *testing.T) {
			f := sortTable(t)
			sort := []query.SortTerm{{Field: tt.field, Desc: tt.desc}}
			got := pageIDs(t, f, &km.PlanRequest{Fields: []string{tt.field}, Sort: sort, PageSize: 100})
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("whole table (-want +got):\n%s", d)
			}
			// Pages of 3: page 1 is the 4th to 6th rows.
			got = pageIDs(t, f, &km.PlanRequest{Fields: []string{tt.field}, Sort: sort, Page: 1, PageSize: 3})
			if d := cmp.Diff(tt.want[3:6], got); d != "" {
				t.Errorf("page 1 of 3 (-want +got):\n%s", d)
			}
			// Even IDs only: the same order without the odd rows.
			var even []int64
			for _, id := range tt.want {
				if id%2 == 0 {
					even = append(even, id)
				}
			}
			filter := &query.In{Field: field("ID", query.TypeInteger)}
			for id := int64(0); id <= 10; id += 2 {
				filter.Values = append(filter.Values, lit(query.Int(id)))
			}
			got = pageIDs(t, f, &km.PlanRequest{Fields: []string{tt.field}, Filters: where(filter), Sort: sort, PageSize: 100})
			if d := cmp.Diff(even, got); d != "" {
				t.Errorf("even ids (-want +got):\n%s", d)
			}
			// The comparator path (sortTop) agrees with the index.
			p, _ := f.early(t, km.PlanRequest{Record: "T", Fields: []string{"ID", tt.field}, Sort: sort, PageSize: 100})
			rows := f.tab.Rows()
			all := make([]int32, rows)
			for i := range all {
				all[i] = int32(i)
			}
			top := sortTop(all, chain(p.keyCmps(0)), rows)
			got = got[:0]
			for _, r := range top {
				got = append(got, int64(r))
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("comparator path (-want +got):\n%s", d)
			}
		})
	}
}

// TestSortIndexKeysAndDistinct: a second sort key orders the rows within the first key's
// runs, also across a page boundary inside a run; distinct keeps the first row of each
// combination.
func TestSortIndexKeysAndDistinct(t *testing.T) {
	f := sortTable(t)
	tests := []struct {
		name string
		req  *km.PlanRequest
		want [][]query.Value
	}{
		{
			name: "two keys",
			req:  &km.PlanRequest{Fields: []string{"I", "S"}, Sort: []query.SortTerm{{Field: "I", Desc: true}, {Field: "S"}}, PageSize: 6},
			want: rowsOf(
				[]any{7, "b"}, []any{7, "c"}, []any{5, "b"}, []any{5, "c"}, []any{5, nil}, []any{0, nil},
			),
		},
		{
			name: "two keys, second page inside a run",
			req:  &km.PlanRequest{Fields: []string{"I", "ID"}, Sort: []query.SortTerm{{Field: "I"}, {Field: "ID", Desc: true}}, Page: 1, PageSize: 2},
			want: rowsOf([]any{-3, 3}, []any{0, 8}),
		},
		{
			name: "distinct",
			req:  &km.PlanRequest{Fields: []string{"S"}, Sort: []query.SortTerm{{Field: "S", Desc: true}}, Distinct: true, PageSize: 10, Count: true},
			want: rowsOf([]any{"c"}, []any{"b"}, []any{"a"}, []any{""}, []any{nil}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := f.run(*tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(typed(tt.want, res.Columns), res.Rows); d != "" {
				t.Errorf("rows (-want +got):\n%s", d)
			}
		})
	}
}

func rowsOf(rows ...[]any) [][]query.Value {
	out := make([][]query.Value, len(rows))
	for i, row := range rows {
		for _, v := range row {
			var qv query.Value
			switch v := v.(type) {
			case nil:
				qv = query.Value{Null: true}
			case int:
				qv = query.Int(int64(v))
			case string:
				qv = query.String(v)
			case bool:
				qv = query.Bool(v)
			}
			out[i] = append(out[i], qv)
		}
	}
	return out
}

// typed gives the nulls of want their column's type.
func typed(want [][]query.Value, cols []query.ColumnHeader) [][]query.Value {
	for _, row := range want {
		for j := range row {
			if row[j].Null {
				row[j] = query.Null(cols[j].Type)
			}
		}
	}
	return want
}

// TestIndexTopGivesUp: a filter that keeps only the rows at the far end of the sort order
// makes the walk give up, and Run still returns the right page through the comparator
// path; an unrelated filter of the same size is served by the walk.
func TestIndexTopGivesUp(t *testing.T) {
	rows := make([][]any, 1000)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range rows {
		rows[i] = []any{i, float64(i), r.IntN(10)}
	}
	f := kmOf(t, "T", table(t, []string{"ID", "X", "M"}, []query.Type{query.TypeInteger, query.TypeFloat, query.TypeInteger}, rows))
	tests := []struct {
		name   string
		filter query.Expr
		walk   bool
		want   []int64
	}{
		{"far end", cmpx("X", query.TypeFloat, query.Lt, query.Float(100)), false, []int64{99, 98, 97, 96, 95}},
		{"unrelated", cmpx("M", query.TypeInteger, query.Eq, query.Int(3)), true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &km.PlanRequest{Fields: []string{"ID", "X"}, Filters: where(tt.filter), Sort: []query.SortTerm{{Field: "X", Desc: true}}, PageSize: 5}
			p, _ := f.early(t, *req)
			sel, _ := p.selectRows()
			count := sel.len()
			_, ok := p.indexTop(sel, count, 5)
			if ok != tt.walk {
				t.Errorf("indexTop ok = %v, want %v (%d rows)", ok, tt.walk, count)
			}
			want := tt.want
			if want == nil {
				for i := 999; i >= 0 && len(want) < 5; i-- {
					if rows[i][2] == 3 {
						want = append(want, int64(i))
					}
				}
			}
			if d := cmp.Diff(want, pageIDs(t, f, &km.PlanRequest{Filters: where(tt.filter), Sort: req.Sort, PageSize: 5, Fields: []string{"X"}})); d != "" {
				t.Errorf("page (-want +got):\n%s", d)
			}
		})
	}
}

// TestSortIndexConcurrentBuild runs the first sorted queries of a fresh frame at once:
// one goroutine builds the index, the others wait for it (run with -race).
func TestSortIndexConcurrentBuild(t *testing.T) {
	f := sortTable(t)
	req := func() *km.PlanRequest {
		return &km.PlanRequest{Fields: []string{"ID", "F"}, Sort: []query.SortTerm{{Field: "F", Desc: true}}, PageSize: 4}
	}
	want, err := sortTable(t).run(*req())
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			got, err := f.run(*req())
			if err == nil && !cmp.Equal(want, got, cmp.Comparer(sameFloat)) {
				err = errors.New(cmp.Diff(want, got, cmp.Comparer(sameFloat)))
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// sameFloat treats NaNs as equal.
func sameFloat(a, b float64) bool { return a == b || (a != a && b != b) }

// TestStringFilterPaths checks string predicates on a column of few values (answered from
// its per-value row bitmaps) and on one of more than maxCodeRows values (answered by
// scanning codes: equality, all but one value, and the general lookup) against the
// reference, with nulls and a join.
func TestStringFilterPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n := 300
	names := []string{"ID", "FEW", "MANY", "FK"}
	types := []query.Type{query.TypeInteger, query.TypeString, query.TypeString, query.TypeString}
	value := func(k int) query.Value { return query.String(fmt.Sprintf("v%02d", k)) }
	var rows [][]query.Value
	for i := range n {
		row := []query.Value{query.Int(int64(i)), value(r.IntN(3)), value(r.IntN(maxCodeRows + 8)), query.String(fmt.Sprintf("k%d", r.IntN(4)))}
		if i%7 == 3 {
			row[1] = query.Null(query.TypeString)
		}
		if i%5 == 1 {
			row[2] = query.Null(query.TypeString)
		}
		rows = append(rows, row)
	}
	a := build(t, names, types, rows)
	// B: a joined table whose S column also has few values, read through the join index.
	bRows := [][]query.Value{{query.String("k0"), value(1)}, {query.String("k1"), value(2)}, {query.String("k2"), query.Null(query.TypeString)}}
	b := build(t, []string{"K", "S"}, []query.Type{query.TypeString, query.TypeString}, bRows)
	f, err := NewFrame("A", a, Join{From: "A.FK", Record: "B", Table: b, Key: "K"})
	if err != nil {
		t.Fatal(err)
	}
	if f.codeRows(mustStrings(t, a, "FEW")) == nil || f.codeRows(mustStrings(t, a, "MANY")) != nil {
		t.Fatal("FEW should have code bitmaps and MANY not")
	}
	rf := &refFrame{types: map[string]query.Type{}}
	for i, name := range names {
		rf.names = append(rf.names, "A."+name)
		rf.types["A."+name] = types[i]
	}
	rf.names = append(rf.names, "B.K", "B.S")
	rf.o = kmOfRecords(t, []rt{{"A", "ID", a}, {"B", "K", b}}, [][2]string{{"A.FK", "B.K"}})
	rf.types["B.K"], rf.types["B.S"] = query.TypeString, query.TypeString
	for _, ar := range rows {
		row := map[string]query.Value{"B.K": query.Null(query.TypeString), "B.S": query.Null(query.TypeString)}
		for i, name := range names {
			row["A."+name] = ar[i]
		}
		for _, br := range bRows {
			if br[0].Str == ar[3].Str {
				row["B.K"], row["B.S"] = br[0], br[1]
			}
		}
		rf.rows = append(rf.rows, row)
	}
	var all []query.Value
	for k := range maxCodeRows + 8 {
		all = append(all, value(k))
	}
	for _, col := range []string{"A.FEW", "A.MANY", "B.S"} {
		fr := field(col, query.TypeString)
		allBut := func(skip int) []query.Literal {
			var out []query.Literal
			for k, v := range all {
				if k != skip {
					out = append(out, lit(v))
				}
			}
			return out
		}
		filters := map[string]query.Expr{
			"eq":              cmpx(col, query.TypeString, query.Eq, value(1)),
			"eq absent":       cmpx(col, query.TypeString, query.Eq, query.String("nope")),
			"ne":              cmpx(col, query.TypeString, query.Ne, value(2)),
			"gt":              cmpx(col, query.TypeString, query.Gt, value(1)),
			"in two":          &query.In{Field: fr, Values: []query.Literal{lit(value(0)), lit(value(2))}},
			"in all but one":  &query.In{Field: fr, Values: allBut(1)},
			"in all":          &query.In{Field: fr, Values: allBut(-1)},
			"not eq":          not(cmpx(col, query.TypeString, query.Eq, value(0))),
			"contains":        &query.Call{Func: query.Contains, Field: fr, Arg: lit(query.String("1"))},
			"eq or is null":   or(cmpx(col, query.TypeString, query.Eq, value(0)), &query.IsNull{Field: fr}),
			"eq and id small": and(cmpx(col, query.TypeString, query.Eq, value(2)), cmpx("A.ID", query.TypeInteger, query.Lt, query.Int(150))),
		}
		for name, filter := range filters {
			if col == "B.S" {
				// A plan places a predicate on B alone on B's rows (so "is null" holds
				// for no A row without a B); ORed with a predicate on A that is always
				// false it stays one condition of A's rows reading S through the join
				// index, the path this test is after.
				filter = or(filter, cmpx("A.ID", query.TypeInteger, query.Lt, query.Int(0)))
			}
			t.Run(col+" "+name, func(t *testing.T) {
				req := &km.PlanRequest{Fields: []string{"A.ID", col}, Filters: where(filter), PageSize: n, Count: true}
				got, err := rf.plan(req)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(rf.run(req), got); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			})
		}
	}
}

func mustStrings(t *testing.T, tab *column.Table, name string) *column.Strings {
	t.Helper()
	c, ok := tab.Column(name)
	if !ok {
		t.Fatalf("no column %s", name)
	}
	return c.(*column.Strings)
}

// TestSortIndexBuild checks the index of columns long enough for the radix sort against
// the comparator path: perm in the comparator's order (ties in row order, nulls last), and
// bounds delimiting runs of equal values.
func TestSortIndexBuild(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	n := 3000
	specials := []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1), -1e300, 5e-324, -5e-324}
	rows := make([][]any, n)
	for i := range rows {
		var fv, iv, sv, bv any
		switch r.IntN(4) {
		case 0:
			fv = specials[r.IntN(len(specials))]
		case 1:
			fv = float64(r.IntN(50)) - 25
		default:
			fv = r.NormFloat64() * 1e6
		}
		iv = r.Int64N(2000) - 1000
		if r.IntN(3) == 0 {
			iv = []int64{math.MinInt64, math.MaxInt64, -1, 0}[r.IntN(4)]
		}
		iv = int(iv.(int64))
		sv = fmt.Sprintf("s%d", r.IntN(300))
		bv = r.IntN(2) == 0
		if r.IntN(9) == 0 {
			fv = nil
		}
		if r.IntN(9) == 0 {
			iv = nil
		}
		if r.IntN(9) == 0 {
			sv = nil
		}
		if r.IntN(9) == 0 {
			bv = nil
		}
		rows[i] = []any{fv, iv, sv, bv}
	}
	f := FromTable(table(t, []string{"F", "I", "S", "B"},
		[]query.Type{query.TypeFloat, query.TypeInteger, query.TypeString, query.TypeBoolean}, rows))
	for _, name := range []string{"F", "I", "S", "B"} {
		t.Run(name, func(t *testing.T) {
			c := f.refs[name]
			ix := f.sortIndex(name, c)
			key := keyCmp(c, false)
			want := make([]int32, n)
			for i := range want {
				want[i] = int32(i)
			}
			want = sortTop(want, chain([]rowCmp{key}), n)
			if d := cmp.Diff(want, ix.perm); d != "" {
				t.Fatalf("perm (-want +got):\n%s", d)
			}
			covered := 0
			for k := range ix.runs() {
				run := ix.run(k)
				if len(run) == 0 {
					t.Fatalf("run %d is empty", k)
				}
				if &run[0] != &ix.perm[covered] {
					t.Fatalf("run %d does not start where run %d ends (%d)", k, k-1, covered)
				}
				covered += len(run)
				for _, r := range run[1:] {
					if key(run[0], r) != 0 {
						t.Fatalf("run %d: rows %d and %d differ", k, run[0], r)
					}
				}
				if k+1 < ix.runs() && key(run[0], ix.run(k + 1)[0]) >= 0 {
					t.Fatalf("runs %d and %d: %d is not below %d", k, k+1, run[0], ix.run(k + 1)[0])
				}
			}
			if covered != n {
				t.Fatalf("the runs hold %d rows, want %d", covered, n)
			}
		})
	}
}

// TestSortIndexOfDistinctValues: an index whose non-null values are all distinct keeps
// no bounds; its runs are single rows, then the nulls' run, in a walk either way and in
// a search for a value.
func TestSortIndexOfDistinctValues(t *testing.T) {
	col := &column.Strings{Dict: []string{"b", "a", "c"}, Codes: column.NarrowCodes([]uint32{0, 0, 1, 0, 2}, 3), Nulls: column.NewBitmap(5)}
	col.Nulls.Set(1)
	col.Nulls.Set(3)
	ix := &sortIndex{}
	ix.build(5, ref{col: col}, nil)
	if ix.bounds != nil || ix.runs() != 4 || ix.valueRuns() != 3 {
		t.Fatalf("bounds %v, %d runs, %d of values: want none, 4, 3", ix.bounds, ix.runs(), ix.valueRuns())
	}
	var runs [][]int32
	ix.walk(true, func(run []int32) bool { runs = append(runs, slices.Clone(run)); return true })
	if want := [][]int32{{4}, {0}, {2}, {1, 3}}; !cmp.Equal(runs, want) {
		t.Errorf("descending walk %v, want %v", runs, want)
	}
	for value, want := range map[string][]int32{"a": {2}, "b": {0}, "c": {4}, "d": nil, "": nil} {
		got := ix.equal(func(row int32) int { return strings.Compare(value, col.Dict[col.Codes.At(int(row))]) })
		if !slices.Equal(got, want) {
			t.Errorf("equal(%q) = %v, want %v", value, got, want)
		}
	}
}
