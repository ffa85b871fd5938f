package storetest_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"

	"testing"

	"github.com/kmkit/kmkit/storage/storetest"
)

// pandasPython is Debian's interpreter with python3-pandas (.ci/run installs it).
const pandasPython = "/usr/bin/python3"

// pandasKM is the KM of the pandas check: customers C, materials M, orders O (of a
// customer), items I (of an order and a material) and activities A (of an order and of
// the customer who did it, so that A reaches C by paths of length 1 and 2).
const pandasKM = `id: p
name: Pandas check
records:
  - id: C
    name: Customers
    source: c
    key: CID
    fields:
      - {id: CID, name: Customer, type: string}
      - {id: COUNTRY, name: Country, type: string}
      - {id: SEG, name: Segment, type: string}
  - id: M
    name: Materials
    source: m
    key: MID
    fields:
      - {id: MID, name: Material, type: string}
      - {id: GRP, name: Group, type: string}
  - id: O
    name: Orders
    source: o
    key: OID
    fields:
      - {id: OID, name: Order, type: string}
      - {id: CID, name: Customer, type: string}
      - {id: NET, name: Net, type: float}
      - {id: LATE, name: Late, type: integer}
      - {id: STATUS, name: Status, type: string}
      - {id: DAY, name: Day, type: date}
      - {id: AT, name: Created, type: datetime}
      - {id: WORD, name: Word, type: string}
      - {id: EXP, name: Express, type: boolean}
  - id: I
    name: Items
    source: i
    key: IID
    fields:
      - {id: IID, name: Item, type: string}
      - {id: OID, name: Order, type: string}
      - {id: MID, name: Material, type: string}
      - {id: QTY, name: Quantity, type: integer}
  - id: A
    name: Activities
    source: a
    key: AID
    fields:
      - {id: AID, name: Activity, type: integer}
      - {id: OID, name: Order, type: string}
      - {id: ACT, name: Activity, type: string}
      - {id: CID, name: Customer, type: string}
relationships:
  - {from: O.CID, to: C.CID}
  - {from: I.OID, to: O.OID}
  - {from: I.MID, to: M.MID}
  - {from: A.OID, to: O.OID}
  - {from: A.CID, to: C.CID}
kpis:
  - {id: NET, name: Net, expr: "sum(O.NET)"}
  - {id: AVGNET, name: Average net, expr: "avg(O.NET)"}
  - {id: MEDNET, name: Median net, expr: "median(O.NET)"}
  - {id: NORD, name: Orders, expr: "count(O.OID)"}
  - {id: NCUST, name: Customers, expr: "countdistinct(O.CID)"}
  - {id: QTY, name: Quantity, expr: "sum(I.QTY)"}
  - {id: NITEMS, name: Items, expr: "count(I.IID)"}
  - {id: LATE, name: Late share, expr: "ratio(O.LATE gt 0)"}
  - {id: BIGQ, name: Net of orders with a big item, expr: "sum(O.NET, I.QTY gt 4)"}
  - {id: NSHIP, name: Shipments, expr: "count(A.AID, A.ACT eq 'Ship')"}
  - {id: MAXQ_DE, name: Largest German quantity, expr: "max(I.QTY, C.COUNTRY eq 'DE')"}
  - {id: SHIPSHARE, name: Share of shipments, expr: "ratio(A.ACT eq 'Ship')"}
  - {id: FIRST_DAY, name: First day, expr: "min(O.DAY)"}
  - {id: LAST_DAY_DE, name: Last German day, expr: "max(O.DAY, C.COUNTRY eq 'DE')"}
  - {id: FIRST_AT, name: First created, expr: "min(O.AT)"}
  - {id: LAST_AT, name: Last created, expr: "max(O.AT)"}
  - {id: LEAST_WORD, name: Least word, expr: "min(O.WORD)"}
  - {id: BIG_WORD, name: Greatest word with a big item, expr: "max(O.WORD, I.QTY gt 4)"}
  - {id: ALL_EXP, name: All express, expr: "min(O.EXP)"}
  - {id: ANY_EXP, name: Any express, expr: "max(O.EXP)"}
  - {id: LAST_ACT, name: Greatest activity, expr: "max(A.ACT)"}
`

