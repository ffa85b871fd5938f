package sqlstore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/memory"
	"github.com/kmkit/kmkit/storage/storetest"
)

// FuzzQuery translates arbitrary filters, sorts and search terms over the suite's ORDERS
// record and checks that SQLite returns what the memory executor returns. Inputs the
// parser rejects are skipped; the translator must never fail on a bound filter.
func FuzzQuery(f *testing.F) {
	for _, s := range []struct{ filter, sort, term string }{
		{"STATUS eq 'PAID'", "+NET", ""},
		{"not (LATE gt 1.5) or CREATED eq 2025-04-01", "-LATE", ""},
		{"contains(STATUS, 'A') and DAY le 2025-03-01", "+DAY", "paid"},
		{"STATUS in ('OPEN', 'x''; DROP TABLE st_orders; --')", "-ID", "'; --"},
		{"endswith(CUST, '1') or EXPRESS eq false", "+EXPRESS", "o"},
		{"AT lt 12:00:00 and STAMP ge 2025-02-10T08:30:00.5Z", "", "delivred"},
		{"NET ne 999.99 and not startswith(ID, 'O1')", "+STATUS", ""},
	} {
		f.Add(s.filter, s.sort, s.term, false, uint8(0))
	}
	f.Add("LATE gt 0", "", "", false, uint8(3))
	f.Add("", "-K2", "pa", false, uint8(7))
	ctx := context.Background()
	db := open(f, "sqlite:"+filepath.Join(f.TempDir(), "fuzz.db"))
	s := db.KM()
	if err := s.Import(ctx, storetest.Data()); err != nil {
		f.Fatal(err)
	}
	ref, err := memory.LoadKMStore(storetest.Data())
	if err != nil {
		f.Fatal(err)
	}
	m, _ := s.Model(ctx, "suite")
	refM, _ := ref.Model(ctx, "suite")
	schema := query.MapSchema{}
	var fields []string
	for _, fl := range m.Record("ORDERS").Fields {
		schema[fl.ID] = fl.Type
		fields = append(fields, fl.ID)
	}
	kpis := []query.KPI{
		{ID: "K0", Metric: &query.Aggregate{Func: query.AggCount}},
		{ID: "K1", Metric: &query.Aggregate{Func: query.AggSum, Field: "NET"}},
		{ID: "K2", Metric: &query.Arith{Op: '/', L: &query.Aggregate{Func: query.AggAvg, Field: "LATE"}, R: &query.Aggregate{Func: query.AggMedian, Field: "NET"}}},
		{ID: "K3", Metric: &query.Aggregate{Func: query.AggCountDistinct, Field: "STATUS"}},
		{ID: "K4", Metric: &query.Aggregate{Func: query.AggMax, Field: "NET"}},
		{ID: "K5", Metric: &query.Aggregate{Func: query.AggMin, Field: "LATE", Filter: &query.IsNull{Field: query.FieldRef{Name: "AT", Type: query.TypeTime}, Negated: true}}},
	}
	// group > 0 asks for the KPIs grouped by field group-1 (none when group-1 is past the
	// fields), instead of the rows.
	f.Fuzz(func(t *testing.T, filter, sort, term string, distinct bool, group uint8) {
		req := query.Request{Fields: fields, PageSize: 7, Count: true, Distinct: distinct}
		allowed := fields
		if group > 0 {
			req.Fields = nil
			if g := int(group - 1); g < len(fields) {
				req.Fields = []string{fields[g]}
			}
			req.KPIs = kpis
			allowed = append(append([]string{}, req.Fields...), "K0", "K1", "K2", "K3", "K4", "K5")
		}
		if filter != "" {
			e, err := query.ParseAndBind(filter, schema)
			if err != nil {
				return
			}
			req.Filter = e
		}
		if sort != "" {
			keys, err := query.ParseSort(sort)
			if err != nil || query.CheckSort(keys, allowed) != nil {
				return
			}
			req.Sort = keys
		}
		if term != "" {
			req.Search = &query.Search{Term: term, Precision: 60}
		}
		want, err := storetest.Query(ctx, ref, refM, &km.Query{Record: "ORDERS", Request: req})
		if err != nil {
			return
		}
		got, err := storetest.Query(ctx, s, m, &km.Query{Record: "ORDERS", Request: req})
		if err != nil {
			t.Fatalf("filter %q sort %q term %q: %v", filter, sort, term, err)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("filter %q sort %q term %q distinct %v: differs from the executor (-want +got):\n%s", filter, sort, term, distinct, diff)
		}
	})
}
