package sqlstore_test

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/fuzzy"
	"github.com/kmkit/kmkit/storage/storetest"
)

// TestSearchAfterReload searches customer names, with and without a filter, at record
// level and beside a KPI, on a store that keeps the searched columns' dictionaries of its
// generation tables, then imports another data set into the same store and searches
// again: every answer is the reference evaluator's for the data set the store holds, so
// a dictionary kept from the first import never answers for the second.
func TestSearchAfterReload(t *testing.T) {
	type search struct {
		ref    storetest.RefRequest
		plan   km.PlanRequest
		filter string // of plan, bound to the KM imported
	}
	term := "foods"
	searches := []search{
		{storetest.RefRequest{Record: "CUSTOMERS", Fields: []string{"CUSTOMER_ID", "CUSTOMER_NAME"},
			Search: &storetest.RefSearch{Term: term, Fields: []string{"CUSTOMER_NAME"}, Precision: fuzzy.DefaultPrecision}},
			km.PlanRequest{Record: "CUSTOMERS", Fields: []string{"CUSTOMER_ID", "CUSTOMER_NAME"},
				Search: &km.SearchRequest{Term: term, Fields: []string{"CUSTOMER_NAME"}, Precision: fuzzy.DefaultPrecision}}, ""},
		{storetest.RefRequest{Record: "CUSTOMERS", Fields: []string{"CUSTOMER_ID", "CUSTOMER_NAME"}, FilterExprs: []string{"SEGMENT ne 'SMB'"},
			Search: &storetest.RefSearch{Term: term, Fields: []string{"CUSTOMER_NAME"}, Precision: fuzzy.DefaultPrecision}},
			km.PlanRequest{Record: "CUSTOMERS", Fields: []string{"CUSTOMER_ID", "CUSTOMER_NAME"},
				Search: &km.SearchRequest{Term: term, Fields: []string{"CUSTOMER_NAME"}, Precision: fuzzy.DefaultPrecision}},
			"SEGMENT ne 'SMB'"},
		{storetest.RefRequest{Fields: []string{"CUSTOMERS.CUSTOMER_NAME"}, KPIs: []string{"TOTAL_NET"}, Sort: "CUSTOMERS.CUSTOMER_NAME",
			Search: &storetest.RefSearch{Term: term, Fields: []string{"CUSTOMERS.CUSTOMER_NAME"}, Precision: fuzzy.DefaultPrecision}},
			km.PlanRequest{Fields: []string{"CUSTOMERS.CUSTOMER_NAME"}, KPIs: []string{"TOTAL_NET"}, Sort: []query.SortTerm{{Field: "CUSTOMERS.CUSTOMER_NAME"}},
				Search: &km.SearchRequest{Term: term, Fields: []string{"CUSTOMERS.CUSTOMER_NAME"}, Precision: fuzzy.DefaultPrecision}}, ""},
	}
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) {
			store := open(t, b.dsn(t)).KM()
			for _, n := range []int{40, 45, 40} {
				data, err := storetest.DemoData(n)
				if err != nil {
					t.Fatal(err)
				}
				if n == 45 {
					// A name no customer of the first data set has, which the search
					// finds only in a dictionary read from the second.
					csv := data.(fstest.MapFS)["data/customers.csv"]
					header, rest, _ := strings.Cut(string(csv.Data), "\n")
					id, row, _ := strings.Cut(rest, ",")
					_, row, _ = strings.Cut(row, ",")
					csv.Data = []byte(header + "\n" + id + ",Foodsworth Provisions Ltd," + row)
				}
				ref, err := storetest.LoadReference(data, "o2c")
				if err != nil {
					t.Fatal(err)
				}
				if err := store.Import(t.Context(), data); err != nil {
					t.Fatal(err)
				}
				m, err := store.Model(t.Context(), "o2c")
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range searches {
					want, err := ref.Eval(s.ref)
					if err != nil {
						t.Fatal(err)
					}
					if len(want.Rows) == 0 {
						t.Fatalf("%d orders, %+v: the reference finds nothing; the test needs a term that matches", n, s.ref)
					}
					req := s.plan
					req.PageSize = 1000
					if s.filter != "" {
						e, err := query.ParseAndBind(s.filter, m.FilterSchema(req.Record))
						if err != nil {
							t.Fatal(err)
						}
						req.Filters = []query.Expr{e}
					}
					p, err := km.NewPlan(m, &req)
					if err != nil {
						t.Fatal(err)
					}
					for range 2 { // the second search finds the dictionary kept
						res, err := store.Query(t.Context(), p)
						if err != nil {
							t.Fatal(err)
						}
						got := formatted(res.Rows)
						if !reflect.DeepEqual(got, want.Rows) {
							t.Errorf("%d orders, %+v:\n got %v\nwant %v", n, s.ref, got, want.Rows)
						}
					}
				}
			}
		})
	}
}

// formatted is a page's cells as the reference evaluator writes them (query.Value.Format).
func formatted(rows [][]query.Value) [][]any {
	out := make([][]any, len(rows))
	for i, row := range rows {
		for _, v := range row {
			out[i] = append(out[i], v.Format())
		}
	}
	return out
}