// pandasKPIs describes the KPIs above to the pandas script: function, field, condition.
var pandasKPIs = []map[string]any{
	{"id": "NET", "fn": "sum", "field": []string{"O", "NET"}},
	{"id": "AVGNET", "fn": "avg", "field": []string{"O", "NET"}},
	{"id": "MEDNET", "fn": "median", "field": []string{"O", "NET"}},
	{"id": "NORD", "fn": "count", "field": []string{"O", "OID"}},
	{"id": "NCUST", "fn": "countdistinct", "field": []string{"O", "CID"}},
	{"id": "QTY", "fn": "sum", "field": []string{"I", "QTY"}},
	{"id": "NITEMS", "fn": "count", "field": []string{"I", "IID"}},
	{"id": "LATE", "fn": "ratio", "cond": []any{"O", "LATE", "gt", 0}},
	{"id": "BIGQ", "fn": "sum", "field": []string{"O", "NET"}, "cond": []any{"I", "QTY", "gt", 4}},
	{"id": "NSHIP", "fn": "count", "field": []string{"A", "AID"}, "cond": []any{"A", "ACT", "eq", "Ship"}},
	{"id": "MAXQ_DE", "fn": "max", "field": []string{"I", "QTY"}, "cond": []any{"C", "COUNTRY", "eq", "DE"}},
	{"id": "SHIPSHARE", "fn": "ratio", "cond": []any{"A", "ACT", "eq", "Ship"}},
	{"id": "FIRST_DAY", "fn": "min", "kind": "date", "field": []string{"O", "DAY"}},
	{"id": "LAST_DAY_DE", "fn": "max", "kind": "date", "field": []string{"O", "DAY"}, "cond": []any{"C", "COUNTRY", "eq", "DE"}},
	{"id": "FIRST_AT", "fn": "min", "kind": "datetime", "field": []string{"O", "AT"}},
	{"id": "LAST_AT", "fn": "max", "kind": "datetime", "field": []string{"O", "AT"}},
	{"id": "LEAST_WORD", "fn": "min", "kind": "string", "field": []string{"O", "WORD"}},
	{"id": "BIG_WORD", "fn": "max", "kind": "string", "field": []string{"O", "WORD"}, "cond": []any{"I", "QTY", "gt", 4}},
	{"id": "ALL_EXP", "fn": "min", "kind": "boolean", "field": []string{"O", "EXP"}},
	{"id": "ANY_EXP", "fn": "max", "kind": "boolean", "field": []string{"O", "EXP"}},
	{"id": "LAST_ACT", "fn": "max", "kind": "string", "field": []string{"A", "ACT"}},
}

