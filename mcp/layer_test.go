package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/mcp"
	"github.com/kmkit/kmkit/query"
)

// The tests of this file are the MCP bullets of issue 27, each with its request as the
// issue writes it (on the shop test KMs).

// TestResourcesReadControlCharacters: resources/read of a URI with U+0000, U+0001 or
// U+007F answers a JSON-RPC error (it answered 200 with an empty body): "resource not
// found", -32002 in protocol 2025-03-26 (no MCP-Protocol-Version header).
func TestResourcesReadControlCharacters(t *testing.T) {
	h := mcp.NewHandler(loadStore(t))
	for _, c := range []string{`\u0000`, `\u0001`, "\u007f"} {
		body := `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"kmkit://knowledge-models/shop` + c + `base/schema.json"}}`
		r := httptest.NewRequest(http.MethodPost, mcp.BasePath, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"id":7,"error":{"code":-32002,"message":"Resource not found"`) {
			t.Errorf("%q: %d %s, want a JSON-RPC error", c, w.Code, w.Body)
		}
	}
}

// TestResourceNotFoundCodePerVersion: "resource not found" is -32002 in the protocol
// versions 2025-03-26 to 2025-11-25 (their resources page, Error Handling) and -32602
// (Invalid params) from the draft 2026-07-28 on (SEP-2164). The SDK answered -32602 in
// every version: for a URI of no template and for an unknown KM or record alike. (The
// draft's Streamable HTTP answers an error with status 400, the SDK's doing.)
func TestResourceNotFoundCodePerVersion(t *testing.T) {
	h := mcp.NewHandler(loadStore(t))
	for _, uri := range []string{"kmkit://nope", "kmkit://knowledge-models/nope/schema.json", "kmkit://knowledge-models/shop-base/records/NOPE/schema.json"} {
		for _, c := range []struct {
			version      string
			status, code int
		}{{"", 200, -32002}, {"2025-03-26", 200, -32002}, {"2025-06-18", 200, -32002}, {"2025-11-25", 200, -32002}, {"2026-07-28", 400, -32602}} {
			params := `{"uri":"` + uri + `"}`
			if c.version == "2026-07-28" {
				params = `{"uri":"` + uri + `","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`
			}
			r := httptest.NewRequest(http.MethodPost, mcp.BasePath, strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":`+params+`}`))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			if c.version != "" {
				r.Header.Set("Mcp-Protocol-Version", c.version)
				r.Header.Set("Mcp-Method", "resources/read")
				r.Header.Set("Mcp-Name", uri)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			want := `{"jsonrpc":"2.0","id":3,"error":{"code":` + strconv.Itoa(c.code) + `,"message":"Resource not found","data":{"uri":"` + uri + `"}}}`
			if got := strings.TrimSpace(w.Body.String()); w.Code != c.status || got != want {
				t.Errorf("%s in %q: %d %s, want %d %s", uri, c.version, w.Code, got, c.status, want)
			}
		}
	}
}

// TestResourcesListCursorAndCacheScope: resources/list is one page, so any cursor is
// invalid (-32602, as the pagination utility says and the SDK's lists answer); it was
// ignored. And the list is the caller's (team scope): cacheScope private; it was sent
// empty, a value the field does not take.
func TestResourcesListCursorAndCacheScope(t *testing.T) {
	h := mcp.NewHandler(loadStore(t))
	ask := func(method, params string) map[string]any {
		t.Helper()
		r := httptest.NewRequest(http.MethodPost, mcp.BasePath, strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"`+method+`","params":`+params+`}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var msg map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &msg); w.Code != http.StatusOK || err != nil {
			t.Fatalf("%s %s: %d %s", method, params, w.Code, w.Body)
		}
		return msg
	}
	for _, method := range []string{"resources/list", "tools/list", "prompts/list", "resources/templates/list"} {
		msg := ask(method, `{"cursor":"garbage"}`)
		if e, _ := msg["error"].(map[string]any); e == nil || e["code"] != float64(-32602) {
			t.Errorf("%s with a cursor it never gave: %v, want error -32602", method, msg)
		}
	}
	res, _ := ask("resources/list", `{}`)["result"].(map[string]any)
	if res == nil || res["cacheScope"] != "private" || len(res["resources"].([]any)) == 0 {
		t.Errorf("resources/list: %v, want the resources with cacheScope private", res)
	}
}

// TestSetLevelRefusesAnUnknownLevel: logging/setLevel of a level that is no syslog
// severity is Invalid params (-32602), as the logging utility's error handling says; the
// SDK answered {} to any string. Each level the specification names is taken.
func TestSetLevelRefusesAnUnknownLevel(t *testing.T) {
	h := mcp.NewHandler(loadStore(t))
	for _, c := range []struct{ level, want string }{
		{"loud", `{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"invalid log level \"loud\": one of debug, info, notice, warning, error, critical, alert, emergency"}}`},
		{"", `{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"invalid log level \"\": one of debug, info, notice, warning, error, critical, alert, emergency"}}`},
		{"DEBUG", `{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"invalid log level \"DEBUG\": one of debug, info, notice, warning, error, critical, alert, emergency"}}`},
		{"debug", `{"jsonrpc":"2.0","id":9,"result":{}}`}, {"info", `{"jsonrpc":"2.0","id":9,"result":{}}`},
		{"notice", `{"jsonrpc":"2.0","id":9,"result":{}}`}, {"warning", `{"jsonrpc":"2.0","id":9,"result":{}}`},
		{"error", `{"jsonrpc":"2.0","id":9,"result":{}}`}, {"critical", `{"jsonrpc":"2.0","id":9,"result":{}}`},
		{"alert", `{"jsonrpc":"2.0","id":9,"result":{}}`}, {"emergency", `{"jsonrpc":"2.0","id":9,"result":{}}`},
	} {
		r := httptest.NewRequest(http.MethodPost, mcp.BasePath, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"`+c.level+`"}}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got := strings.TrimSpace(w.Body.String()); w.Code != http.StatusOK || got != c.want {
			t.Errorf("level %q: %d %s, want 200 %s", c.level, w.Code, got, c.want)
		}
	}
}

