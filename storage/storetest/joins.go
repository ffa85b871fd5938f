package storetest

import (
	"context"
	"encoding/json"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
)

// joinsKMText is the KM of issue 29: LINES reach PLANTS directly (their delivery plant)
// and through ORDERS (the order's plant), a cycle of paths of different length; INVOICES
// reach PURCHASE_ORDERS by a lookup chain through PO_LINES and by two paths of the same
// length that change direction (through the vendor, through the company); VENDORS and
// COMPANIES are joined by two such paths only, a tie.
const joinsKMText = `id: joins
name: Joins
records:
  - {id: PLANTS, name: Plants, source: plants, key: PLANT_ID, fields: [{id: PLANT_ID, name: Plant, type: string}, {id: REGION, name: Region, type: string}]}
  - {id: ORDERS, name: Orders, source: orders, key: ORDER_ID, fields: [{id: ORDER_ID, name: Order, type: string}, {id: PLANT_ID, name: Plant, type: string}]}
  - id: LINES
    name: Lines
    source: lines
    key: LINE_ID
    fields: [{id: LINE_ID, name: Line, type: string}, {id: ORDER_ID, name: Order, type: string}, {id: DELIVERY_PLANT_ID, name: Delivery plant, type: string}, {id: QTY, name: Quantity, type: integer}]
  - {id: COMPANIES, name: Companies, source: companies, key: COMPANY_CODE, fields: [{id: COMPANY_CODE, name: Code, type: string}, {id: NAME, name: Name, type: string}]}
  - {id: VENDORS, name: Vendors, source: vendors, key: VENDOR_ID, fields: [{id: VENDOR_ID, name: Vendor, type: string}, {id: NAME, name: Name, type: string}]}
  - id: PURCHASE_ORDERS
    name: Purchase orders
    source: purchase_orders
    key: PO_ID
    fields: [{id: PO_ID, name: PO, type: string}, {id: VENDOR_ID, name: Vendor, type: string}, {id: COMPANY_CODE, name: Company, type: string}, {id: STATUS, name: Status, type: string}]
  - {id: PO_LINES, name: PO lines, source: po_lines, key: PO_LINE_ID, fields: [{id: PO_LINE_ID, name: PO line, type: string}, {id: PO_ID, name: PO, type: string}, {id: QTY, name: Quantity, type: integer}]}
  - id: INVOICES
    name: Invoices
    source: invoices
    key: INVOICE_NO
    fields: [{id: INVOICE_NO, name: Invoice, type: string}, {id: PO_LINE_ID, name: PO line, type: string}, {id: VENDOR_ID, name: Vendor, type: string}, {id: COMPANY_CODE, name: Company, type: string}, {id: AMOUNT, name: Amount, type: float}]
relationships:
  - {from: ORDERS.PLANT_ID, to: PLANTS.PLANT_ID}
  - {from: LINES.ORDER_ID, to: ORDERS.ORDER_ID}
  - {from: LINES.DELIVERY_PLANT_ID, to: PLANTS.PLANT_ID}
  - {from: PURCHASE_ORDERS.VENDOR_ID, to: VENDORS.VENDOR_ID}
  - {from: PURCHASE_ORDERS.COMPANY_CODE, to: COMPANIES.COMPANY_CODE}
  - {from: PO_LINES.PO_ID, to: PURCHASE_ORDERS.PO_ID}
  - {from: INVOICES.PO_LINE_ID, to: PO_LINES.PO_LINE_ID}
  - {from: INVOICES.VENDOR_ID, to: VENDORS.VENDOR_ID}
  - {from: INVOICES.COMPANY_CODE, to: COMPANIES.COMPANY_CODE}
kpis:
  - {id: LINE_COUNT, name: Lines, expr: count(LINES.LINE_ID)}
  - {id: LINE_QTY, name: Quantity, expr: sum(LINES.QTY)}
  - {id: ORDER_COUNT, name: Orders, expr: count(ORDERS.ORDER_ID)}
  - {id: INVOICE_COUNT, name: Invoices, expr: count(INVOICES.INVOICE_NO)}
  - {id: INVOICE_AMOUNT, name: Invoiced, expr: sum(INVOICES.AMOUNT)}
  - {id: PO_COUNT, name: Purchase orders, expr: count(PURCHASE_ORDERS.PO_ID)}
  - {id: PO_LINE_COUNT, name: PO lines, expr: count(PO_LINES.PO_LINE_ID)}
  - {id: VENDOR_COUNT, name: Vendors, expr: count(VENDORS.VENDOR_ID)}
filters:
  - {id: EMEA, name: EMEA, expr: "PLANTS.REGION eq 'EMEA'"}
  - {id: OPEN_POS, name: Open purchase orders, expr: "PURCHASE_ORDERS.STATUS eq 'OPEN'"}
  - {id: COMPANY_1000, name: Company 1000, expr: "COMPANIES.COMPANY_CODE eq '1000'"}
`

