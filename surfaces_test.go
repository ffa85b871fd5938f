package kmkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kmkit/kmkit/internal/pgschema"

	_ "github.com/jackc/pgx/v5/stdlib"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/mcp"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/memory"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

// The same questions through every surface (issue 27): the KM API, OData, an OData
// $batch part and MCP, over one km.Service, give the same rows, the same refusals (status
// and code) and the same limits, on every backend.

// shopBackend is a backend with the shop test KMs (km/testdata/shop) imported.
type shopBackend struct {
	name string
	open func(t testing.TB) km.Store
}

// shopBackends are memory, SQLite and, with KMKIT_POSTGRES_DSN, PostgreSQL.
func shopBackends() []shopBackend { return backendsOf(os.DirFS("km/testdata/shop")) }

// backendsOf are memory, SQLite and, with KMKIT_POSTGRES_DSN, PostgreSQL, each with data
// imported.
func backendsOf(data fs.FS) []shopBackend {
	bs := []shopBackend{
		{"memory", func(t testing.TB) km.Store {
			s := memory.New().KM()
			if err := s.Import(context.Background(), data); err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"sqlite", func(t testing.TB) km.Store {
			return openSQL(t, "sqlite:"+filepath.Join(t.TempDir(), "kmkit.db"), data)
		}},
	}
	if os.Getenv("KMKIT_POSTGRES_DSN") != "" {
		bs = append(bs, shopBackend{"postgres", func(t testing.TB) km.Store { return openSQL(t, postgresSchema(t), data) }})
	}
	return bs
}

// openSQL opens dsn with sqlstore and imports data into its KM store.
func openSQL(t testing.TB, dsn string, data fs.FS) km.Store {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := db.KM()
	if err := s.Import(context.Background(), data); err != nil {
		t.Fatal(err)
	}
	return s
}

// postgresSchema creates a fresh schema on KMKIT_POSTGRES_DSN's server, dropped when the
// test ends, and returns the URL that uses it.
func postgresSchema(t testing.TB) string {
	t.Helper()
	return pgschema.ForTest(t, os.Getenv("KMKIT_POSTGRES_DSN"), "kmkit_surfaces")
}

// surfaces serves one Service through the KM API, OData and MCP: through the SDK's
// session (cs) and over Streamable HTTP (mcpHTTP), where the handler writes query calls
// itself.
type surfaces struct {
	kmAPI, od, mcpHTTP http.Handler
	cs                 *sdk.ClientSession
}

func newSurfaces(t testing.TB, svc *km.Service, maxRows int) *surfaces {
	t.Helper()
	tools := mcp.NewHandler(nil, mcp.WithService(svc), mcp.WithMaxRows(maxRows))
	srv := tools.MCPServer(nil)
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &surfaces{kmAPI: kmhttp.NewHandler(nil, kmhttp.WithService(svc)), od: odata.NewHandler(nil, odata.WithService(svc)), mcpHTTP: tools, cs: cs}
}

// question is one question to a record of shop-base, as each surface words it.
type question struct {
	fields []string
	filter string // a filter expression, "" for none
	sort   string // one field, "-" for descending, "" for none
	rows   int    // the page size asked for
}

// answer is what a surface answered: the rows (each a map of the selected fields) or
// the refusal's status and code.
type answer struct {
	status int
	code   string
	detail string // the refusal's detail (problem) or message (OData error)
	rows   []map[string]any
}

func (a answer) String() string {
	if a.status != 200 {
		return fmt.Sprintf("%d %s", a.status, a.code)
	}
	b, _ := json.Marshal(a.rows)
	return string(b)
}

// decode decodes JSON keeping numbers as written.
func decode(b []byte, out any) error {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	return dec.Decode(out)
}

// refusal reads the status and code of a problem body or an OData error.
func refusal(status int, body []byte) answer {
	var p struct {
		ErrorCode string `json:"errorCode"`
		Detail    string `json:"detail"`
		Error     struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &p)
	code, detail := p.ErrorCode, p.Detail
	if code == "" {
		code, detail = p.Error.Code, p.Error.Message
	}
	return answer{status: status, code: code, detail: detail}
}

// pick keeps the fields of q of each row.
func pick(q question, rows []map[string]any) []map[string]any {
	out := []map[string]any{}
	for _, r := range rows {
		m := map[string]any{}
		for _, f := range q.fields {
			m[f] = r[f]
		}
		out = append(out, m)
	}
	return out
}

func (s *surfaces) viaKMAPI(t *testing.T, q question) answer {
	v := url.Values{"fields": {strings.Join(q.fields, ",")}, "pageSize": {strconv.Itoa(q.rows)}}
	if q.filter != "" {
		v.Set("filterExpr", q.filter)
	}
	if q.sort != "" {
		v.Set("sort", q.sort)
	}
	w := httptest.NewRecorder()
	s.kmAPI.ServeHTTP(w, httptest.NewRequest(http.MethodGet, kmhttp.BasePath+"/knowledge-models/shop-base/records/ORDERS/query?"+v.Encode(), nil))
	if w.Code != 200 {
		return refusal(w.Code, w.Body.Bytes())
	}
	var page struct{ Content []map[string]any }
	if err := decode(w.Body.Bytes(), &page); err != nil {
		t.Fatal(err)
	}
	return answer{status: 200, rows: pick(q, page.Content)}
}

// odataTarget is q as an OData entity-set URL relative to the service root.
func odataTarget(q question) string {
	v := url.Values{"$select": {strings.Join(q.fields, ",")}, "$top": {strconv.Itoa(q.rows)}}
	if q.filter != "" {
		v.Set("$filter", q.filter)
	}
	if q.sort != "" {
		key, dir := strings.CutPrefix(q.sort, "-")
		v.Set("$orderby", key+map[bool]string{true: " desc", false: " asc"}[dir])
	}
	return "ORDERS_entries?" + strings.ReplaceAll(v.Encode(), "+", "%20")
}

func (s *surfaces) viaOData(t *testing.T, q question) answer {
	w := httptest.NewRecorder()
	s.od.ServeHTTP(w, httptest.NewRequest(http.MethodGet, odata.BasePath+"/shop-base.svc/"+odataTarget(q), nil))
	return odataAnswer(t, q, w.Code, w.Body.Bytes())
}

func odataAnswer(t *testing.T, q question, status int, body []byte) answer {
	if status != 200 {
		return refusal(status, body)
	}
	var c struct{ Value []map[string]any }
	if err := decode(body, &c); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return answer{status: 200, rows: pick(q, c.Value)}
}

func (s *surfaces) viaBatch(t *testing.T, q question) answer {
	body := `{"requests":[{"id":"1","method":"GET","url":` + strconv.Quote(odataTarget(q)) + `}]}`
	r := httptest.NewRequest(http.MethodPost, odata.BasePath+"/shop-base.svc/$batch", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	s.od.ServeHTTP(w, r)
	if w.Code != 200 {
		return refusal(w.Code, w.Body.Bytes())
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
	return odataAnswer(t, q, b.Responses[0].Status, b.Responses[0].Body)
}

func (s *surfaces) viaMCP(t *testing.T, q question) answer {
	args := map[string]any{"km": "shop-base", "record": "ORDERS", "fields": q.fields, "pageSize": q.rows}
	if q.filter != "" {
		args["filterExpr"] = []string{q.filter}
	}
	if q.sort != "" {
		args["sort"] = []string{q.sort}
	}
	res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ToolQuery, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		var p struct {
			Status    int    `json:"status"`
			ErrorCode string `json:"errorCode"`
		}
		if err := json.Unmarshal([]byte(text), &p); err != nil {
			t.Fatalf("the tool error is no problem body: %s", text)
		}
		return answer{status: p.Status, code: p.ErrorCode}
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out struct{ Rows []map[string]any }
	if err := decode(b, &out); err != nil {
		t.Fatal(err)
	}
	return answer{status: 200, rows: pick(q, out.Rows)}
}

// ask asks q through every surface.
func (s *surfaces) ask(t *testing.T, q question) map[string]answer {
	return map[string]answer{"km": s.viaKMAPI(t, q), "odata": s.viaOData(t, q), "batch": s.viaBatch(t, q), "mcp": s.viaMCP(t, q)}
}

// TestSurfacesAnswerAlike sends the same questions through the KM API, OData, $batch and
// MCP over one Service and asserts the same rows and the same refusals, on memory,
// SQLite and PostgreSQL.
func TestSurfacesAnswerAlike(t *testing.T) {
	cases := []struct {
		name   string
		q      question
		status int    // 200, or the refusal's status
		code   string // the refusal's code
		rows   int    // rows of a 200 answer
	}{
		{"rows", question{fields: []string{"ID", "STATUS", "NET"}, filter: "NET gt 50", sort: "-NET", rows: 3}, 200, "", 3},
		{"string filter", question{fields: []string{"ID", "STATUS"}, filter: "STATUS eq 'PAID'", sort: "ID", rows: 10}, 200, "", -1},
		{"NUL in a filter", question{fields: []string{"ID"}, filter: "STATUS eq 'a\u0000b'", rows: 5}, 400, "GENERAL_PARAMETER_ILLEGAL", 0},
		{"unknown field", question{fields: []string{"ID", "NOPE"}, rows: 5}, 400, query.CodeFieldNotFound, 0},
		{"type mismatch", question{fields: []string{"ID"}, filter: "NET gt 'x'", rows: 5}, 400, "FILTER_TYPE_MISMATCH", 0},
	}
	for _, b := range shopBackends() {
		t.Run(b.name, func(t *testing.T) {
			s := newSurfaces(t, km.NewService(b.open(t)), 50)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					got := s.ask(t, c.q)
					want := got["km"]
					if want.status != c.status || want.code != c.code || c.status == 200 && c.rows >= 0 && len(want.rows) != c.rows {
						t.Fatalf("KM API: %v, want %d %s with %d rows", want, c.status, c.code, c.rows)
					}
					if c.status == 200 && len(want.rows) == 0 {
						t.Fatal("no rows: a weak case")
					}
					for surface, a := range got {
						if a.status != want.status || a.code != want.code || !reflect.DeepEqual(a.rows, want.rows) {
							t.Errorf("%s: %v\nKM API: %v", surface, a, want)
						}
					}
				})
			}
		})
	}
}

