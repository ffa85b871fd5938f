package odata

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kmkit/kmkit/internal/nodetools"
)

// Aggregation and search requests of real clients (issue 30): ag-grid-odata 1.0.43's
// server-side row grouping, odata-query 8.1.0's transform and search, and SAP CAP's
// .search(), pinned in conformance/package-lock.json and driven by
// conformance/aggregation.js. Expected groups and sums are computed by pandas from
// testdata/shop/data/*.csv, outside the code under test. Without the npm packages (or
// pandas) the tests skip, unless KMKIT_ODATA_TOOLS is set (CI), and then fail.

// serveShopUnpaged serves the test KM on loopback with the default page size: grids read
// one block per request and do not follow next links.
func serveShopUnpaged(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle(BasePath+"/", testHandler(t))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func aggregationTools(t *testing.T) string {
	t.Helper()
	return nodetools.Dir(t, "KMKIT_ODATA_TOOLS", "conformance", []string{"ag-grid-odata", "odata-query", "@sap/cds"})
}

// aggregation runs conformance/aggregation.js and decodes its JSON answer into out.
func aggregation(t *testing.T, tools string, out any, args ...string) {
	t.Helper()
	b := run(t, tools, "node", append([]string{"aggregation.js"}, args...)...)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("aggregation.js %s: %v in %s", args[0], err, b)
	}
}

// pandasQuery is what pandasGroups computes: the orders (joined with their customers as
// columns CUSTOMERS/NAME, CUSTOMERS/COUNTRY), filtered by Query (DataFrame.query), grouped
// by By (nulls kept as a group), with each aggregate: Fn is sum, mean, min, max, nunique
// (a column) or size (the rows). min and max of a date, date-time or time column order
// its values as instants or durations and answer the CSV text (the text OData writes for
// this data), of a string column by code point (UTF-8's byte order), of a boolean column
// false before true.
type pandasQuery struct {
	Query string      `json:"query"`
	By    []string    `json:"by"`
	Aggs  []pandasAgg `json:"aggs"`
}

type pandasAgg struct {
	As  string `json:"as"`
	Col string `json:"col"`
	Fn  string `json:"fn"`
}

const pandasScript = `
import json, sys
import pandas as pd
spec = json.loads(sys.argv[2])
spec["by"] = spec["by"] or []
spec["aggs"] = spec["aggs"] or []
orders = pd.read_csv(sys.argv[1] + "/orders.csv", dtype={"ID": str, "CUST": str, "STATUS": str, "DAY": str, "CREATED": str, "SEEN": str, "SLOT": str})
TEMPORAL = {"DAY": pd.to_datetime, "CREATED": pd.to_datetime, "SEEN": pd.to_datetime, "SLOT": pd.to_timedelta}
customers = pd.read_csv(sys.argv[1] + "/customers.csv", dtype=str)
customers = customers.rename(columns={c: "CUSTOMERS/" + c for c in customers.columns})
df = orders.merge(customers, how="left", left_on="CUST", right_on="CUSTOMERS/ID")
if spec["query"]:
    df = df.query(spec["query"], engine="python")
out = []
groups = df.groupby(spec["by"] if len(spec["by"]) > 1 else spec["by"][0], dropna=False) if spec["by"] else [((), df)]
for key, g in groups:
    if not isinstance(key, tuple):
        key = (key,)
    row = {}
    for col, v in zip(spec["by"], key):
        row[col] = None if pd.isna(v) else v
    for a in spec["aggs"]:
        if a["fn"] == "size":
            v = len(g)
        elif a["fn"] == "nunique":
            v = int(g[a["col"]].nunique())
        else:
            s = g[a["col"]].dropna()
            if len(s) == 0:
                v = None
            elif a["col"] in TEMPORAL and a["fn"] in ("min", "max"):
                order = TEMPORAL[a["col"]](s)
                v = s[order.idxmin() if a["fn"] == "min" else order.idxmax()]
            else:
                v = getattr(s, a["fn"])()
        if v is not None and not isinstance(v, str):
            v = bool(v) if a["col"] == "EXPRESS" and a["fn"] in ("min", "max") else float(v)
        row[a["as"]] = v
    out.append(row)
print(json.dumps(out))
`

