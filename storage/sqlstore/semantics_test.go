package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/query/fuzzy"
	"github.com/kmkit/kmkit/storage/sqlstore"
	"github.com/kmkit/kmkit/storage/storetest"
)

// extraKPIs are KPIs added to the demo KM for TestPlanShapes: conditions that name other
// records (evaluated on their home with the parents read through LEFT JOINs, or
// propagated to the grain), min and max, medians, and
// grains on every record.
const extraKPIs = `
  - {id: X_OPEN_OR_BIG, name: x, expr: "count(ORDER_ITEMS.ITEM_ID, ORDERS.STATUS eq 'OPEN' or ORDER_ITEMS.QUANTITY gt 5)"}
  - {id: X_REPRICED_NET, name: x, expr: "sum(ORDERS.NET_VALUE, ACTIVITIES.ACTIVITY eq 'Change Price')"}
  - {id: X_SMB_SHARE, name: x, expr: "ratio(ORDER_ITEMS.QUANTITY gt 3 and CUSTOMERS.SEGMENT eq 'SMB')"}
  - {id: X_LEAST_CREDIT, name: x, expr: "min(CUSTOMERS.CREDIT_LIMIT)"}
  - {id: X_MOST_LATE, name: x, expr: "max(ORDERS.DAYS_LATE, ACTIVITIES.AUTOMATED eq false)"}
  - {id: X_FIRST_ACTIVITY, name: x, expr: "min(ACTIVITIES.ACTIVITY_ID, ORDER_ITEMS.QUANTITY ge 5)"}
  - {id: X_MEDIAN_PRICE, name: x, expr: "median(ORDER_ITEMS.NET_PRICE, ORDERS.EXPRESS eq true)"}
  - {id: X_GROUPS, name: x, expr: "countdistinct(MATERIALS.MATERIAL_GROUP)"}
  - {id: X_PRICE_PER_ITEM, name: x, expr: "sum(MATERIALS.UNIT_PRICE) / count(ORDER_ITEMS.ITEM_ID)"}
`

// crossConjuncts are filters whose conjuncts name several records (a home and its
// parents).
var crossConjuncts = [][]string{
	{"ORDER_ITEMS.QUANTITY gt 5 or ORDERS.STATUS eq 'OPEN'"},
	{"ACTIVITIES.ACTIVITY eq 'Ship Goods' or CUSTOMERS.COUNTRY eq 'DE'"},
	{"ORDER_ITEMS.QUANTITY le 4 or MATERIALS.MATERIAL_GROUP eq 'Hardware'", "ACTIVITIES.AUTOMATED eq true or ORDERS.DAYS_LATE gt 2"},
	{"not (CUSTOMERS.SEGMENT eq 'SMB' and ORDERS.EXPRESS eq false)"},
}

