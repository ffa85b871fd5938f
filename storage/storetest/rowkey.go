package storetest

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
)

// rowKeyKM has two records without a key: EVENTS (whose OData key is ROW_NUMBER) under
// ORDERS, and LOGS, whose own field ROW_NUMBER pushes the generated key to _ROW_NUMBER.
const rowKeyKM = `id: rowkey
name: Row keys
records:
  - {id: ORDERS, name: Orders, source: orders, key: ID, fields: [{id: ID, name: Id, type: string}, {id: STATUS, name: Status, type: string}]}
  - {id: EVENTS, name: Events, source: events, fields: [{id: ORDER_ID, name: Order, type: string}, {id: ACTIVITY, name: Activity, type: string}, {id: QTY, name: Quantity, type: integer}]}
  - {id: LOGS, name: Logs, source: logs, fields: [{id: ROW_NUMBER, name: Their row number, type: integer}, {id: MSG, name: Message, type: string}]}
relationships:
  - {from: EVENTS.ORDER_ID, to: ORDERS.ID}
filters:
  - {id: PAID, name: Paid, expr: ORDERS.STATUS eq 'PAID'}
`

// rowKeyData returns the KM and data of the row key cases: 60 events over 12 orders with
// repeated and null values, so that filters and sorts reorder rows, and 9 logs whose own
// ROW_NUMBER runs backwards.
func rowKeyData() fs.FS {
	statuses := []string{"OPEN", "PAID", "CANCELLED"}
	activities := []string{"Create", "Ship", "Pay", "Change Price"}
	var orders, events, logs strings.Builder
	orders.WriteString("ID,STATUS\n")
	for i := range 12 {
		fmt.Fprintf(&orders, "O%d,%s\n", i, statuses[i*7%3])
	}
	events.WriteString("ORDER_ID,ACTIVITY,QTY\n")
	for i := range 60 {
		order := "O" + strconv.Itoa(i*5%13) // O12 has no order row
		if i%11 == 4 {
			order = ""
		}
		qty := strconv.Itoa(i * 7 % 10)
		if i%9 == 2 {
			qty = ""
		}
		fmt.Fprintf(&events, "%s,%s,%s\n", order, activities[i*3%4], qty)
	}
	logs.WriteString("ROW_NUMBER,MSG\n")
	for i := range 9 {
		fmt.Fprintf(&logs, "%d,m%d\n", 100-i, i%4)
	}
	return fstest.MapFS{
		"models/rowkey.yaml": {Data: []byte(rowKeyKM)},
		"data/orders.csv":    {Data: []byte(orders.String())},
		"data/events.csv":    {Data: []byte(events.String())},
		"data/logs.csv":      {Data: []byte(logs.String())},
	}
}

// rowKeyCase is a request naming the row key of a keyless record, for the reference
// evaluator, which numbers rows by their position in the CSV file; query is the OData
// query string that asks it (unescaped), for messages.
type rowKeyCase struct {
	query string
	ref   RefRequest
}

