package kmhttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// checkProblem fails unless w is a 4xx problem body.
func checkProblem(t *testing.T, w *httptest.ResponseRecorder, what string) {
	t.Helper()
	var p struct {
		Status    int
		ErrorCode string
		Detail    string
	}
	if w.Code < 400 || w.Code >= 500 {
		t.Fatalf("%s: status %d: %s", what, w.Code, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Status != w.Code || p.ErrorCode == "" || p.Detail == "" {
		t.Fatalf("%s: %d with a body that is not a problem: %v %s", what, w.Code, err, w.Body)
	}
}

// FuzzSummaryQuery feeds arbitrary query strings to the summary endpoint: every answer is
// a summary whose shape matches its content, or a 4xx problem; never a 500 or a panic.
func FuzzSummaryQuery(f *testing.F) {
	for _, s := range []string{
		"", "sampleSize=2&fields=NET,LATE", "fields=NET&excludeFields=NET", "sampleSize=-1",
		"sampleSize=1e3", "filters=PAID,LATE&filterExpr=NET%20gt%20100,STATUS%20eq%20'OPEN'",
		"excludeFields=ID,,CUST&fields=ID&fields=CUST,DAY", "filterExpr=(((", "fields=%zz", "filters=GERMANY",
		"filterExpr=CREATED%20gt%202025-02-10T08:30+01:00&sampleSize=99999999999",
	} {
		f.Add(s)
	}
	h := shop(f)
	f.Fuzz(func(t *testing.T, raw string) {
		r := httptest.NewRequest(http.MethodGet, ordersSummary, nil)
		r.URL.RawQuery = raw
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			checkProblem(t, w, "summary?"+raw)
			return
		}
		var got struct {
			Content struct {
				Headers []json.RawMessage
				Data    []map[string]any
			}
			Shape   []int
			Summary map[string]map[string]any
		}
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatalf("summary?%s: 200 with a body that is not JSON: %v", raw, err)
		}
		if len(got.Shape) != 2 || got.Shape[1] != len(got.Content.Headers) || got.Shape[1] != len(got.Summary) ||
			len(got.Content.Data) > got.Shape[0] {
			t.Fatalf("summary?%s: shape %v with %d headers, %d summaries, %d sample rows", raw, got.Shape, len(got.Content.Headers), len(got.Summary), len(got.Content.Data))
		}
	})
}

// FuzzSpecQuery feeds arbitrary query strings and Accept headers to the spec endpoint:
// every answer is a document kin-openapi loads, or a 4xx problem; never a 500 or a panic.
func FuzzSpecQuery(f *testing.F) {
	for _, s := range [][2]string{
		{"", ""}, {"format=yml", ""}, {"curated=true&format=json", "application/yaml"},
		{"curated=1", "text/yaml;q=0.5, application/json;q=0.4"}, {"format=", "*/*;q=x"},
		{"curated=TRUE&curated=false", "application/x-yaml;;q=1, ,"}, {"format=xml", ""}, {"curated=%", "text/yaml;q=1e400"},
	} {
		f.Add(s[0], s[1])
	}
	h := shop(f)
	f.Fuzz(func(t *testing.T, raw, accept string) {
		r := httptest.NewRequest(http.MethodGet, api+"/shop/spec", nil)
		r.URL.RawQuery = raw
		r.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			checkProblem(t, w, "spec?"+raw)
			return
		}
		if _, err := openapi3.NewLoader().LoadFromData(w.Body.Bytes()); err != nil {
			t.Fatalf("spec?%s (Accept %q): 200 with a body kin-openapi cannot load: %v", raw, accept, err)
		}
	})
}
