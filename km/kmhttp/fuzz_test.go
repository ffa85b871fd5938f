package kmhttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// checkAnswer fails unless w is a 200 JSON page or a 4xx problem body.
func checkAnswer(t *testing.T, w *httptest.ResponseRecorder, what string) {
	t.Helper()
	switch {
	case w.Code == http.StatusOK:
		var page struct {
			Page, PageSize, Total *int
		}
		if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil || page.Page == nil || page.Total == nil {
			t.Fatalf("%s: 200 with a body that is not a page: %v %s", what, err, w.Body)
		}
	case w.Code >= 400 && w.Code < 500:
		var p struct {
			Status    int
			ErrorCode string
			Detail    string
		}
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Status != w.Code || p.ErrorCode == "" || p.Detail == "" {
			t.Fatalf("%s: %d with a body that is not a problem: %v %s", what, w.Code, err, w.Body)
		}
	default:
		t.Fatalf("%s: status %d: %s", what, w.Code, w.Body)
	}
}

// FuzzProjection feeds arbitrary POST bodies to both data endpoints: every answer is a
// page or a 4xx problem, never a 500 or a panic.
func FuzzProjection(f *testing.F) {
	for _, s := range []string{
		`{"projection":{"fields":"ID,STATUS","filters":{"kmFilterNames":["LATE"],"filterExpr":["NET gt 1,STATUS eq 'PAID'"]},"sort":"-ID","pagination":{"pageNumber":0,"pageSize":2},"options":["distinct"]}}`,
		`{"projection":{"fields":"CUSTOMERS.COUNTRY","kpis":["NET","LATE_SHARE"],"kpiParameters":{"LATE_SHARE":{"t":"1"}},"search":{"term":"de","precision":0}}}`,
		`{"projection":{"fields":"","sort":null,"options":null}}`, `{"projection":{"pagination":{"pageSize":1e99}}}`, `{}`, `[`, ``,
	} {
		f.Add(s)
	}
	h := shop(f)
	f.Fuzz(func(t *testing.T, body string) {
		for _, target := range []string{api + "/shop/records/ORDERS/data", api + "/shop/data"} {
			r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			checkAnswer(t, w, "POST "+target+" "+body)
		}
	})
}

// FuzzDataQuery feeds arbitrary query strings to the data and query endpoints.
func FuzzDataQuery(f *testing.F) {
	for _, s := range []string{
		"fields=ID,NET&filterExpr=NET+gt+1&sort=-NET&page=0&pageSize=3",
		"fields=CUSTOMERS.COUNTRY&kpis=NET,LATE_SHARE&kpiParam=LATE_SHARE.t:1&sort=-NET",
		"fields=ID&filterExpr=CREATED%20gt%202025-04-01T01:00:00+02:00&searchTerm=o&searchPrecision=50",
		"fields=ITEMS.MATERIAL,EVENTS.ACTIVITY", "filterExpr=(((", "sort=,,", "options=distinct&fields=STATUS",
		// Filters across records, KPIs at their grain through joins down, quoted literals.
		"fields=ID&filters=GERMANY,SHIPPED&filterExpr=ITEMS.QTY%20gt%201%20or%20CUSTOMERS.COUNTRY%20eq%20'DE'",
		"fields=ITEMS.MATERIAL&kpis=NET,EVENTS_N,QTY&filterExpr=EVENTS.ACTIVITY%20eq%20'Ship'%20or%20ITEMS.QTY%20gt%201",
		"fields=ID&filterExpr=EXPRESS%20eq%20'true',STATUS%20not%20eq%20'',LATE%20ne%20''",
	} {
		f.Add(s)
	}
	h := shop(f)
	f.Fuzz(func(t *testing.T, raw string) {
		if strings.ContainsAny(raw, "#\x00") {
			return // not part of a request target's query
		}
		for _, path := range []string{api + "/shop/records/ORDERS/data", api + "/shop/data", api + "/shop/records/ORDERS/query", api + "/shop/query"} {
			r := httptest.NewRequest(http.MethodGet, path, nil)
			r.URL.RawQuery = raw
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			checkAnswer(t, w, "GET "+path+"?"+raw)
		}
	})
}
