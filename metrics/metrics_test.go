package metrics_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/metrics"
	"github.com/kmkit/kmkit/storage/memory"
)

func TestHandlerCountsByRoute(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	route := func(r *http.Request) (string, string) {
		if strings.HasPrefix(r.URL.Path, "/items/") {
			return "shop", "/items/{id}"
		}
		return "", ""
	}
	h := m.Handler(route, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/items/bad" {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		w.Write([]byte("12345"))
	}))
	for _, p := range []string{"/items/1", "/items/2", "/items/bad", "/elsewhere"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, p, nil))
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("BREW", "/items/3", nil))
	want := `
# HELP kmkit_http_requests_total HTTP requests answered, by API, route template, method and status code.
# TYPE kmkit_http_requests_total counter
kmkit_http_requests_total{api="other",code="200",method="GET",route="unmatched"} 1
kmkit_http_requests_total{api="shop",code="200",method="GET",route="/items/{id}"} 2
kmkit_http_requests_total{api="shop",code="200",method="OTHER",route="/items/{id}"} 1
kmkit_http_requests_total{api="shop",code="400",method="GET",route="/items/{id}"} 1
# HELP kmkit_http_response_bytes_total Bytes of response bodies, by API, route template and method.
# TYPE kmkit_http_response_bytes_total counter
kmkit_http_response_bytes_total{api="other",method="GET",route="unmatched"} 5
kmkit_http_response_bytes_total{api="shop",method="GET",route="/items/{id}"} 14
kmkit_http_response_bytes_total{api="shop",method="OTHER",route="/items/{id}"} 5
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kmkit_http_requests_total", "kmkit_http_response_bytes_total"); err != nil {
		t.Error(err)
	}
}

func TestKMStoreKeepsSummarizer(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New().KM()
	err = store.Import(context.Background(), os.DirFS("../km/testdata/shop"))
	if err != nil {
		t.Fatal(err)
	}
	s := m.KMStore("memory", store)
	if _, ok := s.(km.Summarizer); !ok {
		t.Fatal("the measured memory store lost km.Summarizer")
	}
	ctx := context.Background()
	bare := m.KMStore("x", struct{ km.Store }{store}).(km.Summarizer)
	if _, err := bare.Summarize(ctx, &km.Plan{}); !errors.Is(err, km.ErrUnsupported) {
		t.Fatalf("Summarize over a store without one: %v, want km.ErrUnsupported", err)
	}
	if _, err := s.Model(ctx, "nope"); !errors.Is(err, km.ErrModelNotFound) {
		t.Fatalf("Model: %v", err)
	}
	if _, err := s.Models(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testutil.CollectAndCount(reg, "kmkit_store_query_duration_seconds"); got != 2 {
		t.Errorf("%d series of store latency, want 2 (model, models)", got)
	}
	want := `
# HELP kmkit_store_errors_total Store calls that returned an error (not found included), by backend and kind.
# TYPE kmkit_store_errors_total counter
kmkit_store_errors_total{backend="memory",kind="model"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kmkit_store_errors_total"); err != nil {
		t.Error(err)
	}
}
