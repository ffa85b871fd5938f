package kmkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/internal/kmparams"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/mcp"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/query"
)

// The adversarial half of issue 27: questions nobody wrote the surfaces for (missing and
// miscased fields, control characters, invalid UTF-8, filters beyond the limits, unknown
// functions, opposite sorts, pages of 0 or of text, precisions out of range, unknown KPIs
// and parameters), each asked through the KM API (GET and POST), OData, a $batch part and
// MCP. Accepted questions must give the same rows everywhere, refused ones the same status
// and code. The oracle is the agreement of four independently written adapters plus, for
// every case, the status and code the specification (SPEC-NOTES.md) asks of the KM API.

// probe is one question in the KM API's terms; each surface translates it.
type probe struct {
	name       string
	record     string // the record; "" and atKM (or KPIs) ask at KM level, else ORDERS
	atKM       bool
	fields     []string
	filters    []string // predefined filter ids
	filterExpr []string
	sort       []string
	page       string // raw text, "" for the default
	pageSize   string // raw text, "" for the default
	distinct   bool
	term       string
	field      string // searchField
	precision  string // raw text, "" for the default
	kpis       []string
	kpiParams  map[string]map[string]string
	// status and code are what the KM API must answer (200 and "" for rows); rows, for a
	// 200, how many rows (-1: any number, 0 allowed).
	status int
	code   string
	rows   int
	// empty says a 200 with no rows is the answer (else a case without rows is weak).
	empty bool
	// want, when set, is the KM API's rows as JSON.
	want string
	// skip names the surfaces that cannot word the question, each with the reason.
	skip map[string]string
}

// Reasons a surface cannot word a question, shared by the cases that meet them.
const (
	notUTF8       = "JSON strings are UTF-8: encoding/json turns the invalid byte into U+FFFD, another question"
	kmLevel       = "an OData entity set is one record: KM-level fields and KPIs are $apply's, not the entity set's"
	odataPaging   = "OData's $top/$skip are a count and an offset with their own grammar ($top=0 is valid), not page/pageSize"
	odataDistinct = "distinct is $apply=groupby in OData, which orders groups, not rows"
	odataSearch   = "$search has no searchField or precision: it searches the selected strings at the default precision"
	odataFunc     = "an OData function outside the subset is valid OData: 501 there by the spec, 400 on the KM API"
	odataComma    = "a top-level comma joins filterExpr entries on the KM API; $filter has no such form"
	odataFilter   = "OData's filterid is checked by the OData adapter with its own code for an unknown id"
	odataSort     = "$orderby has no empty key and no '+' prefix"
	postZero      = "the POST body takes precision 0 to 100 (SPEC-NOTES: 1..100 on GET only)"
	dataFields    = "the data endpoints need fields at record level (the seed); the query endpoints default to all"
	odataClients  = "a form OData clients send, accepted by $filter only (SPEC-NOTES, OData: what real clients send)"
	postSort      = "the POST body's sort is 2 to 2048 characters (the seed): a shorter one is GENERAL_CONSTRAINT_VIOLATION"
	odataOrderBy  = "OData's $orderby may name a property $select leaves out (valid OData); the KM API's sort may not"
)

func skips(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		for s := range strings.SplitSeq(kv[i], ",") {
			m[s] = kv[i+1]
		}
	}
	return m
}

// pathOf is the KM API path of p's query endpoint.
func (p probe) pathOf(endpoint string) string {
	base := kmhttp.BasePath + "/knowledge-models/shop-base"
	if p.record != "" {
		base += "/records/" + p.record
	}
	return base + "/" + endpoint
}

func (p probe) values() url.Values {
	v := url.Values{}
	add := func(k string, vs []string) {
		for _, s := range vs {
			v.Add(k, s)
		}
	}
	if len(p.fields) > 0 {
		v.Set("fields", strings.Join(p.fields, ","))
	}
	add("filters", p.filters)
	add("filterExpr", p.filterExpr)
	if len(p.sort) > 0 {
		v.Set("sort", strings.Join(p.sort, ","))
	}
	if p.page != "" {
		v.Set("page", p.page)
	}
	if p.pageSize != "" {
		v.Set("pageSize", p.pageSize)
	}
	if p.distinct {
		v.Set("options", "distinct")
	}
	if p.term != "" {
		v.Set("searchTerm", p.term)
	}
	if p.field != "" {
		v.Set("searchField", p.field)
	}
	if p.precision != "" {
		v.Set("searchPrecision", p.precision)
	}
	if len(p.kpis) > 0 {
		v.Set("kpis", strings.Join(p.kpis, ","))
	}
	for kpi, ps := range p.kpiParams {
		for param, val := range ps {
			v.Add("kpiParam", kpi+"."+param+":"+val)
		}
	}
	return v
}

// rowsOf reads the rows of a KM API or MCP answer body.
func rowsOf(t *testing.T, body []byte, member string) []map[string]any {
	t.Helper()
	var out map[string]json.RawMessage
	if err := decode(body, &out); err != nil {
		t.Fatalf("%v: %q", err, body)
	}
	var rows []map[string]any
	if err := decode(out[member], &rows); err != nil || rows == nil {
		t.Fatalf("no %s array (%v): %q", member, err, body)
	}
	return rows
}

func (s *surfaces) probeGET(t *testing.T, p probe) answer {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.URL = &url.URL{Path: p.pathOf("query"), RawQuery: p.values().Encode()}
	s.kmAPI.ServeHTTP(w, r)
	if w.Code != 200 {
		return refusal(w.Code, w.Body.Bytes())
	}
	return answer{status: 200, rows: rowsOf(t, w.Body.Bytes(), "content")}
}

func (s *surfaces) probePOST(t *testing.T, p probe) answer {
	pr := map[string]any{}
	if len(p.fields) > 0 {
		pr["fields"] = strings.Join(p.fields, ",")
	}
	if len(p.filters) > 0 || len(p.filterExpr) > 0 {
		pr["filters"] = map[string]any{"kmFilterNames": p.filters, "filterExpr": p.filterExpr}
	}
	if len(p.sort) > 0 {
		pr["sort"] = strings.Join(p.sort, ",")
	}
	pg := map[string]any{}
	for k, v := range map[string]string{"pageNumber": p.page, "pageSize": p.pageSize} {
		if v != "" {
			pg[k] = jsonValue(v)
		}
	}
	if len(pg) > 0 {
		pr["pagination"] = pg
	}
	if p.distinct {
		pr["options"] = []string{"distinct"}
	}
	if p.term != "" || p.field != "" || p.precision != "" {
		sr := map[string]any{}
		if p.term != "" {
			sr["term"] = p.term
		}
		if p.field != "" {
			sr["field"] = p.field
		}
		if p.precision != "" {
			sr["precision"] = jsonValue(p.precision)
		}
		pr["search"] = sr
	}
	if len(p.kpis) > 0 {
		pr["kpis"] = p.kpis
	}
	if p.kpiParams != nil {
		pr["kpiParameters"] = p.kpiParams
	}
	body, err := json.Marshal(map[string]any{"projection": pr})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	r.URL = &url.URL{Path: p.pathOf("data")}
	r.Header.Set("Content-Type", "application/json")
	s.kmAPI.ServeHTTP(w, r)
	return dataRows(t, w.Code, w.Body.Bytes())
}

func (s *surfaces) probeData(t *testing.T, p probe) answer {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.URL = &url.URL{Path: p.pathOf("data"), RawQuery: p.values().Encode()}
	s.kmAPI.ServeHTTP(w, r)
	return dataRows(t, w.Code, w.Body.Bytes())
}

// dataRows reads the rows of a data endpoint's answer ({content: {headers, data}}),
// checking that each row has exactly the headers' members.
func dataRows(t *testing.T, status int, body []byte) answer {
	if status != 200 {
		return refusal(status, body)
	}
	var page struct {
		Content struct {
			Headers []struct{ ID string }
			Data    []map[string]any
		}
	}
	if err := decode(body, &page); err != nil || page.Content.Data == nil {
		t.Fatalf("no content.data (%v): %q", err, body)
	}
	for i, d := range page.Content.Data {
		for _, h := range page.Content.Headers {
			if _, ok := d[h.ID]; !ok || len(d) != len(page.Content.Headers) {
				t.Fatalf("row %d does not have the headers' members: %v", i, d)
			}
		}
	}
	return answer{status: 200, rows: page.Content.Data}
}