// JoinsData returns the KM of issue 29 (see joinsKMText) with its rows: the issue's
// minimal case (line L1 of order O1 at plant P2, delivered from P1 in EMEA) among others
// with null and dangling keys, and an invoice (I2) whose vendor is not the vendor of its
// purchase order, so the two paths between them give different answers.
func JoinsData() fstest.MapFS {
	return fstest.MapFS{
		"models/joins.yaml":        {Data: []byte(joinsKMText)},
		"data/plants.csv":          {Data: []byte("PLANT_ID,REGION\nP1,EMEA\nP2,AMER\nP3,EMEA\nP4,\n")},
		"data/orders.csv":          {Data: []byte("ORDER_ID,PLANT_ID\nO1,P2\nO2,P1\nO3,\nO4,P9\nO5,P3\n")},
		"data/lines.csv":           {Data: []byte("LINE_ID,ORDER_ID,DELIVERY_PLANT_ID,QTY\nL1,O1,P1,5\nL2,O2,P1,3\nL3,O2,P2,2\nL4,O1,P2,7\nL5,,P1,1\nL6,O4,P3,4\nL7,O5,,6\nL8,O9,P4,2\nL9,O5,P3,\n")},
		"data/companies.csv":       {Data: []byte("COMPANY_CODE,NAME\n1000,Alpha\n2000,Beta\n")},
		"data/vendors.csv":         {Data: []byte("VENDOR_ID,NAME\nV1,Acme\nV2,Bolt\nV3,Core\n")},
		"data/purchase_orders.csv": {Data: []byte("PO_ID,VENDOR_ID,COMPANY_CODE,STATUS\nPO1,V1,1000,OPEN\nPO2,V2,1000,CLOSED\nPO3,V1,2000,OPEN\nPO4,,2000,CLOSED\nPO5,V3,,\n")},
		"data/po_lines.csv":        {Data: []byte("PO_LINE_ID,PO_ID,QTY\nPL1,PO1,10\nPL2,PO1,5\nPL3,PO2,8\nPL4,PO3,1\nPL5,,2\nPL6,PO5,4\n")},
		"data/invoices.csv":        {Data: []byte("INVOICE_NO,PO_LINE_ID,VENDOR_ID,COMPANY_CODE,AMOUNT\nI1,PL1,V1,1000,100.5\nI2,PL3,V1,2000,80\nI3,PL4,V2,1000,20.25\nI4,,V3,2000,5\nI5,PL6,V3,,12\nI6,PL2,V1,1000,\n")},
	}
}

