package exec

import (
	"context"
	"fmt"
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

// rt is one record of a test KM: its id, key field and table.
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
		fmt.Fprintf(&b, "  - id: %s\n    key: %s\n    fields:\n", r.rec, r.key)
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
	switch r.Record {
	case "":
		r.Record = o.rec
	case "-":
		r.Record = ""
	}
	p, err := km.NewPlan(o.m, &r)
	if err != nil {
		return nil, err
	}
	return o.src.RunContext(context.Background(), p)
}