// odataURL is p as an entity-set URL relative to the service root.
func (p probe) odataURL() string {
	v := url.Values{}
	if len(p.fields) > 0 {
		v.Set("$select", strings.Join(p.fields, ","))
	}
	if len(p.filterExpr) > 0 {
		parts := make([]string, len(p.filterExpr))
		for i, e := range p.filterExpr {
			parts[i] = "(" + e + ")"
		}
		v.Set("$filter", strings.Join(parts, " and "))
	}
	if len(p.filters) > 0 {
		v.Set("filterid", strings.Join(p.filters, ","))
	}
	if len(p.sort) > 0 {
		keys := make([]string, len(p.sort))
		for i, k := range p.sort {
			f, desc := strings.CutPrefix(k, "-")
			keys[i] = f + map[bool]string{true: " desc", false: " asc"}[desc]
		}
		v.Set("$orderby", strings.Join(keys, ","))
	}
	size := 50
	if p.pageSize != "" {
		size, _ = strconv.Atoi(p.pageSize)
	}
	v.Set("$top", strconv.Itoa(size))
	if p.page != "" {
		page, _ := strconv.Atoi(p.page)
		v.Set("$skip", strconv.Itoa(page*size))
	}
	if p.term != "" {
		// A phrase in double quotes, in which \" and \\ escape a quote and a backslash.
		v.Set("$search", `"`+strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(p.term)+`"`)
	}
	return url.PathEscape(p.record+"_entries") + "?" + strings.ReplaceAll(v.Encode(), "+", "%20")
}

// odataRows reads an OData collection's rows without their annotations.
func odataRows(t *testing.T, status int, body []byte) answer {
	if status != 200 {
		return refusal(status, body)
	}
	rows := rowsOf(t, body, "value")
	for _, r := range rows {
		for k := range r {
			if strings.HasPrefix(k, "@") {
				delete(r, k)
			}
		}
	}
	return answer{status: 200, rows: rows}
}

func (s *surfaces) probeOData(t *testing.T, p probe) answer {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	u, err := url.Parse(odata.BasePath + "/shop-base.svc/" + p.odataURL())
	if err != nil {
		t.Fatal(err)
	}
	r.URL = u
	s.od.ServeHTTP(w, r)
	return odataRows(t, w.Code, w.Body.Bytes())
}

func (s *surfaces) probeBatch(t *testing.T, p probe) answer {
	body, _ := json.Marshal(map[string]any{"requests": []any{map[string]string{"id": "1", "method": "GET", "url": p.odataURL()}}})
	r := httptest.NewRequest(http.MethodPost, odata.BasePath+"/shop-base.svc/$batch", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	s.od.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatalf("batch: %d %s", w.Code, w.Body)
	}
	var b struct {
		Responses []struct {
			Status int
			Body   json.RawMessage
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &b); err != nil || len(b.Responses) != 1 {
		t.Fatalf("batch: %v %s", err, w.Body)
	}
	return odataRows(t, b.Responses[0].Status, b.Responses[0].Body)
}

func (s *surfaces) probeMCP(t *testing.T, p probe) answer {
	args := map[string]any{"km": "shop-base"}
	set := func(k string, v []string) {
		if len(v) > 0 {
			args[k] = v
		}
	}
	if p.record != "" {
		args["record"] = p.record
	}
	set("fields", p.fields)
	set("filters", p.filters)
	set("filterExpr", p.filterExpr)
	set("sort", p.sort)
	set("kpis", p.kpis)
	if p.kpiParams != nil {
		args["kpiParameters"] = p.kpiParams
	}
	for k, v := range map[string]string{"page": p.page, "pageSize": p.pageSize} {
		if v != "" {
			args[k] = jsonValue(v)
		}
	}
	if p.distinct {
		args["distinct"] = true
	}
	if p.term != "" || p.field != "" || p.precision != "" {
		sr := map[string]any{"term": p.term}
		if p.field != "" {
			sr["fields"] = []string{p.field}
		}
		if p.precision != "" {
			sr["precision"] = jsonValue(p.precision)
		}
		args["search"] = sr
	}
	res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ToolQuery, Arguments: args})
	if err != nil {
		t.Fatalf("MCP: %v", err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("MCP: %d contents", len(res.Content))
	}
	text := []byte(res.Content[0].(*sdk.TextContent).Text)
	if got := s.postQuery(t, args); got.IsError != res.IsError || len(got.Content) != 1 || got.Content[0].(*sdk.TextContent).Text != string(text) {
		t.Fatalf("MCP over Streamable HTTP answers %+v, through the SDK's session %s", got, text)
	}
	if res.IsError {
		var pb struct {
			Status int `json:"status"`
		}
		if err := json.Unmarshal(text, &pb); err != nil || pb.Status == 0 {
			t.Fatalf("MCP: the tool error is no problem body: %s", text)
		}
		return refusal(pb.Status, text)
	}
	return answer{status: 200, rows: rowsOf(t, text, "rows")}
}

// postQuery calls query with args over Streamable HTTP, as a client of 2025-06-18.
func (s *surfaces) postQuery(t *testing.T, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": mcp.ToolQuery, "arguments": args}})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, mcp.BasePath, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	w := httptest.NewRecorder()
	s.mcpHTTP.ServeHTTP(w, r)
	var msg struct {
		Result *sdk.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &msg); err != nil || w.Code != http.StatusOK || msg.Result == nil {
		t.Fatalf("MCP over Streamable HTTP: %d %s (%v)", w.Code, w.Body, err)
	}
	return msg.Result
}

// jsonValue is raw as a JSON value when it is one (10, 1.5), else as a JSON string.
func jsonValue(raw string) any {
	if json.Valid([]byte(raw)) {
		return json.RawMessage(raw)
	}
	return raw
}