// pandasScript computes, from the CSV files, the KPIs per group and the rows of every
// record that pass each filter, by merges, drop_duplicates on (group, grain row) and
// groupby, written from the rules without looking at the evaluator.
const pandasScript = `
import datetime, json, sys
import pandas as pd
d, spec = sys.argv[1], json.loads(sys.argv[2])

def utc_text(t):
    # RFC 3339 in UTC, the fraction without trailing zeros (the KM API's form)
    t = t.astimezone(datetime.timezone.utc)
    frac = ("." + ("%06d" % t.microsecond).rstrip("0")) if t.microsecond else ""
    return "%04d-%02d-%02dT%02d:%02d:%02d%sZ" % (t.year, t.month, t.day, t.hour, t.minute, t.second, frac)

# min and max of other values than numbers: the value read from the CSV text (dates and
# date-times as Python's datetime reads them, strings by code point, which is UTF-8's
# byte order, booleans false before true), and its text as the KM API writes it
EXTREME = {
    "date": (datetime.date.fromisoformat, lambda v: v.isoformat()),
    "datetime": (lambda s: datetime.datetime.fromisoformat(s).astimezone(datetime.timezone.utc), utc_text),
    "string": (str, str),
    "boolean": (lambda s: s == "true", bool),
}
REL = [("O", "CID", "C", "CID"), ("I", "OID", "O", "OID"), ("I", "MID", "M", "MID"), ("A", "OID", "O", "OID"), ("A", "CID", "C", "CID")]
STR = {"C": ["CID", "COUNTRY", "SEG"], "M": ["MID", "GRP"], "O": ["OID", "CID", "STATUS", "DAY", "AT", "WORD", "EXP"], "I": ["IID", "OID", "MID"], "A": ["OID", "ACT", "CID"]}
T = {}
for r in ["C", "M", "O", "I", "A"]:
    df = pd.read_csv(f"{d}/data/{r.lower()}.csv", dtype={c: object for c in STR[r]}, keep_default_na=False, na_values=[""], float_precision="round_trip")
    df.columns = [f"{r}.{c}" for c in df.columns]
    df[f"{r}#"] = range(len(df))
    T[r] = df

def steps(r):
    for c, f, p, k in REL:
        if c == r: yield (c, f, p, k, True)
        if p == r: yield (c, f, p, k, False)

def path(a, b):
    # breadth first; between any two records of this KM the shortest path is unique
    prev, todo = {a: None}, [a]
    while todo:
        r = todo.pop(0)
        for s in steps(r):
            nxt = s[2] if s[4] else s[0]
            if nxt not in prev:
                prev[nxt] = (r, s)
                todo.append(nxt)
    out, r = [], b
    while prev[r] is not None:
        r0, s = prev[r]
        out.append((r0, r, s))
        r = r0
    return out[::-1]

def merge(frame, frm, to, s, right, how):
    c, f, p, k, up = s
    right = right[right[f"{to}.{k if up else f}"].notna()]
    if up:
        return frame.merge(right, left_on=f"{c}.{f}", right_on=f"{p}.{k}", how=how)
    return frame.merge(right, left_on=f"{p}.{k}", right_on=f"{c}.{f}", how=how)

def test(col, op, v):
    # a comparison with null is unknown: the row does not pass
    return {"gt": col > v, "lt": col < v, "eq": col == v, "ne": col != v}[op] & col.notna()

def home_pass(cond):
    r, f, op, v = cond
    df = T[r]
    return set(df.loc[test(df[f"{r}.{f}"], op, v).fillna(False).astype(bool), f"{r}#"])

CACHE = {}

def propagate(cond, x):
    k = json.dumps([cond, x])
    if k not in CACHE:
        CACHE[k] = propagate1(cond, x)
    return CACHE[k]

def propagate1(cond, x):
    # rows of x connected to a row of the condition's record that passes it
    h = cond[0]
    ok = home_pass(cond)
    if x == h:
        return ok
    frame = T[x][[f"{x}#"] + [c for c in T[x].columns if c != f"{x}#"]]
    for frm, to, s in path(x, h):
        frame = merge(frame, frm, to, s, T[to], "inner")
    return set(frame.loc[frame[f"{h}#"].isin(ok), f"{x}#"])

def passing(x, filters):
    rows = set(T[x][f"{x}#"])
    for c in filters or []:
        rows &= propagate(c, x)
    return rows

def kpi_groups(k, dims, filters):
    # {group: value} of one KPI (one aggregate) grouped by dims, under filters
    if k["fn"] == "ratio":
        g = k["cond"][0]
    else:
        g = k["field"][0]
    frame = T[g][T[g][f"{g}#"].isin(passing(g, filters))]
    for rec in dict.fromkeys(r for r, _ in dims):
        for frm, to, s in path(g, rec):
            if f"{to}#" in frame.columns:
                continue
            right = T[to][T[to][f"{to}#"].isin(passing(to, filters))]
            frame = merge(frame, frm, to, s, right, "left")
    cols = [f"{r}.{f}" for r, f in dims]
    frame = frame.drop_duplicates(subset=cols + [f"{g}#"])
    if "cond" in k:
        ok = propagate(k["cond"], g)
        frame = frame.assign(_ok=frame[f"{g}#"].isin(ok))
    else:
        frame = frame.assign(_ok=True)
    if not cols:
        frame = frame.assign(_all="")
        cols = ["_all"]
    out = {}
    for key, part in frame.groupby(cols[0] if len(cols) == 1 else cols, dropna=False, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        key = json.dumps([None if (isinstance(x, float) and x != x) else x for x in key][:len(dims)], separators=(",", ":"))
        if k["fn"] == "ratio":
            out[key] = float(part["_ok"].sum()) / len(part)
            continue
        vals = part.loc[part["_ok"], f"{g}.{k['field'][1]}"].dropna()
        fn = k["fn"]
        if fn == "count": v = int(len(vals))
        elif fn == "countdistinct": v = int(vals.nunique())
        elif len(vals) == 0: v = None
        elif fn == "sum": v = float(vals.astype(float).sum())
        elif fn == "avg": v = float(vals.astype(float).mean())
        elif fn == "median": v = float(vals.astype(float).median())
        elif "kind" in k:
            read, text = EXTREME[k["kind"]]
            v = text(getattr(vals.map(read), fn)())
        elif fn == "max": v = float(vals.max())
        out[key] = v
    if not dims and "[]" not in out:
        out["[]"] = 0 if k["fn"] in ("count", "countdistinct") else None
    return out

result = {"queries": [], "rows": {}}
for q in spec["queries"]:
    dims, filters = [tuple(x) for x in q["dims"]], q["filters"]
    per = {k["id"]: kpi_groups(k, dims, filters) for k in spec["kpis"]}
    groups = set()
    for v in per.values():
        groups |= set(v)
    table = {}
    for gk in groups:
        table[gk] = {}
        for k in spec["kpis"]:
            v = per[k["id"]].get(gk)
            if gk not in per[k["id"]]:
                v = 0 if k["fn"] in ("count", "countdistinct") else None
            table[gk][k["id"]] = v
    result["queries"].append(table)
# Rows without KPIs: the rows of the grain (given) that pass the filters, in row order,
# each with the fields of its parents that pass them too (left merges with the passing
# rows; null where a parent is missing or does not pass, and beyond it).
result["listed"] = []
for q in spec["listed"]:
    g, dims = q["grain"], [tuple(x) for x in q["dims"]]
    frame = T[g][T[g][f"{g}#"].isin(passing(g, q["filters"]))]
    for rec in dict.fromkeys(r for r, _ in dims):
        for frm, to, s in path(g, rec):
            if f"{to}#" not in frame.columns:
                right = T[to][T[to][f"{to}#"].isin(passing(to, q["filters"]))]
                frame = merge(frame, frm, to, s, right, "left")
    rows = []
    for _, row in frame.sort_values(f"{g}#", kind="stable").iterrows():
        rows.append([None if (isinstance(row[f"{r}.{f}"], float) and row[f"{r}.{f}"] != row[f"{r}.{f}"]) else row[f"{r}.{f}"] for r, f in dims])
    result["listed"].append(rows)
for i, filters in enumerate(spec["filters"]):
    result["rows"][str(i)] = {r: sorted(int(x) for x in passing(r, filters)) for r in T}
print(json.dumps(result))
`

