package kmhttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/storage/memory"
)

// demoDir is the demo's data directory: models/*.yaml and data/*.csv.
const demoDir = "../../internal/demodata"

// pandasDemo computes, from the demo's CSV files, the answers of the requests of issue 12.
const pandasDemo = `
import json, sys
import pandas as pd
d = sys.argv[1]
def read(name):
    return pd.read_csv(d + "/data/" + name + ".csv", dtype=str, keep_default_na=False, na_values=[""])
orders, items, acts, mats, custs = read("orders"), read("order_items"), read("activities"), read("materials"), read("customers")
orders["NET_VALUE"] = orders.NET_VALUE.astype(float)
items["QUANTITY"] = items.QUANTITY.astype(float)
out = {}
out["total_net"] = orders.NET_VALUE.sum()
out["item_quantity"] = items.QUANTITY.sum()
out["activity_count"] = int(acts.ACTIVITY_ID.count())
# ORDER_ITEMS whose order is OPEN, in item row order.
open_ids = set(orders[orders.STATUS == "OPEN"].ORDER_ID)
out["open_items"] = list(items[items.ORDER_ID.isin(open_ids)].ITEM_ID)
# TOTAL_NET by MATERIALS.MATERIAL_GROUP: each order once per material group of its items;
# orders without items (or items without a material) in the null group.
pairs = items[["ORDER_ID", "MATERIAL_ID"]].merge(mats[["MATERIAL_ID", "MATERIAL_GROUP"]], on="MATERIAL_ID", how="left")
pairs = pairs[["ORDER_ID", "MATERIAL_GROUP"]].drop_duplicates()
joined = orders[["ORDER_ID", "NET_VALUE"]].merge(pairs, on="ORDER_ID", how="left")
g = joined.groupby("MATERIAL_GROUP", dropna=False).NET_VALUE.sum(min_count=1)
out["net_by_group"] = {("" if pd.isna(k) else k): (None if pd.isna(v) else v) for k, v in g.items()}
# TOTAL_NET and ITEM_QUANTITY by CUSTOMERS.COUNTRY.
oc = orders.merge(custs[["CUSTOMER_ID", "COUNTRY"]], on="CUSTOMER_ID", how="left")
out["net_by_country"] = {("" if pd.isna(k) else k): v for k, v in oc.groupby("COUNTRY", dropna=False).NET_VALUE.sum(min_count=1).items()}
ic = items.merge(oc[["ORDER_ID", "COUNTRY"]], on="ORDER_ID", how="left")
out["qty_by_country"] = {("" if pd.isna(k) else k): v for k, v in ic.groupby("COUNTRY", dropna=False).QUANTITY.sum(min_count=1).items()}
# EXPRESS eq 'true', STATUS not eq '': express orders with a status, in row order.
out["express"] = list(orders[(orders.EXPRESS == "true") & orders.STATUS.notna()].ORDER_ID)
print(json.dumps(out))
`