// adversarialProbes are the questions. Texts with control characters and invalid UTF-8
// are written with escapes so the file stays plain text.
func adversarialProbes() []probe {
	in := func(n int) string {
		vs := make([]string, n)
		for i := range vs {
			vs[i] = "'S" + strconv.Itoa(i) + "'"
		}
		return "STATUS in ('PAID'," + strings.Join(vs, ",") + ")"
	}
	ord := func(p probe) probe {
		if p.record == "" && p.kpis == nil && !p.atKM {
			p.record = "ORDERS"
		}
		if p.rows == 0 && p.status == 200 && !p.empty {
			p.rows = -1
		}
		return p
	}
	ps := []probe{
		// Fields.
		{name: "fields", fields: []string{"ID", "STATUS", "NET"}, sort: []string{"-NET"}, pageSize: "3", status: 200, rows: 3},
		{name: "all fields", sort: []string{"ID"}, status: 200, skip: skips("data,post", dataFields)},
		{name: "missing field", fields: []string{"ID", "NOPE"}, status: 400, code: "KM_FIELD_NOTFOUND"},
		{name: "wrong case", fields: []string{"ID", "status"}, status: 400, code: "KM_FIELD_NOTFOUND"},
		{name: "field of another record", fields: []string{"ID", "NAME"}, status: 400, code: "KM_FIELD_NOTFOUND"},
		{name: "duplicated field", fields: []string{"ID", "STATUS", "ID"}, sort: []string{"ID"}, status: 200},
		{name: "NUL in a field", fields: []string{"ID\x00"}, status: 400, code: "GENERAL_PARAMETER_ILLEGAL"},
		{name: "unknown record", record: "NOPE", fields: []string{"ID"}, status: 404, code: "KM_RECORD_NOTFOUND"},
		{name: "record in wrong case", record: "orders", fields: []string{"ID"}, status: 404, code: "KM_RECORD_NOTFOUND"},
		{name: "NUL in the record", record: "ORD\x00ERS", fields: []string{"ID"}, status: 400, code: "GENERAL_PARAMETER_ILLEGAL"},
		{name: "unknown record and a bad page", record: "NOPE", fields: []string{"ID"}, pageSize: "0", status: 404, code: "KM_RECORD_NOTFOUND", skip: skips("odata,batch", odataPaging)},
		{name: "NUL in a field and a bad page", fields: []string{"ID\x00"}, pageSize: "0", status: 400, code: "GENERAL_PARAMETER_ILLEGAL", skip: skips("odata,batch", odataPaging)},
		{name: "unknown field and a bad page", fields: []string{"NOPE"}, pageSize: "0", status: 400, code: "GENERAL_CONSTRAINT_VIOLATION", skip: skips("odata,batch", odataPaging)},
		// Filters.
		{name: "filter", fields: []string{"ID", "NET"}, filterExpr: []string{"NET gt 50"}, sort: []string{"ID"}, status: 200},
		{name: "two filters", fields: []string{"ID"}, filterExpr: []string{"NET gt 50", "STATUS eq 'PAID'"}, sort: []string{"ID"}, status: 200},
		{name: "filter of another record", fields: []string{"ID"}, filterExpr: []string{"CUSTOMERS.COUNTRY eq 'DE'"}, sort: []string{"ID"}, status: 200},
		{name: "malformed: no operand", fields: []string{"ID"}, filterExpr: []string{"NET gt"}, status: 400, code: "FILTER_SYNTAX_ERROR"},
		{name: "malformed: open quote", fields: []string{"ID"}, filterExpr: []string{"STATUS eq 'PAID"}, status: 400, code: "FILTER_SYNTAX_ERROR"},
		{name: "malformed: open parenthesis", fields: []string{"ID"}, filterExpr: []string{"((NET gt 1)"}, status: 400, code: "FILTER_SYNTAX_ERROR"},
		{name: "NUL in a literal", fields: []string{"ID"}, filterExpr: []string{"STATUS eq 'a\x00b'"}, status: 400, code: "GENERAL_PARAMETER_ILLEGAL"},
		{name: "U+0001 in a literal", fields: []string{"ID"}, filterExpr: []string{"STATUS eq 'a\x01b'"}, status: 200, empty: true},
		{name: "U+007F in a literal", fields: []string{"ID"}, filterExpr: []string{"STATUS eq 'a\x7fb'"}, status: 200, empty: true},
		{name: "U+0001 outside a literal", fields: []string{"ID"}, filterExpr: []string{"STATUS\x01eq 'PAID'"}, status: 400, code: "FILTER_SYNTAX_ERROR"},
		{name: "invalid UTF-8", fields: []string{"ID"}, filterExpr: []string{"STATUS eq 'a\xffb'"}, status: 400, code: "GENERAL_PARAMETER_ILLEGAL",
			skip: skips("post,mcp", notUTF8)},
		{name: "very long filter", fields: []string{"ID"}, filterExpr: []string{"STATUS eq '" + strings.Repeat("x", 9000) + "'"}, status: 400, code: "GENERAL_CONSTRAINT_VIOLATION"},
		{name: "deep nesting", fields: []string{"ID"}, filterExpr: []string{strings.Repeat("(", 100) + "NET gt 1" + strings.Repeat(")", 100)}, status: 400, code: "GENERAL_CONSTRAINT_VIOLATION"},
		{name: "nesting within the limit", fields: []string{"ID"}, filterExpr: []string{strings.Repeat("(", 30) + "NET gt 1" + strings.Repeat(")", 30)}, sort: []string{"ID"}, status: 200},
		{name: "in list of 999", fields: []string{"ID"}, filterExpr: []string{in(999)}, sort: []string{"ID"}, status: 200},
		{name: "in list of 1001", fields: []string{"ID"}, filterExpr: []string{in(1000)}, status: 400, code: "GENERAL_CONSTRAINT_VIOLATION"},
		{name: "date-time against a date", fields: []string{"ID", "DAY"}, filterExpr: []string{"DAY ge 2025-02-10T00:00:00Z"}, sort: []string{"ID"}, status: 200},
		{name: "date against a date-time", fields: []string{"ID", "CREATED"}, filterExpr: []string{"CREATED ge 2025-02-11"}, sort: []string{"ID"}, status: 200},
		{name: "date-time with an offset", fields: []string{"ID"}, filterExpr: []string{"CREATED lt 2025-02-10T12:00:00+03:00"}, sort: []string{"ID"}, status: 200},
		{name: "impossible date", fields: []string{"ID"}, filterExpr: []string{"DAY eq 2025-02-30"}, status: 400, code: "FILTER_TYPE_MISMATCH"},
		{name: "type mismatch", fields: []string{"ID"}, filterExpr: []string{"NET gt 'x'"}, status: 400, code: "FILTER_TYPE_MISMATCH"},
		{name: "unknown field in a filter", fields: []string{"ID"}, filterExpr: []string{"NOPE eq 1"}, status: 400, code: "KM_FIELD_NOTFOUND"},
		{name: "unknown function", fields: []string{"ID"}, filterExpr: []string{"frobnicate(STATUS) eq 'x'"}, status: 400, code: "FILTER_NOT_SUPPORTED",
			skip: skips("odata,batch", odataFunc)},
		{name: "comma-joined filters", fields: []string{"ID"}, filterExpr: []string{"NET gt 50,STATUS eq 'PAID'"}, sort: []string{"ID"}, status: 200,
			skip: skips("odata,batch", odataComma)},
		{name: "predefined filter", fields: []string{"ID"}, filters: []string{"PAID"}, sort: []string{"ID"}, status: 200},
		{name: "unknown predefined filter", fields: []string{"ID"}, filters: []string{"NOPE"}, status: 400, code: "KM_FILTER_NOTFOUND"},
		{name: "own record named", fields: []string{"ID"}, filterExpr: []string{"ORDERS.NET gt 50"}, sort: []string{"ID"}, status: 200},
		{name: "not binds a comparison", fields: []string{"ID"}, filterExpr: []string{"not STATUS eq 'PAID'"}, sort: []string{"ID"}, status: 200},
		{name: "eq null", fields: []string{"ID"}, filterExpr: []string{"LATE eq null"}, sort: []string{"ID"}, status: 200},
		{name: "ne null", fields: []string{"ID"}, filterExpr: []string{"LATE ne null"}, sort: []string{"ID"}, status: 200},
		{name: "ne leaves nulls out", fields: []string{"ID"}, filterExpr: []string{"LATE ne 2"}, sort: []string{"ID"}, status: 200},
		{name: "contains", fields: []string{"ID"}, filterExpr: []string{"contains(STATUS,'AI')"}, sort: []string{"ID"}, status: 200},
		{name: "function on a number", fields: []string{"ID"}, filterExpr: []string{"contains(NET,'1')"}, status: 400, code: "FILTER_TYPE_MISMATCH"},
		{name: "tolower", fields: []string{"ID"}, filterExpr: []string{"tolower(STATUS) eq 'paid'"}, status: 400, code: "FILTER_NOT_SUPPORTED", skip: skips("odata,batch", odataClients)},
		{name: "boolean", fields: []string{"ID"}, filterExpr: []string{"EXPRESS eq true"}, sort: []string{"ID"}, status: 200},
		{name: "quoted boolean", fields: []string{"ID"}, filterExpr: []string{"EXPRESS eq 'true'"}, sort: []string{"ID"}, status: 200},
		{name: "quoted number", fields: []string{"ID"}, filterExpr: []string{"NET gt '100'"}, sort: []string{"ID"}, status: 200},
		{name: "uppercase operator", fields: []string{"ID"}, filterExpr: []string{"NET GT 100"}, status: 400, code: "FILTER_NOT_SUPPORTED", skip: skips("odata,batch", odataClients)},
		{name: "typed literal", fields: []string{"ID"}, filterExpr: []string{"NET gt 100D"}, status: 400, code: "FILTER_TYPE_MISMATCH", skip: skips("odata,batch", odataClients)},
		{name: "integer beyond int64", fields: []string{"ID"}, filterExpr: []string{"LATE gt 99999999999999999999"}, sort: []string{"ID"}, status: 200, empty: true},
		{name: "number beyond float64", fields: []string{"ID"}, filterExpr: []string{"NET gt 1e400"}, status: 400, code: "FILTER_TYPE_MISMATCH"},
		{name: "decimal against an integer", fields: []string{"ID"}, filterExpr: []string{"LATE ge 1.5"}, sort: []string{"ID"}, status: 200},
		{name: "unknown record", fields: []string{"ID"}, filterExpr: []string{"NOPE.X eq 1"}, status: 400, code: "KM_FIELD_NOTFOUND"},
		{name: "filter with a quote doubled", fields: []string{"ID"}, filterExpr: []string{"STATUS eq 'O''PEN'"}, status: 200, empty: true},
		{name: "empty filter", fields: []string{"ID"}, filterExpr: []string{""}, status: 400, code: "FILTER_SYNTAX_ERROR", skip: skips("odata,batch", "an empty $filter is no OData expression")},
		{name: "blank filter", fields: []string{"ID"}, filterExpr: []string{"   "}, status: 400, code: "FILTER_SYNTAX_ERROR", skip: skips("odata,batch", "a blank $filter is no OData expression")},
		{name: "spaces around fields", fields: []string{" ID", "STATUS "}, sort: []string{"ID"}, status: 200},
		{name: "empty fields", fields: []string{""}, sort: []string{"ID"}, status: 200,
			skip: skips("data,post", dataFields, "odata,batch", "an empty $select is no OData select list")},
		// Sorts.
		{name: "plus sort", fields: []string{"ID", "NET"}, sort: []string{"+NET"}, status: 200, skip: skips("odata,batch", odataSort)},
		{name: "sort with a space", fields: []string{"ID", "NET"}, sort: []string{" -NET"}, status: 200, skip: skips("odata,batch", odataSort)},
		{name: "sort in wrong case", fields: []string{"ID", "NET"}, sort: []string{"net"}, status: 400, code: "SORT_UNKNOWN_FIELD"},
		{name: "sort on a KPI not asked", fields: []string{"ORDERS.STATUS"}, kpis: []string{"NET"}, sort: []string{"-QTY"}, status: 400, code: "SORT_UNKNOWN_FIELD", skip: skips("odata,batch", kmLevel)},
		{name: "distinct with KPIs", fields: []string{"ORDERS.STATUS"}, kpis: []string{"NET"}, distinct: true, sort: []string{"ORDERS.STATUS"}, status: 200, rows: 4, skip: skips("odata,batch", kmLevel)},
		{name: "NUL in a KPI parameter", kpis: []string{"STATUS_NET"}, kpiParams: map[string]map[string]string{"STATUS_NET": {"s": "a\x00b"}}, status: 400, code: "GENERAL_PARAMETER_ILLEGAL", skip: skips("odata,batch", kmLevel)},
		{name: "blank search term", fields: []string{"ID", "STATUS"}, term: "  ", sort: []string{"ID"}, status: 200, empty: true, skip: skips("odata,batch", "a blank $search is no OData search expression")},
		{name: "unknown sort", fields: []string{"ID"}, sort: []string{"-NOPE"}, status: 400, code: "SORT_UNKNOWN_FIELD"},
		{name: "sort by an unselected field", fields: []string{"ID"}, sort: []string{"NET"}, status: 400, code: "SORT_UNKNOWN_FIELD", skip: skips("odata,batch", odataOrderBy)},
		{name: "opposite sorts", fields: []string{"ID", "NET"}, sort: []string{"NET", "-NET"}, status: 400, code: "SORT_HAS_OPPOSITE"},
		{name: "repeated sort", fields: []string{"ID", "NET"}, sort: []string{"-NET", "-NET"}, status: 400, code: "SORT_HAS_DUPLICATE"},
		{name: "empty sort key", fields: []string{"ID"}, sort: []string{"-"}, status: 400, code: "SORT_IS_EMPTY", skip: skips("odata,batch", odataSort, "post", postSort)},
		// Paging.
		{name: "second page", fields: []string{"ID"}, sort: []string{"ID"}, page: "1", pageSize: "2", status: 200, rows: 2},
		{name: "page beyond the rows", fields: []string{"ID"}, sort: []string{"ID"}, page: "1000", pageSize: "10", status: 200, empty: true},
		{name: "last int32 page", fields: []string{"ID"}, sort: []string{"ID"}, page: "2147483647", pageSize: "5000", status: 200, empty: true, skip: skips("odata,batch", odataPaging)},
		{name: "pageSize 0", fields: []string{"ID"}, pageSize: "0", status: 400, code: "GENERAL_CONSTRAINT_VIOLATION", skip: skips("odata,batch", odataPaging)},
		{name: "negative pageSize", fields: []string{"ID"}, pageSize: "-1", status: 400, code: "GENERAL_CONSTRAINT_VIOLATION", skip: skips("odata,batch", odataPaging)},
		{name: "huge pageSize", fields: []string{"ID"}, pageSize: "99999999999", status: 400, code: "GENERAL_CONSTRAINT_VIOLATION", skip: skips("odata,batch", odataPaging)},
		{name: "pageSize above the maximum", fields: []string{"ID"}, pageSize: "5001", status: 400, code: "GENERAL_CONSTRAINT_VIOLATION", skip: skips("odata,batch", odataPaging)},
		{name: "negative page", fields: []string{"ID"}, page: "-1", status: 400, code: "GENERAL_CONSTRAINT_VIOLATION", skip: skips("odata,batch", odataPaging)},
		{name: "page beyond int32", fields: []string{"ID"}, page: "2147483648", status: 400, code: "GENERAL_CONSTRAINT_VIOLATION", skip: skips("odata,batch", odataPaging)},
		{name: "text pageSize", fields: []string{"ID"}, pageSize: "ten", status: 400, code: "GENERAL_PARAMETER_MISSMATCH",
			skip: skips("odata,batch", odataPaging)},
		{name: "fractional pageSize", fields: []string{"ID"}, pageSize: "1.5", status: 400, code: "GENERAL_PARAMETER_MISSMATCH",
			skip: skips("odata,batch", odataPaging)},
		// Distinct.
		{name: "distinct", fields: []string{"STATUS"}, sort: []string{"STATUS"}, distinct: true, status: 200, rows: 4, skip: skips("odata,batch", odataDistinct)},
		{name: "distinct paged", fields: []string{"CUST", "STATUS"}, sort: []string{"CUST"}, distinct: true, page: "1", pageSize: "2", status: 200, skip: skips("odata,batch", odataDistinct)},
		// Search.
		{name: "search", fields: []string{"ID", "STATUS"}, term: "paid", sort: []string{"ID"}, status: 200},
		{name: "search without sort", fields: []string{"ID", "STATUS"}, term: "open", status: 200},
		{name: "search in a field", fields: []string{"ID", "STATUS"}, term: "paid", field: "STATUS", sort: []string{"ID"}, status: 200, skip: skips("odata,batch", odataSearch)},
		{name: "searchField without a term", fields: []string{"ID", "STATUS"}, field: "STATUS", status: 400, code: "GENERAL_PARAMETER_MISSING", skip: skips("odata,batch", odataSearch)},
		{name: "search an unknown field", fields: []string{"ID", "STATUS"}, term: "x", field: "NOPE", status: 400, code: "KM_FIELD_NOTFOUND", skip: skips("odata,batch", odataSearch)},
		{name: "precision 0", fields: []string{"ID"}, term: "paid", precision: "0", status: 400, code: "GENERAL_CONSTRAINT_VIOLATION",
			skip: skips("odata,batch", odataSearch, "post", postZero)},
		{name: "precision 101", fields: []string{"ID"}, term: "paid", precision: "101", status: 400, code: "GENERAL_CONSTRAINT_VIOLATION", skip: skips("odata,batch", odataSearch)},
		{name: "precision -1", fields: []string{"ID"}, term: "paid", precision: "-1", status: 400, code: "GENERAL_CONSTRAINT_VIOLATION", skip: skips("odata,batch", odataSearch)},
		{name: "precision 100", fields: []string{"ID", "STATUS"}, term: "PAID", precision: "100", sort: []string{"ID"}, status: 200, skip: skips("odata,batch", odataSearch)},
		{name: "quote and backslash in a search term", fields: []string{"ID", "STATUS"}, term: `pa"i\d`, sort: []string{"ID"}, status: 200, empty: true},
		{name: "U+0001 in a search term", fields: []string{"ID", "STATUS"}, term: "pa\x01id", precision: "100", sort: []string{"ID"}, status: 200, empty: true,
			skip: skips("odata,batch", odataSearch)},
		{name: "invalid UTF-8 in a search term", fields: []string{"ID"}, term: "pa\xffid", status: 400, code: "GENERAL_PARAMETER_ILLEGAL", skip: skips("post,mcp", notUTF8)},
		{name: "NUL in a search term", fields: []string{"ID"}, term: "pa\x00id", status: 400, code: "GENERAL_PARAMETER_ILLEGAL"},
		// KM level: KPIs.
		{name: "KPI by a field", fields: []string{"ORDERS.STATUS"}, kpis: []string{"NET"}, sort: []string{"-NET"}, status: 200, rows: 4, skip: skips("odata,batch", kmLevel)},
		{name: "KPI alone", kpis: []string{"NET", "ORDERS_N"}, status: 200, rows: 1, skip: skips("odata,batch", kmLevel)},
		{name: "unknown KPI", fields: []string{"ORDERS.STATUS"}, kpis: []string{"NOPE"}, status: 400, code: "KM_FIELD_NOTFOUND", skip: skips("odata,batch", kmLevel)},
		{name: "KPI with a parameter", fields: []string{"ORDERS.STATUS"}, kpis: []string{"LATE_SHARE"}, kpiParams: map[string]map[string]string{"LATE_SHARE": {"t": "1"}},
			sort: []string{"ORDERS.STATUS"}, status: 200, rows: 4, skip: skips("odata,batch", kmLevel)},
		{name: "KPI with a string parameter", kpis: []string{"STATUS_NET"}, kpiParams: map[string]map[string]string{"STATUS_NET": {"s": "OPEN"}}, status: 200, rows: 1, skip: skips("odata,batch", kmLevel)},
		{name: "unknown KPI parameter", kpis: []string{"LATE_SHARE"}, kpiParams: map[string]map[string]string{"LATE_SHARE": {"nope": "1"}}, status: 400, code: "GENERAL_PARAMETER_ILLEGAL", skip: skips("odata,batch", kmLevel)},
		{name: "KPI parameter that breaks the expression", kpis: []string{"LATE_SHARE"}, kpiParams: map[string]map[string]string{"LATE_SHARE": {"t": "1) or (1"}}, status: 400, code: "GENERAL_PARAMETER_ILLEGAL", skip: skips("odata,batch", kmLevel)},
		{name: "quote in a string parameter", kpis: []string{"STATUS_NET"}, kpiParams: map[string]map[string]string{"STATUS_NET": {"s": "O'PEN"}}, status: 200, rows: 1, skip: skips("odata,batch", kmLevel)},
		{name: "parameter of an unselected KPI", kpis: []string{"NET"}, kpiParams: map[string]map[string]string{"LATE_SHARE": {"t": "1"}}, status: 400, code: "GENERAL_PARAMETER_ILLEGAL", skip: skips("odata,batch", kmLevel)},
		{name: "KPI at record level", record: "ORDERS", fields: []string{"ID"}, kpis: []string{"NET"}, status: 400, code: "GENERAL_PARAMETER_ILLEGAL", skip: skips("odata,batch", kmLevel)},
		{name: "KPIs by fields of two records", atKM: true, fields: []string{"ORDERS.STATUS", "ITEMS.MATERIAL"}, kpis: []string{"NET", "QTY"}, sort: []string{"-QTY", "ITEMS.MATERIAL", "ORDERS.STATUS"}, status: 200, skip: skips("odata,batch", kmLevel)},
		{name: "KPI filtered through a related record", atKM: true, fields: []string{"ORDERS.STATUS"}, filterExpr: []string{"ITEMS.MATERIAL eq 'Laptop'"}, kpis: []string{"ORDERS_N"}, status: 200, rows: 1, skip: skips("odata,batch", kmLevel)},
		{name: "two predefined filters at KM level", atKM: true, fields: []string{"ORDERS.STATUS", "CUSTOMERS.NAME"}, filters: []string{"GERMANY", "LATE"}, sort: []string{"CUSTOMERS.NAME", "ORDERS.STATUS"}, status: 200, rows: 2, skip: skips("odata,batch", kmLevel)},
		{name: "repeated KPI", kpis: []string{"NET", "NET"}, status: 200, rows: 1, skip: skips("odata,batch", kmLevel)},
		{name: "KPI parameter that tries to widen the filter", kpis: []string{"STATUS_NET"}, kpiParams: map[string]map[string]string{"STATUS_NET": {"s": "x' or ORDERS.STATUS ne '"}}, status: 200, want: `[{"STATUS_NET":null}]`, skip: skips("odata,batch", kmLevel)},
		{name: "KPI parameter of the wrong type", kpis: []string{"LATE_SHARE"}, kpiParams: map[string]map[string]string{"LATE_SHARE": {"t": "abc"}}, status: 400, code: "GENERAL_PARAMETER_ILLEGAL", skip: skips("odata,batch", kmLevel)},
		{name: "KM-level fields of two records", fields: []string{"ORDERS.ID", "CUSTOMERS.COUNTRY"}, sort: []string{"ORDERS.ID"}, status: 200, atKM: true, skip: skips("odata,batch", kmLevel)},
		{name: "KM level without fields or KPIs", status: 400, code: "GENERAL_PARAMETER_MISSING", atKM: true, skip: skips("odata,batch", kmLevel)},
		{name: "KM-level distinct search", fields: []string{"ORDERS.STATUS", "CUSTOMERS.COUNTRY"}, distinct: true, term: "e", precision: "100", sort: []string{"ORDERS.STATUS"}, status: 200,
			atKM: true, skip: skips("odata,batch", kmLevel)},
	}
	for i := range ps {
		ps[i] = ord(ps[i])
	}
	return ps
}

