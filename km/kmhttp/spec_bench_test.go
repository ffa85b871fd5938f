package kmhttp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
)

// BenchmarkSpec measures the spec endpoint on the demo's o2c KM: building the document
// (kmhttp.Spec) next to the whole request in JSON and in YAML, so the encoding cost shows.
func BenchmarkSpec(b *testing.B) {
	s, err := demostore.Store(0)
	if err != nil {
		b.Fatal(err)
	}
	m, err := s.Model(context.Background(), "o2c")
	if err != nil {
		b.Fatal(err)
	}
	h := kmhttp.NewHandler(s)
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			kmhttp.Spec(m, "http://kmkit.test", false)
		}
	})
	b.Run("build+json.Marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(kmhttp.Spec(m, "http://kmkit.test", false)); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, format := range []string{"json", "yml"} {
		b.Run("handler/"+format, func(b *testing.B) {
			var size int
			for b.Loop() {
				w := call(h, "GET", api+"/o2c/spec?format="+format, "")
				if w.Code != 200 {
					b.Fatalf("status %d", w.Code)
				}
				size = w.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/doc")
		})
	}
}

// BenchmarkSummaryEndpoint measures GET .../records/ORDERS/summary of the demo (all
// fields, default sample) through the handler, with the memory store's native statistics
// and with the handler's fallback over the rows Query returns.
func BenchmarkSummaryEndpoint(b *testing.B) {
	s, err := demostore.Store(0)
	if err != nil {
		b.Fatal(err)
	}
	for name, store := range map[string]km.Store{"native": s, "fallback": struct{ km.Store }{s}} {
		h := kmhttp.NewHandler(store)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if w := call(h, "GET", api+"/o2c/records/ORDERS/summary", ""); w.Code != 200 {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
