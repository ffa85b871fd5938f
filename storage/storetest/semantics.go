package storetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/internal/demodata"
	"github.com/kmkit/kmkit/km"
)

// DemoOrders is the size of the generated demo the semantics suite loads: small enough for
// the reference evaluator's nested loops, large enough for every record to have rows with
// and without relatives.
const DemoOrders = 40

// DemoData returns the order-to-cash demo (internal/demodata) with n generated
// orders in the layout the stores load: models/*.yaml and data/<source>.csv.
func DemoData(n int) (fs.FS, error) {
	out := fstest.MapFS{}
	models, err := fs.Glob(demodata.FS, "models/*.yaml")
	if err != nil {
		return nil, err
	}
	for _, name := range models {
		b, err := fs.ReadFile(demodata.FS, name)
		if err != nil {
			return nil, err
		}
		out[name] = &fstest.MapFile{Data: b}
	}
	bufs := map[string]*bytes.Buffer{}
	err = demodata.WriteCSV(n, func(source string) (io.Writer, error) {
		bufs[source] = &bytes.Buffer{}
		return bufs[source], nil
	})
	if err != nil {
		return nil, err
	}
	for source, b := range bufs {
		out["data/"+source+".csv"] = &fstest.MapFile{Data: b.Bytes()}
	}
	return out, nil
}

func pageSizeOf(req RefRequest) int {
	if req.PageSize == 0 {
		return maxAnswer
	}
	return req.PageSize
}

// sameCell compares a reference cell (nil, string, bool, int64, float64) with a cell of
// the Service's answer as query.Value.Format renders it: numbers within 1e-9 relative.
func sameCell(want, got any) bool {
	switch w := want.(type) {
	case nil, string, bool:
		return want == got
	case int64:
		switch g := got.(type) {
		case int64:
			return g == w
		case float64:
			return closeFloats(float64(w), g)
		}
	case float64:
		switch g := got.(type) {
		case int64:
			return closeFloats(w, float64(g))
		case float64:
			return closeFloats(w, g)
		}
	}
	return false
}

