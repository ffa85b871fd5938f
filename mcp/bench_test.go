package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/mcp"
)

// The question both sides of BenchmarkQueryToolVsKMAPI ask: ORDERS of the demo KM, three
// fields, one filter, one sort key, a page of 50.
const (
	benchQueryURL = kmhttp.BasePath + "/knowledge-models/o2c/records/ORDERS/query?fields=ORDER_ID,NET_VALUE,STATUS&filterExpr=NET_VALUE%20gt%201000&sort=-NET_VALUE&pageSize=50"
	benchToolCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"query","arguments":{"km":"o2c","record":"ORDERS",` +
		`"fields":["ORDER_ID","NET_VALUE","STATUS"],"filterExpr":["NET_VALUE gt 1000"],"sort":["-NET_VALUE"],"pageSize":50}}}`
)

// BenchmarkQueryToolVsKMAPI asks the same question as a query tool call and as GET
// .../query on the KM API, alternately in the same loop over the demo KM, and reports
// both per call and their ratio (mcp/api). Each sub-benchmark measures both sides the
// same way:
//
//   - server: each handler's ServeHTTP in process into a recorder (no network, no
//     client; the answers are checked once before the loop): the servers' cost alone.
//   - http: over loopback to one httptest server, both with a plain net/http client that
//     reads the body and JSON-decodes it into generic values (the tool call as the
//     JSON-RPC POST of a stateless Streamable HTTP request).
//   - sdk-client: the tool call through the Go SDK's Streamable HTTP client (its session,
//     framing and CallToolResult decoding included), the GET as in http: what an agent
//     built on the SDK sees, client cost included.
//
// Profile one with -cpuprofile, e.g. -bench 'QueryToolVsKMAPI/server'.
func BenchmarkQueryToolVsKMAPI(b *testing.B) {
	st, err := demostore.Store(0)
	if err != nil {
		b.Fatal(err)
	}
	api, tools := kmhttp.NewHandler(st), mcp.NewHandler(st)
	mux := http.NewServeMux()
	mux.Handle(kmhttp.BasePath+"/", api)
	mux.Handle(mcp.BasePath, tools)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()

	b.Run("server", func(b *testing.B) {
		serve := func(h http.Handler, r *http.Request) func() []byte {
			return func() []byte {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r.Clone(ctx))
				if w.Code != http.StatusOK {
					b.Fatal(w.Code, w.Body.String())
				}
				return w.Body.Bytes()
			}
		}
		post := httptest.NewRequest(http.MethodPost, mcp.BasePath, nil)
		toolHeaders(post.Header)
		tool := serve(tools, post)
		kmapi := serve(api, httptest.NewRequest(http.MethodGet, benchQueryURL, nil))
		call := func() []byte {
			post.Body = io.NopCloser(strings.NewReader(benchToolCall))
			return tool()
		}
		decodeAny(b, call()) // the answers are pages of 50 rows; the loop only serves them
		decodeAny(b, kmapi())
		benchPair(b, call, kmapi, nil)
	})
	get := func() []byte { return httpBody(b, http.MethodGet, srv.URL+benchQueryURL, "") }
	b.Run("http", func(b *testing.B) {
		benchPair(b, func() []byte { return httpBody(b, http.MethodPost, srv.URL+mcp.BasePath, benchToolCall) }, get, decodeAny)
	})
	b.Run("sdk-client", func(b *testing.B) {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: srv.URL + mcp.BasePath, DisableStandaloneSSE: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		args := map[string]any{"km": "o2c", "record": "ORDERS", "fields": []string{"ORDER_ID", "NET_VALUE", "STATUS"},
			"filterExpr": []string{"NET_VALUE gt 1000"}, "sort": []string{"-NET_VALUE"}, "pageSize": 50}
		var tool, kmapi time.Duration
		for b.Loop() {
			t0 := time.Now()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolQuery, Arguments: args})
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
			t1 := time.Now()
			decodeAny(b, get())
			kmapi += time.Since(t1)
			tool += t1.Sub(t0)
		}
		reportPair(b, tool, kmapi)
	})
}

// toolHeaders sets the headers a Streamable HTTP client sends with a call (2025-06-18).
func toolHeaders(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Mcp-Protocol-Version", "2025-06-18")
}

// benchPair times tool and kmapi alternately, each answer read by read (if not nil), and
// reports both and their ratio.
func benchPair(b *testing.B, tool, kmapi func() []byte, read func(*testing.B, []byte)) {
	if read == nil {
		read = func(*testing.B, []byte) {}
	}
	var dt, da time.Duration
	for b.Loop() {
		t0 := time.Now()
		read(b, tool())
		t1 := time.Now()
		read(b, kmapi())
		da += time.Since(t1)
		dt += t1.Sub(t0)
	}
	reportPair(b, dt, da)
}

func reportPair(b *testing.B, tool, kmapi time.Duration) {
	n := float64(b.N)
	b.ReportMetric(float64(tool.Microseconds())/n, "µs/tool-call")
	b.ReportMetric(float64(kmapi.Microseconds())/n, "µs/api-get")
	b.ReportMetric(float64(tool)/float64(kmapi), "mcp/api")
}

// httpBody sends a request (a POST with the headers of a tool call) and returns the
// answer's body, failing b on anything but a 200.
func httpBody(b *testing.B, method, url, body string) []byte {
	r, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	if method == http.MethodPost {
		toolHeaders(r.Header)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatal(resp.Status, err, string(out))
	}
	return out
}

// decodeAny decodes a JSON answer into generic values, as a client that reads it does,
// and fails b on an answer that is no page of 50 rows (a KM API page, or a tool result
// whose structuredContent is one).
func decodeAny(b *testing.B, body []byte) {
	var v struct {
		Result *struct {
			StructuredContent map[string]any `json:"structuredContent"`
			Content           []any          `json:"content"`
		} `json:"result"`
		Content []any `json:"content"` // the KM API's page
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&v); err != nil {
		b.Fatal(err, string(body))
	}
	rows := v.Content
	if v.Result != nil {
		rows, _ = v.Result.StructuredContent["rows"].([]any)
	}
	if len(rows) != 50 {
		b.Fatalf("not a page of 50 rows: %.300s", body)
	}
}