// logged returns a logger writing into the returned buffer, at debug level.
func logged() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), &buf
}

// TestEmptyArgumentsAre400: empty term, record or field arguments are 400-shaped tool
// errors, never status 500 or an ERROR log line (they were both).
func TestEmptyArgumentsAre400(t *testing.T) {
	logger, logs := logged()
	f := &fixture{cs: connect(t, mcp.NewHandler(loadStore(t), mcp.WithLogger(logger)).MCPServer(nil))}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{mcp.ToolFindValues, map[string]any{"km": "shop-base", "record": "CUSTOMERS", "field": "NAME", "term": ""}},
		{mcp.ToolFindValues, map[string]any{"km": "shop-base", "record": "", "field": "NAME", "term": "muller"}},
		{mcp.ToolFindValues, map[string]any{"km": "shop-base", "record": "CUSTOMERS", "field": "", "term": "muller"}},
		{mcp.ToolSummarize, map[string]any{"km": "shop-base", "record": ""}},
	} {
		p := f.problemOf(t, c.tool, c.args)
		if p["status"] != 400.0 || p["errorCode"] != "GENERAL_PARAMETER_MISSING" {
			t.Errorf("%s %v: %v, want 400 GENERAL_PARAMETER_MISSING", c.tool, c.args, p)
		}
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("client errors logged as errors:\n%s", logs)
	}
}

// TestNULRefusedAsByKMAPI: filterExpr with U+0000 is the KM API's 400
// GENERAL_PARAMETER_ILLEGAL on query and summarize_record (on PostgreSQL it was a 500;
// the root package's TestIssue27OnEveryBackend runs it there).
func TestNULRefusedAsByKMAPI(t *testing.T) {
	f := newFixture(t)
	want := f.apiProblem(t, "/knowledge-models/shop-base/records/ORDERS/query?filterExpr=STATUS%20eq%20'a%00b'")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS", "filterExpr": []string{"STATUS eq 'a\u0000b'"}}},
		{mcp.ToolSummarize, map[string]any{"km": "shop-base", "record": "ORDERS", "filterExpr": []string{"STATUS eq 'a\u0000b'"}}},
	} {
		p := f.problemOf(t, c.tool, c.args)
		if p["status"] != 400.0 || p["errorCode"] != want["errorCode"] || want["errorCode"] != "GENERAL_PARAMETER_ILLEGAL" {
			t.Errorf("%s: %v, KM API %v", c.tool, p, want)
		}
	}
}

// apiProblem sends GET path to the KM API, which must refuse it with 400, and returns
// the problem body.
func (f *fixture) apiProblem(t *testing.T, path string) map[string]any {
	t.Helper()
	return f.api(t, path, http.StatusBadRequest)
}

