package kmhttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/storage/memory"
)

// TestDirectCallsAnswerAsTheEndpoints checks that QueryJSON and SummaryJSON give the bodies
// of the query and summary endpoints, and that ProblemOf gives the endpoints' problems.
func TestDirectCallsAnswerAsTheEndpoints(t *testing.T) {
	st := memory.New().KM()
	err := st.Import(context.Background(), os.DirFS("../testdata/shop"))
	if err != nil {
		t.Fatal(err)
	}
	h := kmhttp.NewHandler(st)
	ctx := context.Background()
	m, err := h.Model(ctx, "shop-base")
	if err != nil {
		t.Fatal(err)
	}
	serve := func(path string, q url.Values) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, kmhttp.BasePath+"/knowledge-models/shop-base"+path+"?"+q.Encode(), nil))
		return w
	}
	for _, c := range []struct {
		record string
		q      url.Values
	}{
		{"ORDERS", url.Values{"fields": {"ID,NET"}, "filterExpr": {"NET gt 50"}, "sort": {"-NET"}, "pageSize": {"2"}}},
		{"", url.Values{"fields": {"CUSTOMERS.COUNTRY"}, "kpis": {"NET,LATE_SHARE"}, "kpiParam": {"LATE_SHARE.t:1"}}},
		{"ORDERS", url.Values{"fields": {"NOPE"}}},
		{"", url.Values{"kpis": {"NET"}, "filterExpr": {"ORDERS.NET gt"}}},
	} {
		path := "/query"
		if c.record != "" {
			path = "/records/" + c.record + "/query"
		}
		w := serve(path, c.q)
		body, err := h.QueryJSON(ctx, m, c.record, c.q)
		if err != nil {
			p, ok := kmhttp.ProblemOf(err)
			if !ok || p.Status != w.Code {
				t.Fatalf("%v: error %v, endpoint %d %s", c.q, err, w.Code, w.Body)
			}
			continue
		}
		if w.Code != 200 || string(body) != w.Body.String() {
			t.Errorf("%v:\n%s\nendpoint %d %s", c.q, body, w.Code, w.Body)
		}
	}
	q := url.Values{"fields": {"NET,STATUS"}, "sampleSize": {"2"}}
	body, err := h.SummaryJSON(ctx, m, "ORDERS", q)
	if w := serve("/records/ORDERS/summary", q); err != nil || string(body) != w.Body.String() {
		t.Errorf("summary %v\n%s\nendpoint %s", err, body, w.Body)
	}
	if _, err := h.QueryJSON(ctx, m, "NOPE", nil); err == nil {
		t.Error("an unknown record was queried")
	} else if p, _ := kmhttp.ProblemOf(err); p == nil || p.ErrorCode != km.CodeRecordNotFound {
		t.Errorf("unknown record: %v", err)
	}
	if _, err := h.Model(ctx, "nope"); err == nil {
		t.Error("an unknown KM was found")
	} else if p, _ := kmhttp.ProblemOf(err); p == nil || p.ErrorCode != km.CodeModelNotFound || p.Status != 404 {
		t.Errorf("unknown KM: %v", err)
	}
	if _, ok := kmhttp.ProblemOf(errors.New("disk on fire")); ok {
		t.Error("an internal error was taken for a client error")
	}
}
