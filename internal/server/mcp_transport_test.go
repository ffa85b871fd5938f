package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/mcp"
)

// mcpInitialize is the first request of every MCP session.
const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// sendMCP posts body to the MCP endpoint of srv with the given Host and extra headers.
func sendMCP(t *testing.T, srvURL, host, key string, headers map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srvURL+mcp.BasePath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "AppKey "+key)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestMCPOriginIsValidated is item 1 of issue 31: the Streamable HTTP transport says servers
// MUST validate Origin. The rebinding request (Host: evil.example.com, Origin:
// http://evil.example.com) with a valid key was answered 200; it is 403 now, before the
// credentials are looked at. Clients without Origin, pages of the server's own origin and
// -cors-origins pass.
func TestMCPOriginIsValidated(t *testing.T) {
	a := newTestApp(t, config{burst: -1, concurrency: -1, corsOrigins: []string{"https://agent.example", "https://*.tools.example"}})
	srv := httptest.NewServer(a.handler)
	defer srv.Close()
	localhost := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	const refusal = `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: the Origin header names an origin that may not call this MCP server"}}` + "\n"
	for _, c := range []struct {
		name, host, origin, key string
		status                  int
	}{
		{"the rebinding request of the issue", "evil.example.com", "http://evil.example.com", a.devKey, 403},
		{"a foreign origin without credentials", "evil.example.com", "http://evil.example.com", "", 403},
		{"a foreign origin with the server's Host", "", "http://evil.example.com", a.devKey, 403},
		{"the server's origin over https", "", strings.Replace(srv.URL, "http:", "https:", 1), a.devKey, 403},
		{"null", "", "null", a.devKey, 403},
		{"no Origin (a non-browser client)", "evil.example.com", "", a.devKey, 200},
		{"the server's own origin", "", srv.URL, a.devKey, 200},
		{"localhost on the loopback listener's port", "", localhost, a.devKey, 200},
		{"a -cors-origins origin", "", "https://agent.example", a.devKey, 200},
		{"a -cors-origins wildcard, any case", "", "https://Chat.Tools.Example", a.devKey, 200},
		{"an allowed origin without credentials", "", "https://agent.example", "", 401},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := map[string]string{}
			if c.origin != "" {
				h["Origin"] = c.origin
			}
			resp, body := sendMCP(t, srv.URL, c.host, c.key, h, mcpInitialize)
			if resp.StatusCode != c.status {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, c.status)
			}
			switch c.status {
			case 403:
				if body != refusal || resp.Header.Get("Content-Type") != "application/json" {
					t.Errorf("body %q (%s), want %q", body, resp.Header.Get("Content-Type"), refusal)
				}
			case 200:
				if !strings.Contains(body, `"protocolVersion":"2025-06-18"`) {
					t.Errorf("body %s", body)
				}
			}
		})
	}
	// The same check without -cors-origins: only the server's own origin.
	b := newTestApp(t, config{burst: -1, concurrency: -1})
	srvB := httptest.NewServer(b.handler)
	defer srvB.Close()
	if resp, body := sendMCP(t, srvB.URL, "", b.devKey, map[string]string{"Origin": "https://agent.example"}, mcpInitialize); resp.StatusCode != 403 {
		t.Errorf("no -cors-origins, foreign origin: %d %s", resp.StatusCode, body)
	}
	if resp, body := sendMCP(t, srvB.URL, "", b.devKey, map[string]string{"Origin": srvB.URL}, mcpInitialize); resp.StatusCode != 200 {
		t.Errorf("no -cors-origins, own origin: %d %s", resp.StatusCode, body)
	}
}

// TestMCPCORSPreflight is item 2 of issue 31: with -cors-origins, a browser MCP client's
// preflight that asks for mcp-protocol-version got 204 without any Access-Control-Allow-*
// header. It is allowed now, and the answer lets the script read the MCP headers.
func TestMCPCORSPreflight(t *testing.T) {
	a := newTestApp(t, config{burst: -1, concurrency: -1, corsOrigins: []string{"https://agent.example"}})
	srv := httptest.NewServer(a.handler)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+mcp.BasePath, nil)
	req.Header.Set("Origin", "https://agent.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,last-event-id,mcp-protocol-version,mcp-session-id") // sorted, as browsers send it
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("preflight: %d", resp.StatusCode)
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "https://agent.example" {
		t.Errorf("Access-Control-Allow-Origin %q", got)
	}
	if got := resp.Header.Get("Access-Control-Allow-Methods"); got != "POST" {
		t.Errorf("Access-Control-Allow-Methods %q", got)
	}
	allowed := strings.Split(strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers")), ",")
	for i := range allowed {
		allowed[i] = strings.TrimSpace(allowed[i])
	}
	for _, h := range []string{"authorization", "content-type", "mcp-protocol-version", "mcp-session-id", "last-event-id"} {
		if !slices.Contains(allowed, h) {
			t.Errorf("Access-Control-Allow-Headers %q lacks %s", resp.Header.Get("Access-Control-Allow-Headers"), h)
		}
	}
	// The call itself: allowed origin, and the MCP headers readable by the script.
	post, body := sendMCP(t, srv.URL, "", a.devKey, map[string]string{"Origin": "https://agent.example", "Mcp-Protocol-Version": "2025-06-18"}, mcpInitialize)
	if post.StatusCode != 200 || post.Header.Get("Access-Control-Allow-Origin") != "https://agent.example" {
		t.Fatalf("POST: %d %q %s", post.StatusCode, post.Header.Get("Access-Control-Allow-Origin"), body)
	}
	exposed := strings.ToLower(post.Header.Get("Access-Control-Expose-Headers"))
	for _, h := range []string{"mcp-session-id", "mcp-protocol-version", "www-authenticate"} {
		if !strings.Contains(exposed, h) {
			t.Errorf("Access-Control-Expose-Headers %q lacks %s", exposed, h)
		}
	}
}
