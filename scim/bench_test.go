package scim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/storage/memory"
)

const (
	benchUsers    = 10_000
	benchBulkSize = 1_000
	benchPageSize = 200
)

// benchHandler is a handler over a fresh memory store, the team fixed.
func benchHandler() http.Handler {
	return scim.NewHandler(memory.NewSCIMStore(), scim.WithTeam(func(*http.Request) (string, bool) { return "bench", true }))
}

func benchSend(b *testing.B, h http.Handler, method, path string, body []byte, want int) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "http://bench"+scim.DefaultPrefix+path, bytes.NewReader(body))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != want {
		b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
	}
	return w
}

func benchUser(i int) map[string]any {
	return map[string]any{
		"schemas": []any{userURN}, "userName": fmt.Sprintf("user%05d@example.com", i), "externalId": fmt.Sprint(i),
		"name":   map[string]any{"givenName": "User", "familyName": fmt.Sprint(i)},
		"emails": []any{map[string]any{"value": fmt.Sprintf("user%05d@example.com", i), "primary": true, "type": "work"}},
	}
}

// listAll reads every user in pages of benchPageSize and returns how many it saw.
func listAll(b *testing.B, h http.Handler) int {
	seen := 0
	for start := 1; start <= benchUsers; start += benchPageSize {
		w := benchSend(b, h, "GET", fmt.Sprintf("/Users?startIndex=%d&count=%d", start, benchPageSize), nil, http.StatusOK)
		var page struct{ Resources []json.RawMessage }
		if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil {
			b.Fatal(err)
		}
		seen += len(page.Resources)
	}
	if seen != benchUsers {
		b.Fatalf("listed %d users, want %d", seen, benchUsers)
	}
	return seen
}

// BenchmarkProvision creates 10,000 users and lists them in pages of 200, on the memory
// backend. "bulk" sends the users in Bulk requests of 1,000 operations; its peer "single"
// sends one POST per user. Reported: total time, creations per second, users listed per
// second, and operations (creations plus listed users) per second.
func BenchmarkProvision(b *testing.B) {
	bulkBodies := make([][]byte, 0, benchUsers/benchBulkSize)
	for start := 0; start < benchUsers; start += benchBulkSize {
		ops := make([]any, 0, benchBulkSize)
		for i := start; i < start+benchBulkSize; i++ {
			ops = append(ops, map[string]any{"method": "POST", "path": "/Users", "bulkId": fmt.Sprint(i), "data": benchUser(i)})
		}
		body, _ := json.Marshal(map[string]any{"schemas": []any{bulkURN}, "Operations": ops})
		bulkBodies = append(bulkBodies, body)
	}
	singleBodies := make([][]byte, benchUsers)
	for i := range singleBodies {
		singleBodies[i], _ = json.Marshal(benchUser(i))
	}
	run := func(b *testing.B, create func(h http.Handler)) {
		var createTime, listTime time.Duration
		for b.Loop() {
			h := benchHandler()
			t0 := time.Now()
			create(h)
			t1 := time.Now()
			listAll(b, h)
			createTime += t1.Sub(t0)
			listTime += time.Since(t1)
		}
		n := float64(b.N)
		total := (createTime + listTime).Seconds() / n
		b.ReportMetric(total*1000, "total-ms")
		b.ReportMetric(benchUsers/(createTime.Seconds()/n), "creates/s")
		b.ReportMetric(benchUsers/(listTime.Seconds()/n), "listed/s")
		b.ReportMetric(2*benchUsers/total, "ops/s")
	}
	b.Run("bulk", func(b *testing.B) {
		run(b, func(h http.Handler) {
			for _, body := range bulkBodies {
				benchSend(b, h, "POST", "/Bulk", body, http.StatusOK)
			}
		})
	})
	b.Run("single", func(b *testing.B) {
		run(b, func(h http.Handler) {
			for _, body := range singleBodies {
				benchSend(b, h, "POST", "/Users", body, http.StatusCreated)
			}
		})
	})
}