// TestPlanSemantics checks SQLite and PostgreSQL, through the KM handler, against the
// reference evaluator of storetest (the issue 12 rules, row at a time) on requests the
// conformance suite does not make: filter conjuncts naming several records, at every
// place a filter applies (listed rows, grain rows, rows joined while expanding a KPI),
// KPI conditions naming other records, several grains combined, sorts and pages of
// groups.
func TestPlanSemantics(t *testing.T) {
	fsys, err := storetest.DemoData(40)
	if err != nil {
		t.Fatal(err)
	}
	mfs := fsys.(fstest.MapFS)
	yaml := string(mfs["models/o2c.yaml"].Data)
	i := strings.Index(yaml, "\nfilters:")
	if i < 0 {
		t.Fatal("o2c.yaml has no filters section")
	}
	mfs["models/o2c.yaml"] = &fstest.MapFile{Data: []byte(yaml[:i] + strings.TrimRight(extraKPIs, "\n") + yaml[i:])}
	ref, err := storetest.LoadReference(mfs, "o2c")
	if err != nil {
		t.Fatal(err)
	}
	var reqs []storetest.RefRequest
	for _, r := range []string{"ORDERS", "ORDER_ITEMS", "CUSTOMERS", "MATERIALS", "ACTIVITIES"} {
		var fields []string
		for _, f := range ref.KM.Record(r).Fields[:2] {
			fields = append(fields, f.ID)
		}
		for _, fe := range crossConjuncts {
			reqs = append(reqs, storetest.RefRequest{Record: r, Fields: fields, FilterExprs: fe})
		}
	}
	reqs = append(reqs,
		storetest.RefRequest{Record: "ORDER_ITEMS", Fields: []string{"ITEM_ID", "QUANTITY"}, FilterExprs: crossConjuncts[0], Sort: "-QUANTITY", Page: 2, PageSize: 5},
		storetest.RefRequest{Record: "ORDERS", Fields: []string{"STATUS", "EXPRESS"}, FilterExprs: crossConjuncts[1], Distinct: true},
		storetest.RefRequest{Record: "ORDERS", Fields: []string{"STATUS", "EXPRESS"}, Distinct: true, Sort: "-EXPRESS,+STATUS"},
		storetest.RefRequest{Record: "ORDERS", Fields: []string{"STATUS", "DAYS_LATE"}, Distinct: true, Sort: "-DAYS_LATE"},
		storetest.RefRequest{Fields: []string{"ORDER_ITEMS.ITEM_ID", "MATERIALS.MATERIAL_GROUP", "CUSTOMERS.COUNTRY"}, FilterExprs: crossConjuncts[2]},
		storetest.RefRequest{Fields: []string{"MATERIALS.MATERIAL_GROUP", "ORDERS.STATUS"}, FilterExprs: crossConjuncts[0], Distinct: true, Sort: "+ORDERS.STATUS"},
	)
	var extra []string
	for _, line := range strings.Split(extraKPIs, "\n") {
		if id, ok := strings.CutPrefix(strings.TrimSpace(line), "- {id: "); ok {
			extra = append(extra, id[:strings.Index(id, ",")])
		}
	}
	dims := [][]string{nil, {"CUSTOMERS.COUNTRY"}, {"MATERIALS.MATERIAL_GROUP"}, {"ACTIVITIES.ACTIVITY", "ORDERS.STATUS"}, {"ORDERS.EXPRESS", "CUSTOMERS.SEGMENT"}}
	for _, d := range dims {
		for _, k := range extra {
			reqs = append(reqs, storetest.RefRequest{Fields: d, KPIs: []string{k}})
		}
		reqs = append(reqs, storetest.RefRequest{Fields: d, KPIs: extra})
		for _, fe := range crossConjuncts {
			reqs = append(reqs, storetest.RefRequest{Fields: d, KPIs: append([]string{"TOTAL_NET", "ACTIVITY_COUNT"}, extra...), FilterExprs: fe})
		}
	}
	reqs = append(reqs,
		storetest.RefRequest{Fields: []string{"MATERIALS.MATERIAL_GROUP"}, KPIs: []string{"X_PRICE_PER_ITEM", "TOTAL_NET"}, Sort: "-X_PRICE_PER_ITEM", Page: 1, PageSize: 2},
		storetest.RefRequest{Fields: []string{"ACTIVITIES.ACTIVITY", "CUSTOMERS.COUNTRY"}, KPIs: []string{"X_MOST_LATE", "ITEM_QUANTITY", "ACTIVITY_COUNT"}, Sort: "-X_MOST_LATE,+CUSTOMERS.COUNTRY", PageSize: 7},
		storetest.RefRequest{Fields: []string{"ORDERS.EXPRESS"}, KPIs: []string{"X_GROUPS", "X_FIRST_ACTIVITY"}, Sort: "-ORDERS.EXPRESS"},
	)
	for _, b := range []struct {
		name string
		open func(testing.TB) *sqlstore.DB
	}{{"SQLite", openSQLite}, {"Postgres", openPostgres}} {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t).KM()
			if err := s.Import(context.Background(), mfs); err != nil {
				t.Fatal(err)
			}
			h := kmhttp.NewHandler(s, kmhttp.WithMaxPageSize(5000))
			for _, req := range reqs {
				checkReference(t, h, ref, req)
			}
		})
	}
}

