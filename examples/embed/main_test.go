package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEmbeddedKMHandler(t *testing.T) {
	s, err := newStore([]item{{"A-100", "Berlin", 40}, {"A-200", "Berlin", 3}, {"B-100", "Lyon", 12}, {"B-300", "Lyon", 0}})
	if err != nil {
		t.Fatal(err)
	}
	mux := newMux(s)
	tests := []struct {
		target string
		status int
		body   string
	}{
		{"/status", 200, "ok\n"},
		{"/intelligence/api/knowledge-models/inventory/records/STOCK/query?fields=SKU,QTY&filters=BERLIN&sort=-QTY", 200,
			`{"page":0,"pageSize":50,"total":2,"sort":["-QTY"],"content":[{"SKU":"A-100","QTY":40},{"SKU":"A-200","QTY":3}]}`},
		{"/intelligence/api/knowledge-models/inventory/query?fields=STOCK.WAREHOUSE&kpis=UNITS,LOW_SHARE&sort=STOCK.WAREHOUSE", 200,
			`{"page":0,"pageSize":50,"total":2,"sort":["+STOCK.WAREHOUSE"],"content":[{"STOCK.WAREHOUSE":"Berlin","UNITS":43,"LOW_SHARE":0.5},{"STOCK.WAREHOUSE":"Lyon","UNITS":12,"LOW_SHARE":0.5}]}`},
		{"/intelligence/api/knowledge-models/other", 404,
			`{"title":"Not Found","status":404,"detail":"no knowledge model \"other\"","errorCode":"KM_MODEL_NOTFOUND","type":"urn:kmkit:problem:KM_MODEL_NOTFOUND"}`},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, tt.target, nil))
		if w.Code != tt.status {
			t.Errorf("GET %s: status %d, want %d", tt.target, w.Code, tt.status)
		}
		if diff := cmp.Diff(tt.body, w.Body.String()); diff != "" {
			t.Errorf("GET %s body (-want +got):\n%s", tt.target, diff)
		}
	}
}