// TestPageSizeZero: "pageSize": 0 is refused as the KM API refuses pageSize=0 (it was
// served as 50 rows): the same status, code and detail. An absent pageSize is
// DefaultPageSize.
func TestPageSizeZero(t *testing.T) {
	f := newFixture(t)
	want := f.apiProblem(t, "/knowledge-models/shop-base/records/ORDERS/query?pageSize=0")
	p := f.problemOf(t, mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS", "pageSize": 0})
	if p["status"] != 400.0 || p["errorCode"] != want["errorCode"] || p["detail"] != want["detail"] {
		t.Errorf("pageSize 0: %v, KM API %v", p, want)
	}
	var out mcp.QueryResult
	f.ok(t, mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS"}, &out)
	if out.PageSize != mcp.DefaultPageSize {
		t.Errorf("no pageSize: %d, want %d", out.PageSize, mcp.DefaultPageSize)
	}
}

// TestMoreRows: every answer says whether rows follow, and names the page that returns
// them.
func TestMoreRows(t *testing.T) {
	f := newFixture(t)
	var first mcp.QueryResult
	f.ok(t, mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS", "pageSize": 2}, &first)
	if !first.More || first.Next == nil || *first.Next != (mcp.PageRef{Page: 1, PageSize: 2}) || first.Total <= 2 {
		t.Fatalf("first page of 2: %+v", first)
	}
	last := (first.Total - 1) / 2
	var end mcp.QueryResult
	f.ok(t, mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS", "pageSize": 2, "page": last}, &end)
	if end.More || end.Next != nil || len(end.Rows) == 0 {
		t.Errorf("last page %d: %+v", last, end)
	}
}

// TestLimitsOfTheService: MCP applies the limits of the Service the host hands it, the
// same as the KM API over that Service: a budget refuses alike, no budget admits.
func TestLimitsOfTheService(t *testing.T) {
	st := loadStore(t)
	args := map[string]any{"km": "shop-base", "fields": []string{"ORDERS.STATUS"}, "kpis": []string{"NET"}}
	tight := km.NewService(st, km.WithMaxQueryCost(1))
	f := &fixture{cs: connect(t, mcp.NewHandler(st, mcp.WithService(tight)).MCPServer(nil)), kmAPI: kmhttp.NewHandler(st, kmhttp.WithService(tight))}
	want := f.apiProblem(t, "/knowledge-models/shop-base/query?fields=ORDERS.STATUS&kpis=NET")
	p := f.problemOf(t, mcp.ToolQuery, args)
	if p["status"] != 400.0 || p["errorCode"] != "GENERAL_CONSTRAINT_VIOLATION" || p["detail"] != want["detail"] {
		t.Errorf("budget 1: %v, KM API %v", p, want)
	}
	open := km.NewService(st, km.WithMaxQueryCost(-1), km.WithMaxQueryMemory(-1))
	g := &fixture{cs: connect(t, mcp.NewHandler(st, mcp.WithService(open)).MCPServer(nil))}
	var out mcp.QueryResult
	g.ok(t, mcp.ToolQuery, args, &out)
}

// slowStore blocks every query until its context ends, and reports when it did.
type slowStore struct {
	km.Store
	stopped chan error
}

func (s *slowStore) Query(ctx context.Context, _ *km.Plan) (*query.Result, error) {
	<-ctx.Done()
	s.stopped <- ctx.Err()
	return nil, ctx.Err()
}

// TestTimeLimitAndClientGone: a query runs under the Service's time limit (503 saying
// so, as the KM API answers), and a client that leaves stops the store's work.
func TestTimeLimitAndClientGone(t *testing.T) {
	st := &slowStore{Store: loadStore(t), stopped: make(chan error, 4)}
	logger, _ := logged()
	svc := km.NewService(st, km.WithQueryTimeout(100*time.Millisecond))
	f := &fixture{cs: connect(t, mcp.NewHandler(st, mcp.WithService(svc), mcp.WithLogger(logger)).MCPServer(nil)), kmAPI: kmhttp.NewHandler(st, kmhttp.WithService(svc))}
	start := time.Now()
	p := f.problemOf(t, mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS"})
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the 100ms limit answered after %v", took)
	}
	<-st.stopped
	want := f.api(t, "/knowledge-models/shop-base/records/ORDERS/query", http.StatusServiceUnavailable)
	<-st.stopped
	if p["status"] != 503.0 || p["errorCode"] != want["errorCode"] || p["detail"] != want["detail"] {
		t.Errorf("time limit: %v, KM API %v", p, want)
	}

	// The client leaves: the call's context ends and with it the store's.
	none := km.NewService(st, km.WithQueryTimeout(-1))
	cs := connect(t, mcp.NewHandler(st, mcp.WithService(none)).MCPServer(nil))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	cs.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolQuery, Arguments: map[string]any{"km": "shop-base", "record": "ORDERS"}})
	select {
	case err := <-st.stopped:
		if err != context.Canceled {
			t.Errorf("the store's context ended with %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the store still runs 5s after its client left")
	}
}

// TestAdversarialArguments are the query calls the root package's
// TestSurfacesAgreeOnUnseenInputs found answered otherwise than by the KM API: a pageSize
// of the wrong JSON type was GENERAL_PARAMETER_ILLEGAL (the KM API's pageSize=1.5 is
// GENERAL_PARAMETER_MISSMATCH), and a negative search precision was served at the
// default precision (the KM API's searchPrecision=-1 is 400).
func TestAdversarialArguments(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		args   map[string]any
		api    string // the KM API's request for the same question
		detail string // the tool error's detail
	}{
		{map[string]any{"km": "shop-base", "record": "ORDERS", "pageSize": 1.5}, "pageSize=1.5",
			"arguments: cannot unmarshal number 1.5 into Go struct field QueryArgs.pageSize of type int"},
		{map[string]any{"km": "shop-base", "record": "ORDERS", "pageSize": "ten"}, "pageSize=ten",
			"arguments: cannot unmarshal string into Go struct field QueryArgs.pageSize of type int"},
		{map[string]any{"km": "shop-base", "record": "ORDERS", "search": map[string]any{"term": "paid", "precision": -1}}, "searchTerm=paid&searchPrecision=-1",
			"search.precision: -1 is not between 1 and 100"},
	} {
		want := f.apiProblem(t, "/knowledge-models/shop-base/records/ORDERS/query?"+c.api)
		p := f.problemOf(t, mcp.ToolQuery, c.args)
		if p["status"] != 400.0 || p["errorCode"] != want["errorCode"] || p["detail"] != c.detail {
			t.Errorf("%v: %v, want 400 %v %q", c.args, p, want["errorCode"], c.detail)
		}
	}
}

// TestDefaultPageOfTheServiceCap: a query call without pageSize gets a page of the
// Service's cap when that is below DefaultPageSize (as the KM API's request without
// pageSize does); it was refused "pageSize: 50 is above the maximum page size 2".
func TestDefaultPageOfTheServiceCap(t *testing.T) {
	f := &fixture{cs: connect(t, mcp.NewHandler(nil, mcp.WithService(km.NewService(loadStore(t), km.WithMaxPageSize(2)))).MCPServer(nil))}
	var out mcp.QueryResult
	f.ok(t, mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS", "fields": []string{"ID"}, "sort": []string{"ID"}}, &out)
	if out.PageSize != 2 || len(out.Rows) != 2 || !out.More || out.Next == nil || *out.Next != (mcp.PageRef{Page: 1, PageSize: 2}) {
		t.Errorf("%+v, want page 0 of 2 rows, more, next page 1", out)
	}
}

// TestNULBeforeThePage: a query call with a NUL and a page size out of range is refused
// for the NUL, as the KM API refuses fields=%00&pageSize=-53 (400
// GENERAL_PARAMETER_ILLEGAL); it was refused for the page (GENERAL_CONSTRAINT_VIOLATION),
// found by the root package's FuzzSurfacesAgree.
func TestNULBeforeThePage(t *testing.T) {
	f := newFixture(t)
	want := f.apiProblem(t, "/knowledge-models/shop-base/records/ORDERS/query?fields=%00&pageSize=-53")
	p := f.problemOf(t, mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS", "fields": []string{"\x00"}, "pageSize": -53})
	detail, _ := p["detail"].(string)
	if p["status"] != 400.0 || p["errorCode"] != want["errorCode"] || want["errorCode"] != "GENERAL_PARAMETER_ILLEGAL" ||
		!strings.HasPrefix(detail, "arguments at byte ") ||
		!strings.HasSuffix(detail, ` (JSON escape \u0000) contains a NUL character (U+0000): text in requests must be UTF-8 without NUL characters`) {
		t.Errorf("%v\nKM API: %v", p, want)
	}
}

// TestUnknownRecordBeforeThePage: a query call naming an unknown record with pageSize 0
// is refused for the record (404 KM_RECORD_NOTFOUND), as the KM API refuses
// records/NOPE/query?pageSize=0; it was refused for the page.
func TestUnknownRecordBeforeThePage(t *testing.T) {
	f := newFixture(t)
	want := f.api(t, "/knowledge-models/shop-base/records/NOPE/query?pageSize=0", http.StatusNotFound)
	p := f.problemOf(t, mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "NOPE", "pageSize": 0})
	if p["status"] != 404.0 || p["errorCode"] != want["errorCode"] || p["detail"] != want["detail"] {
		t.Errorf("%v\nKM API: %v", p, want)
	}
}