// checkReference asks h for req with GET .../query and compares the rows with the
// reference's: the same rows in the same order, floats within 1e-9 relative.
func checkReference(t *testing.T, h http.Handler, ref *storetest.Reference, req storetest.RefRequest) {
	t.Helper()
	want, err := ref.Eval(req)
	if err != nil {
		t.Fatalf("%+v: the reference refuses it: %v", req, err)
	}
	checkRows(t, h, queryTarget(req), want.Columns, want.Rows)
}

// checkRows asks h for target and compares the content with rows (reference cells).
func checkRows(t *testing.T, h http.Handler, target string, columns []string, rows [][]any) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	if w.Code != http.StatusOK {
		t.Errorf("%s: %d %s", target, w.Code, w.Body)
		return
	}
	dec := json.NewDecoder(w.Body)
	dec.UseNumber()
	var got struct {
		Content []map[string]any `json:"content"`
	}
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%s: %v", target, err)
	}
	if len(got.Content) != len(rows) {
		t.Errorf("%s: %d rows, want %d:\n got %v\nwant %v", target, len(got.Content), len(rows), got.Content, rows)
		return
	}
	for i, row := range rows {
		for j, c := range columns {
			if g := got.Content[i][c]; !sameValue(row[j], g) {
				t.Errorf("%s: row %d column %s: got %v, want %v\n got %v\nwant %v", target, i, c, g, row[j], got.Content, rows)
				return
			}
		}
	}
}

func queryTarget(req storetest.RefRequest) string {
	base := kmhttp.BasePath + "/knowledge-models/o2c"
	if req.Record != "" {
		base += "/records/" + req.Record
	}
	v := url.Values{}
	v.Set("fields", strings.Join(req.Fields, ","))
	if len(req.KPIs) > 0 {
		v.Set("kpis", strings.Join(req.KPIs, ","))
	}
	for _, e := range req.FilterExprs {
		v.Add("filterExpr", e)
	}
	if req.Sort != "" {
		v.Set("sort", req.Sort)
	}
	if req.Distinct {
		v.Set("options", "distinct")
	}
	size := req.PageSize
	if size == 0 {
		size = 5000
	}
	v.Set("page", strconv.Itoa(req.Page))
	v.Set("pageSize", strconv.Itoa(size))
	return base + "/query?" + v.Encode()
}

// sameValue compares a reference cell (nil, string, bool, int64, float64) with a decoded
// JSON value: numbers within 1e-9 relative.
func sameValue(want, got any) bool {
	switch w := want.(type) {
	case nil, string, bool:
		return want == got
	case int64:
		return fmt.Sprint(got) == strconv.FormatInt(w, 10)
	case float64:
		n, ok := got.(json.Number)
		if !ok {
			return false
		}
		g, err := n.Float64()
		return err == nil && (g == w || math.Abs(g-w) <= 1e-9*math.Max(math.Abs(g), math.Abs(w)))
	}
	return false
}

var _ fs.FS = fstest.MapFS{}

// searchCase is a request with a fuzzy search over selected string fields.
type searchCase struct {
	req       storetest.RefRequest
	term      string
	fields    []string // searchField, all selected
	precision int
}

