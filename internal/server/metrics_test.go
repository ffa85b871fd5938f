package server

import (
	"net/http"
	"os"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads /metrics with key and parses it with Prometheus' own text parser.
func scrape(t *testing.T, h http.Handler, key string) map[string]*dto.MetricFamily {
	t.Helper()
	w := request(h, http.MethodGet, "/metrics", key, nil)
	if w.Code != 200 {
		t.Fatalf("GET /metrics: %d %s", w.Code, w.Body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(w.Body.String()))
	if err != nil {
		t.Fatal(err)
	}
	return families
}

// value returns the value of the series of family name with exactly labels, or -1.
func value(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	f := families[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.Metric {
		if len(m.Label) != len(labels) {
			continue
		}
		for _, l := range m.Label {
			if labels[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMetricsCountKnownRequests sends known requests and checks the counts scraped.
func TestMetricsCountKnownRequests(t *testing.T) {
	a := newTestApp(t, config{burst: 1000, concurrency: -1})
	h := a.handler
	const (
		records = "/intelligence/api/knowledge-models/{km_id}/records/{record_id}/data"
		set     = "/intelligence/api/odata/{km_id}.svc/{entity_set}"
	)
	for range 3 {
		request(h, http.MethodGet, "/intelligence/api/knowledge-models/o2c/records/ORDERS/data?fields=ORDER_ID", a.devKey, nil)
	}
	request(h, http.MethodGet, "/intelligence/api/knowledge-models/o2c/records/CUSTOMERS/data?fields=COUNTRY", a.devKey, nil)
	request(h, http.MethodGet, "/intelligence/api/knowledge-models/o2c/records/ORDERS/data?fields=NOPE", a.devKey, nil)
	request(h, http.MethodHead, "/intelligence/api/knowledge-models/o2c/records/ORDERS/data?fields=ORDER_ID", a.devKey, nil)
	request(h, http.MethodGet, "/intelligence/api/knowledge-models", "", nil)
	request(h, http.MethodGet, "/intelligence/api/odata/o2c.svc/ORDERS_entries?$top=1", a.devKey, nil)
	request(h, http.MethodGet, "/intelligence/api/odata/o2c.svc/CUSTOMERS_entries?$top=1", a.devKey, nil)
	request(h, http.MethodGet, "/user-provisioning/scim/v2/Users/some-id", a.devKey, nil)
	request(h, http.MethodGet, "/api/v1/facets", a.devKey, nil)
	request(h, http.MethodGet, "/no/such/path/12345", a.devKey, nil)

	f := scrape(t, h, a.devKey)
	counts := []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"api": "km", "route": records, "method": "GET", "code": "200"}, 4},
		{map[string]string{"api": "km", "route": records, "method": "GET", "code": "400"}, 1},
		{map[string]string{"api": "km", "route": records, "method": "HEAD", "code": "200"}, 1},
		{map[string]string{"api": "km", "route": "/intelligence/api/knowledge-models", "method": "GET", "code": "401"}, 1},
		{map[string]string{"api": "odata", "route": set, "method": "GET", "code": "200"}, 2},
		{map[string]string{"api": "scim", "route": "/user-provisioning/scim/v2/Users/{id}", "method": "GET", "code": "404"}, 1},
		{map[string]string{"api": "reporting", "route": "/api/v1/facets", "method": "GET", "code": "200"}, 1},
		{map[string]string{"api": "other", "route": "unmatched", "method": "GET", "code": "404"}, 1},
	}
	for _, c := range counts {
		if got := value(f, "kmkit_http_requests_total", c.labels); got != c.want {
			t.Errorf("kmkit_http_requests_total%v = %v, want %v", c.labels, got, c.want)
		}
	}
	if got := value(f, "kmkit_http_request_duration_seconds", map[string]string{"api": "km", "route": records, "method": "GET"}); got != 5 {
		t.Errorf("latency observations of km GET data: %v, want 5", got)
	}
	// Store calls: 5 KM data requests and 2 OData ones that reached the store; the 400
	// stops before the query, not before the model lookup.
	if got := value(f, "kmkit_store_query_duration_seconds", map[string]string{"backend": "memory", "kind": "query"}); got != 7 {
		t.Errorf("store queries: %v, want 7", got)
	}
	if got := value(f, "kmkit_store_query_duration_seconds", map[string]string{"backend": "memory", "kind": "get_user"}); got != 1 {
		t.Errorf("SCIM get_user: %v, want 1", got)
	}
	if got := value(f, "kmkit_store_errors_total", map[string]string{"backend": "memory", "kind": "get_user"}); got != 1 {
		t.Errorf("SCIM get_user errors: %v, want 1", got)
	}
	// No label carries a raw path or an id.
	for name, fam := range f {
		for _, m := range fam.Metric {
			for _, l := range m.Label {
				if v := l.GetValue(); strings.Contains(v, "o2c") || strings.Contains(v, "ORDERS") || strings.Contains(v, "12345") || strings.Contains(v, "some-id") {
					t.Errorf("%s has label %s=%q", name, l.GetName(), v)
				}
			}
		}
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_resident_memory_bytes"} {
		if f[name] == nil {
			t.Errorf("no %s", name)
		}
	}
}

// TestMetricsCountRefusals checks limiter refusals by reason and that /metrics needs the
// metrics permission.
func TestMetricsCountRefusals(t *testing.T) {
	a := newTestApp(t, config{burst: 3, concurrency: -1})
	statuses := map[int]int{}
	for range 5 {
		statuses[request(a.handler, http.MethodGet, "/intelligence/api/knowledge-models", a.devKey, nil).Code]++
	}
	if statuses[200] != 3 || statuses[429] != 2 {
		t.Fatalf("statuses %v, want 3 × 200 and 2 × 429", statuses)
	}
	// The burst allowance refills in a second; the scrape itself may be refused too, so
	// read the registry directly.
	families, err := a.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	f := map[string]*dto.MetricFamily{}
	for _, fam := range families {
		f[fam.GetName()] = fam
	}
	if got := value(f, "kmkit_limiter_refusals_total", map[string]string{"api": "km", "reason": "burst"}); got != 2 {
		t.Errorf("burst refusals: %v, want 2", got)
	}
	if got := value(f, "kmkit_http_requests_total", map[string]string{"api": "km", "route": "/intelligence/api/knowledge-models", "method": "GET", "code": "429"}); got != 2 {
		t.Errorf("429 answers: %v, want 2", got)
	}
}

func TestMetricsNeedThePermission(t *testing.T) {
	dir := t.TempDir()
	keys := dir + "/keys.yaml"
	writeFile(t, keys, "keys:\n  - key: \"km-only-key-1\"\n    team: demo\n    permissions: [km]\n  - key: \"ops-key-0001\"\n    team: ops\n    permissions: [metrics]\n")
	a := newTestApp(t, config{keysFile: keys})
	if w := request(a.handler, http.MethodGet, "/metrics", "", nil); w.Code != 401 {
		t.Errorf("no key: %d %s", w.Code, w.Body)
	}
	if w := request(a.handler, http.MethodGet, "/metrics", "km-only-key-1", nil); w.Code != 403 || !strings.Contains(w.Body.String(), "lack the metrics permission") {
		t.Errorf("km key: %d %s", w.Code, w.Body)
	}
	if w := request(a.handler, http.MethodGet, "/metrics", "ops-key-0001", nil); w.Code != 200 || !strings.Contains(w.Body.String(), "kmkit_http_requests_total") {
		t.Errorf("metrics key: %d", w.Code)
	}
	if w := request(a.handler, http.MethodGet, "/intelligence/api/knowledge-models", "ops-key-0001", nil); w.Code != 403 {
		t.Errorf("metrics key on the KM API: %d", w.Code)
	}
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