// pandasFilters are the filters of the check: conditions on every record.
var pandasFilters = [][][]any{
	nil,
	{{"I", "QTY", "gt", 3}},
	{{"C", "COUNTRY", "eq", "DE"}},
	{{"A", "ACT", "eq", "Pay"}},
	{{"M", "GRP", "eq", "G1"}},
	{{"O", "STATUS", "ne", "OPEN"}, {"I", "QTY", "lt", 5}},
	// 0.1 has no exact binary form: the float field holds the float64 nearest it, which
	// equals the literal's
	{{"O", "NET", "eq", 0.1}},
}

var pandasDims = [][][]string{
	nil,
	{{"O", "STATUS"}},
	{{"C", "COUNTRY"}},
	{{"M", "GRP"}},
	{{"A", "ACT"}},
	{{"C", "SEG"}, {"M", "GRP"}},
	{{"I", "MID"}},
}

// pandasListed are KM-level requests without KPIs (string fields only) and the row grain
// the rules give them: the coarsest record that reaches all their records going up.
var pandasListed = []struct {
	grain string
	dims  [][]string
}{
	{"O", [][]string{{"O", "OID"}, {"C", "COUNTRY"}}},
	{"I", [][]string{{"I", "IID"}, {"M", "GRP"}, {"O", "STATUS"}, {"C", "SEG"}}},
	{"I", [][]string{{"O", "STATUS"}, {"M", "GRP"}}},
	{"A", [][]string{{"A", "ACT"}, {"C", "COUNTRY"}}},
	// A reaches C directly, O through its own customer: under a filter on C an activity
	// that passes may have an order that does not.
	{"A", [][]string{{"A", "ACT"}, {"O", "STATUS"}, {"C", "SEG"}}},
	{"I", [][]string{{"I", "IID"}, {"O", "OID"}, {"M", "GRP"}}},
	{"C", [][]string{{"C", "COUNTRY"}}},
}

