package km_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// quantifiedPlan compiles a record-level request on ORDERS whose filter is e.
func quantifiedPlan(t *testing.T, m *km.KnowledgeModel, e query.Expr) (*km.Plan, error) {
	t.Helper()
	b, err := query.Bind(e, m.FilterSchema("ORDERS"))
	if err != nil {
		t.Fatal(err)
	}
	return km.NewPlan(m, &km.PlanRequest{Record: "ORDERS", Fields: []string{"ORDER_ID"}, PageSize: 10, Filters: []query.Expr{b}})
}

func cmpField(name string, op query.CompareOp, v int64) *query.Compare {
	return &query.Compare{Field: query.FieldRef{Name: name}, Op: op, Value: query.Literal{At: 1, Kind: query.LitInteger, Raw: "1", Value: query.Int(v)}}
}

// TestQuantifiedPlacement: a quantified condition under or is one conjunct on the
// parent's record; its quantifier goes down to the related record, and its body is
// placed there, reading the parents of the related row (the outer order, the material).
func TestQuantifiedPlacement(t *testing.T) {
	m := demoKM(t)
	q := &query.Quantified{All: true, Parent: "ORDERS", Record: "ORDER_ITEMS",
		Body: &query.Logical{Op: query.Or, L: cmpField("ORDER_ITEMS.QUANTITY", query.Gt, 2), R: &query.Logical{Op: query.And,
			L: cmpField("ORDERS.DAYS_LATE", query.Eq, 0), R: &query.IsNull{Field: query.FieldRef{Name: "MATERIALS.MATERIAL_GROUP"}}}}}
	p, err := quantifiedPlan(t, m, &query.Logical{Op: query.Or, L: cmpField("ORDERS.DAYS_LATE", query.Gt, 1), R: &query.Not{X: q}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Filter) != 1 || p.Filter[0].Home != "ORDERS" || len(p.Filter[0].Quantifiers) != 1 {
		t.Fatalf("filter %+v: want one conjunct on ORDERS with one quantifier", p.Filter)
	}
	for x, qf := range p.Filter[0].Quantifiers {
		if x.Parent != "ORDERS" || x.Record != "ORDER_ITEMS" || !x.All {
			t.Errorf("quantified node %+v", x)
		}
		if got := qf.Down.String(); got != "ORDERS-ORDER_ITEMS" || qf.Down[0].Up {
			t.Errorf("Down %s (up %v), want ORDERS-ORDER_ITEMS going down", got, qf.Down[0].Up)
		}
		var reads []string
		for _, s := range qf.Body.Reads {
			reads = append(reads, s.String())
		}
		want := []string{"ORDER_ITEMS.ORDER_ID>ORDERS.ORDER_ID", "ORDER_ITEMS.MATERIAL_ID>MATERIALS.MATERIAL_ID"}
		if qf.Body.Home != "ORDER_ITEMS" || !cmp.Equal(reads, want) {
			t.Errorf("body on %s reading %v, want ORDER_ITEMS reading %v", qf.Body.Home, reads, want)
		}
	}
}

// TestQuantifiedErrors: a quantifier over a record that is not a collection of its parent,
// or whose body reads a record the related row does not reach going up, is a 400 saying so.
func TestQuantifiedErrors(t *testing.T) {
	m := demoKM(t)
	for _, c := range []struct {
		q    *query.Quantified
		want string
	}{
		{&query.Quantified{Parent: "ORDERS", Record: "CUSTOMERS"},
			"CUSTOMERS/any(...): CUSTOMERS is not a collection of ORDERS: the knowledge model joins them along ORDERS-CUSTOMERS, which is not one-to-many all along"},
		{&query.Quantified{Parent: "ORDERS", Record: "ACTIVITIES", Body: &query.IsNull{Field: query.FieldRef{Name: "ORDER_ITEMS.QUANTITY"}}},
			"ACTIVITIES/any(...): the condition reads ORDER_ITEMS, which a row of ACTIVITIES does not reach through relationships from the many side to the one side"},
	} {
		_, err := quantifiedPlan(t, m, c.q)
		var p *problem.Problem
		if !errors.As(err, &p) || p.Status != 400 || p.Detail != c.want {
			t.Errorf("%s: %v, want 400 %q", query.Format(c.q), err, c.want)
		}
	}
}

// TestRelatedFields: with Related a record-level request lists and sorts by fields of the
// records its record reaches going up (joined as KM-level rows are); without, they stay
// unknown, and a record reached going down is never one.
func TestRelatedFields(t *testing.T) {
	m := demoKM(t)
	req := func(related bool, fields ...string) error {
		_, err := km.NewPlan(m, &km.PlanRequest{Record: "ORDER_ITEMS", Related: related, Fields: fields, PageSize: 5,
			Sort: []query.SortTerm{{Field: fields[len(fields)-1], Desc: true}}})
		return err
	}
	if err := req(true, "ITEM_ID", "CUSTOMERS.COUNTRY"); err != nil {
		t.Errorf("Related, CUSTOMERS.COUNTRY: %v", err)
	}
	p, err := km.NewPlan(m, &km.PlanRequest{Record: "ORDER_ITEMS", Related: true, Fields: []string{"ITEM_ID", "CUSTOMERS.COUNTRY"}, PageSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got := km.Path(p.RowJoin).String(); p.Grain != "ORDER_ITEMS" || got != "ORDER_ITEMS-ORDERS-CUSTOMERS" {
		t.Errorf("grain %s joined along %s, want ORDER_ITEMS-ORDERS-CUSTOMERS", p.Grain, got)
	}
	for _, c := range []struct {
		related bool
		field   string
	}{{false, "CUSTOMERS.COUNTRY"}, {true, "ACTIVITIES.ACTIVITY"}} {
		var qe *problem.Problem
		if err := req(c.related, "ITEM_ID", c.field); !errors.As(err, &qe) || qe.ErrorCode != query.CodeFieldNotFound {
			t.Errorf("Related %v, %s: %v, want 400 %s", c.related, c.field, err, query.CodeFieldNotFound)
		}
	}
}