// pandasGroups returns the groups of q computed by pandas (numbers as float64).
func pandasGroups(t *testing.T, q pandasQuery) []map[string]any {
	t.Helper()
	const python = "/usr/bin/python3"
	if exec.Command(python, "-c", "import pandas").Run() != nil {
		if os.Getenv("KMKIT_ODATA_TOOLS") != "" {
			t.Fatal("pandas is needed: apt-get install python3-pandas")
		}
		t.Skip("no pandas in /usr/bin/python3")
	}
	spec, _ := json.Marshal(q)
	dir, _ := filepath.Abs("testdata/shop/data")
	out, err := exec.Command(python, "-c", pandasScript, dir, string(spec)).Output()
	if err != nil {
		t.Fatalf("pandas: %v", err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("pandas: %v in %s", err, out)
	}
	return rows
}

// flatten turns nested navigation objects ({"CUSTOMERS":{"COUNTRY":"DE"}}) into path keys
// (CUSTOMERS/COUNTRY), and integers into float64 as pandas' answer has them.
func flatten(rows []map[string]any) []map[string]any {
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		out[i] = map[string]any{}
		for k, v := range r {
			if m, ok := v.(map[string]any); ok {
				for k2, v2 := range m {
					out[i][k+"/"+k2] = v2
				}
				continue
			}
			out[i][k] = v
		}
	}
	return out
}

// sameGroups compares groups whatever their order (the service orders groups by the KM
// API's rule, pandas by key), numbers within a relative 1e-9.
var sameGroups = cmp.Options{
	cmpopts.SortSlices(func(a, b map[string]any) bool { return fmt.Sprint(a) < fmt.Sprint(b) }),
	cmpopts.EquateApprox(1e-9, 0),
}