// joinsRows are the requests of issue 29 that list rows of several records, each with the
// KPI that counts the rows of its row grain: the same request with that KPI must give
// exactly the distinct rows as its groups.
var joinsRows = []struct {
	req   RefRequest
	count string
}{
	{RefRequest{Fields: []string{"LINES.LINE_ID", "ORDERS.ORDER_ID", "ORDERS.PLANT_ID"}, Filters: []string{"EMEA"}}, "LINE_COUNT"},
	{RefRequest{Fields: []string{"LINES.LINE_ID", "ORDERS.ORDER_ID", "PLANTS.REGION"}, Filters: []string{"EMEA"}}, "LINE_COUNT"},
	{RefRequest{Fields: []string{"LINES.QTY", "ORDERS.ORDER_ID", "PLANTS.REGION"}, FilterExprs: []string{"ORDERS.ORDER_ID ne 'O2'"}}, "LINE_COUNT"},
	{RefRequest{Fields: []string{"LINES.LINE_ID", "ORDERS.PLANT_ID"}, FilterExprs: []string{"PLANTS.REGION eq 'AMER' or PLANTS.REGION eq null"}}, "LINE_COUNT"},
	{RefRequest{Fields: []string{"LINES.LINE_ID", "ORDERS.ORDER_ID"}, FilterExprs: []string{"PLANTS.REGION ne 'AMER'", "LINES.QTY gt 1"}}, "LINE_COUNT"},
	{RefRequest{Fields: []string{"INVOICES.INVOICE_NO", "PURCHASE_ORDERS.STATUS"}}, "INVOICE_COUNT"},
	{RefRequest{Fields: []string{"INVOICES.INVOICE_NO", "PURCHASE_ORDERS.STATUS"}, FilterExprs: []string{"PURCHASE_ORDERS.STATUS eq 'OPEN'"}}, "INVOICE_COUNT"},
	{RefRequest{Fields: []string{"INVOICES.INVOICE_NO", "VENDORS.NAME", "PURCHASE_ORDERS.PO_ID"}, Filters: []string{"OPEN_POS"}}, "INVOICE_COUNT"},
	{RefRequest{Fields: []string{"INVOICES.INVOICE_NO", "PO_LINES.QTY", "PURCHASE_ORDERS.STATUS"}, FilterExprs: []string{"VENDORS.NAME eq 'Acme'"}}, "INVOICE_COUNT"},
	{RefRequest{Fields: []string{"INVOICES.AMOUNT", "PURCHASE_ORDERS.PO_ID", "COMPANIES.NAME"}, FilterExprs: []string{"PO_LINES.QTY gt 4"}}, "INVOICE_COUNT"},
	{RefRequest{Fields: []string{"VENDORS.NAME", "COMPANIES.NAME"}}, "PO_COUNT"},
	{RefRequest{Fields: []string{"PO_LINES.PO_LINE_ID", "VENDORS.NAME"}, FilterExprs: []string{"INVOICES.AMOUNT gt 50"}}, "PO_LINE_COUNT"},
}

// joinsOther are further requests of the KM: sorts by a parent's field, KPIs, record
// level filters across the chain.
var joinsOther = []RefRequest{
	{Record: "ORDERS", Fields: []string{"ORDER_ID", "PLANT_ID"}, Filters: []string{"EMEA"}},
	{Record: "LINES", Fields: []string{"LINE_ID"}, Filters: []string{"EMEA"}},
	// A sort the unfiltered request makes the memory store index first, then the same
	// sort where the filter tests the orders (a frame of the request's own).
	{Fields: []string{"LINES.LINE_ID", "ORDERS.ORDER_ID", "ORDERS.PLANT_ID"}, Sort: "-LINES.LINE_ID,+ORDERS.PLANT_ID"},
	{Fields: []string{"LINES.LINE_ID", "ORDERS.ORDER_ID", "ORDERS.PLANT_ID"}, Filters: []string{"EMEA"}, Sort: "-LINES.LINE_ID,+ORDERS.PLANT_ID"},
	{Fields: []string{"LINES.LINE_ID", "ORDERS.ORDER_ID", "ORDERS.PLANT_ID"}, Filters: []string{"EMEA"}, Sort: "-LINES.LINE_ID", PageSize: 2},
	{Fields: []string{"LINES.LINE_ID", "ORDERS.ORDER_ID", "ORDERS.PLANT_ID"}, Filters: []string{"EMEA"}, Sort: "+ORDERS.PLANT_ID"},
	{Fields: []string{"LINES.LINE_ID", "ORDERS.ORDER_ID", "ORDERS.PLANT_ID"}, Filters: []string{"EMEA"}, Sort: "-ORDERS.PLANT_ID,-LINES.LINE_ID", Page: 1, PageSize: 2},
	{Fields: []string{"ORDERS.PLANT_ID", "PLANTS.REGION"}, Filters: []string{"EMEA"}, Distinct: true, Sort: "+ORDERS.PLANT_ID"},
	{Fields: []string{"ORDERS.ORDER_ID"}, KPIs: []string{"LINE_COUNT", "LINE_QTY", "ORDER_COUNT"}, Filters: []string{"EMEA"}},
	{Fields: []string{"PLANTS.REGION"}, KPIs: []string{"LINE_QTY", "ORDER_COUNT"}},
	{Fields: []string{"PURCHASE_ORDERS.STATUS"}, KPIs: []string{"INVOICE_AMOUNT", "INVOICE_COUNT"}},
	{Fields: []string{"PURCHASE_ORDERS.STATUS"}, KPIs: []string{"INVOICE_AMOUNT"}, Filters: []string{"OPEN_POS"}},
	{Fields: []string{"VENDORS.NAME"}, KPIs: []string{"INVOICE_AMOUNT", "PO_COUNT"}, Sort: "-INVOICE_AMOUNT"},
	{Record: "INVOICES", Fields: []string{"INVOICE_NO", "AMOUNT"}, FilterExprs: []string{"PURCHASE_ORDERS.STATUS eq 'OPEN'"}},
	{Record: "PURCHASE_ORDERS", Fields: []string{"PO_ID"}, FilterExprs: []string{"INVOICES.AMOUNT gt 50"}},
	{Record: "VENDORS", Fields: []string{"VENDOR_ID"}, Filters: []string{"OPEN_POS"}},
}

