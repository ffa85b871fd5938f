package exec

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// TestKPIsOverBlocks holds KPI groupings of several blocks of rows (the group ids
// computed a block at a time from the keys, or written out) to an obvious evaluation:
// each order row that passes the filter, put in the group of its dimension values (a
// customer's through the relationship, null without one), every aggregate computed over
// each group's rows by plain loops. Dimensions of the blockOrder, of its customer and both,
// none; no filter, a filter on the blockOrder, one on the customer.
func TestKPIsOverBlocks(t *testing.T) {
	models, err := km.Load(fstest.MapFS{"models/m.yaml": {Data: []byte(`id: m
records:
  - id: O
    key: ID
    fields: [{id: ID, type: string}, {id: C_ID, type: string}, {id: G, type: string}, {id: K, type: integer}, {id: V, type: float}, {id: I, type: integer}]
  - id: C
    key: ID
    fields: [{id: ID, type: string}, {id: CO, type: string}]
relationships:
  - {from: O.C_ID, to: C.ID}
kpis:
  - {id: TOTAL, expr: sum(O.V)}
  - {id: MEAN, expr: avg(O.V)}
  - {id: ISUM, expr: sum(O.I)}
  - {id: N, expr: count(), record: O}
  - {id: NV, expr: count(O.V)}
  - {id: LO, expr: min(O.V)}
  - {id: HI, expr: max(O.I)}
  - {id: MED, expr: median(O.V)}
  - {id: SEEN, expr: countdistinct(O.G)}
  - {id: LATE, expr: ratio(O.I gt 2)}
  - {id: OPEN, expr: "sum(O.V, O.G eq 'g1')"}
`)}})
	if err != nil {
		t.Fatal(err)
	}
	m := models[0]
	r := rand.New(rand.NewPCG(17, 4))
	const nc, no = 40, 3*firstsBlock + 117
	cid, cco := column.NewBuilder(query.TypeString), column.NewBuilder(query.TypeString)
	country := make([]query.Value, nc)
	for i := range nc {
		cid.AppendString(fmt.Sprint("c", i))
		country[i] = query.Null(query.TypeString)
		if i%9 != 0 {
			country[i] = query.String(fmt.Sprint("co", r.IntN(6)))
		}
		appendValue(cco, country[i])
	}
	blockOrders := make([]blockOrder, no)
	oid, oc, og, ok, ov, oi := column.NewBuilder(query.TypeString), column.NewBuilder(query.TypeString),
		column.NewBuilder(query.TypeString), column.NewBuilder(query.TypeInteger),
		column.NewBuilder(query.TypeFloat), column.NewBuilder(query.TypeInteger)
	for i := range blockOrders {
		o := blockOrder{cust: r.IntN(nc+1) - 1, g: query.Null(query.TypeString), k: int64(r.IntN(5)), i: int64(r.IntN(6)),
			v: query.Null(query.TypeFloat)}
		if r.IntN(7) != 0 {
			o.g = query.String(fmt.Sprint("g", r.IntN(5)))
		}
		if r.IntN(8) != 0 {
			o.v = query.Float(float64(r.IntN(100000)) / 100)
		}
		blockOrders[i] = o
		oid.AppendString(fmt.Sprint("o", i))
		if o.cust < 0 {
			oc.AppendNull()
		} else {
			oc.AppendString(fmt.Sprint("c", o.cust))
		}
		appendValue(og, o.g)
		ok.AppendInt(o.k)
		appendValue(ov, o.v)
		oi.AppendInt(o.i)
	}
	ot, err := column.NewTable([]string{"ID", "C_ID", "G", "K", "V", "I"},
		[]column.Column{oid.Build(), oc.Build(), og.Build(), ok.Build(), ov.Build(), oi.Build()})
	if err != nil {
		t.Fatal(err)
	}
	ct, err := column.NewTable([]string{"ID", "CO"}, []column.Column{cid.Build(), cco.Build()})
	if err != nil {
		t.Fatal(err)
	}
	src := NewSource(m, map[string]*column.Table{"O": ot, "C": ct})

	dims := map[string]func(o blockOrder) query.Value{
		"O.G": func(o blockOrder) query.Value { return o.g },
		"O.K": func(o blockOrder) query.Value { return query.Int(o.k) },
		"C.CO": func(o blockOrder) query.Value {
			if o.cust < 0 {
				return query.Null(query.TypeString)
			}
			return country[o.cust]
		},
	}
	filters := []struct {
		name string
		expr query.Expr
		pass func(o blockOrder) bool
	}{
		{"none", nil, func(blockOrder) bool { return true }},
		{"O.K gt 1", cmpx("O.K", query.TypeInteger, query.Gt, query.Int(1)), func(o blockOrder) bool { return o.k > 1 }},
		{"C.CO eq 'co2'", cmpx("C.CO", query.TypeString, query.Eq, query.String("co2")),
			func(o blockOrder) bool { return o.cust >= 0 && country[o.cust] == query.String("co2") }},
	}
	kpis := []string{"TOTAL", "MEAN", "ISUM", "N", "NV", "LO", "HI", "MED", "SEEN", "LATE", "OPEN"}
	for _, fields := range [][]string{{"O.G"}, {"O.G", "O.K"}, {"C.CO"}, {"C.CO", "O.G"}, {}} {
		for _, f := range filters {
			t.Run(strings.Join(fields, ",")+" where "+f.name, func(t *testing.T) {
				req := &km.PlanRequest{Fields: fields, KPIs: kpis, PageSize: 1000}
				if f.expr != nil {
					req.Filters = []query.Expr{f.expr}
				}
				p, err := km.NewPlan(m, req)
				if err != nil {
					t.Fatal(err)
				}
				res, err := src.RunContext(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				groups := map[string][]blockOrder{}
				keys := map[string][]query.Value{}
				for _, o := range blockOrders {
					if !f.pass(o) {
						continue
					}
					var key []query.Value
					for _, d := range fields {
						key = append(key, dims[d](o))
					}
					k := fmt.Sprint(key)
					groups[k] = append(groups[k], o)
					keys[k] = key
				}
				if len(fields) == 0 && len(groups) == 0 {
					groups[fmt.Sprint([]query.Value(nil))] = nil
				}
				var want [][]query.Value
				for k, os := range groups {
					want = append(want, append(slices.Clone(keys[k]), kpiValues(os)...))
				}
				got := slices.Clone(res.Rows)
				byKey := func(a, b []query.Value) int {
					return cmp.Compare(fmt.Sprint(a[:len(fields)]), fmt.Sprint(b[:len(fields)]))
				}
				slices.SortFunc(want, byKey)
				slices.SortFunc(got, byKey)
				if d := gocmp.Diff(want, got, cmpopts.EquateApprox(1e-12, 1e-9), cmpopts.EquateEmpty()); d != "" {
					t.Errorf("KPIs (-want +got):\n%s", d)
				}
			})
		}
	}
}

// blockOrder is a row of TestKPIsOverBlocks' orders: its customer's number (-1: none),
// G, K, I and V.
type blockOrder struct {
	cust int
	g    query.Value
	k, i int64
	v    query.Value
}

// appendValue appends v (a string, an integer or a float, or null) to b.
func appendValue(b *column.Builder, v query.Value) {
	switch {
	case v.Null:
		b.AppendNull()
	case v.Type == query.TypeString:
		b.AppendString(v.Str)
	case v.Type == query.TypeInteger:
		b.AppendInt(v.Int)
	default:
		b.AppendFloat(v.Float)
	}
}

// kpiValues computes TestKPIsOverBlocks' KPIs over the blockOrders of one group by plain loops.
func kpiValues(os []blockOrder) []query.Value {
	var sum, lo float64
	var isum, hi int64
	var vals []float64
	late, nv := 0, 0
	seen := map[string]bool{}
	var open float64
	anyOpen, anyI := false, false
	for _, o := range os {
		isum += o.i
		if !anyI || o.i > hi {
			hi = o.i
		}
		anyI = true
		if o.i > 2 {
			late++
		}
		if !o.g.Null {
			seen[o.g.Str] = true
		}
		if o.v.Null {
			continue
		}
		if nv == 0 || o.v.Float < lo {
			lo = o.v.Float
		}
		nv++
		sum += o.v.Float
		vals = append(vals, o.v.Float)
		if o.g == query.String("g1") {
			open += o.v.Float
			anyOpen = true
		}
	}
	nullF := query.Null(query.TypeFloat)
	out := []query.Value{nullF, nullF, query.Null(query.TypeInteger), query.Int(int64(len(os))), query.Int(int64(nv)),
		nullF, query.Null(query.TypeInteger), nullF, query.Int(int64(len(seen))), nullF, nullF}
	if nv > 0 {
		slices.Sort(vals)
		med := vals[nv/2]
		if nv%2 == 0 {
			med = (vals[nv/2-1] + vals[nv/2]) / 2
		}
		out[0], out[1], out[5], out[7] = query.Float(sum), query.Float(sum/float64(nv)), query.Float(lo), query.Float(med)
	}
	if anyI {
		out[2], out[6] = query.Int(isum), query.Int(hi)
	}
	if len(os) > 0 {
		out[9] = query.Float(float64(late) / float64(len(os)))
	}
	if anyOpen {
		out[10] = query.Float(open)
	}
	return out
}