// slowStore blocks every query until its context ends.
type slowStore struct{ km.Store }

func (s slowStore) Query(ctx context.Context, _ *km.Plan) (*query.Result, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestSurfacesShareLimits: the limits of the one Service hold on every surface alike:
// the cost budget and the memory bound refuse with 400 GENERAL_CONSTRAINT_VIOLATION, the
// time limit answers 503 GENERAL_SERVICE_UNAVAILABLE, and no surface answers more rows
// than the page cap (the KM API refuses a larger page, MCP's schema does, OData pages).
func TestSurfacesShareLimits(t *testing.T) {
	q := question{fields: []string{"ID", "STATUS", "NET"}, sort: "-NET", rows: 3}
	base := shopBackends()[0].open(t)
	for _, c := range []struct {
		name   string
		svc    *km.Service
		status int
		code   string
	}{
		{"budget", km.NewService(base, km.WithMaxQueryCost(1)), 400, "GENERAL_CONSTRAINT_VIOLATION"},
		{"memory", km.NewService(base, km.WithMaxQueryMemory(1)), 400, "GENERAL_CONSTRAINT_VIOLATION"},
		{"time limit", km.NewService(slowStore{base}, km.WithQueryTimeout(50*time.Millisecond)), 503, "GENERAL_SERVICE_UNAVAILABLE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for surface, a := range newSurfaces(t, c.svc, 50).ask(t, q) {
				if a.status != c.status || a.code != c.code {
					t.Errorf("%s: %v, want %d %s", surface, a, c.status, c.code)
				}
			}
		})
	}
	t.Run("page cap", func(t *testing.T) {
		s := newSurfaces(t, km.NewService(base, km.WithMaxPageSize(2)), 2)
		for surface, a := range s.ask(t, q) {
			if a.status == 200 && len(a.rows) > 2 {
				t.Errorf("%s: %d rows above the cap of 2", surface, len(a.rows))
			}
			if surface != "odata" && surface != "batch" && a.status != 400 {
				t.Errorf("%s: %v, want a refusal of a page above the cap", surface, a)
			}
		}
	})
}