// TestPlanSearch checks searches on SQLite and PostgreSQL: the expected rows are the
// reference's rows of the same request without search and paging, kept where the best
// fuzzy score (package query/fuzzy, the scorer both backends share) of the searched
// values reaches the precision, best score first without sort keys (ties in the
// reference's order), then paged.
func TestPlanSearch(t *testing.T) {
	fsys, err := storetest.DemoData(40)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := storetest.LoadReference(fsys, "o2c")
	if err != nil {
		t.Fatal(err)
	}
	cases := []searchCase{
		{req: storetest.RefRequest{Record: "CUSTOMERS", Fields: []string{"CUSTOMER_NAME", "CITY", "COUNTRY"}}, term: "ber", fields: []string{"CUSTOMER_NAME", "CITY"}, precision: 60},
		{req: storetest.RefRequest{Record: "CUSTOMERS", Fields: []string{"CUSTOMER_NAME", "CITY"}, Sort: "+CITY", Page: 1, PageSize: 3}, term: "a", fields: []string{"CITY"}, precision: 50},
		{req: storetest.RefRequest{Record: "ORDERS", Fields: []string{"STATUS", "CURRENCY"}, Distinct: true, FilterExprs: []string{"CUSTOMERS.COUNTRY ne 'DE'"}}, term: "pad", fields: []string{"STATUS"}, precision: 40},
		{req: storetest.RefRequest{Fields: []string{"ORDERS.ORDER_ID", "CUSTOMERS.CITY"}, FilterExprs: crossConjuncts[1]}, term: "mun", fields: []string{"CUSTOMERS.CITY"}, precision: 60},
		{req: storetest.RefRequest{Fields: []string{"MATERIALS.MATERIAL_GROUP", "CUSTOMERS.CITY"}, KPIs: []string{"TOTAL_NET", "ITEM_QUANTITY"}}, term: "hard", fields: []string{"MATERIALS.MATERIAL_GROUP"}, precision: 60},
		{req: storetest.RefRequest{Fields: []string{"CUSTOMERS.COUNTRY", "ACTIVITIES.ACTIVITY"}, KPIs: []string{"ACTIVITY_COUNT", "ORDER_COUNT"}, Sort: "-ACTIVITY_COUNT", PageSize: 4}, term: "ship", fields: []string{"ACTIVITIES.ACTIVITY", "CUSTOMERS.COUNTRY"}, precision: 50},
	}
	for _, b := range []struct {
		name string
		open func(testing.TB) *sqlstore.DB
	}{{"SQLite", openSQLite}, {"Postgres", openPostgres}} {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t).KM()
			if err := s.Import(context.Background(), fsys); err != nil {
				t.Fatal(err)
			}
			h := kmhttp.NewHandler(s, kmhttp.WithMaxPageSize(5000))
			for _, c := range cases {
				checkSearch(t, h, ref, c)
			}
		})
	}
}

func checkSearch(t *testing.T, h http.Handler, ref *storetest.Reference, c searchCase) {
	t.Helper()
	all := c.req
	all.Page, all.PageSize = 0, 0
	want, err := ref.Eval(all)
	if err != nil {
		t.Fatal(err)
	}
	m := fuzzy.New(c.term)
	type scored struct {
		row   []any
		score int
	}
	var kept []scored
	for _, row := range want.Rows {
		best := 0
		for _, f := range c.fields {
			if v, ok := row[slices.Index(want.Columns, f)].(string); ok {
				best = max(best, m.Score(v))
			}
		}
		if best >= c.precision {
			kept = append(kept, scored{row, best})
		}
	}
	if c.req.Sort == "" {
		slices.SortStableFunc(kept, func(a, b scored) int { return b.score - a.score })
	}
	var rows [][]any
	for _, k := range kept {
		rows = append(rows, k.row)
	}
	if c.req.PageSize > 0 {
		lo := min(len(rows), c.req.Page*c.req.PageSize)
		rows = rows[lo:min(len(rows), lo+c.req.PageSize)]
	}
	if len(rows) == 0 || len(kept) == len(want.Rows) {
		t.Fatalf("%+v: the search keeps %d of %d rows; pick a term that keeps some", c, len(kept), len(want.Rows))
	}
	v := url.Values{"searchTerm": {c.term}, "searchField": {strings.Join(c.fields, ",")}, "searchPrecision": {strconv.Itoa(c.precision)}}
	checkRows(t, h, queryTarget(c.req)+"&"+v.Encode(), want.Columns, rows)
}
