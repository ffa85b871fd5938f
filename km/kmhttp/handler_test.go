package kmhttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/storage/memory"
)

var (
	shopOnce    sync.Once
	shopHandler *kmhttp.Handler
	shopErr     error
)

// shop returns the handler over testdata/shop, loaded once.
func shop(t testing.TB) *kmhttp.Handler {
	t.Helper()
	shopOnce.Do(func() {
		s := memory.New().KM()
		err := s.Import(context.Background(), os.DirFS("../testdata/shop"))
		if err != nil {
			shopErr = err
			return
		}
		shopHandler = kmhttp.NewHandler(s, kmhttp.WithMaxPageSize(100))
	})
	if shopErr != nil {
		t.Fatal(shopErr)
	}
	return shopHandler
}

const api = "/intelligence/api/knowledge-models"

// call sends one request to h and returns the recorded response.
func call(h http.Handler, method, target, body string) *httptest.ResponseRecorder {
	var r *http.Request
	if body != "" {
		r = httptest.NewRequest(method, target, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	} else {
		r = httptest.NewRequest(method, target, nil)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// jsonEqual compares two JSON texts by value.
func jsonDiff(t *testing.T, want, got string) string {
	t.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expected JSON %s: %v", want, err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return "response is not JSON: " + got
	}
	return cmp.Diff(w, g)
}

// problemJSON is the exact problem body for status, code and detail.
func problemJSON(status int, code, detail string) string {
	b, _ := json.Marshal(map[string]any{
		"title": http.StatusText(status), "status": status, "detail": detail,
		"errorCode": code, "type": "urn:kmkit:problem:" + code,
	})
	return string(b)
}

type exchange struct {
	name         string
	method       string // default GET
	target       string
	body         string
	status       int // default 200
	want         string
	wantProblem  *prob
	wantHeaders  map[string]string
	sameAsTarget string // the response must equal the one of this GET target
}

type prob struct {
	code, detail string
}

func runExchanges(t *testing.T, h http.Handler, tests []exchange) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			w := call(h, method, tt.target, tt.body)
			status := tt.status
			if status == 0 {
				status = http.StatusOK
			}
			if w.Code != status {
				t.Fatalf("%s %s: status %d, want %d; body %s", method, tt.target, w.Code, status, w.Body)
			}
			for k, v := range tt.wantHeaders {
				if got := w.Header().Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			switch {
			case tt.wantProblem != nil:
				if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
					t.Errorf("Content-Type %q, want application/problem+json", ct)
				}
				if diff := jsonDiff(t, problemJSON(status, tt.wantProblem.code, tt.wantProblem.detail), w.Body.String()); diff != "" {
					t.Errorf("problem body (-want +got):\n%s", diff)
				}
			case tt.want != "":
				if ct := w.Header().Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json", ct)
				}
				if diff := jsonDiff(t, tt.want, w.Body.String()); diff != "" {
					t.Errorf("body (-want +got):\n%s", diff)
				}
			case tt.sameAsTarget != "":
				other := call(h, http.MethodGet, tt.sameAsTarget, "")
				if other.Code != http.StatusOK {
					t.Fatalf("reference %s: status %d: %s", tt.sameAsTarget, other.Code, other.Body)
				}
				if diff := jsonDiff(t, other.Body.String(), w.Body.String()); diff != "" {
					t.Errorf("differs from %s (-ref +got):\n%s", tt.sameAsTarget, diff)
				}
			default:
				t.Fatal("test case without expectation")
			}
		})
	}
}

