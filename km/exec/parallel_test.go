package exec

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/fstest"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// forceParallel makes every grouping and every set of aggregates take the paths that
// split work over goroutines, whatever their size, for the test.
func forceParallel(t *testing.T) {
	rows, pairs := parallelRows, parallelPairs
	parallelRows, parallelPairs = 0, 0
	t.Cleanup(func() { parallelRows, parallelPairs = rows, pairs })
}

// TestGroupRowsParallel holds the chunked dense grouping to the obvious numbering: a map
// from each row's key values (nulls equal) to the order of their first appearance, over a
// selection of the rows and over every row (a nil selection).
func TestGroupRowsParallel(t *testing.T) {
	forceParallel(t)
	r := rand.New(rand.NewPCG(3, 9))
	for c := range 100 {
		n := 1 + r.IntN(2000)
		var parts []keyPart
		var cols []column.Column
		for range 1 + r.IntN(2) {
			b := column.NewBuilder(query.TypeString)
			card := 1 + r.IntN(6)
			for range n {
				if r.IntN(10) == 0 {
					b.AppendNull()
				} else {
					b.AppendString(fmt.Sprint("v", r.IntN(card)))
				}
			}
			col := b.Build()
			cols = append(cols, col)
			parts = append(parts, newKeyPart(ref{col: col}))
		}
		var sel []int32
		for i := range n {
			if r.IntN(4) != 0 {
				sel = append(sel, int32(i))
			}
		}
		every := c%3 == 0 // a nil selection: every row, in order
		rows := sel
		if every {
			sel, rows = nil, make([]int32, n)
			for i := range rows {
				rows[i] = int32(i)
			}
		}
		gid, first := groupRows(parts, sel, n, nil, nil)

		ids := map[string]int32{}
		var wantFirst []int32
		wantGid := make([]int32, len(rows))
		for i, row := range rows {
			key := ""
			for _, col := range cols {
				key += fmt.Sprintf("%v|", col.Value(int(row)))
			}
			id, ok := ids[key]
			if !ok {
				id = int32(len(wantFirst))
				ids[key] = id
				wantFirst = append(wantFirst, int32(i))
			}
			wantGid[i] = id
		}
		if d := gocmp.Diff(wantGid, gid, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("case %d: group ids (-want +got):\n%s", c, d)
		}
		if d := gocmp.Diff(wantFirst, first, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("case %d: first rows (-want +got):\n%s", c, d)
		}
	}
}

