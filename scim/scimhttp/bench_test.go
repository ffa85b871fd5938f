package scimhttp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kmkit/kmkit/scim/scimhttp"
	"github.com/kmkit/kmkit/storage/memory"
)

const (
	benchUsers    = 10_000
	benchBulkSize = 1_000
	benchPageSize = 200
)

// benchHandler is a handler over a fresh memory store, the team fixed.
func benchHandler() http.Handler {
	return scimhttp.NewHandler(memory.New().SCIM(), scimhttp.WithTeam(func(*http.Request) (string, bool) { return "bench", true }))
}

// sender sends one request and returns the response body.
type sender func(b *testing.B, method, path string, body []byte, want int) []byte

// inProcess calls the handler directly.
func inProcess(h http.Handler) sender {
	return func(b *testing.B, method, path string, body []byte, want int) []byte {
		r := httptest.NewRequest(method, "http://bench"+scimhttp.BasePath+path, bytes.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
		}
		return w.Body.Bytes()
	}
}

// overHTTP serves the handler on a loopback listener and sends real HTTP requests.
func overHTTP(b *testing.B, h http.Handler) (sender, func()) {
	srv := httptest.NewServer(h)
	client := srv.Client()
	return func(b *testing.B, method, path string, body []byte, want int) []byte {
		r, err := http.NewRequest(method, srv.URL+scimhttp.BasePath+path, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		r.Header.Set("Content-Type", scimhttp.ContentType)
		res, err := client.Do(r)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		out, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != want {
			b.Fatalf("%s %s: %d %s %v", method, path, res.StatusCode, out, err)
		}
		return out
	}, srv.Close
}

func benchUser(i int) map[string]any {
	return map[string]any{
		"schemas": []any{userURN}, "userName": fmt.Sprintf("user%05d@example.com", i), "externalId": fmt.Sprint(i),
		"name":   map[string]any{"givenName": "User", "familyName": fmt.Sprint(i)},
		"emails": []any{map[string]any{"value": fmt.Sprintf("user%05d@example.com", i), "primary": true, "type": "work"}},
	}
}

// listAll reads every user in pages of benchPageSize and returns how many it saw.
func listAll(b *testing.B, send sender) int {
	seen := 0
	for start := 1; start <= benchUsers; start += benchPageSize {
		body := send(b, "GET", fmt.Sprintf("/Users?startIndex=%d&count=%d", start, benchPageSize), nil, http.StatusOK)
		var page struct{ Resources []json.RawMessage }
		if err := json.Unmarshal(body, &page); err != nil {
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
// sends one POST per user. Both run in-process (the handler called directly) and, with
// the -http suffix, over HTTP on a loopback listener. Reported: total time, creations per
// second, users listed per second, and operations (creations plus listed users) per
// second.
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
	bulk := func(b *testing.B, send sender) {
		for _, body := range bulkBodies {
			send(b, "POST", "/Bulk", body, http.StatusOK)
		}
	}
	single := func(b *testing.B, send sender) {
		for _, body := range singleBodies {
			send(b, "POST", "/Users", body, http.StatusCreated)
		}
	}
	run := func(b *testing.B, viaHTTP bool, create func(*testing.B, sender)) {
		var createTime, listTime time.Duration
		for b.Loop() {
			send, stop := inProcess(benchHandler()), func() {}
			if viaHTTP {
				send, stop = overHTTP(b, benchHandler())
			}
			t0 := time.Now()
			create(b, send)
			t1 := time.Now()
			listAll(b, send)
			createTime += t1.Sub(t0)
			listTime += time.Since(t1)
			stop()
		}
		n := float64(b.N)
		total := (createTime + listTime).Seconds() / n
		b.ReportMetric(total*1000, "total-ms")
		b.ReportMetric(benchUsers/(createTime.Seconds()/n), "creates/s")
		b.ReportMetric(benchUsers/(listTime.Seconds()/n), "listed/s")
		b.ReportMetric(2*benchUsers/total, "ops/s")
	}
	b.Run("bulk", func(b *testing.B) { run(b, false, bulk) })
	b.Run("single", func(b *testing.B) { run(b, false, single) })
	b.Run("bulk-http", func(b *testing.B) { run(b, true, bulk) })
	b.Run("single-http", func(b *testing.B) { run(b, true, single) })
}