// TestIssue27OnEveryBackend: the bullets of issue 27 that touch the data path, with the
// issue's requests, on memory, SQLite and PostgreSQL: MCP's filterExpr with U+0000 (a
// 500 on PostgreSQL) and summarize_record's are the KM API's 400
// GENERAL_PARAMETER_ILLEGAL, and the KM API's own answer is that too.
func TestIssue27OnEveryBackend(t *testing.T) {
	for _, b := range shopBackends() {
		t.Run(b.name, func(t *testing.T) {
			s := newSurfaces(t, km.NewService(b.open(t)), 50)
			for _, tool := range []string{mcp.ToolQuery, mcp.ToolSummarize} {
				res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool,
					Arguments: map[string]any{"km": "shop-base", "record": "ORDERS", "filterExpr": []string{"STATUS eq 'a\u0000b'"}}})
				if err != nil {
					t.Fatal(err)
				}
				text := res.Content[0].(*sdk.TextContent).Text
				if !res.IsError || !strings.Contains(text, `"status":400,"errorCode":"GENERAL_PARAMETER_ILLEGAL"`) {
					t.Errorf("%s: %s", tool, text)
				}
			}
			for _, path := range []string{"/records/ORDERS/query", "/records/ORDERS/summary"} {
				w := httptest.NewRecorder()
				s.kmAPI.ServeHTTP(w, httptest.NewRequest(http.MethodGet, kmhttp.BasePath+"/knowledge-models/shop-base"+path+"?filterExpr=STATUS%20eq%20'a%00b'", nil))
				if a := refusal(w.Code, w.Body.Bytes()); a.status != 400 || a.code != "GENERAL_PARAMETER_ILLEGAL" {
					t.Errorf("KM API %s: %v", path, a)
				}
			}
		})
	}
}