// TestKPIsParallel computes KPIs grouped by a field with the aggregates on several
// goroutines and checks each group against sums, counts and ratios worked out row by row.
func TestKPIsParallel(t *testing.T) {
	forceParallel(t)
	models, err := km.Load(fstest.MapFS{"models/m.yaml": {Data: []byte(`id: m
records:
  - id: O
    key: ID
    fields: [{id: ID, type: string}, {id: G, type: string}, {id: V, type: float}, {id: L, type: integer}]
kpis:
  - {id: TOTAL, expr: sum(O.V)}
  - {id: MEAN, expr: avg(O.V)}
  - {id: LATE, expr: ratio(O.L gt 2)}
  - {id: N, expr: count(), record: O}
`)}})
	if err != nil {
		t.Fatal(err)
	}
	m := models[0]
	r := rand.New(rand.NewPCG(5, 11))
	const n = 5000
	id, g, v, l := column.NewBuilder(query.TypeString), column.NewBuilder(query.TypeString),
		column.NewBuilder(query.TypeFloat), column.NewBuilder(query.TypeInteger)
	type acc struct {
		sum           float64
		vals, late, n int
	}
	want := map[string]*acc{}
	for i := range n {
		id.AppendString(fmt.Sprint("o", i))
		grp := fmt.Sprint("g", r.IntN(7))
		g.AppendString(grp)
		a := want[grp]
		if a == nil {
			a = &acc{}
			want[grp] = a
		}
		a.n++
		if r.IntN(8) == 0 {
			v.AppendNull()
		} else {
			x := math.Round(r.Float64()*100000) / 100
			v.AppendFloat(x)
			a.sum += x
			a.vals++
		}
		late := int64(r.IntN(6))
		l.AppendInt(late)
		if late > 2 {
			a.late++
		}
	}
	table, err := column.NewTable([]string{"ID", "G", "V", "L"}, []column.Column{id.Build(), g.Build(), v.Build(), l.Build()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := km.NewPlan(m, &km.PlanRequest{Fields: []string{"O.G"},
		KPIs: []string{"TOTAL", "MEAN", "LATE", "N"}, PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	res, err := NewSource(m, map[string]*column.Table{"O": table}).RunContext(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var wantRows, gotRows [][]query.Value
	for grp, a := range want {
		wantRows = append(wantRows, []query.Value{query.String(grp), query.Float(a.sum),
			query.Float(a.sum / float64(a.vals)), query.Float(float64(a.late) / float64(a.n)), query.Int(int64(a.n))})
	}
	gotRows = append(gotRows, res.Rows...)
	byGroup := func(a, b []query.Value) int { return cmp.Compare(a[0].Str, b[0].Str) }
	slices.SortFunc(wantRows, byGroup)
	slices.SortFunc(gotRows, byGroup)
	if d := gocmp.Diff(wantRows, gotRows, cmpopts.EquateApprox(1e-9, 1e-9)); d != "" {
		t.Errorf("KPIs by group (-want +got):\n%s", d)
	}
}

// TestGroupFirsts holds groupFirsts, on every row (a nil selection) or a selection, in
// blocks and in chunks on several goroutines or not, to the obvious answer: the position
// of the first row of each distinct combination of the keys' values (nulls equal), in
// order; and firstsUpTo to its first want positions, giving up only when the rows it
// walks hold fewer than want combinations.
func TestGroupFirsts(t *testing.T) {
	rows, early := parallelRows, earlyFirstsRows
	t.Cleanup(func() { parallelRows, earlyFirstsRows = rows, early })
	earlyFirstsRows = 1 << 10
	cut, gaveUp := 0, 0
	r := rand.New(rand.NewPCG(31, 32))
	for c := range 60 {
		parallelRows = rows
		if c%2 == 0 {
			parallelRows = 0
		}
		n := 1 + r.IntN(3*firstsBlock)
		var parts []keyPart
		var cols []column.Column
		for range 1 + r.IntN(3) {
			var col column.Column
			if r.IntN(3) == 0 { // a float column: no dense digits, the hash-map path
				b := column.NewBuilder(query.TypeFloat)
				for range n {
					b.AppendFloat(float64(r.IntN(40)))
				}
				col = b.Build()
			} else {
				b := column.NewBuilder(query.TypeString)
				card := 1 + r.IntN(30)
				for range n {
					if r.IntN(10) == 0 {
						b.AppendNull()
					} else {
						b.AppendString(fmt.Sprint("v", r.IntN(card)))
					}
				}
				col = b.Build()
			}
			cols = append(cols, col)
			parts = append(parts, newKeyPart(ref{col: col}))
		}
		var sel []int32 // nil: every row
		if r.IntN(2) == 0 {
			sel = []int32{}
			for i := range n {
				if r.IntN(4) != 0 {
					sel = append(sel, int32(i))
				}
			}
		}
		a := &arena{s: &scratch{maxBytes: 1 << 30}}
		got := slices.Clone(groupFirsts(parts, sel, n, nil, a))
		a.release()

		seen := map[string]bool{}
		var want []int32
		for i := range n {
			row := int32(i)
			if sel != nil {
				if i >= len(sel) {
					break
				}
				row = sel[i]
			}
			key := ""
			for _, col := range cols {
				key += fmt.Sprintf("%v|", col.Value(int(row)))
			}
			if !seen[key] {
				seen[key] = true
				want = append(want, int32(i))
			}
		}
		if d := gocmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("case %d (%d rows, selection %v): first positions (-want +got):\n%s", c, n, sel != nil, d)
		}

		k := 1 + r.IntN(len(want)+3)
		upTo, ok := firstsUpTo(parts, sel, n, k, nil, a)
		upTo = slices.Clone(upTo)
		a.release()
		if !ok {
			// Given up: the walk read whole blocks up to earlyFirstsRows (or 64 per key),
			// or was not worth starting; either way fewer than k keys begin there.
			m, limit := n, max(earlyFirstsRows, 64*k)
			if sel != nil {
				m = len(sel)
			}
			walked := (limit + firstsBlock - 1) / firstsBlock * firstsBlock
			if i, _ := slices.BinarySearch(want, int32(walked)); limit < m/2 && i >= k {
				t.Fatalf("case %d: firstsUpTo(%d) gave up although %d keys begin in the first %d rows", c, k, i, walked)
			}
			gaveUp++
			continue
		}
		cut++
		if d := gocmp.Diff(want[:min(k, len(want))], upTo, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("case %d (%d rows, selection %v): firstsUpTo(%d) (-want +got):\n%s", c, n, sel != nil, k, d)
		}
	}
	if cut == 0 || gaveUp == 0 {
		t.Fatalf("firstsUpTo found the keys in %d cases and gave up in %d: want both", cut, gaveUp)
	}
}

// TestDistinctPageWithoutCount: a distinct page in row order without a count stops its
// walk at the page's end (firstsUpTo), or falls back to the whole grouping; either way
// its rows are the obvious answer's: the first row of each distinct combination, in row
// order, paged. Dictionary keys (the dense path), a float key (the hash path), a filter's
// selection and combinations too few for the page (the walk gives up) are each asked.
func TestDistinctPageWithoutCount(t *testing.T) {
	early := earlyFirstsRows
	t.Cleanup(func() { earlyFirstsRows = early })
	earlyFirstsRows = 1 << 8
	const n = 50_000
	r := rand.New(rand.NewPCG(41, 42))
	kb, sb, fb := column.NewBuilder(query.TypeString), column.NewBuilder(query.TypeString), column.NewBuilder(query.TypeFloat)
	for range n {
		if r.IntN(50) == 0 {
			kb.AppendNull()
		} else {
			kb.AppendString(fmt.Sprint("k", r.IntN(400)))
		}
		sb.AppendString(string(rune('a' + r.IntN(5))))
		fb.AppendFloat(float64(r.IntN(30)) / 4)
	}
	tab, err := column.NewTable([]string{"K", "S", "F"}, []column.Column{kb.Build(), sb.Build(), fb.Build()})
	if err != nil {
		t.Fatal(err)
	}
	o := kmOf(t, "R", tab)
	for _, c := range []struct {
		fields     []string
		onlyA      bool // the rows whose S is "a"
		page, size int
	}{
		{[]string{"K", "S"}, false, 0, 7},
		{[]string{"K", "S"}, false, 5, 7},
		{[]string{"S", "K"}, true, 2, 50},
		{[]string{"F", "K"}, false, 3, 20},
		{[]string{"F"}, false, 0, 50},   // 30 values: the walk gives up
		{[]string{"S"}, false, 1, 3},    // the second page of 5 values
		{[]string{"K"}, false, 100, 50}, // beyond the last value
	} {
		req := km.PlanRequest{Fields: c.fields, Distinct: true, Page: c.page, PageSize: c.size}
		if c.onlyA {
			req.Filters = where(cmpx("S", query.TypeString, query.Eq, query.String("a")))
		}
		res, err := o.run(req)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		var want [][]query.Value
		for i := range n {
			if c.onlyA && tab.Columns()[1].Value(i).Str != "a" {
				continue
			}
			row := make([]query.Value, len(c.fields))
			for j, name := range c.fields {
				col, _ := tab.Column(name)
				row[j] = col.Value(i)
			}
			if key := fmt.Sprint(row); !seen[key] {
				seen[key] = true
				want = append(want, row)
			}
		}
		start, end := min(c.page*c.size, len(want)), min((c.page+1)*c.size, len(want))
		if d := gocmp.Diff(want[start:end], res.Rows, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%v page %d of %d (only a: %v) (-want +got):\n%s", c.fields, c.page, c.size, c.onlyA, d)
		}
	}
}