// TestSurfacesAgreeOnUnseenInputs asks every adversarial probe through the KM API (GET
// and POST), OData, a $batch part and MCP on memory, SQLite and PostgreSQL: the KM API
// answers what the specification asks, and every other surface that can word the question
// answers the same rows or the same refusal.
func TestSurfacesAgreeOnUnseenInputs(t *testing.T) {
	probes := adversarialProbes()
	for _, b := range shopBackends() {
		t.Run(b.name, func(t *testing.T) {
			s := newSurfaces(t, km.NewService(b.open(t)), 5000)
			for _, p := range probes {
				t.Run(p.name, func(t *testing.T) {
					checkProbe(t, s, p)
				})
			}
		})
	}
}

// checkProbe asks p through every surface that can word it and compares the answers.
func checkProbe(t *testing.T, s *surfaces, p probe) {
	t.Helper()
	want := s.probeGET(t, p)
	if want.status != p.status || want.code != p.code || p.status == 200 && p.rows >= 0 && len(want.rows) != p.rows {
		t.Errorf("KM API GET: %.300v, want %d %s (%d rows)", want, p.status, p.code, p.rows)
	}
	if b, _ := json.Marshal(want.rows); p.want != "" && string(b) != p.want {
		t.Errorf("KM API GET: %s, want %s", b, p.want)
	}
	if p.status == 200 && !p.empty && len(want.rows) == 0 {
		t.Errorf("no rows: a weak case")
	}
	asks := map[string]func(*testing.T, probe) answer{"data": s.probeData, "post": s.probePOST, "odata": s.probeOData, "batch": s.probeBatch, "mcp": s.probeMCP}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range asks {
			if !yield(k) {
				return
			}
		}
	}) {
		if p.skip[name] != "" {
			continue
		}
		got := asks[name](t, p)
		if want.status == 200 && got.status == 200 {
			got.rows = sameKeys(got.rows, want.rows)
		}
		if got.status != want.status || got.code != want.code || !reflect.DeepEqual(got.rows, want.rows) {
			t.Errorf("%s: %.400v\nKM API: %.400v", name, got, want)
		}
	}
}