func TestRoutingAndErrors(t *testing.T) {
	h := shop(t)
	runExchanges(t, h, []exchange{
		{name: "unknown root", target: "/intelligence/api/nothing", status: 404,
			wantProblem: &prob{"GENERAL_NOTFOUND_PATH", "no endpoint at /intelligence/api/nothing"}},
		{name: "outside the base path", target: "/other", status: 404,
			wantProblem: &prob{"GENERAL_NOTFOUND_PATH", "no endpoint at /other"}},
		{name: "unknown KM sub-resource", target: api + "/shop/triggers", status: 404,
			wantProblem: &prob{"GENERAL_NOTFOUND_PATH", "no endpoint at " + api + "/shop/triggers"}},
		{name: "too deep", target: api + "/shop/records/ORDERS/data/x", status: 404,
			wantProblem: &prob{"GENERAL_NOTFOUND_PATH", "no endpoint at " + api + "/shop/records/ORDERS/data/x"}},
		{name: "empty segment", target: api + "//records", status: 404,
			wantProblem: &prob{"GENERAL_NOTFOUND_PATH", "no endpoint at " + api + "//records"}},
		{name: "unknown KM", target: api + "/nope/records", status: 404,
			wantProblem: &prob{"KM_MODEL_NOTFOUND", `no knowledge model "nope"`}},
		{name: "unknown record", target: api + "/shop/records/NOPE", status: 404,
			wantProblem: &prob{"KM_RECORD_NOTFOUND", `knowledge model shop has no record "NOPE"`}},
		{name: "record of the extension is not in the base", target: api + "/shop-base/records/EVENTS/data?fields=ACTIVITY", status: 404,
			wantProblem: &prob{"KM_RECORD_NOTFOUND", `knowledge model shop-base has no record "EVENTS"`}},
		{name: "POST on a schema endpoint", method: "POST", target: api + "/shop/records", body: "{}", status: 405,
			wantHeaders: map[string]string{"Allow": "GET, HEAD"},
			wantProblem: &prob{"GENERAL_METHOD_NOT_ALLOWED", "method POST is not allowed on " + api + "/shop/records; allowed: GET, HEAD"}},
		{name: "DELETE on data", method: "DELETE", target: api + "/shop/data", status: 405,
			wantHeaders: map[string]string{"Allow": "GET, POST, HEAD"},
			wantProblem: &prob{"GENERAL_METHOD_NOT_ALLOWED", "method DELETE is not allowed on " + api + "/shop/data; allowed: GET, POST, HEAD"}},
		{name: "POST on query", method: "POST", target: api + "/shop/query", body: "{}", status: 405,
			wantHeaders: map[string]string{"Allow": "GET, HEAD"},
			wantProblem: &prob{"GENERAL_METHOD_NOT_ALLOWED", "method POST is not allowed on " + api + "/shop/query; allowed: GET, HEAD"}},
		{name: "trailing slash", target: api + "/shop/", want: `{"id":"shop","name":"Shop","extendedKMId":"shop-base"}`,
			wantHeaders: map[string]string{"Cache-Control": "private, no-store"}},
	})
}

