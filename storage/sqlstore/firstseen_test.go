package sqlstore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/sqlstore"
	"github.com/kmkit/kmkit/storage/storetest"
)

// TestDistinctFirstSeen checks SQLite's distinct pages without sort keys (rows in the
// order of their first appearance, grouped from the first rows and then from more of
// them, see KMStore.firstSeenPage) against the reference evaluator: the page's rows
// and the total, for columns of few and of many combinations, with nulls, through a
// join and under filters, on pages within, at the end of and beyond the distinct rows.
// The first rows grouped are set so small that each page takes every path: the first
// rows enough, the further try enough, and the grouping of every row.
func TestDistinctFirstSeen(t *testing.T) {
	ctx := context.Background()
	fsys, err := storetest.DemoData(300)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := storetest.LoadReference(fsys, "o2c")
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, "sqlite:"+filepath.Join(t.TempDir(), "first.db")).KM()
	if err := s.Import(ctx, fsys); err != nil {
		t.Fatal(err)
	}
	h := kmhttp.NewHandler(s, kmhttp.WithMaxPageSize(5000))
	m, err := s.Model(ctx, "o2c")
	if err != nil {
		t.Fatal(err)
	}
	// Record "" is the KM level, whose fields are RECORD.FIELD.
	fieldSets := []struct {
		record string
		fields []string
	}{
		{"ORDERS", []string{"STATUS", "CURRENCY"}},
		{"ORDERS", []string{"CUSTOMER_ID", "STATUS"}},
		{"ORDERS", []string{"EXPRESS", "DAYS_LATE"}}, // DAYS_LATE holds nulls
		{"ORDERS", []string{"ORDER_ID"}},
		{"", []string{"CUSTOMERS.COUNTRY", "ORDERS.SALES_ORG"}},
	}
	filters := []string{"", "ORDERS.STATUS eq 'OPEN'", "ORDERS.NET_VALUE gt 2000 or ORDERS.DAYS_LATE eq null"}
	for _, setting := range []struct {
		name                string
		rows, perRow, grows int64
	}{{"default", 4096, 16, 32}, {"tiny", 1, 1, 2}, {"small", 8, 2, 3}} {
		t.Run(setting.name, func(t *testing.T) {
			sqlstore.SetFirstSeen(t, setting.rows, setting.perRow, setting.grows)
			for _, fs := range fieldSets {
				for _, f := range filters {
					var exprs []string
					if f != "" {
						exprs = []string{f}
					}
					all, err := ref.Eval(storetest.RefRequest{Record: fs.record, Fields: fs.fields, FilterExprs: exprs, Distinct: true})
					if err != nil {
						t.Fatal(err)
					}
					for _, page := range []int{0, 1, 3, 40} {
						req := storetest.RefRequest{Record: fs.record, Fields: fs.fields, FilterExprs: exprs, Distinct: true, Page: page, PageSize: 7}
						want, err := ref.Eval(req)
						if err != nil {
							t.Fatal(err)
						}
						checkRows(t, h, queryTarget(req), want.Columns, want.Rows)
						if got := count(t, s, m, req); got != len(all.Rows) {
							t.Errorf("%v: count %d, want %d", req, got, len(all.Rows))
						}
					}
				}
			}
		})
	}
}

// count returns the store's count of req's rows (Result.Count, which OData's $count
// reads; the KM API's total is the page's rows).
func count(t *testing.T, s *sqlstore.KMStore, m *km.KnowledgeModel, req storetest.RefRequest) int {
	t.Helper()
	r := &km.PlanRequest{Record: req.Record, Fields: req.Fields, Distinct: true, Page: req.Page, PageSize: req.PageSize, Count: true}
	schema := m.FilterSchema(req.Record)
	for _, f := range req.FilterExprs {
		e, err := query.ParseAndBind(f, schema)
		if err != nil {
			t.Fatal(err)
		}
		r.Filters = append(r.Filters, e)
	}
	p, err := km.NewPlan(m, r)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Query(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return res.Count
}
