package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/mcp"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/memory"
)

// fixture is an MCP client session on a server over the shop test KMs, and the KM API
// over the same store, to which answers are compared.
type fixture struct {
	cs    *sdk.ClientSession
	kmAPI http.Handler
}

func loadStore(t testing.TB) *memory.KMStore {
	t.Helper()
	st := memory.New().KM()
	err := st.Import(context.Background(), os.DirFS("../km/testdata/shop"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func connect(t testing.TB, srv *sdk.Server) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func newFixture(t *testing.T, opts ...mcp.Option) *fixture {
	t.Helper()
	st := loadStore(t)
	return &fixture{cs: connect(t, mcp.NewHandler(st, opts...).MCPServer(nil)), kmAPI: kmhttp.NewHandler(st)}
}

// call calls a tool and returns its result.
func (f *fixture) call(t *testing.T, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := f.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured output into out.
func (f *fixture) ok(t *testing.T, name string, args, out any) {
	t.Helper()
	res := f.call(t, name, args)
	if res.IsError {
		t.Fatalf("%s %v: tool error %s", name, args, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %v in %s", name, err, b)
	}
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// problemOf calls a tool that must fail and returns the problem its text carries.
func (f *fixture) problemOf(t *testing.T, name string, args any) map[string]any {
	t.Helper()
	res := f.call(t, name, args)
	if !res.IsError {
		t.Fatalf("%s %v: want a tool error, got %s", name, args, text(res))
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(text(res)), &p); err != nil {
		t.Fatalf("%s: the error text is no problem body: %q", name, text(res))
	}
	return p
}

// api sends GET path (below the KM API's base) to the KM API and decodes the answer.
func (f *fixture) api(t *testing.T, path string, want int) map[string]any {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, kmhttp.BasePath+path, nil)
	w := httptest.NewRecorder()
	f.kmAPI.ServeHTTP(w, r)
	if w.Code != want {
		t.Fatalf("GET %s: %d %s, want %d", path, w.Code, w.Body, want)
	}
	dec := json.NewDecoder(w.Body)
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// normalize round-trips v through JSON with numbers kept as written.
func normalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestListModels(t *testing.T) {
	f := newFixture(t)
	var out mcp.ModelList
	f.ok(t, mcp.ToolListModels, map[string]any{}, &out)
	var ids []string
	for _, m := range out.Models {
		ids = append(ids, m.ID)
	}
	var apiIDs []string
	for _, it := range f.api(t, "/knowledge-models?sort=%2Bid", 200)["content"].([]any) {
		apiIDs = append(apiIDs, it.(map[string]any)["id"].(string))
	}
	if !reflect.DeepEqual(ids, apiIDs) || len(ids) != 2 {
		t.Errorf("models %v, KM API %v", ids, apiIDs)
	}
	if out.Models[1].ID != "shop-base" || out.Models[1].Published != "2026-01-15T10:00:00Z" {
		t.Errorf("shop-base: %+v", out.Models[1])
	}
}

func TestDescribeModel(t *testing.T) {
	f := newFixture(t)
	var d mcp.ModelDescription
	f.ok(t, mcp.ToolDescribeModel, map[string]any{"km": "shop-base"}, &d)
	if len(d.Records) != 3 || d.Records[1].ID != "ORDERS" || d.Records[1].Key != "ID" {
		t.Fatalf("records: %+v", d.Records)
	}
	net := d.Records[1].Fields[5]
	if want := (mcp.FieldInfo{ID: "NET", Name: "Net value", Type: "float", Format: ",.2f", Unit: "EUR"}); net != want {
		t.Errorf("ORDERS.NET: %+v, want %+v", net, want)
	}
	if c := d.Records[0].Fields[1]; c.Description != "Legal name" {
		t.Errorf("CUSTOMERS.NAME: %+v", c)
	}
	var late mcp.KPIInfo
	for _, k := range d.KPIs {
		if k.ID == "LATE_SHARE" {
			late = k
		}
	}
	if late.Expression != "ratio(ORDERS.LATE gt ${t})" || len(late.Parameters) != 1 || late.Parameters[0] != (mcp.ParameterInfo{ID: "t", Name: "Threshold", Default: "0"}) {
		t.Errorf("LATE_SHARE: %+v", late)
	}
	if len(d.Filters) != 3 || d.Filters[1] != (mcp.FilterInfo{ID: "GERMANY", Name: "Germany", Description: "German customers", Expression: "CUSTOMERS.COUNTRY eq 'DE'"}) {
		t.Errorf("filters: %+v", d.Filters)
	}
	if len(d.Relationships) != 2 || d.Relationships[0] != (mcp.RelationshipInfo{From: "ORDERS.CUST", To: "CUSTOMERS.ID"}) {
		t.Errorf("relationships: %+v", d.Relationships)
	}
	p := f.problemOf(t, mcp.ToolDescribeModel, map[string]any{"km": "nope"})
	if p["errorCode"] != km.CodeModelNotFound || p["status"] != float64(404) {
		t.Errorf("unknown KM: %v", p)
	}
}

// queryCases are questions asked both as a query tool call and on the KM API's query
// endpoint.
var queryCases = []struct {
	name string
	args map[string]any
	path string
}{
	{"record rows", map[string]any{"km": "shop-base", "record": "ORDERS", "fields": []string{"ID", "NET", "DAY", "EXPRESS"}, "sort": []string{"-NET"}, "pageSize": 3},
		"/knowledge-models/shop-base/records/ORDERS/query?fields=ID,NET,DAY,EXPRESS&sort=-NET&pageSize=3"},
	{"record filterExpr and page", map[string]any{"km": "shop-base", "record": "ORDERS", "filterExpr": []string{"NET gt 50", "STATUS eq 'PAID'"}, "page": 1, "pageSize": 1},
		"/knowledge-models/shop-base/records/ORDERS/query?filterExpr=NET%20gt%2050&filterExpr=STATUS%20eq%20'PAID'&page=1&pageSize=1"},
	{"KM KPIs with parameters", map[string]any{"km": "shop-base", "fields": []string{"CUSTOMERS.COUNTRY"}, "kpis": []string{"NET", "LATE_SHARE", "STATUS_NET"},
		"kpiParameters": map[string]any{"LATE_SHARE": map[string]string{"t": "1"}, "STATUS_NET": map[string]string{"s": "OPEN"}}, "sort": []string{"CUSTOMERS.COUNTRY"}},
		"/knowledge-models/shop-base/query?fields=CUSTOMERS.COUNTRY&kpis=NET,LATE_SHARE,STATUS_NET&kpiParam=LATE_SHARE.t:1&kpiParam=STATUS_NET.s:OPEN&sort=%2BCUSTOMERS.COUNTRY"},
	{"KM predefined filter", map[string]any{"km": "shop-base", "fields": []string{"ORDERS.ID", "CUSTOMERS.NAME"}, "filters": []string{"GERMANY"}, "sort": []string{"ORDERS.ID"}},
		"/knowledge-models/shop-base/query?fields=ORDERS.ID,CUSTOMERS.NAME&filters=GERMANY&sort=ORDERS.ID"},
	{"distinct", map[string]any{"km": "shop-base", "record": "ORDERS", "fields": []string{"STATUS"}, "distinct": true},
		"/knowledge-models/shop-base/records/ORDERS/query?fields=STATUS&options=distinct"},
	{"search", map[string]any{"km": "shop-base", "record": "ITEMS", "fields": []string{"ID", "MATERIAL"}, "search": map[string]any{"term": "coper wire", "precision": 60}},
		"/knowledge-models/shop-base/records/ITEMS/query?fields=ID,MATERIAL&searchTerm=coper%20wire&searchPrecision=60"},
}

func TestQueryMatchesKMAPI(t *testing.T) {
	f := newFixture(t)
	for _, c := range queryCases {
		t.Run(c.name, func(t *testing.T) {
			var out mcp.QueryResult
			f.ok(t, mcp.ToolQuery, c.args, &out)
			want := f.api(t, c.path, 200)
			if len(want["content"].([]any)) == 0 {
				t.Fatalf("the KM API answers no rows: a weak case")
			}
			if got := normalize(t, out.Rows); !reflect.DeepEqual(got, want["content"]) {
				t.Errorf("rows %v\nKM API %v", got, want["content"])
			}
			if n, _ := want["page"].(json.Number).Int64(); int(n) != out.Page {
				t.Errorf("page %d, KM API %v", out.Page, want["page"])
			}
			if n, _ := want["pageSize"].(json.Number).Int64(); int(n) != out.PageSize {
				t.Errorf("pageSize %d, KM API %v", out.PageSize, want["pageSize"])
			}
			if got := normalize(t, out.Sort); !reflect.DeepEqual(got, want["sort"]) {
				t.Errorf("sort %v, KM API %v", got, want["sort"])
			}
			if out.Truncated {
				t.Error("truncated")
			}
		})
	}
}

// TestQueryErrorsMatchKMAPI checks that refused questions carry the KM API's errorCode and
// detail.
func TestQueryErrorsMatchKMAPI(t *testing.T) {
	f := newFixture(t, mcp.WithMaxRows(5000))
	cases := []struct {
		name string
		args map[string]any
		path string
		code string
	}{
		{"unknown field", map[string]any{"km": "shop-base", "record": "ORDERS", "fields": []string{"ID", "NOPE"}},
			"/knowledge-models/shop-base/records/ORDERS/query?fields=ID,NOPE&pageSize=50", query.CodeFieldNotFound},
		{"bad filter", map[string]any{"km": "shop-base", "record": "ORDERS", "filterExpr": []string{"NET gt 'x'"}},
			"/knowledge-models/shop-base/records/ORDERS/query?filterExpr=NET%20gt%20'x'&pageSize=50", "FILTER_TYPE_MISMATCH"},
		{"filter syntax", map[string]any{"km": "shop-base", "record": "ORDERS", "filterExpr": []string{"NET gt"}},
			"/knowledge-models/shop-base/records/ORDERS/query?filterExpr=NET%20gt&pageSize=50", ""},
		{"unknown KPI", map[string]any{"km": "shop-base", "kpis": []string{"NOPE"}},
			"/knowledge-models/shop-base/query?kpis=NOPE&pageSize=50", ""},
		{"kpis at record level", map[string]any{"km": "shop-base", "record": "ORDERS", "kpis": []string{"NET"}},
			"/knowledge-models/shop-base/records/ORDERS/query?kpis=NET&pageSize=50", "GENERAL_PARAMETER_ILLEGAL"},
		{"unknown filter", map[string]any{"km": "shop-base", "record": "ORDERS", "filters": []string{"NOPE"}},
			"/knowledge-models/shop-base/records/ORDERS/query?filters=NOPE&pageSize=50", km.CodeFilterNotFound},
		{"unknown record", map[string]any{"km": "shop-base", "record": "NOPE"},
			"/knowledge-models/shop-base/records/NOPE/query", km.CodeRecordNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := f.problemOf(t, mcp.ToolQuery, c.args)
			r := httptest.NewRequest(http.MethodGet, kmhttp.BasePath+c.path, nil)
			w := httptest.NewRecorder()
			f.kmAPI.ServeHTTP(w, r)
			if w.Code/100 != 4 {
				t.Fatalf("KM API: %d %s", w.Code, w.Body)
			}
			var want map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &want); err != nil {
				t.Fatal(err)
			}
			if c.code != "" && want["errorCode"] != c.code {
				t.Fatalf("KM API errorCode %v, want %s", want["errorCode"], c.code)
			}
			for _, k := range []string{"status", "errorCode", "detail"} {
				if got[k] != want[k] {
					t.Errorf("%s: %v, KM API %v", k, got[k], want[k])
				}
			}
		})
	}
}

// TestHugePageRefusedByCap: the input schema states MaxRows as pageSize's maximum (an
// agent learns the cap before it calls), and a call above it is refused as the KM API
// refuses a page above its maximum.
func TestHugePageRefusedByCap(t *testing.T) {
	f := newFixture(t, mcp.WithMaxRows(20))
	p := f.problemOf(t, mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS", "pageSize": 21})
	if p["status"] != 400.0 || p["errorCode"] != "GENERAL_CONSTRAINT_VIOLATION" || p["detail"] != "pageSize: 21 is above the maximum page size 20" {
		t.Errorf("pageSize 21 above MaxRows 20: %v", p)
	}
	var out mcp.QueryResult
	f.ok(t, mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS", "pageSize": 20}, &out)
	if out.PageSize != 20 {
		t.Errorf("pageSize 20: %+v", out)
	}
}

func TestBadArguments(t *testing.T) {
	f := newFixture(t)
	// A name spelled otherwise than the input schema's is unknown (additionalProperties
	// false); encoding/json matched it case-insensitively, so "KM" was read as km.
	for _, c := range []struct {
		args   map[string]any
		detail string
	}{
		{map[string]any{"km": "shop-base", "record": "ORDERS", "KM": "nope"}, `arguments: unknown field "KM"`},
		{map[string]any{"Km": "shop-base", "record": "ORDERS"}, `arguments: unknown field "Km"`},
		{map[string]any{"km": "shop-base", "record": "ORDERS", "PageSize": 1, "Sort": []string{"ID"}}, `arguments: unknown field "PageSize"`},
		{map[string]any{"km": "shop-base", "record": "ORDERS", "search": map[string]any{"Term": "x"}}, `arguments: unknown field "search.Term"`},
	} {
		p := f.problemOf(t, mcp.ToolQuery, c.args)
		if p["status"] != 400.0 || p["errorCode"] != "GENERAL_PARAMETER_ILLEGAL" || p["detail"] != c.detail {
			t.Errorf("%v: %v, want 400 GENERAL_PARAMETER_ILLEGAL %q", c.args, p, c.detail)
		}
	}
	// The schema requires term in a search: without it the call ran unsearched, every row.
	for _, search := range []map[string]any{{}, {"fields": []string{"STATUS"}, "precision": 90}} {
		p := f.problemOf(t, mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS", "search": search})
		if p["status"] != 400.0 || p["errorCode"] != "GENERAL_PARAMETER_MISSING" || p["detail"] != "search.term is required: the text to search for (or leave search out)" {
			t.Errorf("search %v: %v, want 400 GENERAL_PARAMETER_MISSING", search, p)
		}
	}
	for _, args := range []map[string]any{
		{"km": "shop-base", "record": "ORDERS", "colour": "red"}, // unknown argument
		{"km": "shop-base", "record": "ORDERS", "pageSize": "ten"},
		{"record": "ORDERS"}, // km missing
	} {
		res := f.call(t, mcp.ToolQuery, args)
		if !res.IsError {
			t.Errorf("%v: want a tool error, got %s", args, text(res))
		}
	}
}

// TestByteCap: a page cut to fit the byte cap names the page and pageSize that return
// the rows it left out, and following next pages through the cap gives every row of the
// KM API's page once, in order (issue 27: rows 357-500 of a cut page were never seen).
func TestByteCap(t *testing.T) {
	const capBytes = 300
	f := newFixture(t, mcp.WithMaxBytes(capBytes))
	all := f.api(t, "/knowledge-models/shop-base/records/ORDERS/query?pageSize=10", 200)["content"].([]any)
	var got []any
	args := map[string]any{"km": "shop-base", "record": "ORDERS", "pageSize": 10}
	for len(got) < len(all) {
		var out mcp.QueryResult
		f.ok(t, mcp.ToolQuery, args, &out)
		if len(out.Rows) == 0 {
			t.Fatalf("%v: no rows", args)
		}
		b, _ := json.Marshal(out.Rows)
		if len(b) > capBytes {
			t.Errorf("%v: %d bytes of rows above the cap", args, len(b))
		}
		got = append(got, normalize(t, out.Rows).([]any)...)
		if len(got) < len(all) {
			if !out.More || out.Next == nil {
				t.Fatalf("%v: %d of %d rows and no next page: %+v", args, len(got), len(all), out)
			}
			if out.Truncated && !strings.Contains(out.Note, fmt.Sprintf("page %d with pageSize %d", out.Next.Page, out.Next.PageSize)) {
				t.Errorf("note %q does not name the next page %+v", out.Note, *out.Next)
			}
			args = map[string]any{"km": "shop-base", "record": "ORDERS", "page": out.Next.Page, "pageSize": out.Next.PageSize}
		}
	}
	if !reflect.DeepEqual(got, all) {
		t.Errorf("rows through the cap %v\nKM API %v", got, all)
	}
	// A row alone above the cap is refused, saying what to change.
	small := newFixture(t, mcp.WithMaxBytes(20))
	p := small.problemOf(t, mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS", "pageSize": 10})
	if p["status"] != 400.0 || p["errorCode"] != "GENERAL_CONSTRAINT_VIOLATION" || !strings.Contains(p["detail"].(string), "fewer fields") {
		t.Errorf("a row above the cap: %v", p)
	}
}

func TestSummarizeMatchesKMAPI(t *testing.T) {
	f := newFixture(t)
	var out map[string]any
	f.ok(t, mcp.ToolSummarize, map[string]any{"km": "shop-base", "record": "ORDERS", "fields": []string{"NET", "STATUS"}, "filterExpr": []string{"NET gt 50"}, "sampleSize": 2}, &out)
	want := f.api(t, "/knowledge-models/shop-base/records/ORDERS/summary?fields=NET,STATUS&filterExpr=NET%20gt%2050&sampleSize=2", 200)
	if got := normalize(t, out); !reflect.DeepEqual(got, normalize(t, want)) {
		t.Errorf("summary %v\nKM API %v", got, want)
	}
	p := f.problemOf(t, mcp.ToolSummarize, map[string]any{"km": "shop-base", "record": "ORDERS", "fields": []string{"NOPE"}})
	if p["errorCode"] != query.CodeFieldNotFound {
		t.Errorf("unknown field: %v", p)
	}
}

func TestFindFieldValues(t *testing.T) {
	f := newFixture(t)
	var out mcp.FindResult
	f.ok(t, mcp.ToolFindValues, map[string]any{"km": "shop-base", "record": "CUSTOMERS", "field": "NAME", "term": "muller"}, &out)
	if len(out.Values) == 0 || out.Values[0] != "Müller GmbH" {
		t.Errorf("muller: %v, want Müller GmbH first", out.Values)
	}
	p := f.problemOf(t, mcp.ToolFindValues, map[string]any{"km": "shop-base", "record": "ORDERS", "field": "NET", "term": "5"})
	if p["errorCode"] != "GENERAL_PARAMETER_ILLEGAL" || !strings.Contains(p["detail"].(string), "string field") {
		t.Errorf("a float field: %v", p)
	}
}

func TestTeamScope(t *testing.T) {
	st := loadStore(t)
	base, err := st.Model(context.Background(), "shop-base")
	if err != nil {
		t.Fatal(err)
	}
	secret := *base
	secret.ID = "secret"
	secret.Teams = []string{"blue"}
	if err := st.PutModel(context.Background(), &secret); err != nil {
		t.Fatal(err)
	}
	s := mcp.NewHandler(st)
	for _, c := range []struct {
		team string
		sees bool
	}{{"blue", true}, {"red", false}} {
		cs := connect(t, s.MCPServer(&principal.Principal{Name: c.team, Team: c.team, Permissions: []principal.Permission{principal.PermMCP}}))
		f := &fixture{cs: cs}
		var list mcp.ModelList
		f.ok(t, mcp.ToolListModels, map[string]any{}, &list)
		seen := false
		for _, m := range list.Models {
			seen = seen || m.ID == "secret"
		}
		if seen != c.sees {
			t.Errorf("team %s lists secret: %v", c.team, seen)
		}
		res := f.call(t, mcp.ToolQuery, map[string]any{"km": "secret", "record": "ORDERS"})
		if res.IsError == c.sees {
			t.Errorf("team %s queries secret: %s", c.team, text(res))
		}
	}
}

func TestResources(t *testing.T) {
	f := newFixture(t, mcp.WithSpecServer("https://kmkit.example"))
	ctx := context.Background()
	tmpls, err := f.cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpls.ResourceTemplates) != 3 {
		t.Fatalf("templates: %v %v", tmpls, err)
	}
	res, err := f.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcp.OpenAPIURI("shop-base")})
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		OpenAPI string                    `json:"openapi"`
		Servers []struct{ URL string }    `json:"servers"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &spec); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(spec.OpenAPI, "3.") || len(spec.Servers) != 1 || spec.Servers[0].URL != "https://kmkit.example" ||
		spec.Paths[kmhttp.BasePath+"/knowledge-models/shop-base/records/ORDERS/query"] == nil {
		t.Errorf("spec: %s %v %d paths", spec.OpenAPI, spec.Servers, len(spec.Paths))
	}
	res, err = f.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcp.SchemaURI("shop-base")})
	if err != nil {
		t.Fatal(err)
	}
	var d mcp.ModelDescription
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &d); err != nil || d.ID != "shop-base" || len(d.Records) != 3 {
		t.Errorf("schema: %+v %v", d, err)
	}
	if _, err := f.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcp.SchemaURI("nope")}); err == nil {
		t.Error("an unknown KM's schema was read")
	}
}

func TestFilterLanguagePrompt(t *testing.T) {
	f := newFixture(t)
	res, err := f.cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: mcp.PromptFilterLanguage, Arguments: map[string]string{"km": "shop-base"}})
	if err != nil {
		t.Fatal(err)
	}
	guide := res.Messages[0].Content.(*sdk.TextContent).Text
	// Each example line must be a filter the KM API accepts and that matches rows.
	_, examples, ok := strings.Cut(guide, "Examples from knowledge model shop-base:\n")
	if !ok {
		t.Fatalf("no examples in %s", guide)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(examples), "\n") {
		expr := strings.TrimSpace(line)
		q := url.Values{"fields": {"CUSTOMERS.ID"}, "filterExpr": {expr}}
		r := httptest.NewRequest(http.MethodGet, kmhttp.BasePath+"/knowledge-models/shop-base/query?"+q.Encode(), nil)
		w := httptest.NewRecorder()
		f.kmAPI.ServeHTTP(w, r)
		body, _ := io.ReadAll(w.Body)
		if w.Code != 200 || strings.Contains(string(body), `"content":[]`) {
			t.Errorf("example %q: %d %s", expr, w.Code, body)
		}
		n++
	}
	if n < 3 {
		t.Errorf("%d examples", n)
	}
}

// TestHandlerScopesByRequest checks that calls over Streamable HTTP run as the principal of
// their HTTP request: each team sees its own KMs through the same handler.
func TestHandlerScopesByRequest(t *testing.T) {
	st := loadStore(t)
	base, err := st.Model(context.Background(), "shop-base")
	if err != nil {
		t.Fatal(err)
	}
	secret := *base
	secret.ID = "secret"
	secret.Teams = []string{"blue"}
	if err := st.PutModel(context.Background(), &secret); err != nil {
		t.Fatal(err)
	}
	h := mcp.NewHandler(st)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		team := r.Header.Get("X-Team")
		h.ServeHTTP(w, r.WithContext(principal.NewContext(r.Context(), &principal.Principal{Name: team, Team: team})))
	}))
	defer srv.Close()
	for _, c := range []struct {
		team string
		sees bool
	}{{"blue", true}, {"red", false}, {"blue", true}} {
		client := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL,
			HTTPClient: &http.Client{Transport: teamTransport(c.team)}, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		f := &fixture{cs: cs}
		res := f.call(t, mcp.ToolDescribeModel, map[string]any{"km": "secret"})
		if res.IsError == c.sees {
			t.Errorf("team %s describes secret: %s", c.team, text(res))
		}
		cs.Close()
	}
}

type teamTransport string

func (tt teamTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Team", string(tt))
	return http.DefaultTransport.RoundTrip(r)
}

// TestPromptErrorsAreInvalidParams: a prompts/get the caller got wrong (no km, an unknown
// KM or record) is a JSON-RPC error of code -32602 (Invalid params), as the
// specification's prompts error handling says of missing and invalid arguments, carrying
// the KM API's problem; never the undefined code 0. A missing km says so (it was
// KM_MODEL_NOTFOUND for the knowledge model "").
func TestPromptErrorsAreInvalidParams(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		args   map[string]string
		status int
		code   string
	}{
		{map[string]string{}, http.StatusBadRequest, "GENERAL_PARAMETER_MISSING"},
		{map[string]string{"record": "ORDERS"}, http.StatusBadRequest, "GENERAL_PARAMETER_MISSING"},
		{map[string]string{"km": "nope"}, http.StatusNotFound, "KM_MODEL_NOTFOUND"},
		{map[string]string{"km": "shop-base", "record": "NOPE"}, http.StatusNotFound, "KM_RECORD_NOTFOUND"},
	} {
		_, err := f.cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: mcp.PromptFilterLanguage, Arguments: c.args})
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%v: %#v, want a JSON-RPC error of code %d", c.args, err, jsonrpc.CodeInvalidParams)
			continue
		}
		var pr mcp.ToolError
		if err := json.Unmarshal([]byte(wire.Message), &pr); err != nil || pr.Status != c.status || pr.ErrorCode != c.code {
			t.Errorf("%v: message %s (%v), want the problem of %s", c.args, wire.Message, err, c.code)
		}
	}
}
