package kmhttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/memory"
)

// rec is the record data endpoint of the shop KM.
func rec(record, query string) string {
	return api + "/shop/records/" + record + "/data?" + query
}

// kmData is the KM data endpoint of the shop KM.
func kmData(query string) string { return api + "/shop/data?" + query }

// esc percent-encodes a query value (spaces as %20).
func esc(s string) string { return url.PathEscape(s) }

// ids renders the expected data page of rows that hold only an ID column.
func idPage(size int, sort string, header string, ids ...string) string {
	var rows []string
	for _, id := range ids {
		rows = append(rows, `{"ID":"`+id+`"}`)
	}
	return fmt.Sprintf(`{"page":0,"pageSize":%d,"total":%d,"sort":%s,"content":{"headers":[%s],"data":[%s]}}`,
		size, len(ids), sort, header, strings.Join(rows, ","))
}

const (
	hOrderID  = `{"id":"ID","name":"Order","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}`
	hCustID   = `{"id":"ID","name":"Customer","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}`
	hStatus   = `{"id":"STATUS","name":"Status","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}`
	hLate     = `{"id":"LATE","name":"Days late","type":"integer","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}`
	hNet      = `{"id":"NET","name":"Net value","type":"float","format":",.2f","unit":"EUR","aggregation":false,"filterable":true,"sortable":true}`
	hKMNet    = `{"id":"NET","name":"Net","type":"float","format":",.2f","unit":"EUR","aggregation":true,"filterable":false,"sortable":true}`
	hOrdersN  = `{"id":"ORDERS_N","name":"Orders","type":"integer","format":"","unit":"","aggregation":true,"filterable":false,"sortable":true}`
	hLateSh   = `{"id":"LATE_SHARE","name":"Late share","type":"float","format":".0%","unit":"","aggregation":true,"filterable":false,"sortable":true}`
	hCountry  = `{"id":"CUSTOMERS.COUNTRY","name":"Country","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}`
	hOrdersID = `{"id":"ORDERS.ID","name":"Order","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}`
)

