package demostore

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/km/kmhttp"
)

// TestEveryKPIComputes asks the KM handler over the embedded demo for each KPI, alone and
// grouped by a field, and checks parameters take effect.
func TestEveryKPIComputes(t *testing.T) {
	s, err := Store(0)
	if err != nil {
		t.Fatal(err)
	}
	h := kmhttp.NewHandler(s)
	get := func(target string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, kmhttp.BasePath+"/knowledge-models/o2c"+target, nil))
		return w
	}
	w := get("/kpis?pageSize=100")
	var page struct {
		Content []struct {
			ID         string
			Parameters []struct{ ID, Value string }
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil || len(page.Content) < 6 {
		t.Fatalf("KPI list: %v %s", err, w.Body)
	}
	withParams := 0
	for _, k := range page.Content {
		if len(k.Parameters) > 0 {
			withParams++
		}
		for _, q := range []string{"kpis=" + k.ID, "fields=ORDERS.STATUS&kpis=" + k.ID} {
			if w := get("/query?" + q); w.Code != 200 {
				t.Errorf("%s: %d %s", q, w.Code, w.Body)
			}
		}
	}
	if withParams < 6 {
		t.Errorf("%d KPIs with parameters, want at least 6", withParams)
	}
	number := func(target, key string) string {
		w := get(target)
		var p struct{ Content []map[string]json.Number }
		d := json.NewDecoder(strings.NewReader(w.Body.String()))
		d.UseNumber()
		if err := d.Decode(&p); err != nil || len(p.Content) != 1 {
			t.Fatalf("%s: %v %s", target, err, w.Body)
		}
		return p.Content[0][key].String()
	}
	delivered := number("/query?kpis=ORDER_COUNT&filterExpr=ORDERS.DAYS_LATE%20ne%20null", "ORDER_COUNT")
	if got := number("/query?kpis=SEVERE_DELAYS&kpiParam=SEVERE_DELAYS.days:-100", "SEVERE_DELAYS"); got != delivered {
		t.Errorf("SEVERE_DELAYS with days -100 = %s, want every delivered order, %s", got, delivered)
	}
	if got := number("/query?kpis=ORDERS_SINCE&kpiParam=ORDERS_SINCE.since:2025-01-01", "ORDERS_SINCE"); got != "1000" {
		t.Errorf("ORDERS_SINCE 2025-01-01 = %s, want all 1000 orders", got)
	}
}
