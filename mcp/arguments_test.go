package mcp_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/mcp"
)

// callRaw calls a tool with arguments sent exactly as written (encoding/json would write
// the float64 2.0 as 2).
func (f *fixture) callRaw(t *testing.T, name, args string) *sdk.CallToolResult {
	t.Helper()
	return f.call(t, name, json.RawMessage(args))
}

// TestIntegerValuedNumbers: JSON Schema's "integer" is any number with a zero fractional
// part, so pageSize 2.0 (and page 1.0, sampleSize 2.0, limit 2.0, precision 90.0, 1e1,
// 20e-1) is the integer the input schema asks for, answered as its plain spelling is;
// the query tool refused it as a mismatch. 2.5 is still refused as before.
func TestIntegerValuedNumbers(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ tool, args, plain string }{
		{mcp.ToolQuery, `{"km":"shop-base","record":"ORDERS","pageSize":2.0,"page":1.0}`, `{"km":"shop-base","record":"ORDERS","pageSize":2,"page":1}`},
		{mcp.ToolQuery, `{"km":"shop-base","record":"ORDERS","pageSize":20e-1,"page":0.0e5}`, `{"km":"shop-base","record":"ORDERS","pageSize":2,"page":0}`},
		{mcp.ToolQuery, `{"km":"shop-base","record":"ORDERS","pageSize":1E1}`, `{"km":"shop-base","record":"ORDERS","pageSize":10}`},
		{mcp.ToolQuery, `{"km":"shop-base","record":"CUSTOMERS","search":{"term":"muller","precision":90.0}}`, `{"km":"shop-base","record":"CUSTOMERS","search":{"term":"muller","precision":90}}`},
		{mcp.ToolSummarize, `{"km":"shop-base","record":"ORDERS","sampleSize":2.0}`, `{"km":"shop-base","record":"ORDERS","sampleSize":2}`},
		{mcp.ToolFindValues, `{"km":"shop-base","record":"CUSTOMERS","field":"NAME","term":"m","limit":1.0,"page":1.0,"precision":50.0}`,
			`{"km":"shop-base","record":"CUSTOMERS","field":"NAME","term":"m","limit":1,"page":1,"precision":50}`},
	} {
		got, want := f.callRaw(t, c.tool, c.args), f.callRaw(t, c.tool, c.plain)
		if got.IsError || want.IsError || text(got) != text(want) {
			t.Errorf("%s %s:\n%s\nwant (%s):\n%s", c.tool, c.args, text(got), c.plain, text(want))
		}
	}
	// Not integers: refused as before, naming the value.
	p := f.problemOf(t, mcp.ToolQuery, json.RawMessage(`{"km":"shop-base","record":"ORDERS","pageSize":2.5}`))
	if p["status"] != 400.0 || p["errorCode"] != "GENERAL_PARAMETER_MISSMATCH" ||
		p["detail"] != "arguments: cannot unmarshal number 2.5 into Go struct field QueryArgs.pageSize of type int" {
		t.Errorf("pageSize 2.5: %v", p)
	}
	p = f.problemOf(t, mcp.ToolQuery, json.RawMessage(`{"km":"shop-base","record":"ORDERS","page":250e-2}`))
	if p["errorCode"] != "GENERAL_PARAMETER_MISSMATCH" || p["detail"] != "arguments: cannot unmarshal number 250e-2 into Go struct field QueryArgs.page of type int" {
		t.Errorf("page 250e-2: %v", p)
	}
	for _, c := range []struct{ tool, args, where string }{
		{mcp.ToolSummarize, `{"km":"shop-base","record":"ORDERS","sampleSize":2.5}`, "sampleSize"},
		{mcp.ToolFindValues, `{"km":"shop-base","record":"CUSTOMERS","field":"NAME","term":"m","limit":2.5}`, "limit"},
	} {
		res := f.callRaw(t, c.tool, c.args)
		if !res.IsError || !strings.Contains(text(res), c.where) || !strings.Contains(text(res), `want "integer"`) {
			t.Errorf("%s %s: %s, want a tool error on %s", c.tool, c.args, text(res), c.where)
		}
	}
	// Names are still read as the schema spells them.
	p = f.problemOf(t, mcp.ToolQuery, json.RawMessage(`{"km":"shop-base","record":"ORDERS","PageSize":2.0}`))
	if p["errorCode"] != "GENERAL_PARAMETER_ILLEGAL" || p["detail"] != `arguments: unknown field "PageSize"` {
		t.Errorf("PageSize 2.0: %v", p)
	}
}