func filterText(c []any) string {
	v := fmt.Sprint(c[3])
	if s, ok := c[3].(string); ok {
		v = "'" + s + "'"
	}
	return fmt.Sprintf("%s.%s %s %s", c[0], c[1], c[2], v)
}

// writePandasData writes random rows with nulls and dangling references.
func writePandasData(t *testing.T, dir string, rng *rand.Rand) {
	pick := func(null float64, vs ...string) string {
		if rng.Float64() < null {
			return ""
		}
		return vs[rng.IntN(len(vs))]
	}
	ids := func(prefix string, n int) []string {
		var out []string
		for i := 1; i <= n; i++ {
			out = append(out, prefix+strconv.Itoa(i))
		}
		return out
	}
	nc, nm, no, ni, na := 3+rng.IntN(4), 2+rng.IntN(3), 5+rng.IntN(8), 6+rng.IntN(14), 4+rng.IntN(12)
	tables := map[string][][]string{
		"c": {{"CID", "COUNTRY", "SEG"}},
		"m": {{"MID", "GRP"}},
		"o": {{"OID", "CID", "NET", "LATE", "STATUS", "DAY", "AT", "WORD", "EXP"}},
		"i": {{"IID", "OID", "MID", "QTY"}},
		"a": {{"AID", "OID", "ACT", "CID"}},
	}
	for _, id := range ids("C", nc) {
		tables["c"] = append(tables["c"], []string{id, pick(0.2, "DE", "FR", "IT"), pick(0.2, "S1", "S2")})
	}
	for _, id := range ids("M", nm) {
		tables["m"] = append(tables["m"], []string{id, pick(0.2, "G1", "G2", "G3")})
	}
	num := func(null float64, lo, hi int) string {
		if rng.Float64() < null {
			return ""
		}
		return strconv.Itoa(lo + rng.IntN(hi-lo+1))
	}
	for _, id := range ids("O", no) {
		net := ""
		switch x := rng.Float64(); {
		case x < 0.15:
		case x < 0.35:
			net = "0.1"
		default:
			net = strconv.FormatFloat(float64(rng.IntN(100000))/100, 'f', -1, 64)
		}
		tables["o"] = append(tables["o"], []string{id, pick(0.1, ids("C", nc+1)...), net, num(0.2, -3, 6), pick(0.15, "OPEN", "PAID", "SHIPPED"),
			pick(0.15, "0001-01-01", "9999-12-31", "2024-02-29", "1969-12-31", "2025-06-01", "2025-06-02"),
			pick(0.15, "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z", "2025-06-01T00:30:00+01:00", "2025-05-31T23:30:00Z",
				"2025-06-01T00:00:00.5-00:30", "1969-12-31T23:59:59.999Z"),
			pick(0.15, "apple", "Apple", "Äpfel", "zebra", "Zebra", "éclair", "日本"),
			pick(0.2, "true", "false")})
	}
	for _, id := range ids("I", ni) {
		tables["i"] = append(tables["i"], []string{id, pick(0.1, ids("O", no+1)...), pick(0.1, ids("M", nm+1)...), num(0.15, 1, 8)})
	}
	for i := 1; i <= na; i++ {
		tables["a"] = append(tables["a"], []string{strconv.Itoa(i * 10), pick(0.1, ids("O", no+1)...), pick(0.15, "Ship", "Pay", "Change"), pick(0.1, ids("C", nc+1)...)})
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "models"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "models", "p.yaml"), []byte(pandasKM), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, rows := range tables {
		f, err := os.Create(filepath.Join(dir, "data", name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		w := csv.NewWriter(f)
		w.WriteAll(rows)
		if err := f.Close(); err != nil || w.Error() != nil {
			t.Fatal(err, w.Error())
		}
	}
}

// TestReferenceAgainstPandas checks the reference evaluator against pandas on random data
// sets: every KPI of pandasKM grouped by fields of the grain's own record, parents,
// children and records reached through an intermediate one (order values by material
// group: an order counts once in every group its items have), under filters on every
// record, the rows of every record that pass each filter, and KM-level rows of several
// records without KPIs (the grain's rows with their parents' fields).
func TestReferenceAgainstPandas(t *testing.T) {
	if exec.Command(pandasPython, "-c", "import pandas").Run() != nil {
		t.Skip(pandasPython + " cannot import pandas (Debian package python3-pandas)")
	}
	var queries []map[string]any
	for _, d := range pandasDims {
		for _, f := range pandasFilters {
			queries = append(queries, map[string]any{"dims": orEmpty(d), "filters": orEmpty(f)})
		}
	}
	var listed []map[string]any
	for _, l := range pandasListed {
		for _, f := range pandasFilters {
			listed = append(listed, map[string]any{"grain": l.grain, "dims": l.dims, "filters": orEmpty(f)})
		}
	}
	spec, err := json.Marshal(map[string]any{"kpis": pandasKPIs, "queries": queries, "filters": pandasFilters, "listed": listed})
	if err != nil {
		t.Fatal(err)
	}
	var kpiIDs []string
	for _, k := range pandasKPIs {
		kpiIDs = append(kpiIDs, k["id"].(string))
	}
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			dir := t.TempDir()
			writePandasData(t, dir, rand.New(rand.NewPCG(seed, 12)))
			out, err := exec.Command(pandasPython, "-c", pandasScript, dir, string(spec)).Output()
			if err != nil {
				if ee, ok := err.(*exec.ExitError); ok {
					t.Fatalf("pandas: %v\n%s", err, ee.Stderr[max(0, len(ee.Stderr)-3000):])
				}
				t.Fatal(err)
			}
			var want struct {
				Queries []map[string]map[string]any
				Rows    map[string]map[string][]int
				Listed  [][][]any
			}
			if err := json.Unmarshal(out, &want); err != nil {
				t.Fatal(err)
			}
			ref, err := storetest.LoadReference(os.DirFS(dir), "p")
			if err != nil {
				t.Fatal(err)
			}
			qi := 0
			for _, d := range pandasDims {
				for _, f := range pandasFilters {
					req := storetest.RefRequest{KPIs: kpiIDs}
					for _, x := range d {
						req.Fields = append(req.Fields, x[0]+"."+x[1])
					}
					for _, c := range f {
						req.FilterExprs = append(req.FilterExprs, filterText(c))
					}
					compareWithPandas(t, ref, req, len(d), want.Queries[qi])
					qi++
				}
			}
			// Rows of several records without KPIs.
			li := 0
			for _, l := range pandasListed {
				for _, f := range pandasFilters {
					req := storetest.RefRequest{}
					for _, x := range l.dims {
						req.Fields = append(req.Fields, x[0]+"."+x[1])
					}
					for _, c := range f {
						req.FilterExprs = append(req.FilterExprs, filterText(c))
					}
					got, err := ref.Eval(req)
					if err != nil {
						t.Fatalf("%+v: %v", req, err)
					}
					if !reflect.DeepEqual(orEmpty(got.Rows), orEmpty(want.Listed[li])) {
						t.Errorf("fields %v filters %v: rows\n%v\npandas\n%v", req.Fields, req.FilterExprs, got.Rows, want.Listed[li])
					}
					li++
				}
			}
			// Record-level rows passing each filter.
			for i, f := range pandasFilters {
				var texts []string
				for _, c := range f {
					texts = append(texts, filterText(c))
				}
				for _, rec := range []string{"C", "M", "O", "I", "A"} {
					got, err := ref.Eval(storetest.RefRequest{Record: rec, FilterExprs: texts})
					if err != nil {
						t.Fatal(err)
					}
					var keys []int
					for _, row := range got.Rows {
						keys = append(keys, rowNumber(t, ref, rec, row))
					}
					if w := want.Rows[strconv.Itoa(i)][rec]; !slices.Equal(keys, orEmptyInts(w)) && !(len(keys) == 0 && len(w) == 0) {
						t.Errorf("record %s filter %v: rows %v, pandas %v", rec, texts, keys, w)
					}
				}
			}
		})
	}
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func orEmptyInts(s []int) []int { return s }

