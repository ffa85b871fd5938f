package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// one is a KnowledgeModel of one record over one table, and the Source that runs its
// plans: the shape the executor's own tests ask their questions in.
type one struct {
	m   *km.KnowledgeModel
	src *Source
	rec string
	tab *column.Table
}

// Names returns the names of the record's fields, in order.
func (o *one) Names() []string { return o.tab.Names() }

// Type returns the type of the record's field name.
func (o *one) Type(name string) (query.Type, bool) {
	c, ok := o.tab.Column(name)
	if !ok {
		return query.TypeInvalid, false
	}
	return c.Type(), true
}

// kmOf builds a KM whose record rec holds the columns of tab (key: its first column) and
// whose KPIs are kpis (id, then expression in the KPI language, count() counting rec's
// rows), and a Source over tab.
func kmOf(t testing.TB, rec string, tab *column.Table, kpis ...string) *one {
	t.Helper()
	return kmOfRecords(t, []rt{{rec, tab.Names()[0], tab}}, nil, kpis...)
}

// rt is one record of a test KM: its id, key field ("": none) and table.
type rt struct {
	rec, key string
	tab      *column.Table
}

// kmOfRecords builds a KM of the records recs (the first is the one count() counts and
// record-level requests ask), the relationships rels ({"A.FK", "B.K"}: from, to) and the
// KPIs kpis, and a Source over their tables.
func kmOfRecords(t testing.TB, recs []rt, rels [][2]string, kpis ...string) *one {
	t.Helper()
	var b strings.Builder
	tables := map[string]*column.Table{}
	b.WriteString("id: m\nrecords:\n")
	for _, r := range recs {
		fmt.Fprintf(&b, "  - id: %s\n", r.rec)
		if r.key != "" {
			fmt.Fprintf(&b, "    key: %s\n", r.key)
		}
		b.WriteString("    fields:\n")
		for i, name := range r.tab.Names() {
			fmt.Fprintf(&b, "      - {id: %s, type: %s}\n", name, r.tab.Columns()[i].Type())
		}
		tables[r.rec] = r.tab
	}
	if len(rels) > 0 {
		b.WriteString("relationships:\n")
		for _, r := range rels {
			fmt.Fprintf(&b, "  - {from: %s, to: %s}\n", r[0], r[1])
		}
	}
	if len(kpis) > 0 {
		b.WriteString("kpis:\n")
		for i := 0; i+1 < len(kpis); i += 2 {
			fmt.Fprintf(&b, "  - {id: %s, expr: %q, record: %s}\n", kpis[i], kpis[i+1], recs[0].rec)
		}
	}
	models, err := km.Load(fstest.MapFS{"models/m.yaml": {Data: []byte(b.String())}})
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	return &one{m: models[0], src: NewSource(models[0], tables), rec: recs[0].rec, tab: recs[0].tab}
}

// run compiles r at record level (or at KM level when r.Record is "-") and runs the plan.
func (o *one) run(r km.PlanRequest) (*query.Result, error) {
	p, err := o.plan(r)
	if err != nil {
		return nil, err
	}
	return o.src.RunContext(context.Background(), p)
}

// plan compiles r at record level (or at KM level when r.Record is "-").
func (o *one) plan(r km.PlanRequest) (*km.Plan, error) {
	switch r.Record {
	case "":
		r.Record = o.rec
	case "-":
		r.Record = ""
	}
	return km.NewPlan(o.m, &r)
}

// compile is plan for requests that must compile.
func (o *one) compile(t testing.TB, r km.PlanRequest) *km.Plan {
	t.Helper()
	p, err := o.plan(r)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// early compiles r, a plan without KPIs, as Source.runRows does: the executor's plan over
// the grain's frame with the plan's filter, and the row filter of its conjuncts for the
// early page (nil when one has no row form).
func (o *one) early(t testing.TB, r km.PlanRequest) (*plan, func(int32) bool) {
	t.Helper()
	p := o.compile(t, r)
	f, err := o.src.frame(p.Grain, p.RowJoin, false)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := compileRows(f, p)
	if err != nil {
		t.Fatal(err)
	}
	keep, err := o.src.rowFilter(p)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := o.src.filter(context.Background(), p, []string{p.Grain})
	if err != nil {
		t.Fatal(err)
	}
	if b := fs.pass[p.Grain]; b != nil {
		pl.filter = func() truth { return truth{t: slices.Clone(b)} }
	}
	return pl, keep
}

// where returns the filter entries of a plan request with the one filter e (nil: none).
func where(e query.Expr) []query.Expr {
	if e == nil {
		return nil
	}
	return []query.Expr{e}
}