// sameKeys keeps of each row the members the KM API's rows have (OData adds a row key
// to rows where $select is absent).
func sameKeys(rows, like []map[string]any) []map[string]any {
	if len(like) == 0 {
		return rows
	}
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		out[i] = map[string]any{}
		for k, v := range r {
			if _, ok := like[0][k]; ok {
				out[i][k] = v
			}
		}
	}
	return out
}

// TestSurfacesShareConfiguredLimits: limits configured once, on the Service, hold alike on
// every surface: filter bounds (length, nesting, in-list size) and a page cap below the
// default page size (a request without pageSize then gets a page of the cap, as
// kmparams.ParsePaging documents, on every surface).
func TestSurfacesShareConfiguredLimits(t *testing.T) {
	base := shopBackends()[0].open(t)
	t.Run("filter limits", func(t *testing.T) {
		s := newSurfaces(t, km.NewService(base, km.WithFilterLimits(query.Limits{MaxLength: 40, MaxDepth: 3, MaxIn: 3})), 50)
		for _, p := range []probe{
			{name: "length within", fields: []string{"ID"}, filterExpr: []string{"STATUS eq 'PAID'"}, sort: []string{"ID"}, status: 200, rows: 3},
			{name: "length beyond", fields: []string{"ID"}, filterExpr: []string{"STATUS eq '" + strings.Repeat("P", 40) + "'"}, status: 400, code: "GENERAL_CONSTRAINT_VIOLATION"},
			{name: "depth within", fields: []string{"ID"}, filterExpr: []string{"((NET gt 100))"}, sort: []string{"ID"}, status: 200, rows: 5},
			{name: "depth beyond", fields: []string{"ID"}, filterExpr: []string{"((((NET gt 100))))"}, status: 400, code: "GENERAL_CONSTRAINT_VIOLATION"},
			{name: "in within", fields: []string{"ID"}, filterExpr: []string{"STATUS in ('PAID','X','Y')"}, sort: []string{"ID"}, status: 200, rows: 3},
			{name: "in beyond", fields: []string{"ID"}, filterExpr: []string{"STATUS in ('PAID','X','Y','Z')"}, status: 400, code: "GENERAL_CONSTRAINT_VIOLATION"},
		} {
			p.record = "ORDERS"
			t.Run(p.name, func(t *testing.T) { checkProbe(t, s, p) })
		}
	})
	t.Run("page cap below the default page", func(t *testing.T) {
		s := newSurfaces(t, km.NewService(base, km.WithMaxPageSize(2)), 2)
		for _, p := range []probe{
			{name: "no pageSize", fields: []string{"ID"}, sort: []string{"ID"}, status: 200, rows: 2,
				skip: skips("odata,batch", "OData pages by the server (at most the cap per response, then a next link): no default to compare")},
			{name: "pageSize of the cap", fields: []string{"ID"}, sort: []string{"ID"}, pageSize: "2", status: 200, rows: 2},
			{name: "pageSize above the cap", fields: []string{"ID"}, sort: []string{"ID"}, pageSize: "3", status: 400, code: "GENERAL_CONSTRAINT_VIOLATION",
				skip: skips("odata,batch", "OData's $top above the cap is served in pages of the cap with a next link (SPEC-NOTES: server-driven paging)")},
		} {
			p.record = "ORDERS"
			t.Run(p.name, func(t *testing.T) { checkProbe(t, s, p) })
		}
	})
}

