package kmkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/mcp"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/storage/storetest"
)

// extremeTypes are the KPIs of storetest's extremes KM with the header type of each, and
// the EDM type $metadata gives the custom aggregate.
var extremeTypes = []struct{ kpi, header, edm string }{
	{"FIRST_DAY", "date", "Edm.Date"},
	{"LAST_CREATED", "datetime", "Edm.DateTimeOffset"},
	{"LAST_SEEN", "timestamp", "Edm.DateTimeOffset"},
	{"EARLY_SLOT", "time", "Edm.TimeOfDay"},
	{"GREATEST_WORD", "string", "Edm.String"},
	{"ALL_EXPRESS", "boolean", "Edm.Boolean"},
	{"LAST_OPEN_DAY", "date", "Edm.Date"},
	{"FIRST_JOINED", "date", "Edm.Date"},
	{"LAST_NAME", "string", "Edm.String"},
}

// TestExtremesOnEverySurface asks for the min and max KPIs of storetest's extremes KM
// (dates, date-times, timestamps, times, strings, booleans; years 0001 and 9999, a null
// group and an empty one) through the KM API's /data and /query, OData's $apply with the
// KPIs as custom aggregates, and MCP's query tool, on memory, SQLite and PostgreSQL:
// every surface answers the reference evaluator's values, types its headers, MCP's
// description and $metadata with the field's type, and sorts by such a KPI as the reference does.
func TestExtremesOnEverySurface(t *testing.T) {
	data := storetest.ExtremesData()
	ref, err := storetest.LoadReference(data, "extremes")
	if err != nil {
		t.Fatal(err)
	}
	var kpis []string
	for _, e := range extremeTypes {
		kpis = append(kpis, e.kpi)
	}
	questions := []storetest.RefRequest{
		{Fields: []string{"CU.CU_ID"}, KPIs: kpis},
		{Fields: []string{"OR.STATUS"}, KPIs: kpis},
		{KPIs: kpis},
		{Fields: []string{"CU.CU_ID"}, KPIs: kpis, Sort: "-FIRST_DAY"},
		{Fields: []string{"CU.CU_ID"}, KPIs: kpis, Sort: "+GREATEST_WORD"},
		{Fields: []string{"CU.CU_ID"}, KPIs: kpis, Sort: "-ALL_EXPRESS,+CU.CU_ID"},
	}
	for _, b := range backendsOf(data) {
		t.Run(b.name, func(t *testing.T) {
			s := newSurfaces(t, km.NewService(b.open(t)), 50)
			for _, q := range questions {
				want, err := ref.Eval(q)
				if err != nil {
					t.Fatal(err)
				}
				rows := refObjects(want)
				v := url.Values{"kpis": {strings.Join(q.KPIs, ",")}}
				if len(q.Fields) > 0 {
					v.Set("fields", strings.Join(q.Fields, ","))
				}
				if q.Sort != "" {
					v.Set("sort", q.Sort)
				}
				var page struct {
					Content struct {
						Headers []struct{ ID, Type string }
						Data    []map[string]any
					}
				}
				getJSON(t, s.kmAPI, kmhttp.BasePath+"/knowledge-models/extremes/data?"+v.Encode(), &page)
				for _, e := range extremeTypes {
					for _, h := range page.Content.Headers {
						if h.ID == e.kpi && h.Type != e.header {
							t.Errorf("/data header %s: type %s, want %s", e.kpi, h.Type, e.header)
						}
					}
				}
				if d := cmp.Diff(rows, page.Content.Data); d != "" {
					t.Errorf("/data?%s (-reference +KM API):\n%s", v.Encode(), d)
				}
				var objects struct{ Content []map[string]any }
				getJSON(t, s.kmAPI, kmhttp.BasePath+"/knowledge-models/extremes/query?"+v.Encode(), &objects)
				if d := cmp.Diff(rows, objects.Content); d != "" {
					t.Errorf("/query?%s (-reference +KM API):\n%s", v.Encode(), d)
				}
				args := map[string]any{"km": "extremes", "kpis": q.KPIs}
				if len(q.Fields) > 0 {
					args["fields"] = q.Fields
				}
				if q.Sort != "" {
					args["sort"] = strings.Split(q.Sort, ",")
				}
				res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ToolQuery, Arguments: args})
				if err != nil || res.IsError {
					t.Fatalf("MCP %v: %v %+v", args, err, res)
				}
				raw, _ := json.Marshal(res.StructuredContent)
				var out struct{ Rows []map[string]any }
				if err := json.Unmarshal(raw, &out); err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(rows, out.Rows); d != "" {
					t.Errorf("MCP %v (-reference +MCP):\n%s", args, d)
				}
				if q.Sort == "" {
					// The same KPIs through $apply on the orders, grouped alike.
					apply := "aggregate(" + strings.Join(q.KPIs, ",") + ")"
					var groupby []string
					for _, f := range q.Fields {
						rec, field, _ := strings.Cut(f, ".")
						if rec != "OR" {
							field = rec + "/" + field
						}
						groupby = append(groupby, field)
					}
					if len(groupby) > 0 {
						apply = "groupby((" + strings.Join(groupby, ",") + ")," + apply + ")"
					}
					got := applyRows(t, s.od, odata.BasePath+"/extremes.svc/OR_entries?$apply="+strings.ReplaceAll(url.QueryEscape(apply), "+", "%20"), groupby, q.Fields)
					if d := cmp.Diff(rows, got); d != "" {
						t.Errorf("$apply=%s (-reference +OData):\n%s", apply, d)
					}
				}
			}
			res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ToolDescribeModel, Arguments: map[string]any{"km": "extremes"}})
			if err != nil || res.IsError {
				t.Fatalf("MCP describe: %v %+v", err, res)
			}
			raw, _ := json.Marshal(res.StructuredContent)
			var desc mcp.ModelDescription
			if err := json.Unmarshal(raw, &desc); err != nil {
				t.Fatal(err)
			}
			described := map[string]string{}
			for _, k := range desc.KPIs {
				described[k.ID] = k.Type
			}
			for _, e := range extremeTypes {
				if described[e.kpi] != e.header {
					t.Errorf("MCP describe: KPI %s has type %q, want %s", e.kpi, described[e.kpi], e.header)
				}
			}
			var md map[string]any
			getJSON(t, s.od, odata.BasePath+"/extremes.svc/$metadata?$format=json", &md)
			set := md["ODataKnowledgeModel"].(map[string]any)["Container"].(map[string]any)["OR_entries"].(map[string]any)
			for _, e := range extremeTypes {
				if got := set["@Aggregation.CustomAggregate#"+e.kpi]; got != e.edm {
					t.Errorf("$metadata: custom aggregate %s is %v, want %s", e.kpi, got, e.edm)
				}
			}
		})
	}
}

// refObjects turns the reference's rows into the objects the surfaces answer (integers
// as JSON numbers decode, float64).
func refObjects(res *storetest.RefResult) []map[string]any {
	out := []map[string]any{}
	for _, row := range res.Rows {
		o := map[string]any{}
		for i, c := range res.Columns {
			v := row[i]
			if n, ok := v.(int64); ok {
				v = float64(n)
			}
			o[c] = v
		}
		out = append(out, o)
	}
	return out
}

// getJSON serves GET target and decodes its 200 answer into out.
func getJSON(t *testing.T, h http.Handler, target string, out any) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), out); err != nil {
		t.Fatal(fmt.Errorf("GET %s: %w", target, err))
	}
}