// joinsAmbiguous need the join of VENDORS and COMPANIES, which two paths tie for: a 400
// KM_JOIN_AMBIGUOUS naming both, in every form.
var joinsAmbiguous = []RefRequest{
	{Fields: []string{"COMPANIES.NAME"}, KPIs: []string{"VENDOR_COUNT"}},
	{Fields: []string{"VENDORS.NAME"}, KPIs: []string{"INVOICE_COUNT"}, Filters: []string{"COMPANY_1000"}},
	{Record: "VENDORS", Fields: []string{"NAME"}, Filters: []string{"COMPANY_1000"}},
	{Record: "VENDORS", Fields: []string{"NAME"}, FilterExprs: []string{"COMPANIES.NAME eq 'Alpha'"}},
	{Fields: []string{"PO_LINES.PO_LINE_ID", "VENDORS.NAME"}, Filters: []string{"COMPANY_1000"}},
	{Fields: []string{"PO_LINES.PO_LINE_ID", "VENDORS.NAME"}, Filters: []string{"COMPANY_1000"}, Sort: "+VENDORS.NAME"},
}

// runJoinPaths checks issue 29's items 1 and 2 on a store: every request of the joins KM
// against the reference evaluator, the row form of each against its KPI form, the
// issue's own answers, and the refusals of the tie.
func runJoinPaths(t *testing.T, newStore func(t *testing.T, data fs.FS) km.Store) {
	fsys := JoinsData()
	ref, err := LoadReference(fsys, "joins")
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(newStore(t, fsys))
	t.Run("Reference", func(t *testing.T) {
		reqs := slices.Clone(joinsOther)
		for _, r := range joinsRows {
			withKPI := r.req
			withKPI.KPIs = []string{r.count}
			reqs = append(reqs, r.req, withKPI)
		}
		for _, req := range reqs {
			checkService(t, svc, ref, "joins", req)
		}
	})
	t.Run("RowsAreKPIGroups", func(t *testing.T) {
		for _, r := range joinsRows {
			rows := r.req
			rows.Distinct = true
			withKPI := r.req
			withKPI.KPIs = []string{r.count}
			got := groupsOf(t, svc, rows, 0)
			want := groupsOf(t, svc, withKPI, 1)
			if !slices.Equal(got, want) {
				t.Errorf("fields %v filters %v %v: rows\n  %v\nKPI %s groups\n  %v", r.req.Fields, r.req.Filters, r.req.FilterExprs, got, r.count, want)
			}
		}
	})
	t.Run("Issue", func(t *testing.T) {
		// Item 1: L1 passes EMEA (its delivery plant P1), its order O1 (plant P2) does not.
		for _, kpis := range [][]string{nil, {"LINE_COUNT"}} {
			req := RefRequest{Fields: []string{"LINES.LINE_ID", "ORDERS.ORDER_ID", "ORDERS.PLANT_ID"}, KPIs: kpis, Filters: []string{"EMEA"}}
			rows := answer(t, svc, req)
			i := slices.IndexFunc(rows, func(r []any) bool { return r[0] == "L1" })
			if i < 0 || rows[i][1] != nil || rows[i][2] != nil {
				t.Errorf("%v: rows %v, want L1 with null order and plant", req, rows)
			}
		}
		if rows := answer(t, svc, RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID"}, Filters: []string{"EMEA"}}); slices.ContainsFunc(rows, func(r []any) bool { return r[0] == "O1" }) {
			t.Errorf("O1 passes EMEA: %v", rows)
		}
		// The requests as written: the row of L1 (or of O2) is among the answer's, and
		// O1 is nowhere in it.
		for _, c := range []struct {
			req  km.Request
			want map[string]any
		}{
			{km.Request{Fields: []string{"LINES.LINE_ID", "ORDERS.ORDER_ID", "ORDERS.PLANT_ID"}, Filters: []string{"EMEA"}},
				map[string]any{"LINES.LINE_ID": "L1", "ORDERS.ORDER_ID": nil, "ORDERS.PLANT_ID": nil}},
			{km.Request{Fields: []string{"LINES.LINE_ID", "ORDERS.ORDER_ID", "ORDERS.PLANT_ID"}, Filters: []string{"EMEA"}, KPIs: []string{"LINE_COUNT"}},
				map[string]any{"LINES.LINE_ID": "L1", "ORDERS.ORDER_ID": nil, "ORDERS.PLANT_ID": nil, "LINE_COUNT": int64(1)}},
			{km.Request{Record: "ORDERS", AllFields: true, Filters: []string{"EMEA"}}, map[string]any{"ORDER_ID": "O2"}},
			{km.Request{Fields: []string{"INVOICES.INVOICE_NO", "PURCHASE_ORDERS.STATUS"}},
				map[string]any{"INVOICES.INVOICE_NO": "I2", "PURCHASE_ORDERS.STATUS": "CLOSED"}},
			{km.Request{Fields: []string{"INVOICES.INVOICE_NO", "PURCHASE_ORDERS.STATUS"}, FilterExprs: []string{"PURCHASE_ORDERS.STATUS eq 'CLOSED'"}},
				map[string]any{"INVOICES.INVOICE_NO": "I2", "PURCHASE_ORDERS.STATUS": "CLOSED"}},
		} {
			res, err := askRequest(svc, "joins", c.req)
			if err != nil {
				t.Errorf("%+v: %v, want a row with %v", c.req, err, c.want)
				continue
			}
			cols, rows := columnNames(res.Columns), cells(res.Rows)
			found := slices.ContainsFunc(rows, func(r []any) bool {
				for name, v := range c.want {
					if i := slices.Index(cols, name); i < 0 || !sameCell(v, r[i]) {
						return false
					}
				}
				return true
			})
			o1 := slices.ContainsFunc(rows, func(r []any) bool { return slices.Contains(r, any("O1")) })
			if !found || o1 {
				t.Errorf("%+v: %v %v, want a row with %v and no O1", c.req, cols, rows, c.want)
			}
		}
		// Sorting by the order's plant: the line whose order fails sorts with the nulls.
		rows := answer(t, svc, RefRequest{Fields: []string{"LINES.LINE_ID", "ORDERS.PLANT_ID"}, Filters: []string{"EMEA"}, Sort: "+ORDERS.PLANT_ID"})
		if len(rows) == 0 || rows[0][1] == "P2" || slices.ContainsFunc(rows, func(r []any) bool { return r[1] == "P2" }) {
			t.Errorf("sorted by ORDERS.PLANT_ID: %v", rows)
		}
		// Item 2: the chain INVOICES-PO_LINES-PURCHASE_ORDERS, with and without a filter on
		// PURCHASE_ORDERS.STATUS (I2's purchase order PO2 is CLOSED; its vendor's are OPEN).
		for _, fe := range [][]string{nil, {"PURCHASE_ORDERS.STATUS eq 'OPEN'"}, {"PURCHASE_ORDERS.STATUS eq 'CLOSED'"}} {
			rows := answer(t, svc, RefRequest{Fields: []string{"INVOICES.INVOICE_NO", "PURCHASE_ORDERS.STATUS"}, FilterExprs: fe})
			i := slices.IndexFunc(rows, func(r []any) bool { return r[0] == "I2" })
			if len(fe) > 0 && strings.Contains(fe[0], "OPEN") {
				if i >= 0 {
					t.Errorf("%v: I2 of a CLOSED purchase order passes: %v", fe, rows)
				}
				continue
			}
			if i < 0 || rows[i][1] != "CLOSED" {
				t.Errorf("%v: %v, want I2 CLOSED", fe, rows)
			}
		}
	})
	t.Run("Search", func(t *testing.T) {
		// A searched field joins the rows as a selected one does: along the chain (I2's
		// purchase order is CLOSED), and a parent failing the filter is null (L1's order,
		// of plant P2, fails EMEA: no line of an EMEA delivery has an order of P2).
		search := func(fields []string, term, field string, filters ...string) km.Request {
			return km.Request{Fields: fields, Filters: filters, Search: &km.SearchRequest{Term: term, Fields: []string{field}, Precision: 100}}
		}
		for _, c := range []struct {
			req  km.Request
			want []any
		}{
			{search([]string{"INVOICES.INVOICE_NO"}, "CLOSED", "PURCHASE_ORDERS.STATUS"), []any{"I2"}},
			{search([]string{"LINES.LINE_ID"}, "P2", "ORDERS.PLANT_ID", "EMEA"), nil},
			{search([]string{"LINES.LINE_ID"}, "P1", "ORDERS.PLANT_ID", "EMEA"), []any{"L2"}},
		} {
			res, err := askRequest(svc, "joins", c.req)
			if err != nil {
				t.Errorf("%+v: %v", c.req, err)
				continue
			}
			var got []any
			for _, r := range cells(res.Rows) {
				got = append(got, r[0])
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%+v: %v, want %v", c.req, got, c.want)
			}
		}
		// With KPIs the searched field is selected, and the tie is refused as without.
		req := search([]string{"COMPANIES.NAME"}, "Alpha", "COMPANIES.NAME")
		req.KPIs = []string{"VENDOR_COUNT"}
		req.Search.Precision = -1
		if _, err := askRequest(svc, "joins", req); !refused(err, 400, km.CodeJoinAmbiguous) {
			t.Errorf("%+v: %v, want 400 %s", req, err, km.CodeJoinAmbiguous)
		}
	})
	t.Run("Ambiguous", func(t *testing.T) {
		for _, req := range joinsAmbiguous {
			if _, err := ref.Eval(req); err == nil || !strings.Contains(err.Error(), "VENDORS-INVOICES-COMPANIES") && !strings.Contains(err.Error(), "COMPANIES-INVOICES-VENDORS") {
				t.Errorf("reference: %+v: %v, want the tie named", req, err)
			}
			_, err := ask(context.Background(), svc, "joins", req)
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			named := func(a, b string) bool { return strings.Contains(msg, a) || strings.Contains(msg, b) }
			if !refused(err, 400, km.CodeJoinAmbiguous) ||
				!named("VENDORS-PURCHASE_ORDERS-COMPANIES", "COMPANIES-PURCHASE_ORDERS-VENDORS") || !named("VENDORS-INVOICES-COMPANIES", "COMPANIES-INVOICES-VENDORS") {
				t.Errorf("%s\n  want 400 %s naming both paths\n  got %v", describe("joins", req), km.CodeJoinAmbiguous, err)
			}
		}
	})
}

// answer asks svc for req on the joins KM and returns its rows in the order of the
// request's columns, failing the test on an error.
func answer(t *testing.T, svc *km.Service, req RefRequest) [][]any {
	t.Helper()
	if req.Record != "" && len(req.Fields) == 0 {
		t.Fatalf("answer needs the fields named")
	}
	res, err := ask(context.Background(), svc, "joins", req)
	if err != nil {
		t.Fatalf("%s: %v", describe("joins", req), err)
	}
	return cells(res.Rows)
}

// groupsOf returns the distinct tuples of the field columns of svc's answer to req (the
// last kpis columns left out), sorted, each as JSON text.
func groupsOf(t *testing.T, svc *km.Service, req RefRequest, kpis int) []string {
	t.Helper()
	rows := answer(t, svc, req)
	var out []string
	for _, r := range rows {
		b, err := json.Marshal(r[:len(r)-kpis])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	slices.Sort(out)
	return slices.Compact(out)
}
