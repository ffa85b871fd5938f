package mcp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/mcp"
)

// BenchmarkQueryToolVsKMAPI asks the same question as a query tool call over Streamable
// HTTP (the SDK's client) and as GET .../query on the KM API, alternately in the same run
// over the demo KM, and reports both per call and their ratio (mcp/api).
func BenchmarkQueryToolVsKMAPI(b *testing.B) {
	st, err := demostore.Store(0)
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(kmhttp.BasePath+"/", kmhttp.NewHandler(st))
	mux.Handle(mcp.BasePath, mcp.NewHandler(st))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: srv.URL + mcp.BasePath, DisableStandaloneSSE: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	args := map[string]any{"km": "o2c", "record": "ORDERS", "fields": []string{"ORDER_ID", "NET_VALUE", "STATUS"},
		"filterExpr": []string{"NET_VALUE gt 1000"}, "sort": []string{"-NET_VALUE"}, "pageSize": 50}
	url := srv.URL + kmhttp.BasePath + "/knowledge-models/o2c/records/ORDERS/query?fields=ORDER_ID,NET_VALUE,STATUS&filterExpr=NET_VALUE%20gt%201000&sort=-NET_VALUE&pageSize=50"
	var tool, api time.Duration
	for b.Loop() {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolQuery, Arguments: args})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
		t1 := time.Now()
		resp, err := http.Get(url)
		if err != nil || resp.StatusCode != 200 {
			b.Fatal(err, resp)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		t2 := time.Now()
		tool += t1.Sub(t0)
		api += t2.Sub(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tool.Microseconds())/n, "µs/tool-call")
	b.ReportMetric(float64(api.Microseconds())/n, "µs/api-get")
	b.ReportMetric(float64(tool)/float64(api), "mcp/api")
}