// ag-grid-odata's server-side row model groups on the server: the groups of the first
// level, of a level below an opened group, with the grid's filters, and the count of groups
// it asks when a block is full (groupby(...)/aggregate($count as count)).
func TestAgGridODataGrouping(t *testing.T) {
	tools := aggregationTools(t)
	srv := serveShopUnpaged(t)
	url := srv.URL + BasePath + "/shop.svc/ORDERS_entries"
	group := func(f string) map[string]string { return map[string]string{"id": f, "field": f} }
	value := func(f, fn string) map[string]string { return map[string]string{"id": f, "field": f, "aggFunc": fn} }
	tests := []struct {
		name    string
		request map[string]any
		want    pandasQuery
		count   int
		sent    string // a query the grid sent
	}{
		{"row grouping with sum", map[string]any{"startRow": 0, "endRow": 100, "rowGroupCols": []any{group("STATUS")}, "valueCols": []any{value("NET", "sum")}},
			pandasQuery{By: []string{"STATUS"}, Aggs: []pandasAgg{{"childCount", "", "size"}, {"NET", "NET", "sum"}}}, 5,
			"$top=100&$apply=groupby((STATUS),aggregate($count+as+childCount,NET+with+sum+as+NET))"},
		{"avg, min and max with a number filter", map[string]any{"startRow": 0, "endRow": 100, "rowGroupCols": []any{group("CUST")},
			"valueCols":   []any{value("NET", "avg"), value("LATE", "max")},
			"filterModel": map[string]any{"NET": map[string]any{"filterType": "number", "type": "greaterThan", "filter": 50}}},
			pandasQuery{Query: "NET > 50", By: []string{"CUST"}, Aggs: []pandasAgg{{"childCount", "", "size"}, {"NET", "NET", "mean"}, {"LATE", "LATE", "max"}}}, 3, ""},
		{"the level below an opened group", map[string]any{"startRow": 0, "endRow": 100, "rowGroupCols": []any{group("STATUS"), group("CUST")}, "groupKeys": []string{"PAID"},
			"valueCols": []any{value("NET", "min")}},
			pandasQuery{Query: "STATUS == 'PAID'", By: []string{"CUST"}, Aggs: []pandasAgg{{"childCount", "", "size"}, {"NET", "NET", "min"}}}, 2, ""},
		{"a full block: the count of groups", map[string]any{"startRow": 0, "endRow": 2, "rowGroupCols": []any{group("STATUS")}, "sortModel": []any{map[string]string{"colId": "STATUS", "sort": "asc"}}},
			pandasQuery{By: []string{"STATUS"}, Aggs: []pandasAgg{{"childCount", "", "size"}}}, 5,
			"$top=2&$orderby=STATUS&$apply=groupby((STATUS),aggregate($count+as+childCount))/aggregate($count as count)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := json.Marshal(tt.request)
			var got struct {
				Rows    []map[string]any
				Count   *int
				Queries []string
			}
			aggregation(t, tools, &got, "aggrid", url, string(req))
			want := pandasGroups(t, tt.want)
			if top := int(tt.request["endRow"].(int)); len(want) > top {
				// The grid asked for a block: the first groups by its sort (STATUS, nulls last).
				slices.SortFunc(want, func(a, b map[string]any) int {
					sa, _ := a["STATUS"].(string)
					sb, _ := b["STATUS"].(string)
					switch {
					case a["STATUS"] == nil:
						return 1
					case b["STATUS"] == nil:
						return -1
					}
					return cmpString(sa, sb)
				})
				want = want[:top]
			}
			if d := cmp.Diff(want, flatten(got.Rows), sameGroups); d != "" {
				t.Errorf("ag-grid-odata groups (-pandas +grid), queries %q:\n%s", got.Queries, d)
			}
			if got.Count == nil || *got.Count != tt.count {
				t.Errorf("ag-grid-odata row count %s, want %d (queries %q)", fmtCount(got.Count), tt.count, got.Queries)
			}
			if tt.sent != "" && !slices.Contains(got.Queries, tt.sent) {
				t.Errorf("ag-grid-odata sent %q, not %q", got.Queries, tt.sent)
			}
		})
	}
}