// demoPandas runs pandasDemo, skipping the test without pandas.
func demoPandas(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	if exec.Command(pandasPython, "-c", "import pandas").Run() != nil {
		t.Skip(pandasPython + " cannot import pandas (Debian package python3-pandas)")
	}
	dir, err := filepath.Abs(demoDir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(pandasPython, "-c", pandasDemo, dir).Output()
	if err != nil {
		t.Fatalf("pandas: %v", err)
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("pandas output %s: %v", out, err)
	}
	return res
}

func demoCSVHandler(t *testing.T) *kmhttp.Handler {
	t.Helper()
	s := memory.New().KM()
	err := s.Import(context.Background(), os.DirFS(demoDir))
	if err != nil {
		t.Fatal(err)
	}
	return kmhttp.NewHandler(s, kmhttp.WithMaxPageSize(100_000))
}

// getJSON answers GET target, which must be 200, decoded.
func getJSON(t *testing.T, h *kmhttp.Handler, target string) map[string]any {
	t.Helper()
	w := call(h, "GET", target, "")
	if w.Code != 200 {
		t.Fatalf("GET %s: status %d: %s", target, w.Code, w.Body)
	}
	var body map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	return body
}

// queryRows returns the content of a /query answer.
func queryRows(t *testing.T, h *kmhttp.Handler, target string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	for _, r := range getJSON(t, h, target)["content"].([]any) {
		rows = append(rows, r.(map[string]any))
	}
	return rows
}

// dataColumn returns the values of one column of a /data answer.
func dataColumn(t *testing.T, h *kmhttp.Handler, target, col string) []any {
	t.Helper()
	var out []any
	for _, r := range getJSON(t, h, target)["content"].(map[string]any)["data"].([]any) {
		out = append(out, r.(map[string]any)[col])
	}
	return out
}

func near(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestIssue12Cases runs the requests of issue 12 on the demo and compares with pandas over
// the demo's CSV files.
func TestIssue12Cases(t *testing.T) {
	want := demoPandas(t)
	h := demoCSVHandler(t)
	const o2c = api + "/o2c"
	totalNet := decode[float64](t, want["total_net"])

	t.Run("TOTAL_NET alone and with other KPIs", func(t *testing.T) {
		for _, kpis := range []string{"TOTAL_NET", "TOTAL_NET,ITEM_QUANTITY", "TOTAL_NET,ACTIVITY_COUNT", "ITEM_QUANTITY,ACTIVITY_COUNT,TOTAL_NET"} {
			rows := queryRows(t, h, o2c+"/query?kpis="+kpis)
			if len(rows) != 1 {
				t.Fatalf("kpis=%s: %d rows", kpis, len(rows))
			}
			if got := rows[0]["TOTAL_NET"].(float64); !near(got, totalNet) {
				t.Errorf("kpis=%s: TOTAL_NET %v, pandas %v", kpis, got, totalNet)
			}
			if v, ok := rows[0]["ITEM_QUANTITY"]; ok && !near(v.(float64), decode[float64](t, want["item_quantity"])) {
				t.Errorf("kpis=%s: ITEM_QUANTITY %v", kpis, v)
			}
			if v, ok := rows[0]["ACTIVITY_COUNT"]; ok && v.(float64) != decode[float64](t, want["activity_count"]) {
				t.Errorf("kpis=%s: ACTIVITY_COUNT %v", kpis, v)
			}
		}
	})

	t.Run("ORDER_ITEMS with filters=OPEN_ORDERS", func(t *testing.T) {
		wantIDs := decode[[]any](t, want["open_items"])
		if len(wantIDs) == 0 {
			t.Fatal("pandas found no item of an open order")
		}
		got := dataColumn(t, h, o2c+"/records/ORDER_ITEMS/data?fields=ITEM_ID&filters=OPEN_ORDERS&pageSize=100000", "ITEM_ID")
		if !slices.Equal(got, wantIDs) {
			t.Errorf("%d items, pandas %d; first %v, pandas %v", len(got), len(wantIDs), got[:min(3, len(got))], wantIDs[:3])
		}
	})

	t.Run("MATERIALS.MATERIAL_GROUP with TOTAL_NET", func(t *testing.T) {
		byGroup := decode[map[string]*float64](t, want["net_by_group"])
		rows := queryRows(t, h, o2c+"/query?fields=MATERIALS.MATERIAL_GROUP&kpis=TOTAL_NET")
		if len(rows) != len(byGroup) {
			t.Errorf("%d groups, pandas %d", len(rows), len(byGroup))
		}
		sum := 0.0
		for _, r := range rows {
			g, _ := r["MATERIALS.MATERIAL_GROUP"].(string)
			w, ok := byGroup[g]
			if !ok || w == nil {
				t.Errorf("group %q: pandas has none", g)
				continue
			}
			if got := r["TOTAL_NET"].(float64); !near(got, *w) {
				t.Errorf("group %q: TOTAL_NET %v, pandas %v", g, got, *w)
			}
			sum += r["TOTAL_NET"].(float64)
		}
		// An order counts once in each material group its items have: the groups add up
		// to more than the grand total.
		if sum <= totalNet {
			t.Errorf("group totals %v do not exceed the grand total %v", sum, totalNet)
		}
	})

	t.Run("quoted literal against a boolean", func(t *testing.T) {
		wantIDs := decode[[]any](t, want["express"])
		target := o2c + "/records/ORDERS/data?fields=ORDER_ID&pageSize=100000&filterExpr=" + url.QueryEscape("EXPRESS eq 'true',STATUS not eq ''")
		if got := dataColumn(t, h, target, "ORDER_ID"); !slices.Equal(got, wantIDs) || len(got) == 0 {
			t.Errorf("%d orders, pandas %d", len(got), len(wantIDs))
		}
	})

	t.Run("grouped by CUSTOMERS.COUNTRY, alone and together", func(t *testing.T) {
		net := decode[map[string]float64](t, want["net_by_country"])
		qty := decode[map[string]float64](t, want["qty_by_country"])
		for _, kpis := range []string{"TOTAL_NET", "ITEM_QUANTITY", "TOTAL_NET,ITEM_QUANTITY"} {
			for _, r := range queryRows(t, h, o2c+"/query?fields=CUSTOMERS.COUNTRY&kpis="+kpis) {
				c, _ := r["CUSTOMERS.COUNTRY"].(string)
				if v, ok := r["TOTAL_NET"]; ok && !near(v.(float64), net[c]) {
					t.Errorf("kpis=%s %s: TOTAL_NET %v, pandas %v", kpis, c, v, net[c])
				}
				if v, ok := r["ITEM_QUANTITY"]; ok && !near(v.(float64), qty[c]) {
					t.Errorf("kpis=%s %s: ITEM_QUANTITY %v, pandas %v", kpis, c, v, qty[c])
				}
			}
		}
	})
}

// TestKPIInvariance checks, on the demo, that a KPI's value for a group is the same
// whatever else the request selects: for every KPI, with sets of dimensions (none, one
// record, several records, through joins up and down) and random sets of other KPIs, each
// group's value equals the value the KPI has alone with the same dimensions.
func TestKPIInvariance(t *testing.T) {
	h := demoCSVHandler(t)
	const o2c = api + "/o2c"
	m := demoKM(t)
	var ids []string
	for _, k := range m.KPIs {
		ids = append(ids, k.ID)
	}
	dims := [][]string{
		nil,
		{"CUSTOMERS.COUNTRY"},
		{"ORDERS.STATUS"},
		{"MATERIALS.MATERIAL_GROUP"},
		{"ACTIVITIES.ACTIVITY"},
		{"ORDER_ITEMS.MATERIAL_ID"},
		{"CUSTOMERS.SEGMENT", "MATERIALS.MATERIAL_GROUP"},
		{"ORDERS.EXPRESS", "ACTIVITIES.AUTOMATED"},
		{"ACTIVITIES.ACTIVITY", "MATERIALS.MATERIAL_GROUP"},
	}
	key := func(r map[string]any, fields []string) string {
		b, _ := json.Marshal(func() []any {
			var out []any
			for _, f := range fields {
				out = append(out, r[f])
			}
			return out
		}())
		return string(b)
	}
	rng := rand.New(rand.NewPCG(12, 12))
	for _, d := range dims {
		fields := ""
		for i, f := range d {
			if i > 0 {
				fields += ","
			}
			fields += f
		}
		target := func(kpis []string) string {
			q := url.Values{"pageSize": {"100000"}}
			if fields != "" {
				q.Set("fields", fields)
			}
			kq := ""
			for i, k := range kpis {
				if i > 0 {
					kq += ","
				}
				kq += k
			}
			q.Set("kpis", kq)
			return o2c + "/query?" + q.Encode()
		}
		alone := map[string]map[string]any{}
		for _, k := range ids {
			alone[k] = map[string]any{}
			for _, r := range queryRows(t, h, target([]string{k})) {
				alone[k][key(r, d)] = r[k]
			}
		}
		for _, k := range ids {
			for range 3 {
				others := []string{k}
				for _, o := range ids {
					if o != k && rng.IntN(3) == 0 {
						others = append(others, o)
					}
				}
				rng.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
				shared := 0
				for _, r := range queryRows(t, h, target(others)) {
					want, ok := alone[k][key(r, d)]
					if !ok {
						continue
					}
					shared++
					if r[k] != want {
						t.Errorf("fields=%s kpis=%v group %s: %s is %v, alone %v", fields, others, key(r, d), k, r[k], want)
					}
				}
				if shared == 0 {
					t.Errorf("fields=%s kpis=%v: no group in common with %s alone", fields, others, k)
				}
			}
		}
	}
}

// pandasSemiJoin lists, for every record and predefined filter of the demo, the keys of
// the record's rows that pass the filter (in row order), propagating each filter from its
// record along the demo's relationships as semi-joins: from a child to its parent (some
// child passes) and from a parent to its children (the parent passes). The graph and the
// filters' homes are written out here, independently of the plan.
const pandasSemiJoin = `
import json, sys
import pandas as pd
d = sys.argv[1]
def read(name):
    return pd.read_csv(d + "/data/" + name + ".csv", dtype=str, keep_default_na=False, na_values=[""])
t = {"CUSTOMERS": read("customers"), "MATERIALS": read("materials"), "ORDERS": read("orders"),
     "ORDER_ITEMS": read("order_items"), "ACTIVITIES": read("activities")}
key = {"CUSTOMERS": "CUSTOMER_ID", "MATERIALS": "MATERIAL_ID", "ORDERS": "ORDER_ID", "ORDER_ITEMS": "ITEM_ID", "ACTIVITIES": "ACTIVITY_ID"}
# child, foreign key, parent, parent key
rels = [("ORDERS", "CUSTOMER_ID", "CUSTOMERS", "CUSTOMER_ID"), ("ORDER_ITEMS", "ORDER_ID", "ORDERS", "ORDER_ID"),
        ("ORDER_ITEMS", "MATERIAL_ID", "MATERIALS", "MATERIAL_ID"), ("ACTIVITIES", "ORDER_ID", "ORDERS", "ORDER_ID")]
o = t["ORDERS"]
filters = {
    "LATE_ORDERS": ("ORDERS", pd.to_numeric(o.DAYS_LATE) > 0),
    "OPEN_ORDERS": ("ORDERS", o.STATUS == "OPEN"),
    "GERMAN_CUSTOMERS": ("CUSTOMERS", t["CUSTOMERS"].COUNTRY == "DE"),
    "YEAR_2025": ("ORDERS", (o.ORDER_DATE >= "2025-01-01") & (o.ORDER_DATE < "2026-01-01")),
    "HIGH_VALUE": ("ORDERS", pd.to_numeric(o.NET_VALUE) >= 10000),
    "PRICE_CHANGES": ("ACTIVITIES", t["ACTIVITIES"].ACTIVITY == "Change Price"),
}
out = {}
for f, (home, mask) in filters.items():
    passing = {home: mask.fillna(False).to_numpy()}
    frontier = [home]
    while frontier:  # breadth-first over the tree of relationships
        cur, frontier = frontier, []
        for r in cur:
            cur_rows = t[r][passing[r]]
            for child, fk, parent, pk in rels:
                if parent == r and child not in passing:
                    passing[child] = t[child][fk].isin(cur_rows[pk].dropna()).to_numpy()
                    frontier.append(child)
                if child == r and parent not in passing:
                    passing[parent] = t[parent][pk].isin(cur_rows[fk].dropna()).to_numpy()
                    frontier.append(parent)
    for r in t:
        out[r + " " + f] = [str(k) for k in t[r][passing[r]][key[r]]]
print(json.dumps(out))
`

// TestEveryRecordFilterPair asks every record of the demo for the rows that pass each
// predefined filter, on /data, /query, POST /data, /summary and OData (filterid), and
// compares the keys with pandas' semi-joins.
func TestEveryRecordFilterPair(t *testing.T) {
	if exec.Command(pandasPython, "-c", "import pandas").Run() != nil {
		t.Skip(pandasPython + " cannot import pandas (Debian package python3-pandas)")
	}
	dir, err := filepath.Abs(demoDir)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := exec.Command(pandasPython, "-c", pandasSemiJoin, dir).Output()
	if err != nil {
		t.Fatalf("pandas: %v", err)
	}
	var want map[string][]string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	s := memory.New().KM()
	err = s.Import(context.Background(), os.DirFS(demoDir))
	if err != nil {
		t.Fatal(err)
	}
	h := kmhttp.NewHandler(s, kmhttp.WithMaxPageSize(100_000))
	oh := odata.NewHandler(s, odata.WithMaxPageSize(100_000))
	keys := map[string]string{"CUSTOMERS": "CUSTOMER_ID", "MATERIALS": "MATERIAL_ID", "ORDERS": "ORDER_ID", "ORDER_ITEMS": "ITEM_ID", "ACTIVITIES": "ACTIVITY_ID"}
	m := demoKM(t)
	asStrings := func(vs []any) []string {
		out := make([]string, len(vs))
		for i, v := range vs {
			switch v := v.(type) {
			case float64:
				out[i] = strconv.FormatFloat(v, 'f', -1, 64)
			default:
				out[i] = fmt.Sprint(v)
			}
		}
		return out
	}
	pairs := 0
	for rec, k := range keys {
		for _, f := range m.Filters {
			w, ok := want[rec+" "+f.ID]
			if !ok {
				t.Fatalf("pandas has no answer for %s %s", rec, f.ID)
			}
			pairs++
			base := api + "/o2c/records/" + rec
			got := asStrings(dataColumn(t, h, base+"/data?fields="+k+"&filters="+f.ID+"&pageSize=100000", k))
			if !slices.Equal(got, w) {
				t.Errorf("%s filters=%s /data: %d rows, pandas %d", rec, f.ID, len(got), len(w))
			}
			var q []any
			for _, r := range queryRows(t, h, base+"/query?fields="+k+"&filters="+f.ID+"&pageSize=100000") {
				q = append(q, r[k])
			}
			if got := asStrings(q); !slices.Equal(got, w) {
				t.Errorf("%s filters=%s /query: %d rows, pandas %d", rec, f.ID, len(got), len(w))
			}
			body := `{"projection":{"fields":"` + k + `","filters":{"kmFilterNames":["` + f.ID + `"]},"pagination":{"pageNumber":0,"pageSize":100000}}}`
			pw := call(h, "POST", base+"/data", body)
			var post struct {
				Content struct{ Data []map[string]any } `json:"content"`
			}
			if pw.Code != 200 || json.Unmarshal(pw.Body.Bytes(), &post) != nil {
				t.Errorf("%s POST %s: %d %s", rec, f.ID, pw.Code, pw.Body)
			} else {
				var vs []any
				for _, r := range post.Content.Data {
					vs = append(vs, r[k])
				}
				if got := asStrings(vs); !slices.Equal(got, w) {
					t.Errorf("%s filters=%s POST: %d rows, pandas %d", rec, f.ID, len(got), len(w))
				}
			}
			sum := getJSON(t, h, base+"/summary?fields="+k+"&filters="+f.ID+"&sampleSize=5")
			if shape := sum["shape"].([]any); int(shape[0].(float64)) != len(w) {
				t.Errorf("%s filters=%s /summary: shape %v, pandas %d rows", rec, f.ID, shape, len(w))
			}
			ow := call(oh, "GET", "/intelligence/api/odata/o2c.svc/"+rec+"_entries?$select="+k+"&filterid="+f.ID, "")
			var od struct{ Value []map[string]any }
			if ow.Code != 200 || json.Unmarshal(ow.Body.Bytes(), &od) != nil {
				t.Errorf("%s OData filterid=%s: %d %s", rec, f.ID, ow.Code, ow.Body)
				continue
			}
			var vs []any
			for _, r := range od.Value {
				vs = append(vs, r[k])
			}
			if got := asStrings(vs); !slices.Equal(got, w) {
				t.Errorf("%s OData filterid=%s: %d rows, pandas %d", rec, f.ID, len(got), len(w))
			}
		}
	}
	if pairs != 30 {
		t.Errorf("%d record x filter pairs, want 30", pairs)
	}
}

// demoKM loads the demo's o2c KM (records CUSTOMERS, MATERIALS, ORDERS, ORDER_ITEMS,
// ACTIVITIES; ORDERS -> CUSTOMERS, ORDER_ITEMS -> ORDERS, ORDER_ITEMS -> MATERIALS,
// ACTIVITIES -> ORDERS).
func demoKM(t testing.TB) *km.KnowledgeModel {
	t.Helper()
	ms, err := km.Load(os.DirFS(demoDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.ID == "o2c" {
			return m
		}
	}
	t.Fatal("no o2c KM")
	return nil
}