// TestFindFieldValuesPagesOnEveryBackend pages through the values of ORDERS.STATUS that
// contain "e" (case-insensitive, precision 100): in km/testdata/shop/data/orders.csv those
// are OPEN, DELIVERED and CANCELLED (PAID has none). Every find_field_values answer says
// how many match, whether more follow and which call returns them; following next returns
// each value once.
func TestFindFieldValuesPagesOnEveryBackend(t *testing.T) {
	for _, b := range shopBackends() {
		t.Run(b.name, func(t *testing.T) {
			s := newSurfaces(t, km.NewService(b.open(t)), 50)
			find := func(args map[string]any) (mcp.FindResult, map[string]any, string) {
				t.Helper()
				args["km"], args["record"], args["field"] = "shop-base", "ORDERS", "STATUS"
				res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ToolFindValues, Arguments: args})
				if err != nil {
					t.Fatal(err)
				}
				text := res.Content[0].(*sdk.TextContent).Text
				if res.IsError {
					return mcp.FindResult{}, nil, text
				}
				raw, _ := json.Marshal(res.StructuredContent)
				var out mcp.FindResult
				var generic map[string]any
				if json.Unmarshal(raw, &out) != nil || json.Unmarshal(raw, &generic) != nil {
					t.Fatalf("%v: %s", args, raw)
				}
				return out, generic, ""
			}
			seen := map[any]int{}
			for _, c := range []struct {
				page, limit, values int
				next                *mcp.FindNext
			}{
				{0, 2, 2, &mcp.FindNext{Page: 1, Limit: 2}},
				{1, 2, 1, nil},
				{2, 2, 0, nil},
				{0, 3, 3, nil},
				{0, 1, 1, &mcp.FindNext{Page: 1, Limit: 1}},
				{1, 1, 1, &mcp.FindNext{Page: 2, Limit: 1}},
			} {
				out, _, refused := find(map[string]any{"term": "e", "precision": 100, "limit": c.limit, "page": c.page})
				if refused != "" || len(out.Values) != c.values || out.Total != 3 || out.More != (c.next != nil) || !reflect.DeepEqual(out.Next, c.next) {
					t.Errorf("page %d, limit %d: %+v (next %+v) %s, want %d values of 3, next %+v", c.page, c.limit, out, out.Next, refused, c.values, c.next)
				}
				if c.limit == 2 {
					for _, v := range out.Values {
						seen[v]++
					}
				}
			}
			if want := map[any]int{"OPEN": 1, "DELIVERED": 1, "CANCELLED": 1}; !reflect.DeepEqual(seen, want) {
				t.Errorf("pages of 2: %v, want each of %v once", seen, want)
			}
			// No value matches: an empty answer that says so.
			if _, none, _ := find(map[string]any{"term": "zzz", "precision": 100}); !reflect.DeepEqual(none, map[string]any{"values": []any{}, "total": 0.0, "more": false}) {
				t.Errorf("no match: %v", none)
			}
			// A negative page is refused by the input schema.
			if _, _, refused := find(map[string]any{"term": "e", "page": -1}); !strings.Contains(refused, "page") {
				t.Errorf("page -1: %q, want a tool error about page", refused)
			}
		})
	}
}