func TestSchemaEndpoints(t *testing.T) {
	h := shop(t)
	runExchanges(t, h, []exchange{
		{name: "KM list", target: api,
			want: `{"page":0,"pageSize":50,"total":2,"sort":"","content":[
				{"id":"shop","name":"Shop"},
				{"id":"shop-base","name":"Shop (base)","published":"2026-01-15T10:00:00Z"}]}`},
		{name: "KM list sorted by name descending", target: api + "?sort=-name",
			want: `{"page":0,"pageSize":50,"total":2,"sort":"-name","content":[
				{"id":"shop-base","name":"Shop (base)","published":"2026-01-15T10:00:00Z"},
				{"id":"shop","name":"Shop"}]}`},
		{name: "KM list second page", target: api + "?page=1&pageSize=1&sort=id",
			want: `{"page":1,"pageSize":1,"total":1,"sort":"+id","content":[
				{"id":"shop-base","name":"Shop (base)","published":"2026-01-15T10:00:00Z"}]}`},
		{name: "KM list page beyond the end", target: api + "?page=5",
			want: `{"page":5,"pageSize":50,"total":0,"sort":"","content":[]}`},
		{name: "KM details with extends", target: api + "/shop", want: `{"id":"shop","name":"Shop","extendedKMId":"shop-base"}`},
		{name: "KM details of the base", target: api + "/shop-base", want: `{"id":"shop-base","name":"Shop (base)"}`},
		{name: "filters, inherited first", target: api + "/shop/filters",
			want: `{"page":0,"pageSize":50,"total":4,"sort":"","content":[
				{"id":"LATE","name":"Late","description":"Delivered late"},
				{"id":"GERMANY","name":"Germany","description":"German customers"},
				{"id":"PAID","name":"Paid","description":""},
				{"id":"SHIPPED","name":"Shipped","description":"Ship events"}]}`},
		{name: "filters sorted case-insensitively", target: api + "/shop/filters?sort=%2Bname&pageSize=2",
			want: `{"page":0,"pageSize":2,"total":2,"sort":"+name","content":[
				{"id":"GERMANY","name":"Germany","description":"German customers"},
				{"id":"LATE","name":"Late","description":"Delivered late"}]}`},
		{name: "records", target: api + "/shop/records?sort=-id",
			want: `{"page":0,"pageSize":50,"total":4,"sort":"-id","content":[
				{"id":"ORDERS","name":"Orders","description":"Sales orders","shortDisplayName":"Ord","internalNote":""},
				{"id":"ITEMS","name":"Items","description":"Order lines","shortDisplayName":"","internalNote":""},
				{"id":"EVENTS","name":"Events","description":"Process events","shortDisplayName":"","internalNote":""},
				{"id":"CUSTOMERS","name":"Customers","description":"Who buys","shortDisplayName":"Cust","internalNote":"note c"}]}`},
		{name: "KPIs", target: api + "/shop-base/kpis?pageSize=4",
			want: `{"page":0,"pageSize":4,"total":4,"sort":"","content":[
				{"id":"ORDERS_N","name":"Orders","description":"","format":"","unit":"","direction":"Up","parameters":[]},
				{"id":"NET","name":"Net","description":"","format":",.2f","unit":"EUR","direction":"Up","parameters":[]},
				{"id":"LATE_SHARE","name":"Late share","description":"Orders late by more than t days","format":".0%","unit":"","direction":"Down","target":"0.1",
				 "parameters":[{"id":"t","name":"Threshold","value":"0"}]},
				{"id":"STATUS_NET","name":"Net in status","description":"","format":"","unit":"","direction":"None","parameters":[{"id":"s","name":"Status","value":"PAID"}]}]}`},
		{name: "record details with fields sorted", target: api + "/shop/records/CUSTOMERS?sort=-id",
			want: `{"id":"CUSTOMERS","name":"Customers","description":"Who buys","shortDisplayName":"Cust","internalNote":"note c","fields":[
				{"id":"NAME","name":"Customer name","description":"Legal name","shortDisplayName":"","internalNote":"","type":"string","format":"","unit":""},
				{"id":"ID","name":"Customer","description":"","shortDisplayName":"","internalNote":"","type":"string","format":"","unit":""},
				{"id":"COUNTRY","name":"Country","description":"","shortDisplayName":"","internalNote":"","type":"string","format":"","unit":""}]}`},
		{name: "record details keep the declared number type", target: api + "/shop/records/ORDERS?sort=type",
			want: `{"id":"ORDERS","name":"Orders","description":"Sales orders","shortDisplayName":"Ord","internalNote":"","fields":[
				{"id":"EXPRESS","name":"Express","description":"","shortDisplayName":"","internalNote":"","type":"boolean","format":"","unit":""},
				{"id":"DAY","name":"Order day","description":"","shortDisplayName":"","internalNote":"","type":"date","format":"","unit":""},
				{"id":"CREATED","name":"Created","description":"","shortDisplayName":"","internalNote":"","type":"datetime","format":"","unit":""},
				{"id":"LATE","name":"Days late","description":"","shortDisplayName":"","internalNote":"","type":"integer","format":"","unit":""},
				{"id":"NET","name":"Net value","description":"","shortDisplayName":"","internalNote":"","type":"number","format":",.2f","unit":"EUR"},
				{"id":"ID","name":"Order","description":"","shortDisplayName":"","internalNote":"","type":"string","format":"","unit":""},
				{"id":"CUST","name":"Customer","description":"","shortDisplayName":"","internalNote":"","type":"string","format":"","unit":""},
				{"id":"STATUS","name":"Status","description":"","shortDisplayName":"","internalNote":"","type":"string","format":"","unit":""}]}`},
		{name: "sort by unknown member", target: api + "/shop/records?sort=colour", status: 400,
			wantProblem: &prob{"SORT_UNKNOWN_FIELD", `sort: "colour" is not among the fields that can be sorted: id, name, description, shortDisplayName, internalNote`}},
		{name: "sort by two members", target: api + "/shop/kpis?sort=id,name", status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_ILLEGAL", "sort: lists sort by exactly one field, not 2"}},
		{name: "empty sort", target: api + "?sort=", status: 400,
			wantProblem: &prob{"SORT_IS_EMPTY", "sort: no sort field given"}},
		{name: "page not a number", target: api + "?page=one", status: 400,
			wantProblem: &prob{"GENERAL_PARAMETER_MISSMATCH", `page: "one" is not an integer`}},
		{name: "negative page", target: api + "/shop/filters?page=-1", status: 400,
			wantProblem: &prob{"GENERAL_CONSTRAINT_VIOLATION", "page: -1 is not a page number: pages count from 0 to 2147483647"}},
		{name: "pageSize zero", target: api + "/shop/records?pageSize=0", status: 400,
			wantProblem: &prob{"GENERAL_CONSTRAINT_VIOLATION", "pageSize: 0 is below the minimum page size 1"}},
		{name: "pageSize above the maximum", target: api + "/shop/records?pageSize=101", status: 400,
			wantProblem: &prob{"GENERAL_CONSTRAINT_VIOLATION", "pageSize: 101 is above the maximum page size 100"}},
	})
}

// The handler serves under another prefix behind http.StripPrefix.
func TestMountedUnderAPrefix(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/tenant-a/", http.StripPrefix("/tenant-a", shop(t)))
	w := call(mux, http.MethodGet, "/tenant-a"+api+"/shop", "")
	if w.Code != 200 || w.Body.String() != `{"id":"shop","name":"Shop","extendedKMId":"shop-base"}` {
		t.Errorf("under a prefix: %d %s", w.Code, w.Body)
	}
	w = call(mux, http.MethodGet, "/tenant-a/intelligence/api/other", "")
	if diff := jsonDiff(t, problemJSON(404, "GENERAL_NOTFOUND_PATH", "no endpoint at /intelligence/api/other"), w.Body.String()); w.Code != 404 || diff != "" {
		t.Errorf("unknown path under a prefix: %d %s", w.Code, diff)
	}
}