func TestRecordData(t *testing.T) {
	h := shop(t)
	paid := `{"page":0,"pageSize":50,"total":3,"sort":["-ID"],"content":{"headers":[` + hOrderID + `,` + hStatus + `],"data":[
		{"ID":"O6","STATUS":"PAID"},{"ID":"O3","STATUS":"PAID"},{"ID":"O2","STATUS":"PAID"}]}}`
	runExchanges(t, h, []exchange{
		{name: "all value types", target: rec("ORDERS", "fields=ID,NET,DAY,CREATED,LATE,EXPRESS&sort=-NET&pageSize=3"),
			want: `{"page":0,"pageSize":3,"total":3,"sort":["-NET"],"content":{"headers":[` + hOrderID + `,` + hNet + `,
				{"id":"DAY","name":"Order day","type":"date","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true},
				{"id":"CREATED","name":"Created","type":"datetime","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true},` + hLate + `,
				{"id":"EXPRESS","name":"Express","type":"boolean","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}],"data":[
				{"ID":"O4","NET":1200,"DAY":"2025-03-01","CREATED":"2025-03-01T09:15:00Z","LATE":null,"EXPRESS":false},
				{"ID":"O6","NET":999.99,"DAY":"2025-04-01","CREATED":"2025-04-01T00:00:00Z","LATE":-1,"EXPRESS":false},
				{"ID":"O8","NET":300,"DAY":"2025-04-03","CREATED":"2025-04-03T23:59:59Z","LATE":1,"EXPRESS":null}]}}`},
		{name: "filter and sort", target: rec("ORDERS", "fields=ID,STATUS&filterExpr="+esc("STATUS eq 'PAID'")+"&sort=-ID"), want: paid},
		{name: "fields repeated equals comma list", target: rec("ORDERS", "fields=ID&fields=STATUS&filterExpr="+esc("STATUS eq 'PAID'")+"&sort=-ID"), want: paid},
		{name: "form-encoded spaces", target: rec("ORDERS", "fields=ID,STATUS&filterExpr=STATUS+eq+'PAID'&sort=-ID"), want: paid},
		{name: "filterExpr repeated", target: rec("ORDERS", "fields=ID&filterExpr="+esc("NET gt 50")+"&filterExpr="+esc("STATUS eq 'PAID'")),
			want: idPage(50, `[]`, hOrderID, "O2", "O3", "O6")},
		{name: "filterExpr comma-joined", target: rec("ORDERS", "fields=ID&filterExpr="+esc("NET gt 50,STATUS eq 'PAID'")),
			sameAsTarget: rec("ORDERS", "fields=ID&filterExpr="+esc("NET gt 50")+"&filterExpr="+esc("STATUS eq 'PAID'"))},
		{name: "comma inside quotes and parentheses does not split", target: rec("ORDERS", "fields=ID&filterExpr="+esc("STATUS in ('PAID','a,b'),(NET gt 50 or NET lt 0)")),
			want: idPage(50, `[]`, hOrderID, "O2", "O3", "O6")},
		{name: "semicolon in a value", target: rec("CUSTOMERS", "fields=ID&filterExpr=NAME%20eq%20'Smith;%20Sons'"),
			want: idPage(50, `[]`, hCustID, "C4")},
		{name: "doubled quote", target: rec("CUSTOMERS", "fields=ID&filterExpr="+esc("NAME eq 'D''Artagnan SA'")),
			want: idPage(50, `[]`, hCustID, "C2")},
		{name: "plus of a time offset, unencoded", target: rec("ORDERS", "fields=ID&filterExpr=CREATED%20gt%202025-04-01T01:00:00+02:00"),
			want: idPage(50, `[]`, hOrderID, "O6", "O7", "O8")},
		{name: "plus of a time offset, encoded", target: rec("ORDERS", "fields=ID&filterExpr=CREATED%20gt%202025-04-01T01:00:00%2B02:00"),
			want: idPage(50, `[]`, hOrderID, "O6", "O7", "O8")},
		{name: "plus of a time offset among form-encoded spaces", target: rec("ORDERS", "fields=ID&filterExpr=CREATED+gt+2025-04-01T01:00+02:00"),
			want: idPage(50, `[]`, hOrderID, "O6", "O7", "O8")},
		{name: "date literal against a datetime compares the day", target: rec("ORDERS", "fields=ID&filterExpr="+esc("CREATED eq 2025-04-01")),
			want: idPage(50, `[]`, hOrderID, "O6")},
		{name: "ne leaves out nulls", target: rec("ORDERS", "fields=ID&filterExpr="+esc("LATE ne 0")),
			want: idPage(50, `[]`, hOrderID, "O2", "O5", "O6", "O8")},
		{name: "eq null", target: rec("ORDERS", "fields=ID&filterExpr="+esc("LATE eq null")),
			want: idPage(50, `[]`, hOrderID, "O1", "O4", "O7")},
		{name: "legacy is not null and bare value", target: rec("ORDERS", "fields=ID&filterExpr="+esc("LATE is not null and STATUS eq PAID")),
			want: idPage(50, `[]`, hOrderID, "O2", "O3", "O6")},
		{name: "functions", target: rec("CUSTOMERS", "fields=ID&filterExpr="+esc("contains(NAME,'World') or startswith(NAME,'Sm')")),
			want: idPage(50, `[]`, hCustID, "C3", "C4")},
		// contains(...) eq true, the form SAP Cloud SDK writes, is harmless here too: the
		// call; eq false is its negation (orders.csv: PAID is O2, O3, O6)
		{name: "function eq true", target: rec("ORDERS", "fields=ID&filterExpr="+esc("contains(STATUS,'AI') eq true")),
			want: idPage(50, `[]`, hOrderID, "O2", "O3", "O6")},
		{name: "function eq false", target: rec("ORDERS", "fields=ID&filterExpr="+esc("contains(STATUS,'AI') eq false and NET gt 100")),
			want: idPage(50, `[]`, hOrderID, "O1", "O4", "O8")},
		{name: "predefined filter", target: rec("ORDERS", "fields=ID&filters=LATE"),
			want: idPage(50, `[]`, hOrderID, "O2", "O5", "O8")},
		{name: "predefined filters and filterExpr are ANDed", target: rec("ORDERS", "fields=ID&filters=LATE,PAID&filterExpr="+esc("NET gt 100")),
			want: idPage(50, `[]`, hOrderID, "O2")},
		{name: "nulls sort last ascending", target: rec("ORDERS", "fields=ID,LATE&sort=LATE&pageSize=8"),
			want: `{"page":0,"pageSize":8,"total":8,"sort":["+LATE"],"content":{"headers":[` + hOrderID + `,` + hLate + `],"data":[
				{"ID":"O6","LATE":-1},{"ID":"O3","LATE":0},{"ID":"O8","LATE":1},{"ID":"O2","LATE":2},{"ID":"O5","LATE":5},
				{"ID":"O1","LATE":null},{"ID":"O4","LATE":null},{"ID":"O7","LATE":null}]}}`},
		{name: "nulls sort last descending", target: rec("ORDERS", "fields=LATE,ID&sort=-LATE"),
			want: `{"page":0,"pageSize":50,"total":8,"sort":["-LATE"],"content":{"headers":[` + hLate + `,` + hOrderID + `],"data":[
				{"ID":"O5","LATE":5},{"ID":"O2","LATE":2},{"ID":"O8","LATE":1},{"ID":"O3","LATE":0},{"ID":"O6","LATE":-1},
				{"ID":"O1","LATE":null},{"ID":"O4","LATE":null},{"ID":"O7","LATE":null}]}}`},
		{name: "two sort keys", target: rec("ORDERS", "fields=STATUS,ID&sort=STATUS,-ID&pageSize=4"),
			want: `{"page":0,"pageSize":4,"total":4,"sort":["+STATUS","-ID"],"content":{"headers":[` + hStatus + `,` + hOrderID + `],"data":[
				{"STATUS":"CANCELLED","ID":"O7"},{"STATUS":"DELIVERED","ID":"O8"},{"STATUS":"DELIVERED","ID":"O5"},{"STATUS":"OPEN","ID":"O4"}]}}`},
		{name: "distinct", target: rec("ORDERS", "fields=STATUS&options=distinct&sort=STATUS"),
			want: `{"page":0,"pageSize":50,"total":4,"sort":["+STATUS"],"content":{"headers":[` + hStatus + `],"data":[
				{"STATUS":"CANCELLED"},{"STATUS":"DELIVERED"},{"STATUS":"OPEN"},{"STATUS":"PAID"}]}}`},
		{name: "last page", target: rec("ORDERS", "fields=ID&pageSize=3&page=2"),
			want: `{"page":2,"pageSize":3,"total":2,"sort":[],"content":{"headers":[` + hOrderID + `],"data":[{"ID":"O7"},{"ID":"O8"}]}}`},
		{name: "fuzzy search with a typo", target: rec("CUSTOMERS", "fields=ID,NAME&searchTerm=materail"),
			want: `{"page":0,"pageSize":50,"total":1,"sort":[],"content":{"headers":[` + hCustID + `,
				{"id":"NAME","name":"Customer name","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}],"data":[
				{"ID":"C3","NAME":"Material World Ltd"}]}}`},
		{name: "fuzzy search without a match", target: rec("CUSTOMERS", "fields=ID,NAME&searchTerm=xyz"),
			want: `{"page":0,"pageSize":50,"total":0,"sort":[],"content":{"headers":[` + hCustID + `,
				{"id":"NAME","name":"Customer name","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}],"data":[]}}`},
		{name: "search in a named field that is not selected", target: rec("CUSTOMERS", "fields=ID&searchTerm=fr&searchField=COUNTRY&searchPrecision=100"),
			want: idPage(50, `[]`, hCustID, "C2")},
		{name: "fields required", target: rec("ORDERS", "sort=ID"), status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_MISSING", "fields is required: name at least one field of record ORDERS"}},
		{name: "unknown fields", target: rec("ORDERS", "fields=ID,FOO,BAR"), status: 400,
			wantProblem: &prob{"KM_FIELD_NOTFOUND", "unknown fields: FOO, BAR (record ORDERS)"}},
		{name: "field ids are case-sensitive", target: rec("ORDERS", "fields=id"), status: 400,
			wantProblem: &prob{"KM_FIELD_NOTFOUND", "unknown field: id (record ORDERS); did you mean ID?"}},
		{name: "too many fields", target: rec("ORDERS", "fields="+manyFields(201)), status: 400,
			wantProblem: &prob{"GENERAL_CONSTRAINT_VIOLATION", "201 fields requested: at most 200 are allowed"}},
		{name: "kpis at record level", target: rec("ORDERS", "fields=ID&kpis=NET"), status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", "kpis are only accepted by the knowledge model endpoints"}},
		// The orders of customer C1, the only one in DE (customers.csv), are O1, O2 and O8.
		{name: "filter of a parent record", target: rec("ORDERS", "fields=ID&filters=GERMANY"),
			want: idPage(50, `[]`, hOrderID, "O1", "O2", "O8")},
		{name: "filterExpr on a parent record", target: rec("ORDERS", "fields=ID&filterExpr=CUSTOMERS.COUNTRY%20eq%20'DE'"),
			want: idPage(50, `[]`, hOrderID, "O1", "O2", "O8")},
		{name: "bare names are the record's own", target: rec("ORDERS", "fields=ID&filterExpr=COUNTRY%20eq%20'DE'"), status: 400,
			wantProblem: &prob{"KM_FIELD_NOTFOUND", `filterExpr: position 1: unknown field "COUNTRY"; did you mean CUSTOMERS.COUNTRY?`}},
		{name: "unknown filter", target: rec("ORDERS", "fields=ID&filters=LATE,NOPE"), status: 400,
			wantProblem: &prob{"KM_FILTER_NOTFOUND", "unknown filter: NOPE"}},
		{name: "filter type mismatch", target: rec("ORDERS", "fields=ID&filterExpr="+esc("NET eq 'x'")), status: 400,
			wantProblem: &prob{"FILTER_TYPE_MISMATCH", filterDetail("NET eq 'x'", "NET", "float")}},
		{name: "filter syntax error", target: rec("ORDERS", "fields=ID&filterExpr="+esc("NET eq")), status: 400,
			wantProblem: &prob{"FILTER_SYNTAX_ERROR", filterDetail("NET eq", "NET", "float")}},
		{name: "filter outside the subset", target: rec("ORDERS", "fields=ID&filterExpr="+esc("NET add 1 eq 2")), status: 400,
			wantProblem: &prob{"FILTER_NOT_SUPPORTED", filterDetail("NET add 1 eq 2", "NET", "float")}},
		{name: "OData functions stay outside the subset", target: rec("ORDERS", "fields=ID&filterExpr="+esc("tolower(STATUS) eq 'paid'")), status: 400,
			wantProblem: &prob{"FILTER_NOT_SUPPORTED", "filterExpr: position 1: the function tolower is not supported; the functions are contains, startswith and endswith"}},
		{name: "unknown field in a filter", target: rec("ORDERS", "fields=ID&filterExpr="+esc("NOPE eq 1")), status: 400,
			wantProblem: &prob{"KM_FIELD_NOTFOUND", filterDetail("NOPE eq 1", "NET", "float")}},
		{name: "empty filterExpr part", target: rec("ORDERS", "fields=ID&filterExpr="+esc("NET gt 1,")), status: 400,
			wantProblem: &prob{"FILTER_SYNTAX_ERROR", filterDetail("", "NET", "float")}},
		{name: "sort field not selected", target: rec("ORDERS", "fields=ID&sort=NET"), status: 400,
			wantProblem: &prob{"SORT_UNKNOWN_FIELD", `sort: "NET" is not among the fields that can be sorted: ID`}},
		{name: "sort both ways", target: rec("ORDERS", "fields=ID&sort=ID,-ID"), status: 400,
			wantProblem: &prob{"SORT_HAS_OPPOSITE", `sort: field "ID" is sorted both ascending and descending`}},
		{name: "sort empty", target: rec("ORDERS", "fields=ID&sort="), status: 400,
			wantProblem: &prob{"SORT_IS_EMPTY", "sort: no sort field given"}},
		{name: "unknown option", target: rec("ORDERS", "fields=ID&options=unique"), status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", `options: unknown option "unique": the only option is distinct`}},
		{name: "searchPrecision 0 on GET", target: rec("ORDERS", "fields=ID&searchTerm=x&searchPrecision=0"), status: 400,
			wantProblem: &prob{"GENERAL_CONSTRAINT_VIOLATION", "searchPrecision: 0 is not between 1 and 100"}},
		{name: "searchPrecision not a number", target: rec("ORDERS", "fields=ID&searchTerm=x&searchPrecision=high"), status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_MISSMATCH", `searchPrecision: "high" is not an integer`}},
		{name: "search in a number field", target: rec("ORDERS", "fields=ID&searchTerm=1&searchField=NET"), status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", "searchField NET is a float field; fuzzy search needs a string field"}},
		{name: "search in an integer field", target: rec("ORDERS", "fields=ID&searchTerm=1&searchField=LATE"), status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", "searchField LATE is an integer field; fuzzy search needs a string field"}},
		{name: "searchField without a term", target: rec("ORDERS", "fields=ID&searchField=ID"), status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_MISSING", "searchField is given but searchTerm is missing"}},
		{name: "bad escape", target: rec("ORDERS", "fields=ID&filterExpr=%zz"), status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", `filterExpr: the value has a malformed percent-escape`}},
	})
}

// manyFields returns n distinct field names joined by commas.
func manyFields(n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("F%d", i)
	}
	return strings.Join(names, ",")
}

// filterDetail is the problem detail the filter parser gives for src at record level of
// ORDERS, so the tests follow the parser's wording (its own tests pin the messages).
func filterDetail(src, _ string, _ string) string {
	w := call(shopHandler, "GET", rec("ORDERS", "fields=ID&filterExpr="+esc(src)), "")
	var p struct{ Detail string }
	if err := jsonUnmarshal(w.Body.Bytes(), &p); err != nil || !strings.HasPrefix(p.Detail, "filterExpr: ") {
		return "unexpected detail: " + w.Body.String()
	}
	return p.Detail
}

func TestKMData(t *testing.T) {
	h := shop(t)
	byCountry := `{"page":0,"pageSize":50,"total":4,"sort":["-NET"],"content":{"headers":[` + hCountry + `,` + hKMNet + `,` + hOrdersN + `,` + hLateSh + `],"data":[
		{"CUSTOMERS.COUNTRY":null,"NET":1200,"ORDERS_N":2,"LATE_SHARE":0},
		{"CUSTOMERS.COUNTRY":"US","NET":999.99,"ORDERS_N":1,"LATE_SHARE":0},
		{"CUSTOMERS.COUNTRY":"DE","NET":650.5,"ORDERS_N":3,"LATE_SHARE":0.6666666666666666},
		{"CUSTOMERS.COUNTRY":"FR","NET":120.25,"ORDERS_N":2,"LATE_SHARE":0.5}]}}`
	lateShare := func(v string) string {
		return `{"page":0,"pageSize":50,"total":1,"sort":[],"content":{"headers":[` + hLateSh + `],"data":[{"LATE_SHARE":` + v + `}]}}`
	}
	hQty := `{"id":"QTY","name":"Quantity","type":"integer","format":"","unit":"","aggregation":true,"filterable":false,"sortable":true}`
	hMaterial := `{"id":"ITEMS.MATERIAL","name":"Material","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}`
	hStatusNet := `{"id":"STATUS_NET","name":"Net in status","type":"float","format":"","unit":"","aggregation":true,"filterable":false,"sortable":true}`
	hActivity := `{"id":"EVENTS.ACTIVITY","name":"Activity","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}`
	hEventsN := `{"id":"EVENTS_N","name":"Events","type":"integer","format":"","unit":"","aggregation":true,"filterable":false,"sortable":true}`
	runExchanges(t, h, []exchange{
		{name: "KPIs grouped by a joined field", target: kmData("fields=CUSTOMERS.COUNTRY&kpis=NET,ORDERS_N,LATE_SHARE&sort=-NET"), want: byCountry},
		{name: "kpis repeated", target: kmData("fields=CUSTOMERS.COUNTRY&kpis=NET&kpis=ORDERS_N,LATE_SHARE&sort=-NET"), want: byCountry},
		{name: "KPI without fields is one row", target: kmData("kpis=LATE_SHARE"), want: lateShare("0.375")},
		{name: "KPI parameter override", target: kmData("kpis=LATE_SHARE&kpiParam=LATE_SHARE.t:1"), want: lateShare("0.25")},
		{name: "KPI parameter in quotes", target: kmData("kpis=STATUS_NET&kpiParam=STATUS_NET.s:OPEN"),
			want: `{"page":0,"pageSize":50,"total":1,"sort":[],"content":{"headers":[` + hStatusNet + `],"data":[{"STATUS_NET":1300.5}]}}`},
		{name: "KPI parameter with a quote stays text", target: kmData("kpis=STATUS_NET&kpiParam=" + esc("STATUS_NET.s:D'X")),
			want: `{"page":0,"pageSize":50,"total":1,"sort":[],"content":{"headers":[` + hStatusNet + `],"data":[{"STATUS_NET":null}]}}`},
		{name: "join over two relationships", target: kmData("fields=ITEMS.MATERIAL,CUSTOMERS.COUNTRY&kpis=QTY&sort=ITEMS.MATERIAL,CUSTOMERS.COUNTRY"),
			want: `{"page":0,"pageSize":50,"total":8,"sort":["+ITEMS.MATERIAL","+CUSTOMERS.COUNTRY"],"content":{"headers":[` + hMaterial + `,` + hCountry + `,` + hQty + `],"data":[
				{"ITEMS.MATERIAL":"Copper Wire","CUSTOMERS.COUNTRY":"DE","QTY":5},
				{"ITEMS.MATERIAL":"Copper Wire","CUSTOMERS.COUNTRY":"FR","QTY":1},
				{"ITEMS.MATERIAL":"Laptop","CUSTOMERS.COUNTRY":"DE","QTY":1},
				{"ITEMS.MATERIAL":"Laptop","CUSTOMERS.COUNTRY":"US","QTY":4},
				{"ITEMS.MATERIAL":"Material Handling","CUSTOMERS.COUNTRY":"DE","QTY":3},
				{"ITEMS.MATERIAL":"Server Rack","CUSTOMERS.COUNTRY":null,"QTY":2},
				{"ITEMS.MATERIAL":"Steel Bolt","CUSTOMERS.COUNTRY":"DE","QTY":10},
				{"ITEMS.MATERIAL":"Steel Bolt","CUSTOMERS.COUNTRY":"FR","QTY":8}]}}`},
		{name: "predefined filter on a joined record", target: kmData("fields=ORDERS.ID&filters=GERMANY&sort=ORDERS.ID"),
			want: `{"page":0,"pageSize":50,"total":3,"sort":["+ORDERS.ID"],"content":{"headers":[` + hOrdersID + `],"data":[
				{"ORDERS.ID":"O1"},{"ORDERS.ID":"O2"},{"ORDERS.ID":"O8"}]}}`},
		{name: "filterExpr on a joined record", target: kmData("fields=ORDERS.ID&filterExpr=" + esc("CUSTOMERS.COUNTRY eq 'FR'")),
			want: `{"page":0,"pageSize":50,"total":2,"sort":[],"content":{"headers":[` + hOrdersID + `],"data":[
				{"ORDERS.ID":"O3"},{"ORDERS.ID":"O5"}]}}`},
		{name: "fuzzy search over joined fields", target: kmData("fields=ORDERS.ID,CUSTOMERS.NAME&searchTerm=artagnan"),
			want: `{"page":0,"pageSize":50,"total":2,"sort":[],"content":{"headers":[` + hOrdersID + `,
				{"id":"CUSTOMERS.NAME","name":"Customer name","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}],"data":[
				{"ORDERS.ID":"O3","CUSTOMERS.NAME":"D'Artagnan SA"},{"ORDERS.ID":"O5","CUSTOMERS.NAME":"D'Artagnan SA"}]}}`},
		{name: "distinct at KM level", target: kmData("fields=ORDERS.STATUS&options=distinct&sort=-ORDERS.STATUS"),
			want: `{"page":0,"pageSize":50,"total":4,"sort":["-ORDERS.STATUS"],"content":{"headers":[
				{"id":"ORDERS.STATUS","name":"Status","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}],"data":[
				{"ORDERS.STATUS":"PAID"},{"ORDERS.STATUS":"OPEN"},{"ORDERS.STATUS":"DELIVERED"},{"ORDERS.STATUS":"CANCELLED"}]}}`},
		{name: "a KM that extends another joins its own record to inherited ones", target: kmData("fields=EVENTS.ACTIVITY,CUSTOMERS.COUNTRY&kpis=EVENTS_N&sort=EVENTS.ACTIVITY,CUSTOMERS.COUNTRY"),
			want: `{"page":0,"pageSize":50,"total":5,"sort":["+EVENTS.ACTIVITY","+CUSTOMERS.COUNTRY"],"content":{"headers":[` + hActivity + `,` + hCountry + `,` + hEventsN + `],"data":[
				{"EVENTS.ACTIVITY":"Change Price","CUSTOMERS.COUNTRY":"FR","EVENTS_N":1},
				{"EVENTS.ACTIVITY":"Create","CUSTOMERS.COUNTRY":"DE","EVENTS_N":2},
				{"EVENTS.ACTIVITY":"Create","CUSTOMERS.COUNTRY":"FR","EVENTS_N":2},
				{"EVENTS.ACTIVITY":"Ship","CUSTOMERS.COUNTRY":"DE","EVENTS_N":1},
				{"EVENTS.ACTIVITY":"Ship","CUSTOMERS.COUNTRY":"FR","EVENTS_N":2}]}}`},
		{name: "the base KM lacks the extension's record", target: api + "/shop-base/data?fields=EVENTS.ACTIVITY,CUSTOMERS.COUNTRY", status: 400,
			wantProblem: &prob{"KM_FIELD_NOTFOUND", "unknown field: EVENTS.ACTIVITY (knowledge model endpoints name fields RECORD.FIELD)"}},
		{name: "the base KM lacks the extension's KPI", target: api + "/shop-base/data?kpis=EVENTS_N,NET", status: 400,
			wantProblem: &prob{"KM_FIELD_NOTFOUND", "unknown KPI: EVENTS_N"}},
		{name: "neither fields nor kpis", target: kmData("sort=NET"), status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_MISSING", "name at least one field (RECORD.FIELD) in fields or one KPI in kpis"}},
		{name: "bare field id at KM level", target: kmData("fields=ID"), status: 400,
			wantProblem: &prob{"KM_FIELD_NOTFOUND", "unknown field: ID (knowledge model endpoints name fields RECORD.FIELD); did you mean CUSTOMERS.ID, ORDERS.ID or ITEMS.ID?"}},
		{name: "records without a path", target: kmData("fields=EVENTS.ACTIVITY,ITEMS.MATERIAL"), status: 400,
			wantProblem: &prob{"KM_JOIN_NOT_POSSIBLE", "the rows of records EVENTS, ITEMS cannot be listed together: no one record has a row for each combination of theirs through relationships from the many side to the one side; KPIs can combine them (select the fields of one and a KPI over the other)"}},
		{name: "sort by a KPI not requested", target: kmData("fields=CUSTOMERS.COUNTRY&kpis=NET&sort=ORDERS_N"), status: 400,
			wantProblem: &prob{"SORT_UNKNOWN_FIELD", `sort: "ORDERS_N" is not among the fields that can be sorted: CUSTOMERS.COUNTRY, NET`}},
		{name: "kpiParam of a KPI not selected", target: kmData("kpis=NET&kpiParam=LATE_SHARE.t:1"), status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", "kpiParam names KPI LATE_SHARE, which the request does not select"}},
		{name: "kpiParam of an unknown parameter", target: kmData("kpis=LATE_SHARE&kpiParam=LATE_SHARE.x:1"), status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", `kpiParam of LATE_SHARE: KPI LATE_SHARE has no parameter "x"`}},
		{name: "kpiParam that is not one literal", target: kmData("kpis=LATE_SHARE&kpiParam=" + esc("LATE_SHARE.t:0 or 1")), status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", `kpiParam of LATE_SHARE: position 22: value "0 or 1" of parameter t is not a single literal`}},
		{name: "kpiParam of the wrong type", target: kmData("kpis=LATE_SHARE&kpiParam=LATE_SHARE.t:abc"), status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", "kpiParam of LATE_SHARE: position 22: ORDERS." + bindMessage("LATE gt abc")}},
		{name: "malformed kpiParam", target: kmData("kpis=LATE_SHARE&kpiParam=LATE_SHARE"), status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", `kpiParam "LATE_SHARE": want KPI_ID.parameter:value`}},
	})
}

// bindMessage is the binder's message (without position) for a filter on the ORDERS record.
func bindMessage(src string) string {
	w := call(shopHandler, "GET", rec("ORDERS", "fields=ID&filterExpr="+esc(src)), "")
	var p struct{ Detail string }
	if err := jsonUnmarshal(w.Body.Bytes(), &p); err != nil {
		return "unexpected body: " + w.Body.String()
	}
	_, msg, ok := strings.Cut(p.Detail, ": position ")
	if !ok {
		return "unexpected detail: " + p.Detail
	}
	_, msg, _ = strings.Cut(msg, ": ")
	return msg
}

func TestQueryEndpoints(t *testing.T) {
	h := shop(t)
	runExchanges(t, h, []exchange{
		{name: "record query without fields has all fields", target: api + "/shop/records/CUSTOMERS/query?sort=-ID&pageSize=2",
			want: `{"page":0,"pageSize":2,"total":2,"sort":["-ID"],"content":[
				{"ID":"C4","NAME":"Smith; Sons","COUNTRY":"US"},{"ID":"C3","NAME":"Material World Ltd","COUNTRY":null}]}`},
		{name: "record query with fields and search", target: api + "/shop/records/CUSTOMERS/query?fields=NAME&searchTerm=muller",
			want: `{"page":0,"pageSize":50,"total":1,"sort":[],"content":[{"NAME":"Müller GmbH"}]}`},
		{name: "KM query with KPIs", target: api + "/shop/query?fields=ORDERS.STATUS&kpis=ORDERS_N&sort=-ORDERS_N,ORDERS.STATUS",
			want: `{"page":0,"pageSize":50,"total":4,"sort":["-ORDERS_N","+ORDERS.STATUS"],"content":[
				{"ORDERS.STATUS":"PAID","ORDERS_N":3},{"ORDERS.STATUS":"DELIVERED","ORDERS_N":2},
				{"ORDERS.STATUS":"OPEN","ORDERS_N":2},{"ORDERS.STATUS":"CANCELLED","ORDERS_N":1}]}`},
		{name: "KM query needs fields or kpis", target: api + "/shop/query", status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_MISSING", "name at least one field (RECORD.FIELD) in fields or one KPI in kpis"}},
		{name: "record query errors like data", target: api + "/shop/records/ORDERS/query?sort=NOPE", status: 400,
			wantProblem: &prob{"SORT_UNKNOWN_FIELD", `sort: "NOPE" is not among the fields that can be sorted: ID, CUST, DAY, CREATED, STATUS, NET, LATE, EXPRESS`}},
	})
}

func TestPostProjection(t *testing.T) {
	h := shop(t)
	small := memory.New().KM()
	err := small.Import(context.Background(), os.DirFS("../testdata/shop"))
	if err != nil {
		t.Fatal(err)
	}
	tiny := kmhttp.NewHandler(small, kmhttp.WithMaxBodyBytes(64))
	recPost := api + "/shop/records/ORDERS/data"
	kmPost := api + "/shop/data"
	runExchanges(t, h, []exchange{
		{name: "record POST equals GET", method: "POST", target: recPost,
			body:         `{"projection":{"fields":"ID,STATUS","filters":{"kmFilterNames":["LATE"],"filterExpr":["STATUS ne 'OPEN'","NET gt 1,NET lt 1000"]},"sort":"-ID","pagination":{"pageNumber":0,"pageSize":2},"options":["distinct"]}}`,
			sameAsTarget: rec("ORDERS", "fields=ID,STATUS&filters=LATE&filterExpr="+esc("STATUS ne 'OPEN'")+"&filterExpr="+esc("NET gt 1")+"&filterExpr="+esc("NET lt 1000")+"&sort=-ID&pageSize=2&options=distinct")},
		{name: "KM POST with KPIs and parameters equals GET", method: "POST", target: kmPost,
			body:         `{"projection":{"fields":"CUSTOMERS.COUNTRY","kpis":["NET","LATE_SHARE"],"kpiParameters":{"LATE_SHARE":{"t":"1"}},"sort":"-NET"}}`,
			sameAsTarget: kmData("fields=CUSTOMERS.COUNTRY&kpis=NET,LATE_SHARE&kpiParam=LATE_SHARE.t:1&sort=-NET")},
		{name: "KM POST without fields", method: "POST", target: kmPost, body: `{"projection":{"kpis":["LATE_SHARE"]}}`,
			sameAsTarget: kmData("kpis=LATE_SHARE")},
		{name: "search with precision 0 matches everything", method: "POST", target: api + "/shop/records/CUSTOMERS/data",
			body:         `{"projection":{"fields":"ID","search":{"term":"zzz","precision":0},"sort":"ID"}}`,
			sameAsTarget: rec("CUSTOMERS", "fields=ID&sort=ID")},
		{name: "search with a field", method: "POST", target: api + "/shop/records/CUSTOMERS/data",
			body:         `{"projection":{"fields":"ID","search":{"term":"fr","field":"COUNTRY","precision":100}}}`,
			sameAsTarget: rec("CUSTOMERS", "fields=ID&searchTerm=fr&searchField=COUNTRY&searchPrecision=100")},
		{name: "null sort and options", method: "POST", target: recPost, body: `{"projection":{"fields":"ID","sort":null,"options":null}}`,
			sameAsTarget: rec("ORDERS", "fields=ID")},
		{name: "no projection", method: "POST", target: recPost, body: `{}`, status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_MISSING", `the body needs a projection member: {"projection": {...}}`}},
		{name: "empty body", method: "POST", target: recPost, status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_MISSING", `the request body is empty; want {"projection": {...}}`}},
		{name: "record POST without fields", method: "POST", target: recPost, body: `{"projection":{"sort":"+ID"}}`, status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_MISSING", "projection.fields is required"}},
		{name: "empty fields", method: "POST", target: recPost, body: `{"projection":{"fields":""}}`, status: 400,
			wantProblem: &prob{"GENERAL_CONSTRAINT_VIOLATION", "projection.fields is 0 characters long: want 1 to 2048"}},
		{name: "fields too long", method: "POST", target: recPost, body: `{"projection":{"fields":"` + strings.Repeat("A", 2049) + `"}}`, status: 400,
			wantProblem: &prob{"GENERAL_CONSTRAINT_VIOLATION", "projection.fields is 2049 characters long: want 1 to 2048"}},
		{name: "sort too short", method: "POST", target: recPost, body: `{"projection":{"fields":"ID","sort":"I"}}`, status: 400,
			wantProblem: &prob{"GENERAL_CONSTRAINT_VIOLATION", "projection.sort is 1 characters long: want 2 to 2048"}},
		{name: "two options", method: "POST", target: recPost, body: `{"projection":{"fields":"ID","options":["distinct","distinct"]}}`, status: 400,
			wantProblem: &prob{"GENERAL_CONSTRAINT_VIOLATION", "projection.options has 2 items: at most 1 is allowed"}},
		{name: "unknown option", method: "POST", target: recPost, body: `{"projection":{"fields":"ID","options":["all"]}}`, status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", `options: unknown option "all": the only option is distinct`}},
		{name: "pageSize 0", method: "POST", target: recPost, body: `{"projection":{"fields":"ID","pagination":{"pageSize":0}}}`, status: 400,
			wantProblem: &prob{"GENERAL_CONSTRAINT_VIOLATION", "pageSize: 0 is below the minimum page size 1"}},
		{name: "negative pageNumber", method: "POST", target: recPost, body: `{"projection":{"fields":"ID","pagination":{"pageNumber":-1}}}`, status: 400,
			wantProblem: &prob{"GENERAL_CONSTRAINT_VIOLATION", "page: -1 is not a page number: pages count from 0 to 2147483647"}},
		{name: "pageNumber beyond int32", method: "POST", target: recPost, body: `{"projection":{"fields":"ID","pagination":{"pageNumber":99999999999}}}`, status: 400,
			wantProblem: &prob{"GENERAL_CONSTRAINT_VIOLATION", "page: 2147483648 is not a page number: pages count from 0 to 2147483647"}},
		{name: "precision above 100", method: "POST", target: recPost, body: `{"projection":{"fields":"ID","search":{"term":"x","precision":101}}}`, status: 400,
			wantProblem: &prob{"GENERAL_CONSTRAINT_VIOLATION", "search.precision: 101 is not between 0 and 100"}},
		{name: "kpis in a record POST", method: "POST", target: recPost, body: `{"projection":{"fields":"ID","kpis":["NET"]}}`, status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", "projection.kpis is only accepted by the knowledge model data endpoint"}},
		{name: "fields of the wrong JSON type", method: "POST", target: recPost, body: `{"projection":{"fields":["ID"]}}`, status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_MISSMATCH", "projection.fields: a JSON array where a string is expected"}},
		{name: "pageSize of the wrong JSON type", method: "POST", target: recPost, body: `{"projection":{"fields":"ID","pagination":{"pageSize":"10"}}}`, status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_MISSMATCH", "projection.pagination.pageSize: a JSON string where an integer is expected"}},
		{name: "unknown member", method: "POST", target: recPost, body: `{"projection":{"fields":"ID","limit":5}}`, status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", `unknown member "limit" in the request body`}},
		{name: "invalid JSON", method: "POST", target: recPost, body: `{"projection":`, status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", "the request body is truncated JSON"}},
		{name: "JSON syntax error", method: "POST", target: recPost, body: `{"projection":{]}`, status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", "the request body is not valid JSON: invalid character ']' looking for beginning of object key string (at byte 16)"}},
		{name: "two JSON values", method: "POST", target: recPost, body: `{"projection":{"fields":"ID"}} {}`, status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", "the request body holds more than one JSON value"}},
	})
	runExchanges(t, tiny, []exchange{
		{name: "body too large", method: "POST", target: recPost, body: `{"projection":{"fields":"` + strings.Repeat("A", 100) + `"}}`, status: 413,
			wantProblem: &prob{"GENERAL_PAYLOAD_TOO_LARGE", "the request body exceeds 64 bytes"}},
	})
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// Long lists are handled in linear time and errors list a bounded number of names.
func TestLongLists(t *testing.T) {
	h := shop(t)
	many := strings.Repeat("ID,", 100_000) + "ID"
	w := call(h, "GET", rec("ORDERS", "fields="+many+"&pageSize=1"), "")
	if w.Code != 200 {
		t.Fatalf("repeated field: %d %s", w.Code, w.Body)
	}
	runExchanges(t, h, []exchange{
		{name: "too many filter expressions", target: rec("ORDERS", "fields=ID&filters=LATE&filterExpr="+esc(strings.Repeat("NET gt 1,", 100)+"NET gt 1")), status: 400,
			wantProblem: &prob{"GENERAL_CONSTRAINT_VIOLATION", "102 filter expressions: at most 100 are allowed (combine conditions with and/or)"}},
		{name: "many unknown fields", target: rec("ORDERS", "fields=ID,"+manyFields(150)), status: 400,
			wantProblem: &prob{"KM_FIELD_NOTFOUND", "unknown fields: F0, F1, F2, F3, F4, F5, F6, F7, F8, F9 and 140 more (record ORDERS)"}},
	})
}

// brokenStore returns results that do not match the request.
type brokenStore struct {
	km.Store
	result *query.Result
}

func (b brokenStore) Query(context.Context, *km.Plan) (*query.Result, error) {
	return b.result, nil
}

// A store whose answer does not fit the request gets a 500 with a support id, never a panic.
func TestStoreAnswerMismatch(t *testing.T) {
	s := memory.New().KM()
	err := s.Import(context.Background(), os.DirFS("../testdata/shop"))
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range []*query.Result{
		{Columns: []query.ColumnHeader{{Name: "ID", Type: query.TypeString}}},
		{Columns: []query.ColumnHeader{{Name: "ID", Type: query.TypeString}, {Name: "NET", Type: query.TypeFloat}},
			Rows: [][]query.Value{{query.String("O1"), query.Float(1), query.Int(3)}}},
	} {
		var logs strings.Builder
		h := kmhttp.NewHandler(brokenStore{Store: s, result: res}, kmhttp.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		w := call(h, "GET", rec("ORDERS", "fields=ID,NET"), "")
		var p struct {
			Status            int
			ErrorCode, Detail string
		}
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || w.Code != 500 || p.ErrorCode != "ADMIN_FATAL_ERROR" || !strings.HasPrefix(p.Detail, "internal error; support id ") {
			t.Fatalf("status %d body %s", w.Code, w.Body)
		}
		id := strings.TrimPrefix(p.Detail, "internal error; support id ")
		if !strings.Contains(logs.String(), "supportId="+id) {
			t.Errorf("support id %s not logged: %s", id, logs.String())
		}
	}
}

// panicStore panics in Query.
type panicStore struct{ km.Store }

func (panicStore) Query(context.Context, *km.Plan) (*query.Result, error) {
	panic("store bug")
}

func TestStorePanicIsA500(t *testing.T) {
	s := memory.New().KM()
	err := s.Import(context.Background(), os.DirFS("../testdata/shop"))
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	h := kmhttp.NewHandler(panicStore{s}, kmhttp.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	w := call(h, "GET", rec("ORDERS", "fields=ID"), "")
	if w.Code != 500 || !strings.Contains(w.Body.String(), `"errorCode":"ADMIN_FATAL_ERROR"`) {
		t.Fatalf("status %d body %s", w.Code, w.Body)
	}
	if !strings.Contains(logs.String(), "panic: store bug") {
		t.Errorf("panic not logged: %s", logs.String())
	}
}
