package kmkit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/mcp"
	"github.com/kmkit/kmkit/odata"
)

// zerosData is a KM whose float field holds zeros of both signs (the CSV's -0.0 and 0),
// and KPIs that pick one of them (min) or compute -0 (a zero sum times -1).
var zerosData = fstest.MapFS{
	"models/z.yaml": {Data: []byte(`id: z
name: Zeros
records:
  - id: Z
    name: Z
    source: z
    fields:
      - {id: G, name: G, type: string}
      - {id: X, name: X, type: float}
kpis:
  - {id: LOW, name: Least X, expr: min(Z.X)}
  - {id: NEG, name: Sum of X negated, expr: sum(Z.X) * -1}
`)},
	"data/z.csv": {Data: []byte("G,X\na,-0.0\nb,0\nc,-0\nd,0.0\n")},
}

// negativeZero finds -0 written as a number: in JSON (`:-0,`) or in Atom (`>-0<`).
var negativeZero = regexp.MustCompile(`-0+(\.0*)?([^.0-9eE]|$)`)

// atomUpdated matches the time an Atom feed or entry says it was written.
var atomUpdated = regexp.MustCompile(`<updated>[^<]*</updated>`)

// TestZeroShownAlike asks every surface (the KM API's data, KPIs and summary, OData JSON,
// Atom and $apply, MCP through the SDK and over Streamable HTTP) for zeros of both signs
// on every backend: each answer is the same text on every backend, and no zero is written
// -0. -0 equals 0 in every comparison, grouping and distinct, but SQLite stores -0.0 as 0
// while memory and PostgreSQL keep it, and among equal zeros a min or a percentile keeps
// whichever its backend meets first; pandas' to_json writes 0 for it. Before, memory
// answered "X":-0 where SQLite answered "X":0, and a zero KPI times -1 was -0 everywhere.
func TestZeroShownAlike(t *testing.T) {
	get := []string{
		kmhttp.BasePath + "/knowledge-models/z/records/Z/data?fields=G,X",
		kmhttp.BasePath + "/knowledge-models/z/records/Z/data?fields=X&options=distinct",
		kmhttp.BasePath + "/knowledge-models/z/data?kpis=LOW,NEG",
		kmhttp.BasePath + "/knowledge-models/z/data?fields=Z.X&kpis=LOW,NEG",
		kmhttp.BasePath + "/knowledge-models/z/records/Z/summary?sampleSize=4",
		odata.BasePath + "/z.svc/Z_entries",
		odata.BasePath + "/z.svc/Z_entries?$format=atom",
		odata.BasePath + "/z.svc/Z_entries?$apply=aggregate(LOW,NEG,X%20with%20min%20as%20M)",
		odata.BasePath + "/z.svc/Z_entries?$apply=groupby((X),aggregate(NEG))",
	}
	tools := []struct {
		name string
		args map[string]any
	}{
		{mcp.ToolQuery, map[string]any{"km": "z", "record": "Z", "fields": []string{"G", "X"}}},
		{mcp.ToolQuery, map[string]any{"km": "z", "kpis": []string{"LOW", "NEG"}}},
		{mcp.ToolSummarize, map[string]any{"km": "z", "record": "Z"}},
	}
	first := map[string]string{} // what the first backend answered, by question
	for _, b := range backendsOf(zerosData) {
		t.Run(b.name, func(t *testing.T) {
			s := newSurfaces(t, km.NewService(b.open(t)), 50)
			check := func(question, body string) {
				t.Helper()
				if negativeZero.MatchString(body) {
					t.Errorf("%s: -0 in %s", question, body)
				}
				if want, ok := first[question]; !ok {
					first[question] = body
				} else if body != want {
					t.Errorf("%s: %s, the first backend answered %s", question, body, want)
				}
			}
			for _, target := range get {
				h := s.kmAPI
				if strings.HasPrefix(target, odata.BasePath) {
					h = s.od
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
				if w.Code != http.StatusOK {
					t.Fatalf("%s: %d %s", target, w.Code, w.Body)
				}
				// An Atom feed says when it was written: not part of the answer.
				check(target, atomUpdated.ReplaceAllString(w.Body.String(), "<updated/>"))
			}
			for _, tool := range tools {
				res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool.name, Arguments: tool.args})
				if err != nil || res.IsError {
					t.Fatalf("%s %v: %v %+v", tool.name, tool.args, err, res)
				}
				check(fmt.Sprint(tool.name, tool.args), res.Content[0].(*sdk.TextContent).Text)
				if tool.name == mcp.ToolQuery {
					check(fmt.Sprint(tool.name, tool.args, " over HTTP"), s.postQuery(t, tool.args).Content[0].(*sdk.TextContent).Text)
				}
			}
		})
	}
}