// TestSummaryAgreesAcrossSurfaces asks the KM API's summary endpoint and MCP's
// summarize_record the same adversarial questions: the same statistics for accepted ones,
// the same status and code for refused ones, on every backend.
func TestSummaryAgreesAcrossSurfaces(t *testing.T) {
	cases := []struct {
		name   string
		query  url.Values
		args   map[string]any
		status int
		code   string
		// schema, when set, is the argument MCP's input schema refuses (the SDK answers
		// such a call with a tool error naming it, before the tool runs).
		schema string
	}{
		{"all fields", url.Values{}, map[string]any{}, 200, "", ""},
		{"some fields", url.Values{"fields": {"NET,STATUS"}}, map[string]any{"fields": []string{"NET", "STATUS"}}, 200, "", ""},
		{"excluded", url.Values{"excludeFields": {"NET"}}, map[string]any{"excludeFields": []string{"NET"}}, 200, "", ""},
		{"filtered", url.Values{"filterExpr": {"NET gt 100"}, "filters": {"PAID"}}, map[string]any{"filterExpr": []string{"NET gt 100"}, "filters": []string{"PAID"}}, 200, "", ""},
		{"no row passes", url.Values{"filterExpr": {"NET gt 1e9"}}, map[string]any{"filterExpr": []string{"NET gt 1e9"}}, 200, "", ""},
		{"sample of 1", url.Values{"sampleSize": {"1"}}, map[string]any{"sampleSize": 1}, 200, "", ""},
		{"unknown field", url.Values{"fields": {"NOPE"}}, map[string]any{"fields": []string{"NOPE"}}, 400, "KM_FIELD_NOTFOUND", ""},
		{"unknown excluded field", url.Values{"excludeFields": {"NOPE"}}, map[string]any{"excludeFields": []string{"NOPE"}}, 400, "KM_FIELD_NOTFOUND", ""},
		{"every field excluded", url.Values{"excludeFields": {"ID,CUST,DAY,CREATED,STATUS,NET,LATE,EXPRESS"}},
			map[string]any{"excludeFields": []string{"ID", "CUST", "DAY", "CREATED", "STATUS", "NET", "LATE", "EXPRESS"}}, 400, "GENERAL_PARAMETER_ILLEGAL", ""},
		{"unknown filter", url.Values{"filters": {"NOPE"}}, map[string]any{"filters": []string{"NOPE"}}, 400, "KM_FILTER_NOTFOUND", ""},
		{"NUL in a filter", url.Values{"filterExpr": {"STATUS eq 'a\x00b'"}}, map[string]any{"filterExpr": []string{"STATUS eq 'a\x00b'"}}, 400, "GENERAL_PARAMETER_ILLEGAL", ""},
		{"NUL in a field", url.Values{"fields": {"NET\x00"}}, map[string]any{"fields": []string{"NET\x00"}}, 400, "GENERAL_PARAMETER_ILLEGAL", ""},
		{"malformed filter", url.Values{"filterExpr": {"NET gt"}}, map[string]any{"filterExpr": []string{"NET gt"}}, 400, "FILTER_SYNTAX_ERROR", ""},
		// The input schema states the Service's MaxSampleSize as sampleSize's maximum.
		{"huge sample", url.Values{"sampleSize": {"1000000"}}, map[string]any{"sampleSize": 1000000}, 400, "GENERAL_CONSTRAINT_VIOLATION", "sampleSize"},
		{"negative sample", url.Values{"sampleSize": {"-1"}}, map[string]any{"sampleSize": -1}, 400, "GENERAL_CONSTRAINT_VIOLATION", "sampleSize"},
	}
	for _, b := range shopBackends() {
		t.Run(b.name, func(t *testing.T) {
			s := newSurfaces(t, km.NewService(b.open(t)), 50)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					w := httptest.NewRecorder()
					r := httptest.NewRequest(http.MethodGet, "/", nil)
					r.URL = &url.URL{Path: kmhttp.BasePath + "/knowledge-models/shop-base/records/ORDERS/summary", RawQuery: c.query.Encode()}
					s.kmAPI.ServeHTTP(w, r)
					api := refusal(w.Code, w.Body.Bytes())
					if api.status != c.status || api.code != c.code {
						t.Fatalf("KM API: %d %s, want %d %s", w.Code, w.Body, c.status, c.code)
					}
					c.args["km"], c.args["record"] = "shop-base", "ORDERS"
					res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ToolSummarize, Arguments: c.args})
					if err != nil {
						t.Fatal(err)
					}
					text := res.Content[0].(*sdk.TextContent).Text
					if c.schema != "" {
						if !res.IsError || !strings.HasPrefix(text, `validating "arguments"`) || !strings.Contains(text, "/"+c.schema+":") {
							t.Errorf("MCP: %s, want the input schema's refusal of %s", text, c.schema)
						}
						return
					}
					if res.IsError {
						var p struct {
							Status    int    `json:"status"`
							ErrorCode string `json:"errorCode"`
						}
						if err := json.Unmarshal([]byte(text), &p); err != nil || p.Status != c.status || p.ErrorCode != c.code {
							t.Errorf("MCP: %s, want %d %s", text, c.status, c.code)
						}
						return
					}
					if c.status != 200 {
						t.Fatalf("MCP: %.300s, want %d %s", text, c.status, c.code)
					}
					var fromAPI, fromMCP map[string]any
					if decode(w.Body.Bytes(), &fromAPI) != nil || decode([]byte(text), &fromMCP) != nil {
						t.Fatalf("bodies: %s\n%s", w.Body, text)
					}
					for _, k := range []string{"shape", "summary", "content"} {
						if fromAPI[k] == nil || !reflect.DeepEqual(fromAPI[k], fromMCP[k]) {
							t.Errorf("%s: MCP %.300v\nKM API %.300v", k, fromMCP[k], fromAPI[k])
						}
					}
				})
			}
		})
	}
}

