package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/mcp"
)

// appKeyTransport sends every request with an AppKey.
type appKeyTransport struct{ key string }

func (t appKeyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("AppKey", t.key)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPBehindTheGuard drives the mounted MCP endpoint with the SDK's Streamable HTTP
// client: the mcp permission is required, and a query answers the KM API's rows.
func TestMCPBehindTheGuard(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys.yaml")
	data := "keys:\n" +
		"  - {key: \"mcp-key-0001\", name: agent, team: acme, permissions: [km, mcp]}\n" +
		"  - {key: \"km-key-00001\", name: app, team: acme, permissions: [km]}\n"
	if err := os.WriteFile(keys, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newTestApp(t, config{keysFile: keys, burst: -1, concurrency: -1})
	srv := httptest.NewServer(a.handler)
	defer srv.Close()

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, c := range []struct {
		key    string
		status int
		code   string
	}{{"", 401, ""}, {"km-key-00001", 403, "ADMIN_ACCESS_ERROR"}} {
		r := httptest.NewRequest(http.MethodPost, mcp.BasePath, strings.NewReader(initialize))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if c.key != "" {
			r.Header.Set("Authorization", "AppKey "+c.key)
		}
		w := httptest.NewRecorder()
		a.handler.ServeHTTP(w, r)
		if w.Code != c.status || !strings.Contains(w.Body.String(), c.code) {
			t.Errorf("key %q: %d %s, want %d %s", c.key, w.Code, w.Body, c.status, c.code)
		}
	}

	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + mcp.BasePath,
		HTTPClient: &http.Client{Transport: appKeyTransport{"mcp-key-0001"}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if len(names) != 5 {
		t.Errorf("tools %v", names)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolQuery, Arguments: map[string]any{
		"km": "o2c", "record": "ORDERS", "fields": []string{"ORDER_ID"}, "sort": []string{"-ORDER_ID"}, "pageSize": 3}})
	if err != nil || res.IsError {
		t.Fatalf("query: %v %v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var got struct{ Rows []map[string]any }
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	w := get(t, a.handler, "/intelligence/api/knowledge-models/o2c/records/ORDERS/query?fields=ORDER_ID&sort=-ORDER_ID&pageSize=3", "mcp-key-0001")
	var want struct{ Content []map[string]any }
	if err := json.Unmarshal(w.Body.Bytes(), &want); err != nil || w.Code != 200 {
		t.Fatalf("KM API: %d %s", w.Code, w.Body)
	}
	if len(want.Content) != 3 || !reflect.DeepEqual(got.Rows, want.Content) {
		t.Errorf("rows %v, KM API %v", got.Rows, want.Content)
	}
}
