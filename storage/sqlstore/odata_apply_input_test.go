package sqlstore_test

import (
	"encoding/json"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kmkit/kmkit/odata"
)

// python3 is Debian's interpreter, which has python3-pandas (.ci/run installs it).
const python3 = "/usr/bin/python3"

// pandasInputSet computes, from the demo's CSV files in the directory argv[1], what
// $apply on ORDERS_entries answers for aggregates along CUSTOMERS: the customers the orders
// refer to, each once (half the demo's 50 customers have no order).
const pandasInputSet = `
import json, sys
import pandas as pd
d = sys.argv[1] + "/"
orders = pd.read_csv(d + "orders.csv", dtype=str)
customers = pd.read_csv(d + "customers.csv", dtype={"CUSTOMER_ID": str, "SEGMENT": str})
related = customers[customers.CUSTOMER_ID.isin(orders.CUSTOMER_ID.dropna())]
out = {
    "total": [{"S": float(related.CREDIT_LIMIT.sum()), "N": float(related.CUSTOMER_ID.nunique())}],
    "segments": [{"CUSTOMERS/SEGMENT": seg, "S": float(g.CREDIT_LIMIT.sum()), "N": float(len(orders[orders.CUSTOMER_ID.isin(g.CUSTOMER_ID)]))}
                 for seg, g in related.groupby("SEGMENT")],
    "with a KPI": [{"CUSTOMERS/SEGMENT": seg, "S": float(g.CREDIT_LIMIT.sum()),
                    "TOTAL_NET": float(pd.to_numeric(orders[orders.CUSTOMER_ID.isin(g.CUSTOMER_ID)].NET_VALUE).sum())}
                   for seg, g in related.groupby("SEGMENT")],
}
print(json.dumps(out))
`

// TestODataApplyInputSet: an aggregate along a navigation property (CUSTOMERS/CREDIT_LIMIT
// on ORDERS_entries) reads the entities related to the set's entities, as $apply's input
// set is the entity set: customers without orders neither add to it nor make a group of
// their own. pandas computes the answers from the CSV files, on memory, SQLite and
// PostgreSQL.
func TestODataApplyInputSet(t *testing.T) {
	if exec.Command(python3, "-c", "import pandas").Run() != nil {
		t.Skip(python3 + " cannot import pandas (Debian package python3-pandas)")
	}
	data, _ := demoReference(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, data); err != nil {
		t.Fatal(err)
	}
	csvDir, err := fs.Glob(os.DirFS(dir), "*/orders.csv")
	if err != nil || len(csvDir) != 1 {
		t.Fatalf("the demo's orders.csv: %v %v", csvDir, err)
	}
	out, err := exec.Command(python3, "-c", pandasInputSet, filepath.Join(dir, filepath.Dir(csvDir[0]))).Output()
	if err != nil {
		t.Fatalf("pandas: %v", err)
	}
	var want map[string][]map[string]any
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("pandas: %v in %s", err, out)
	}
	if n := want["total"][0]["N"].(float64); n == 0 || n == 50 {
		t.Fatalf("%v of the 50 customers have orders: the case proves nothing", n)
	}
	cases := []struct{ name, apply string }{
		{"total", "aggregate(CUSTOMERS/CREDIT_LIMIT with sum as S,CUSTOMERS/CUSTOMER_ID with countdistinct as N)"},
		{"segments", "groupby((CUSTOMERS/SEGMENT),aggregate(CUSTOMERS/CREDIT_LIMIT with sum as S,$count as N))"},
		// A custom aggregate keeps the meaning /data gives it; the path aggregate beside
		// it still reads the customers of the orders.
		{"with a KPI", "groupby((CUSTOMERS/SEGMENT),aggregate(TOTAL_NET,CUSTOMERS/CREDIT_LIMIT with sum as S))"},
	}
	for _, b := range navBackends {
		t.Run(b.name, func(t *testing.T) {
			h := odata.NewHandler(importOn(t, b.open, data))
			for _, c := range cases {
				target := odata.BasePath + "/o2c.svc/ORDERS_entries?$apply=" + strings.ReplaceAll(url.QueryEscape(c.apply), "+", "%20")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
				var page struct{ Value []map[string]any }
				if err := json.Unmarshal(w.Body.Bytes(), &page); w.Code != http.StatusOK || err != nil {
					t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
				}
				for _, row := range page.Value {
					if nav, ok := row["CUSTOMERS"].(map[string]any); ok {
						delete(row, "CUSTOMERS")
						row["CUSTOMERS/SEGMENT"] = nav["SEGMENT"]
					}
				}
				opts := []cmp.Option{cmp.Comparer(func(x, y float64) bool { return x == y || math.Abs(x-y) <= 1e-9*math.Abs(y) })}
				if c.name != "total" {
					opts = append(opts, cmpopts.SortSlices(func(a, b map[string]any) bool {
						return a["CUSTOMERS/SEGMENT"].(string) < b["CUSTOMERS/SEGMENT"].(string)
					}))
				}
				if diff := cmp.Diff(want[c.name], page.Value, opts...); diff != "" {
					t.Errorf("%s: pandas (-) and $apply (+) differ:\n%s", c.apply, diff)
				}
			}
		})
	}
}