// TestFindValuesAgreesWithQuery: find_field_values is the KM API's distinct fuzzy search
// of one field (fields=F&options=distinct&searchTerm=T&searchField=F); with adversarial
// terms and fields both give the same values in the same order, or the same refusal.
func TestFindValuesAgreesWithQuery(t *testing.T) {
	cases := []struct {
		name, record, field, term string
		precision, limit, page    int
		status                    int
		code                      string
	}{
		{"typo", "CUSTOMERS", "NAME", "materail", 0, 0, 0, 200, ""},
		{"umlaut", "CUSTOMERS", "NAME", "muller", 0, 0, 0, 200, ""},
		{"exact", "ORDERS", "STATUS", "AI", 100, 0, 0, 200, ""},
		{"second page", "ORDERS", "STATUS", "e", 100, 2, 1, 200, ""},
		{"page beyond", "ORDERS", "STATUS", "e", 100, 2, 50, 200, ""},
		{"quote in the term", "CUSTOMERS", "NAME", "d'art", 0, 0, 0, 200, ""},
		{"U+0001 in the term", "ORDERS", "STATUS", "pa\x01id", 0, 0, 0, 200, ""},
		{"long term", "ORDERS", "STATUS", strings.Repeat("paid", 500), 0, 0, 0, 200, ""},
		{"NUL in the term", "ORDERS", "STATUS", "pa\x00id", 0, 0, 0, 400, "GENERAL_PARAMETER_ILLEGAL"},
		{"number field", "ORDERS", "NET", "1", 0, 0, 0, 400, "GENERAL_PARAMETER_ILLEGAL"},
		{"unknown field", "ORDERS", "NOPE", "x", 0, 0, 0, 400, "KM_FIELD_NOTFOUND"},
		{"field in wrong case", "ORDERS", "status", "x", 0, 0, 0, 400, "KM_FIELD_NOTFOUND"},
		{"field of another record", "ORDERS", "NAME", "x", 0, 0, 0, 400, "KM_FIELD_NOTFOUND"},
		{"unknown record", "NOPE", "NAME", "x", 0, 0, 0, 404, "KM_RECORD_NOTFOUND"},
		{"NUL in the field", "ORDERS", "STATUS\x00", "x", 0, 0, 0, 400, "GENERAL_PARAMETER_ILLEGAL"},
	}
	for _, b := range shopBackends() {
		t.Run(b.name, func(t *testing.T) {
			s := newSurfaces(t, km.NewService(b.open(t)), 50)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					limit := mcp.DefaultFindLimit
					if c.limit > 0 {
						limit = c.limit
					}
					v := url.Values{"fields": {c.field}, "options": {"distinct"}, "searchTerm": {c.term}, "searchField": {c.field},
						"pageSize": {strconv.Itoa(limit)}, "page": {strconv.Itoa(c.page)}}
					if c.precision > 0 {
						v.Set("searchPrecision", strconv.Itoa(c.precision))
					}
					w := httptest.NewRecorder()
					r := httptest.NewRequest(http.MethodGet, "/", nil)
					r.URL = &url.URL{Path: kmhttp.BasePath + "/knowledge-models/shop-base/records/" + c.record + "/query", RawQuery: v.Encode()}
					s.kmAPI.ServeHTTP(w, r)
					want := refusal(w.Code, w.Body.Bytes())
					if want.status != c.status || want.code != c.code {
						t.Fatalf("KM API: %d %s, want %d %s", w.Code, w.Body, c.status, c.code)
					}
					var values []any
					if c.status == 200 {
						values = []any{}
						for _, row := range rowsOf(t, w.Body.Bytes(), "content") {
							values = append(values, row[c.field])
						}
					}
					args := map[string]any{"km": "shop-base", "record": c.record, "field": c.field, "term": c.term}
					for k, n := range map[string]int{"precision": c.precision, "limit": c.limit, "page": c.page} {
						if n > 0 {
							args[k] = n
						}
					}
					res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ToolFindValues, Arguments: args})
					if err != nil {
						t.Fatal(err)
					}
					text := []byte(res.Content[0].(*sdk.TextContent).Text)
					if res.IsError {
						if got := refusal(0, text); got.code != c.code || !strings.Contains(string(text), `"status":`+strconv.Itoa(c.status)) {
							t.Errorf("MCP: %s, want %d %s", text, c.status, c.code)
						}
						return
					}
					var out struct{ Values []any }
					if err := decode(text, &out); err != nil || c.status != 200 || !reflect.DeepEqual(out.Values, values) {
						t.Errorf("MCP: %s (%v)\nKM API: %d %v", text, err, c.status, values)
					}
					if c.status == 200 && len(values) == 0 && !strings.Contains(c.name, "beyond") && !strings.Contains(c.name, "U+0001") && !strings.Contains(c.name, "long") {
						t.Error("no values: a weak case")
					}
				})
			}
		})
	}
}