var rowKeyCases = []rowKeyCase{
	{"", RefRequest{}},
	{"$filter=ACTIVITY eq 'Ship'", RefRequest{FilterExprs: []string{"ACTIVITY eq 'Ship'"}}},
	{"$filter=ROW_NUMBER gt 10 and ACTIVITY ne 'Create'", RefRequest{FilterExprs: []string{"ROW_NUMBER gt 10 and ACTIVITY ne 'Create'"}}},
	{"$filter=ROW_NUMBER in (3,5,7,40,999) or QTY eq 9", RefRequest{FilterExprs: []string{"ROW_NUMBER in (3, 5, 7, 40, 999) or QTY eq 9"}}},
	{"$filter=ROW_NUMBER le 20 and ROW_NUMBER ge 12 and QTY ne null", RefRequest{FilterExprs: []string{"ROW_NUMBER le 20 and ROW_NUMBER ge 12 and QTY ne null"}}},
	{"$filter=not (ROW_NUMBER lt 50) or ROW_NUMBER eq 2", RefRequest{FilterExprs: []string{"not (ROW_NUMBER lt 50) or ROW_NUMBER eq 2"}}},
	{"$filter=ACTIVITY eq 'Pay'&$orderby=ROW_NUMBER desc", RefRequest{FilterExprs: []string{"ACTIVITY eq 'Pay'"}, Sort: "-ROW_NUMBER"}},
	{"$orderby=QTY desc,ROW_NUMBER desc", RefRequest{Sort: "-QTY,-ROW_NUMBER"}},
	{"$orderby=ACTIVITY,ROW_NUMBER", RefRequest{Sort: "+ACTIVITY,+ROW_NUMBER"}},
	{"$filter=QTY gt 3&$orderby=QTY&$skip=4&$top=4", RefRequest{FilterExprs: []string{"QTY gt 3"}, Sort: "+QTY", Page: 1, PageSize: 4}},
	{"$filter=ORDERS.STATUS eq 'OPEN' and ROW_NUMBER gt 30", RefRequest{FilterExprs: []string{"ORDERS.STATUS eq 'OPEN' and ROW_NUMBER gt 30"}}},
	{"filterid=PAID&$orderby=ROW_NUMBER desc", RefRequest{Filters: []string{"PAID"}, Sort: "-ROW_NUMBER"}},
	{"filterid=PAID&$filter=ROW_NUMBER ge 25&$skip=2&$top=2", RefRequest{Filters: []string{"PAID"}, FilterExprs: []string{"ROW_NUMBER ge 25"}, Page: 1, PageSize: 2}},
	{"$select=ROW_NUMBER&$filter=QTY gt 5&$orderby=ROW_NUMBER desc", RefRequest{Fields: []string{"ROW_NUMBER"}, FilterExprs: []string{"QTY gt 5"}, Sort: "-ROW_NUMBER"}},
}

// runRowKey checks the row key of keyless records (km.RowField, which OData serves as
// the generated key) against the reference evaluator: the key of a row is its position in
// the record under any filter, sort and page, and it filters and sorts like an integer
// field. The reference names it as OData does (ROW_NUMBER, or _ROW_NUMBER beside a field
// of that name); odata's tests check that naming.
func runRowKey(t *testing.T, newStore func(t *testing.T, data fs.FS) km.Store) {
	fsys := rowKeyData()
	ref, err := LoadReference(fsys, "rowkey")
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(newStore(t, fsys))
	for _, c := range rowKeyCases {
		req := c.ref
		req.Record, req.RowKey = "EVENTS", "ROW_NUMBER"
		if req.Fields == nil {
			req.Fields = []string{"ROW_NUMBER", "ORDER_ID", "ACTIVITY", "QTY"}
		}
		checkRowKey(t, svc, ref, req)
	}
	// LOGS: ROW_NUMBER is the record's field, _ROW_NUMBER the row key.
	for _, req := range []RefRequest{
		{},
		{FilterExprs: []string{"ROW_NUMBER gt 95"}},
		{FilterExprs: []string{"_ROW_NUMBER gt 5"}, Sort: "+MSG,-_ROW_NUMBER"},
		{Sort: "+ROW_NUMBER"},
	} {
		req.Record, req.RowKey = "LOGS", "_ROW_NUMBER"
		req.Fields = []string{"_ROW_NUMBER", "ROW_NUMBER", "MSG"}
		checkRowKey(t, svc, ref, req)
	}
}

// checkRowKey asks svc for req with its count and compares the rows and the count with
// the reference's.
func checkRowKey(t *testing.T, svc *km.Service, ref *Reference, req RefRequest) {
	t.Helper()
	res := checkService(t, svc, ref, "rowkey", req)
	if res == nil {
		return
	}
	all := req
	all.Page, all.PageSize = 0, 0
	wantAll, err := ref.Eval(all)
	if err != nil {
		t.Fatalf("%s: reference: %v", describe("rowkey", req), err)
	}
	if res.Count != len(wantAll.Rows) {
		t.Errorf("%s: count %d, want %d", describe("rowkey", req), res.Count, len(wantAll.Rows))
	}
}