// rowNumber finds the position of a full row of rec (its key is its first field).
func rowNumber(t *testing.T, ref *storetest.Reference, rec string, row []any) int {
	for i, r := range ref.Rows[rec] {
		if fmt.Sprint(r[0].Format()) == fmt.Sprint(row[0]) {
			return i
		}
	}
	t.Fatalf("no row %v in %s", row, rec)
	return -1
}

// compareWithPandas compares the evaluator's groups and KPI values with pandas' table
// (group as a JSON array of the dimension values -> KPI id -> value).
func compareWithPandas(t *testing.T, ref *storetest.Reference, req storetest.RefRequest, ndims int, want map[string]map[string]any) {
	t.Helper()
	got, err := ref.Eval(req)
	if err != nil {
		t.Fatalf("%+v: %v", req, err)
	}
	seen := map[string]bool{}
	for _, row := range got.Rows {
		k, _ := json.Marshal(row[:ndims])
		key := string(k)
		if seen[key] {
			t.Errorf("fields %v filters %v: group %s twice", req.Fields, req.FilterExprs, key)
		}
		seen[key] = true
		w, ok := want[key]
		if !ok {
			t.Errorf("fields %v filters %v: group %s is not in pandas' answer", req.Fields, req.FilterExprs, key)
			continue
		}
		for j, id := range got.Columns[ndims:] {
			if !sameValue(w[id], row[ndims+j]) {
				t.Errorf("fields %v filters %v group %s KPI %s: evaluator %v, pandas %v", req.Fields, req.FilterExprs, key, id, row[ndims+j], w[id])
			}
		}
	}
	for key := range want {
		if !seen[key] {
			t.Errorf("fields %v filters %v: pandas has group %s, the evaluator not", req.Fields, req.FilterExprs, key)
		}
	}
}

// sameValue compares a pandas JSON value (a number as float64, a string, a boolean) or
// null with an evaluator cell: numbers within 1e-9 relative, the others equal.
func sameValue(want, got any) bool {
	if want == nil || got == nil {
		return want == nil && got == nil
	}
	switch want.(type) {
	case string, bool:
		return want == got
	}
	w, ok := want.(float64)
	if !ok {
		return false
	}
	var g float64
	switch x := got.(type) {
	case int64:
		g = float64(x)
	case float64:
		g = x
	default:
		return false
	}
	return w == g || math.Abs(w-g) <= 1e-9*math.Max(math.Abs(w), math.Abs(g))
}
