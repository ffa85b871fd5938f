package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/mcp"
	"github.com/kmkit/kmkit/storage/memory"
	"github.com/kmkit/kmkit/storage/storetest"
)

// TestUnknownIDsSuggestClosest sends issue 29's requests (item 5) to the query tool over
// the order-to-cash demo: each unknown record, field, KPI, filter or KPI parameter is
// the KM API's problem, with the closest ids suggested.
func TestUnknownIDsSuggestClosest(t *testing.T) {
	data, err := storetest.DemoData(5)
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New().KM()
	if err := st.Import(context.Background(), data); err != nil {
		t.Fatal(err)
	}
	f := &fixture{cs: connect(t, mcp.NewHandler(st).MCPServer(nil))}
	for _, c := range []struct {
		args         map[string]any
		status       float64
		code, detail string
	}{
		{map[string]any{"km": "o2c", "record": "ORDERS", "fields": []string{"order_id"}}, 400, "KM_FIELD_NOTFOUND",
			"unknown field: order_id (record ORDERS); did you mean ORDER_ID?"},
		{map[string]any{"km": "o2c", "fields": []string{"order_id"}}, 400, "KM_FIELD_NOTFOUND",
			"unknown field: order_id (knowledge model endpoints name fields RECORD.FIELD); did you mean ORDERS.ORDER_ID, ORDER_ITEMS.ORDER_ID or ACTIVITIES.ORDER_ID?"},
		{map[string]any{"km": "o2c", "record": "ORDERS", "filters": []string{"open_orders"}}, 400, "KM_FILTER_NOTFOUND",
			"unknown filter: open_orders; did you mean OPEN_ORDERS?"},
		{map[string]any{"km": "o2c", "kpis": []string{"TOTALNET"}}, 400, "KM_FIELD_NOTFOUND",
			"unknown KPI: TOTALNET; did you mean TOTAL_NET?"},
		{map[string]any{"km": "o2c", "fields": []string{"ORDERS.CUSTOMER_NAME"}}, 400, "KM_FIELD_NOTFOUND",
			"unknown field: ORDERS.CUSTOMER_NAME (knowledge model endpoints name fields RECORD.FIELD); did you mean CUSTOMERS.CUSTOMER_NAME?"},
		{map[string]any{"km": "o2c", "record": "ORDERS", "filterExpr": []string{"CUSTOMER_NAME eq 'x'"}}, 400, "KM_FIELD_NOTFOUND",
			`filterExpr: position 1: unknown field "CUSTOMER_NAME"; did you mean CUSTOMERS.CUSTOMER_NAME?`},
		{map[string]any{"km": "o2c", "record": "ORDERS", "fields": []string{"ORDERS.STATUS"}}, 400, "KM_FIELD_NOTFOUND",
			"unknown field: ORDERS.STATUS (record ORDERS); did you mean STATUS?"},
		{map[string]any{"km": "o2c", "record": "ORDER"}, 404, "KM_RECORD_NOTFOUND",
			`knowledge model o2c has no record "ORDER"; did you mean ORDERS?`},
		{map[string]any{"km": "o2c", "kpis": []string{"LATE_SHARE"}, "kpiParameters": map[string]any{"LATE_SHARE": map[string]string{"treshold": "3"}}},
			400, "GENERAL_PARAMETER_ILLEGAL", `kpiParam of LATE_SHARE: KPI LATE_SHARE has no parameter "treshold"; did you mean threshold?`},
		{map[string]any{"km": "o2c", "record": "ORDERS", "search": map[string]any{"term": "x", "fields": []string{"status"}}}, 400, "KM_FIELD_NOTFOUND",
			"unknown searchField status (record ORDERS); did you mean STATUS?"},
	} {
		p := f.problemOf(t, mcp.ToolQuery, c.args)
		if p["status"] != c.status || p["errorCode"] != c.code || p["detail"] != c.detail {
			t.Errorf("query %v\n  want %v %s %q\n  got %v %v %q", c.args, c.status, c.code, c.detail, p["status"], p["errorCode"], p["detail"])
		}
	}
	// Many searched fields (issue 29 item 7): one field named 1001 times is searched once.
	var out struct {
		Rows []map[string]any `json:"rows"`
	}
	f.ok(t, mcp.ToolQuery, map[string]any{"km": "o2c", "record": "ORDERS", "fields": []string{"ORDER_ID", "STATUS"},
		"search": map[string]any{"term": "DELIVERED", "precision": 100, "fields": strings.Split(strings.Repeat("STATUS,", 1001), ",")[:1001]}}, &out)
	if len(out.Rows) == 0 {
		t.Errorf("search of STATUS named 1001 times: no row")
	}
	for _, r := range out.Rows {
		if r["STATUS"] != "DELIVERED" {
			t.Errorf("search of STATUS named 1001 times: a row %v", r)
		}
	}
}