// TestBatchPartsAnswerAsAlone sends every probe OData can word as the parts of one $batch:
// each part answers what the same request answers alone (the refusal of one part, a
// filter beyond the limits or a NUL, leaves the others whole).
func TestBatchPartsAnswerAsAlone(t *testing.T) {
	for _, b := range shopBackends() {
		t.Run(b.name, func(t *testing.T) {
			s := newSurfaces(t, km.NewService(b.open(t)), 5000)
			var probes []probe
			var parts []any
			for _, p := range adversarialProbes() {
				if p.skip["odata"] == "" && p.skip["batch"] == "" {
					probes = append(probes, p)
					parts = append(parts, map[string]string{"id": strconv.Itoa(len(parts)), "method": "GET", "url": p.odataURL()})
				}
			}
			body, _ := json.Marshal(map[string]any{"requests": parts})
			r := httptest.NewRequest(http.MethodPost, odata.BasePath+"/shop-base.svc/$batch", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			s.od.ServeHTTP(w, r)
			var got struct {
				Responses []struct {
					ID     string
					Status int
					Body   json.RawMessage
				}
			}
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != 200 || len(got.Responses) != len(probes) {
				t.Fatalf("%d parts: %d, %d responses (%v)", len(probes), w.Code, len(got.Responses), err)
			}
			for i, rs := range got.Responses {
				p := probes[i]
				if rs.ID != strconv.Itoa(i) {
					t.Fatalf("response %d has id %s", i, rs.ID)
				}
				alone := s.probeOData(t, p)
				if part := odataRows(t, rs.Status, rs.Body); part.status != alone.status || part.code != alone.code || !reflect.DeepEqual(part.rows, alone.rows) {
					t.Errorf("%s: in the batch %.300v\nalone %.300v", p.name, part, alone)
				}
			}
		})
	}
}

// TestHeavyQuestionRefusedAlike: with a small cost budget, memory bound or time limit set
// once on the Service, the same heavy question is refused with the same status, code and
// detail on the KM API (GET and POST), OData, every part of a $batch and MCP; the parts of
// a $batch share one time budget, so four parts that would each run until the limit end
// within about one limit. (The time limit's advice names what each surface can narrow:
// only its status, code and first sentence are shared.)
func TestHeavyQuestionRefusedAlike(t *testing.T) {
	p := probe{name: "heavy", record: "ORDERS", fields: []string{"ID", "NET"}, filterExpr: []string{"NET gt 1"}, sort: []string{"-NET"}}
	base := shopBackends()[0].open(t)
	const limit = 100 * time.Millisecond
	for _, c := range []struct {
		name   string
		svc    *km.Service
		status int
		code   string
		detail string
	}{
		{"budget", km.NewService(base, km.WithMaxQueryCost(23)), 400, "GENERAL_CONSTRAINT_VIOLATION",
			"the query is estimated at 24 row operations, beyond the budget of 23: the listing is too large: 8 rows by 2 fields; select fewer fields, or filter the rows first"},
		{"memory", km.NewService(base, km.WithMaxQueryMemory(100)), 400, "GENERAL_CONSTRAINT_VIOLATION",
			"the query would hold about 5 KB in memory, beyond the limit of 100 bytes: 8 rows; filter the rows first, or drop distinct or the sort"},
		{"time limit", km.NewService(slowStore{base}, km.WithQueryTimeout(limit)), 503, "GENERAL_SERVICE_UNAVAILABLE",
			"the query ran longer than the time limit of 100ms and was stopped; narrow it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSurfaces(t, c.svc, 50)
			got := map[string]answer{"km": s.probeGET(t, p), "data": s.probeData(t, p), "post": s.probePOST(t, p), "odata": s.probeOData(t, p), "mcp": s.probeMCP(t, p)}
			parts := []any{}
			for i := range 4 {
				parts = append(parts, map[string]string{"id": strconv.Itoa(i), "method": "GET", "url": p.odataURL()})
			}
			body, _ := json.Marshal(map[string]any{"requests": parts})
			r := httptest.NewRequest(http.MethodPost, odata.BasePath+"/shop-base.svc/$batch", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			start := time.Now()
			s.od.ServeHTTP(w, r)
			if took := time.Since(start); took > 3*limit {
				t.Errorf("the batch of 4 parts took %v: more than one time budget of %v", took, limit)
			}
			var b struct {
				Responses []struct {
					Status int
					Body   json.RawMessage
				}
			}
			if err := json.Unmarshal(w.Body.Bytes(), &b); err != nil || len(b.Responses) != 4 {
				t.Fatalf("batch: %v %s", err, w.Body)
			}
			for i, rs := range b.Responses {
				got["batch part "+strconv.Itoa(i)] = refusal(rs.Status, rs.Body)
			}
			for surface, a := range got {
				if a.status != c.status || a.code != c.code || !strings.HasPrefix(a.detail, c.detail) {
					t.Errorf("%s: %d %s %q, want %d %s %q", surface, a.status, a.code, a.detail, c.status, c.code, c.detail)
				}
			}
		})
	}
}

// FuzzSurfacesAgree asks generated record-level questions (a record, fields, a filter, a
// sort, a page and page size, a search term) through the KM API's GET /query, its POST /data, MCP and, for
// the filter, OData, on the memory backend. GET and MCP must answer alike (the same rows,
// or the same status and code); POST too where JSON can carry the question; and what
// the KM API's filterExpr accepts, OData's $filter (a superset: the forms OData clients
// send) answers with the same rows. No surface may answer 500. The seeds are the probes of
// TestSurfacesAgreeOnUnseenInputs.
func FuzzSurfacesAgree(f *testing.F) {
	for _, p := range adversarialProbes() {
		if p.record == "" {
			continue
		}
		size, err := strconv.ParseInt(p.pageSize, 10, 64)
		if err != nil {
			size = 50
		}
		page, err := strconv.ParseInt(p.page, 10, 64)
		if err != nil {
			page = 0
		}
		f.Add(p.record, strings.Join(p.fields, ","), strings.Join(p.filterExpr, ","), strings.Join(p.sort, ","), page, size, p.term)
	}
	s := newSurfaces(f, km.NewService(shopBackends()[0].open(f)), 5000)
	f.Fuzz(func(t *testing.T, record, fields, filter, sort string, page, pageSize int64, term string) {
		if record == "" || strings.ContainsAny(record, "/?#%") {
			// A record is a path segment of the KM API: "" or a slash names another route.
			return
		}
		p := probe{record: record, page: strconv.FormatInt(page, 10), pageSize: strconv.FormatInt(pageSize, 10), term: term}
		if fields != "" {
			p.fields = []string{fields}
		}
		if filter != "" {
			p.filterExpr = []string{filter}
		}
		if sort != "" {
			p.sort = []string{sort}
		}
		want := s.probeGET(t, p)
		if want.status >= 500 {
			t.Fatalf("KM API: %v", want)
		}
		same := func(name string, got answer) {
			t.Helper()
			if got.status != want.status || got.code != want.code || !reflect.DeepEqual(got.rows, want.rows) {
				t.Errorf("%s: %.300v\nKM API: %.300v", name, got, want)
			}
		}
		if utf8.ValidString(record + fields + filter + sort + term) {
			// JSON carries only UTF-8 (encoding/json would send another question).
			same("mcp", s.probeMCP(t, p))
			// The POST body's sort and fields are 1 (sort 2) to 2048 characters, and its
			// fields are required at record level (the seed).
			if len(sort) != 1 && len(sort) <= 2048 && len(fields) <= 2048 && strings.Trim(fields, ", \t") != "" {
				same("post", s.probePOST(t, p))
			}
		}
		if filter == "" || len(kmparams.SplitTopLevel(filter)) != 1 {
			return
		}
		if record != "ORDERS" {
			return
		}
		q := probe{record: "ORDERS", fields: []string{"ID"}, filterExpr: []string{filter}, sort: []string{"ID"}}
		if api := s.probeGET(t, q); api.status == 200 {
			if od := s.probeOData(t, q); od.status != 200 || !reflect.DeepEqual(od.rows, api.rows) {
				t.Errorf("OData: %.300v\nKM API: %.300v", od, api)
			}
		} else if od := s.probeOData(t, q); od.status >= 500 && od.status != 501 {
			t.Errorf("OData: %v", od)
		}
	})
}

// TestLimitsHoldOnEveryTool: summarize_record and find_field_values meet the limits of the
// Service as the KM API's summary and query endpoints do: the same status, code and detail
// under a small budget, memory bound and time limit.
func TestLimitsHoldOnEveryTool(t *testing.T) {
	base := shopBackends()[0].open(t)
	for _, c := range []struct {
		name string
		svc  *km.Service
	}{
		{"budget", km.NewService(base, km.WithMaxQueryCost(5))},
		{"memory", km.NewService(base, km.WithMaxQueryMemory(10))},
		{"time limit", km.NewService(slowStore{base}, km.WithQueryTimeout(50*time.Millisecond))},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSurfaces(t, c.svc, 50)
			for _, tc := range []struct {
				tool, path string
				args       map[string]any
			}{
				{mcp.ToolSummarize, "/records/ORDERS/summary?filterExpr=NET%20gt%201",
					map[string]any{"km": "shop-base", "record": "ORDERS", "filterExpr": []string{"NET gt 1"}}},
				{mcp.ToolFindValues, "/records/ORDERS/query?fields=STATUS&options=distinct&searchTerm=paid&searchField=STATUS&pageSize=10",
					map[string]any{"km": "shop-base", "record": "ORDERS", "field": "STATUS", "term": "paid"}},
			} {
				w := httptest.NewRecorder()
				s.kmAPI.ServeHTTP(w, httptest.NewRequest(http.MethodGet, kmhttp.BasePath+"/knowledge-models/shop-base"+tc.path, nil))
				want := refusal(w.Code, w.Body.Bytes())
				if want.status != 400 && want.status != 503 {
					t.Fatalf("KM API %s: %d %s, want a refusal", tc.path, w.Code, w.Body)
				}
				res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
				if err != nil {
					t.Fatal(err)
				}
				text := []byte(res.Content[0].(*sdk.TextContent).Text)
				got := refusal(0, text)
				// The time limit's advice names what each surface can narrow.
				detail, _, _ := strings.Cut(want.detail, "; narrow it")
				if !res.IsError || !strings.Contains(string(text), `"status":`+strconv.Itoa(want.status)+",") || got.code != want.code || !strings.HasPrefix(got.detail, detail) {
					t.Errorf("%s: %s\nKM API: %d %s %q", tc.tool, text, want.status, want.code, want.detail)
				}
			}
		})
	}
}
