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
// whose KPIs are kpis (id: expression in the KPI language), and a Source over tab.
func kmOf(t testing.TB, rec string, tab *column.Table, kpis ...string) *one {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "id: m\nrecords:\n  - id: %s\n    key: %s\n    fields:\n", rec, tab.Names()[0])
	for i, name := range tab.Names() {
		fmt.Fprintf(&b, "      - {id: %s, type: %s}\n", name, tab.Columns()[i].Type())
	}
	if len(kpis) > 0 {
		b.WriteString("kpis:\n")
		for i := 0; i+1 < len(kpis); i += 2 {
			fmt.Fprintf(&b, "  - {id: %s, expr: %q, record: %s}\n", kpis[i], kpis[i+1], rec)
		}
	}
	models, err := km.Load(fstest.MapFS{"models/m.yaml": {Data: []byte(b.String())}})
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	return &one{m: models[0], src: NewSource(models[0], map[string]*column.Table{rec: tab}), rec: rec, tab: tab}
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