// closeFloats reports whether a and b agree within 1e-9 relative.
func closeFloats(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// DiffRows describes the first differences between want, rows of the reference, and got,
// rows of an answer (cells as query.Value.Format renders them, or int64 and float64 for
// numbers), or "" when they agree: numbers within 1e-9 relative.
func DiffRows(want, got [][]any) string {
	var b strings.Builder
	if len(want) != len(got) {
		fmt.Fprintf(&b, "  want %d rows, got %d\n", len(want), len(got))
	}
	shown := 0
	for i := 0; i < max(len(want), len(got)) && shown < 8; i++ {
		var w, g []any
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		same := len(w) == len(g)
		for j := 0; same && j < len(w); j++ {
			same = sameCell(w[j], g[j])
		}
		if !same {
			fmt.Fprintf(&b, "  row %d: want %v, got %v\n", i, w, g)
			shown++
		}
	}
	return b.String()
}

// SemanticsCases lists the requests of the semantics suite over the demo KM o2c (m, the
// KM of DemoData): record-level ones and KM-level ones. The adapters' tests send them
// through their own encodings.
func SemanticsCases(m *km.KnowledgeModel) (records, kmLevel []RefRequest) {
	// Every record x predefined filter pair, at record level.
	for _, r := range m.Records {
		var fields []string
		for _, f := range r.Fields {
			fields = append(fields, f.ID)
		}
		records = append(records, RefRequest{Record: r.ID, Fields: fields})
		for _, f := range m.Filters {
			records = append(records, RefRequest{Record: r.ID, Fields: fields, Filters: []string{f.ID}})
		}
	}
	// Filters on every record through filterExpr RECORD.FIELD, and together.
	crossFilters := [][]string{
		{"CUSTOMERS.COUNTRY eq 'DE'"},
		{"MATERIALS.MATERIAL_GROUP eq 'Hardware'"},
		{"ORDER_ITEMS.QUANTITY gt 10"},
		{"ACTIVITIES.ACTIVITY eq 'Change Price'"},
		{"ORDERS.STATUS eq 'OPEN' or ORDERS.DAYS_LATE gt 3"},
		{"ORDERS.EXPRESS eq 'true'", "ORDERS.STATUS not eq ''"},
		{"ORDER_ITEMS.QUANTITY gt 5 and ORDERS.STATUS ne 'CANCELLED' and CUSTOMERS.SEGMENT eq 'SMB'"},
	}
	for _, r := range []string{"ORDERS", "ORDER_ITEMS", "CUSTOMERS", "MATERIALS", "ACTIVITIES"} {
		var fields []string
		for _, f := range m.Record(r).Fields[:2] {
			fields = append(fields, f.ID)
		}
		for _, fe := range crossFilters {
			records = append(records, RefRequest{Record: r, Fields: fields, FilterExprs: fe})
		}
	}
	records = append(records,
		RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID", "STATUS"}, FilterExprs: []string{"EXPRESS eq 'true'", "STATUS not eq ''"}},
		// The Power Platform connector's documented filter, as it sends it: one value.
		RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID", "EXPRESS"}, FilterExprs: []string{"EXPRESS eq 'true',STATUS not eq ''"}},
		RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID", "DAYS_LATE"}, FilterExprs: []string{"DAYS_LATE not eq '',DAYS_LATE ge '3'"}},
		RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID"}, FilterExprs: []string{"ORDER_DATE ge '2025-06-01' and CREATED_AT lt '2025-09-01T00:00:00Z'"}},
		RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID"}, FilterExprs: []string{"NET_VALUE gt '1e4'"}},
		RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID"}, FilterExprs: []string{"DAYS_LATE eq ''"}},
		RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID"}, FilterExprs: []string{"ORDER_DATE eq '2025-13-01'"}},
		RefRequest{Record: "ORDERS", Fields: []string{"STATUS"}, Distinct: true, Filters: []string{"GERMAN_CUSTOMERS"}, Sort: "-STATUS"},
		RefRequest{Record: "ORDER_ITEMS", Fields: []string{"ITEM_ID", "QUANTITY"}, Filters: []string{"PRICE_CHANGES", "HIGH_VALUE"}, Sort: "+QUANTITY", Page: 1, PageSize: 7},
		RefRequest{Record: "ORDER_ITEMS", Fields: []string{"ITEM_ID"}, FilterExprs: []string{"ACTIVITIES.ACTIVITY eq 'Ship Goods' or ORDER_ITEMS.QUANTITY gt 5"}},
		RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID"}, FilterExprs: []string{"EXPRESS eq 'yes'"}},
	)

	// KPIs: alone, with every other, grouped by fields of many records.
	dims := [][]string{
		nil,
		{"ORDERS.STATUS"},
		{"CUSTOMERS.COUNTRY"},
		{"ORDER_ITEMS.MATERIAL_ID"},
		{"ACTIVITIES.ACTIVITY"},
		{"MATERIALS.MATERIAL_GROUP"},
		{"CUSTOMERS.SEGMENT", "MATERIALS.MATERIAL_GROUP"},
		{"ORDERS.EXPRESS", "ACTIVITIES.AUTOMATED"},
	}
	var all []string
	for _, k := range m.KPIs {
		all = append(all, k.ID)
		for _, d := range dims {
			kmLevel = append(kmLevel, RefRequest{Fields: d, KPIs: []string{k.ID}})
		}
	}
	for _, d := range dims {
		kmLevel = append(kmLevel, RefRequest{Fields: d, KPIs: all})
	}
	for _, fe := range crossFilters {
		for _, d := range dims[:6] {
			kmLevel = append(kmLevel, RefRequest{Fields: d, KPIs: all, FilterExprs: fe})
		}
	}
	for _, f := range m.Filters {
		kmLevel = append(kmLevel, RefRequest{Fields: []string{"MATERIALS.MATERIAL_GROUP"}, KPIs: all, Filters: []string{f.ID}})
	}
	kmLevel = append(kmLevel,
		RefRequest{KPIs: []string{"TOTAL_NET", "ITEM_QUANTITY"}},
		RefRequest{KPIs: []string{"TOTAL_NET", "ACTIVITY_COUNT"}},
		RefRequest{Fields: []string{"CUSTOMERS.COUNTRY"}, KPIs: []string{"LATE_SHARE", "ITEM_QUANTITY", "AVG_NET"}, Sort: "-ITEM_QUANTITY"},
		RefRequest{Fields: []string{"MATERIALS.MATERIAL_GROUP"}, KPIs: []string{"TOTAL_NET"}, Sort: "+TOTAL_NET", Page: 1, PageSize: 2},
		RefRequest{Fields: []string{"ORDERS.STATUS"}, KPIs: []string{"LATE_SHARE", "STATUS_VALUE"},
			KPIParams: map[string]map[string]string{"LATE_SHARE": {"threshold": "5"}, "STATUS_VALUE": {"status": "PAID"}}},
		// Rows without KPIs.
		RefRequest{Fields: []string{"ORDERS.ORDER_ID", "CUSTOMERS.COUNTRY"}},
		RefRequest{Fields: []string{"ORDER_ITEMS.ITEM_ID", "MATERIALS.MATERIAL_GROUP", "ORDERS.STATUS", "CUSTOMERS.CITY"}, FilterExprs: []string{"ACTIVITIES.ACTIVITY eq 'Change Price'"}},
		RefRequest{Fields: []string{"ORDERS.STATUS", "MATERIALS.MATERIAL_GROUP"}, Distinct: true, Sort: "+MATERIALS.MATERIAL_GROUP"},
		RefRequest{Fields: []string{"CUSTOMERS.COUNTRY"}, Distinct: true, Filters: []string{"OPEN_ORDERS"}},
		RefRequest{Fields: []string{"ACTIVITIES.ACTIVITY", "ORDER_ITEMS.QUANTITY"}},
		RefRequest{Fields: []string{"ORDERS.STATUS"}, KPIs: []string{"TOTAL_NET"}, FilterExprs: []string{"ACTIVITIES.ACTIVITY eq 'Ship Goods' or ORDER_ITEMS.QUANTITY gt 5"}},
	)
	return records, kmLevel
}

// runSemantics checks the store, through the request layer (km.Service) every surface
// asks, against the reference evaluator on a small generated demo.
func runSemantics(t *testing.T, newStore func(t *testing.T, data fs.FS) km.Store) {
	fsys, err := DemoData(DemoOrders)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := LoadReference(fsys, "o2c")
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(newStore(t, fsys))
	records, kmLevel := SemanticsCases(ref.KM)
	t.Run("Records", func(t *testing.T) {
		for _, req := range records {
			checkService(t, svc, ref, "o2c", req)
			if req.Sort == "" && !req.Distinct && req.Page == 0 {
				checkSummary(t, svc, ref, "o2c", req)
			}
		}
	})
	t.Run("KnowledgeModel", func(t *testing.T) {
		for _, req := range kmLevel {
			checkService(t, svc, ref, "o2c", req)
		}
	})
	// OData's requests: $filter with the canonical functions and arithmetic, $orderby
	// with value expressions.
	t.Run("OData", func(t *testing.T) {
		for _, req := range ODataFunctionCases() {
			checkService(t, svc, ref, "o2c", req)
		}
	})
	t.Run("AmbiguousPath", func(t *testing.T) { runAmbiguous(t, newStore) })
	t.Run("JoinPaths", func(t *testing.T) { runJoinPaths(t, newStore) })
}

// ODataFunctionCases are $filter conditions with OData's canonical functions and
// arithmetic (see the query package's documentation for their semantics), each answered
// by the reference evaluator row at a time.
func ODataFunctionCases() []RefRequest {
	orders := []string{"ORDER_ID", "STATUS", "ORDER_DATE", "CREATED_AT", "NET_VALUE", "DAYS_LATE"}
	filters := []string{
		"contains(STATUS,'PE') eq true",
		"contains(STATUS,'PE') eq false",
		"contains(STATUS,'PE') ne true",
		"startswith(STATUS,'O') ne false or endswith(ORDER_ID,'7') eq true",
		"tolower(STATUS) eq 'open'",
		"toupper(tolower(STATUS)) eq STATUS",
		"contains(tolower(STATUS),'pe')",
		"length(STATUS) gt 4",
		"length(concat(STATUS,CURRENCY)) ge 9",
		"concat(concat(STATUS,'-'),CURRENCY) eq 'OPEN-EUR'",
		"trim(concat(' ',STATUS)) eq STATUS",
		"indexof(ORDER_ID,'3') ge 7",
		"indexof(STATUS,'X') eq -1",
		"substring(ORDER_ID,3) eq '0000007'",
		"substring(STATUS,1,2) eq 'PE'",
		"substring(STATUS,-1,2) eq 'OP'",
		"year(ORDER_DATE) eq 2025",
		"year(ORDER_DATE) add 1 eq 2026 and month(ORDER_DATE) le 6",
		"day(ORDER_DATE) eq day(CREATED_AT)",
		"year(CREATED_AT) eq 2025 and hour(CREATED_AT) ge 12",
		"minute(CREATED_AT) lt 30 or second(CREATED_AT) eq 0",
		"date(CREATED_AT) eq ORDER_DATE",
		"date(CREATED_AT) gt 2025-06-30",
		"time(CREATED_AT) lt 09:30:00",
		"DAYS_LATE mod 2 eq 1",
		"DAYS_LATE div 2 ge 3",
		"DAYS_LATE div 0 eq null",
		"DAYS_LATE mul 2 sub 1 gt 5",
		"NET_VALUE divby 2 gt 5000",
		"NET_VALUE div 0 ne null",
		"NET_VALUE mul DAYS_LATE gt 10000",
		"round(NET_VALUE) ge 10000 and floor(NET_VALUE) lt ceiling(NET_VALUE)",
		"tolower(STATUS) in ('open','paid')",
		// integer results beyond 64 bits are null in every backend
		"DAYS_LATE mul 9223372036854775807 eq null",
		"DAYS_LATE add 9223372036854775800 gt 9223372036854775805",
		"DAYS_LATE sub 9223372036854775807 sub 10 eq null",
		"(DAYS_LATE sub DAYS_LATE sub 9223372036854775807 sub 1) div -1 eq null",
		"(DAYS_LATE sub DAYS_LATE sub 9223372036854775807 sub 1) mod -1 eq 0",
		"not (length(STATUS) eq 4)",
		"CUSTOMERS.CREDIT_LIMIT divby 1000 add DAYS_LATE gt 100",
		"length(CUSTOMERS.CITY) add length(STATUS) eq 10",
		// a name on the right of an operator is a property (OData has no bare text): two
		// properties compare, also of a related record
		"ORDER_ID eq ORDER_ID",
		"STATUS ne CURRENCY",
		"NET_VALUE gt DAYS_LATE",
		"CUSTOMERS.CREDIT_LIMIT lt NET_VALUE or DAYS_LATE ge NET_VALUE",
	}
	var out []RefRequest
	for _, f := range filters {
		out = append(out, RefRequest{Record: "ORDERS", Fields: orders, ODataFilter: f})
	}
	for _, o := range []string{
		"tolower(STATUS) desc",
		"year(ORDER_DATE),tolower(STATUS) desc",
		"month(CREATED_AT) desc,substring(ORDER_ID,8),DAYS_LATE mod 3",
		"NET_VALUE divby DAYS_LATE desc",
		"length(concat(STATUS,CURRENCY)),hour(CREATED_AT) DESC",
	} {
		out = append(out, RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID", "STATUS"}, ODataFilter: "year(ORDER_DATE) ge 2025", ODataOrderBy: o})
	}
	out = append(out,
		// a function on a parent's field, carried to the child rows
		RefRequest{Record: "ORDER_ITEMS", Fields: []string{"ITEM_ID", "QUANTITY"}, ODataFilter: "tolower(ORDERS.STATUS) eq 'open' and QUANTITY mul 2 gt 10"},
		RefRequest{Record: "ORDER_ITEMS", Fields: []string{"ITEM_ID"}, ODataFilter: "length(concat(ORDER_ID,ORDERS.CUSTOMER_ID)) gt 0 and year(ORDERS.ORDER_DATE) eq 2025"},
		RefRequest{Record: "CUSTOMERS", Fields: []string{"CUSTOMER_ID", "CITY"}, ODataFilter: "tolower(ORDERS.STATUS) eq 'paid'"},
		// Unicode case mapping and character counts agree in every backend
		RefRequest{Record: "CUSTOMERS", Fields: []string{"CUSTOMER_ID", "CITY"}, ODataFilter: "toupper(CITY) eq 'MALMÖ' or contains(tolower(CUSTOMER_NAME),'mü')"},
		RefRequest{Record: "CUSTOMERS", Fields: []string{"CUSTOMER_ID", "CITY"}, ODataFilter: "length(CITY) eq 5 and indexof(CITY,'ö') eq 4 and substring(CITY,4) eq 'ö'"},
		RefRequest{Record: "ACTIVITIES", Fields: []string{"ACTIVITY_ID", "ACTIVITY"}, ODataFilter: "hour(EVENT_TIME) lt 10 and indexof(tolower(ACTIVITY),'ship') ge 0"},
	)
	return out
}

// diamondKM relates A to D through B and through C: two shortest paths.
const diamondKM = `id: diamond
name: Diamond
records:
  - {id: A, name: A, source: a, key: ID, fields: [{id: ID, name: Id, type: string}, {id: B, name: B, type: string}, {id: C, name: C, type: string}]}
  - {id: B, name: B, source: b, key: ID, fields: [{id: ID, name: Id, type: string}, {id: D, name: D, type: string}]}
  - {id: C, name: C, source: c, key: ID, fields: [{id: ID, name: Id, type: string}, {id: D, name: D, type: string}]}
  - {id: D, name: D, source: d, key: ID, fields: [{id: ID, name: Id, type: string}, {id: X, name: X, type: string}]}
relationships:
  - {from: A.B, to: B.ID}
  - {from: A.C, to: C.ID}
  - {from: B.D, to: D.ID}
  - {from: C.D, to: D.ID}
kpis:
  - {id: NA, name: Rows of A, expr: count(A.ID)}
filters:
  - {id: DX, name: D is x, expr: D.X eq 'x'}
`

// runAmbiguous checks that a request needing the path between two records joined by two
// shortest paths is a 400 that names both.
func runAmbiguous(t *testing.T, newStore func(t *testing.T, data fs.FS) km.Store) {
	fsys := fstest.MapFS{
		"models/diamond.yaml": {Data: []byte(diamondKM)},
		"data/a.csv":          {Data: []byte("ID,B,C\na1,b1,c1\na2,b2,\n")},
		"data/b.csv":          {Data: []byte("ID,D\nb1,d1\nb2,d2\n")},
		"data/c.csv":          {Data: []byte("ID,D\nc1,d2\n")},
		"data/d.csv":          {Data: []byte("ID,X\nd1,x\nd2,y\n")},
	}
	ref, err := LoadReference(fsys, "diamond")
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(newStore(t, fsys))
	for _, req := range []RefRequest{
		{Fields: []string{"D.X"}, KPIs: []string{"NA"}},
		{Fields: []string{"A.ID", "D.X"}},
		{Record: "A", Fields: []string{"ID"}, Filters: []string{"DX"}},
		{Record: "A", Fields: []string{"ID"}, FilterExprs: []string{"D.X eq 'x'"}},
	} {
		if _, err := ref.Eval(req); err == nil || !strings.Contains(err.Error(), "A-B-D or A-C-D") {
			t.Fatalf("reference: %+v: %v, want the ambiguous paths", req, err)
		}
		_, err := ask(context.Background(), svc, "diamond", req)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		names := func(a, b string) bool { return strings.Contains(msg, a) || strings.Contains(msg, b) }
		if status, _ := refusal(err); status != 400 || !names("A-B-D", "D-B-A") || !names("A-C-D", "D-C-A") {
			t.Errorf("%s\n  want a 400 refusal naming the paths A-B-D and A-C-D (either way)\n  got %v", describe("diamond", req), err)
		}
	}
	// Records whose paths are not in question still answer.
	for _, req := range []RefRequest{
		{Fields: []string{"B.D"}, KPIs: []string{"NA"}},
		{Record: "B", Fields: []string{"ID"}, Filters: []string{"DX"}},
	} {
		checkService(t, svc, ref, "diamond", req)
	}
}
