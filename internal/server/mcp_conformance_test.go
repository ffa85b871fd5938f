package server

import (
	"encoding/json"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/kmkit/kmkit/internal/nodetools"
	"github.com/kmkit/kmkit/mcp"
)

// TestMCPWithTheTypeScriptClient drives the reference server's MCP endpoint with the
// official TypeScript SDK's client (mcp/conformance, pinned by its package-lock.json) over
// Streamable HTTP with an AppKey: it lists the tools, calls each one, and the query rows
// must be the KM API's answer to the same question. Without the npm tools it skips, unless
// KMKIT_MCP_TOOLS is set (CI), and then fails.
func TestMCPWithTheTypeScriptClient(t *testing.T) {
	dir := nodetools.Dir(t, "KMKIT_MCP_TOOLS", "../../mcp/conformance", []string{"@modelcontextprotocol/sdk"}, "node")
	a := newTestApp(t, config{burst: -1, concurrency: -1})
	srv := httptest.NewServer(a.handler)
	defer srv.Close()

	calls := []map[string]any{
		{"name": mcp.ToolListModels, "arguments": map[string]any{}},
		{"name": mcp.ToolDescribeModel, "arguments": map[string]any{"km": "o2c"}},
		{"name": mcp.ToolQuery, "arguments": map[string]any{"km": "o2c", "record": "ORDERS", "fields": []string{"ORDER_ID"}, "sort": []string{"ORDER_ID"}, "pageSize": 4}},
		{"name": mcp.ToolSummarize, "arguments": map[string]any{"km": "o2c", "record": "ORDERS", "sampleSize": 1}},
		{"name": mcp.ToolFindValues, "arguments": map[string]any{"km": "o2c", "record": "CUSTOMERS", "field": "CITY", "term": "munich", "limit": 2}},
		{"name": mcp.ToolQuery, "arguments": map[string]any{"km": "o2c", "record": "ORDERS", "fields": []string{"NOPE"}}},
	}
	arg, _ := json.Marshal(calls)
	cmd := exec.Command("node", filepath.Join(dir, "client.mjs"), srv.URL+mcp.BasePath, a.devKey, string(arg))
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("node client: %v\n%s", err, stderr)
	}
	var got struct {
		Tools   []string
		Results []struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			Content           []struct{ Text string }
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := []string{mcp.ToolDescribeModel, mcp.ToolFindValues, mcp.ToolListModels, mcp.ToolQuery, mcp.ToolSummarize}
	slices.Sort(got.Tools)
	if !reflect.DeepEqual(got.Tools, want) {
		t.Errorf("tools %v, want %v", got.Tools, want)
	}
	if len(got.Results) != len(calls) {
		t.Fatalf("%d results for %d calls", len(got.Results), len(calls))
	}
	for i, r := range got.Results[:5] {
		if r.IsError || len(r.StructuredContent) == 0 {
			t.Errorf("call %d (%v): error %v, %s", i, calls[i]["name"], r.IsError, r.Content)
		}
	}
	var rows struct{ Rows []map[string]any }
	if err := json.Unmarshal(got.Results[2].StructuredContent, &rows); err != nil {
		t.Fatal(err)
	}
	w := get(t, a.handler, "/intelligence/api/knowledge-models/o2c/records/ORDERS/query?fields=ORDER_ID&sort=ORDER_ID&pageSize=4", a.devKey)
	var api struct{ Content []map[string]any }
	if err := json.Unmarshal(w.Body.Bytes(), &api); err != nil || len(api.Content) != 4 {
		t.Fatalf("KM API: %d %s", w.Code, w.Body)
	}
	if !reflect.DeepEqual(rows.Rows, api.Content) {
		t.Errorf("rows %v, KM API %v", rows.Rows, api.Content)
	}
	var find struct{ Values []any }
	if err := json.Unmarshal(got.Results[4].StructuredContent, &find); err != nil || len(find.Values) == 0 || find.Values[0] != "Munich" {
		t.Errorf("find_field_values: %s", got.Results[4].StructuredContent)
	}
	bad := got.Results[5]
	var p map[string]any
	if !bad.IsError || len(bad.Content) == 0 || json.Unmarshal([]byte(bad.Content[0].Text), &p) != nil || p["errorCode"] != "KM_FIELD_NOTFOUND" {
		t.Errorf("unknown field: %+v", bad)
	}
}
