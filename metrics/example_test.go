package metrics_test

import (
	"log"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kmkit/kmkit/auth"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/metrics"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/storage/memory"
)

// Measure the KM API of a host: its store, its requests by route template, and the
// limiter's refusals; serve the registry at /metrics.
func Example() {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		log.Fatal(err)
	}
	if err := metrics.RegisterRuntime(reg); err != nil {
		log.Fatal(err)
	}
	store := m.KMStore("memory", memory.New().KM())
	keys, err := auth.NewKeySet(nil)
	if err != nil {
		log.Fatal(err)
	}
	guard, err := auth.NewGuard(auth.Config{Authenticator: keys, Refused: m.LimitRefused})
	if err != nil {
		log.Fatal(err)
	}
	route := func(r *http.Request) (string, string) {
		if strings.HasPrefix(r.URL.Path, kmhttp.BasePath+"/") {
			return metrics.APIKM, kmhttp.RouteTemplate(r.URL.Path)
		}
		return "", ""
	}
	mux := http.NewServeMux()
	mux.Handle(kmhttp.BasePath+"/", guard.Wrap(auth.Policy{Permission: principal.PermKM, WriteError: kmhttp.WriteProblem}, kmhttp.NewHandler(store)))
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	_ = http.Server{Handler: m.Handler(route, mux)}
}