// TestSearchPrecisionRange: a precision of 0 (below the input schema's minimum 1),
// negative or above 100 is refused naming the argument and its range, with the KM API's
// code and wording for searchPrecision; query took 0 as the default 80.
func TestSearchPrecisionRange(t *testing.T) {
	f := newFixture(t)
	for _, precision := range []string{"0", "-1", "101", "0.0"} {
		want := f.apiProblem(t, "/knowledge-models/shop-base/records/CUSTOMERS/query?searchTerm=muller&searchPrecision="+strings.TrimSuffix(precision, ".0"))
		p := f.problemOf(t, mcp.ToolQuery, json.RawMessage(`{"km":"shop-base","record":"CUSTOMERS","search":{"term":"muller","precision":`+precision+`}}`))
		n := strings.TrimSuffix(precision, ".0")
		if p["status"] != 400.0 || p["errorCode"] != want["errorCode"] || want["errorCode"] != "GENERAL_CONSTRAINT_VIOLATION" ||
			p["detail"] != "search.precision: "+n+" is not between 1 and 100" || want["detail"] != "searchPrecision: "+n+" is not between 1 and 100" {
			t.Errorf("precision %s: %v\nKM API: %v", precision, p, want)
		}
		// find_field_values' input schema refuses it before the tool runs.
		res := f.callRaw(t, mcp.ToolFindValues, `{"km":"shop-base","record":"CUSTOMERS","field":"NAME","term":"muller","precision":`+precision+`}`)
		if !res.IsError || !strings.Contains(text(res), "/properties/precision") {
			t.Errorf("find_field_values precision %s: %s, want a tool error on precision", precision, text(res))
		}
	}
	// Absent or null: the default; 1 and 100 are in range.
	for _, search := range []string{`{"term":"muller"}`, `{"term":"muller","precision":null}`, `{"term":"muller","precision":1}`, `{"term":"muller","precision":100}`} {
		if res := f.callRaw(t, mcp.ToolQuery, `{"km":"shop-base","record":"CUSTOMERS","search":`+search+`}`); res.IsError {
			t.Errorf("search %s: %s", search, text(res))
		}
	}
}

// TestDefaultSampleSizeOfTheServiceCap: a summary without sampleSize on a Service whose
// MaxSampleSize is below DefaultSampleSize has MaxSampleSize sample rows, on MCP and the
// KM API alike (it had DefaultSampleSize, beyond the cap), and the input schema says so.
func TestDefaultSampleSizeOfTheServiceCap(t *testing.T) {
	st := loadStore(t)
	svc := km.NewService(st, km.WithMaxSampleSize(3))
	f := &fixture{cs: connect(t, mcp.NewHandler(nil, mcp.WithService(svc)).MCPServer(nil)), kmAPI: kmhttp.NewHandler(nil, kmhttp.WithService(svc))}
	var out map[string]any
	f.ok(t, mcp.ToolSummarize, map[string]any{"km": "shop-base", "record": "ORDERS"}, &out)
	want := f.api(t, "/knowledge-models/shop-base/records/ORDERS/summary", 200)
	if got := normalize(t, out); !reflect.DeepEqual(got, normalize(t, want)) {
		t.Errorf("summary %v\nKM API %v", got, want)
	}
	if data := out["content"].(map[string]any)["data"].([]any); len(data) != 3 {
		t.Errorf("%d sample rows, want the cap 3", len(data))
	}
	tools, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name != mcp.ToolSummarize {
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		if !strings.Contains(string(b), `"sample rows returned with the statistics, 1 to 3 (default 3)"`) {
			t.Errorf("summarize_record's input schema: %s", b)
		}
	}
}