func fmtCount(n *int) string {
	if n == nil {
		return "null"
	}
	return fmt.Sprint(*n)
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// odata-query's transform (aggregate, groupBy, filter) and search, fetched from the
// service; an aggregation step after groupby that the service does not serve is a 501
// with the OData error body.
func TestODataQueryAggregationAndSearch(t *testing.T) {
	tools := aggregationTools(t)
	srv := serveShopUnpaged(t)
	url := srv.URL + BasePath + "/shop.svc/ORDERS_entries"
	tests := []struct {
		name    string
		options string
		want    pandasQuery
	}{
		{"aggregate", `{"transform":{"aggregate":[{"NET":{"with":"sum","as":"Total"}},{"LATE":{"with":"average","as":"AvgLate"}}]}}`,
			pandasQuery{Aggs: []pandasAgg{{"Total", "NET", "sum"}, {"AvgLate", "LATE", "mean"}}}},
		{"groupBy with countdistinct", `{"transform":{"groupBy":{"properties":["STATUS"],"transform":{"aggregate":{"CUST":{"with":"countdistinct","as":"Customers"}}}}}}`,
			pandasQuery{By: []string{"STATUS"}, Aggs: []pandasAgg{{"Customers", "CUST", "nunique"}}}},
		{"filter then groupBy a navigation path", `{"transform":[{"filter":{"EXPRESS":false}},{"groupBy":{"properties":["CUSTOMERS/COUNTRY"],"transform":{"aggregate":{"NET":{"with":"max","as":"Max"}}}}}]}`,
			pandasQuery{Query: "EXPRESS == False", By: []string{"CUSTOMERS/COUNTRY"}, Aggs: []pandasAgg{{"Max", "NET", "max"}}}},
		// $filter beside $apply: on the grouping property (a null STATUS is unknown, so
		// the null group goes too).
		{"filter option with groupBy", `{"filter":{"STATUS":{"ne":"OPEN"}},"transform":{"groupBy":{"properties":["STATUS"],"transform":{"aggregate":{"NET":{"with":"sum","as":"S"}}}}}}`,
			pandasQuery{Query: "STATUS != 'OPEN' and STATUS.notna()", By: []string{"STATUS"}, Aggs: []pandasAgg{{"S", "NET", "sum"}}}},
		{"groupBy alone", `{"transform":[{"filter":{"LATE":{"ge":0}}},{"groupBy":{"properties":["STATUS","CUST"]}}]}`,
			pandasQuery{Query: "LATE >= 0", By: []string{"STATUS", "CUST"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got struct {
				Query  string
				Status int
				Body   struct{ Value []map[string]any }
			}
			aggregation(t, tools, &got, "odataquery", url, tt.options)
			if got.Status != 200 {
				t.Fatalf("%s: status %d", got.Query, got.Status)
			}
			if d := cmp.Diff(pandasGroups(t, tt.want), flatten(got.Body.Value), sameGroups); d != "" {
				t.Errorf("%s (-pandas +service):\n%s", got.Query, d)
			}
		})
	}
	t.Run("filter after groupBy", func(t *testing.T) {
		var got struct {
			Query  string
			Status int
			Body   struct {
				Error struct{ Code, Message string }
			}
		}
		aggregation(t, tools, &got, "odataquery", url, `{"transform":[{"groupBy":{"properties":["STATUS"],"transform":{"aggregate":{"NET":{"with":"sum","as":"S"}}}}},{"filter":{"S":{"gt":100}}}]}`)
		if got.Status != 501 || got.Body.Error.Code != "ODATA_OPTION_NOT_SUPPORTED" ||
			got.Body.Error.Message != "$apply: filter(...) after the aggregation (a filter on aggregated values) is not supported: filter before groupby or aggregate" {
			t.Errorf("%s: %d %+v", got.Query, got.Status, got.Body.Error)
		}
	})
	t.Run("search", func(t *testing.T) {
		var got struct {
			Query  string
			Status int
			Body   struct{ Value []map[string]any }
		}
		aggregation(t, tools, &got, "odataquery", url, `{"search":"PAID","select":["STATUS"],"orderBy":"ID"}`)
		// The rows whose STATUS is PAID (the only string value resembling it).
		want := pandasRows(t, "STATUS == 'PAID'", "ID", "STATUS")
		if got.Status != 200 {
			t.Fatalf("%s: status %d", got.Query, got.Status)
		}
		if d := cmp.Diff(want, got.Body.Value); d != "" {
			t.Errorf("%s (-pandas +service):\n%s", got.Query, d)
		}
	})
}

// pandasRows returns columns of the orders matching query (DataFrame.query), in ID order.
func pandasRows(t *testing.T, query string, cols ...string) []map[string]any {
	t.Helper()
	var aggs []pandasAgg
	rows := pandasGroups(t, pandasQuery{Query: query, By: cols, Aggs: aggs})
	slices.SortFunc(rows, func(a, b map[string]any) int { return cmpString(a["ID"].(string), b["ID"].(string)) })
	return rows
}

// CAP's .search() on a remote OData service sends $search and gets the orders whose
// status is PAID (orders.csv), where it failed at run time before.
func TestCAPSearch(t *testing.T) {
	tools, dir, root, requests := capService(t)
	var got struct {
		Rows  []map[string]any
		Error *string
	}
	aggregation(t, tools, &got, "cds-search", dir, root, "PAID")
	if got.Error != nil {
		t.Fatalf("CAP .search: %s", *got.Error)
	}
	if d := cmp.Diff(pandasRows(t, "STATUS == 'PAID'", "ID", "STATUS"), got.Rows); d != "" {
		t.Errorf("CAP .search('PAID') (-pandas +CAP):\n%s", d)
	}
	if paths := requests(); !slices.Contains(paths, "GET "+svc+"/ORDERS_entries") {
		t.Errorf("CAP sent %q, no GET of the orders", paths)
	}
}
