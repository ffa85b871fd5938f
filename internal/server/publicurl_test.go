package server

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestPublicURL sends requests with a forged Host and X-Forwarded-* headers to a server
// listening on a real port: absolute URLs (OData @odata.context, SCIM Location and
// meta.location, the KM /spec servers) use the listener's address, -base-url when given, or
// what a -trusted-proxies peer forwards; never the client's Host.
func TestPublicURL(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.yaml")
	data := "keys:\n  - key: \"all-key-0001\"\n    name: all\n    team: acme\n    tenant: 7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f\n    permissions: [km, odata, scim, reporting]\n"
	if err := os.WriteFile(keys, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name           string
		baseURL        string
		trustedProxies []string
		want           string // "" means the listener's own URL
	}{
		{name: "listener"},
		{name: "untrusted peer", trustedProxies: []string{"10.0.0.0/8"}},
		{name: "base URL", baseURL: "https://kmkit.example.com/", want: "https://kmkit.example.com"},
		{name: "trusted proxy", trustedProxies: []string{"127.0.0.1/32"}, want: "https://proxy.example.com"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newTestApp(t, config{keysFile: keys, db: "memory:", baseURL: tt.baseURL, trustedProxies: tt.trustedProxies})
			srv := httptest.NewServer(a.handler)
			defer srv.Close()
			want := tt.want
			if want == "" {
				want = srv.URL
			}
			send := func(method, path, body string) (*http.Response, map[string]any) {
				t.Helper()
				req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				req.Host = "evil.example"
				req.Header.Set("X-Forwarded-Host", "proxy.example.com")
				req.Header.Set("X-Forwarded-Proto", "https")
				req.Header.Set("Authorization", "AppKey all-key-0001")
				if body != "" {
					req.Header.Set("Content-Type", "application/scim+json")
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				var v map[string]any
				if err := json.Unmarshal(b, &v); err != nil {
					t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
				}
				return resp, v
			}
			_, odata := send("GET", "/intelligence/api/odata/o2c.svc/ORDERS_entries?$top=1", "")
			if got, _ := odata["@odata.context"].(string); !strings.HasPrefix(got, want+"/intelligence/api/odata/o2c.svc/$metadata") {
				t.Errorf("@odata.context %q, want it under %s", got, want)
			}
			resp, user := send("POST", "/user-provisioning/scim/v2/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"ann@example.com"}`)
			loc, _ := user["meta"].(map[string]any)["location"].(string)
			if resp.StatusCode != 201 || !strings.HasPrefix(loc, want+"/user-provisioning/scim/v2/Users/") || resp.Header.Get("Location") != loc {
				t.Errorf("SCIM create: %d, meta.location %q, Location %q; want both under %s", resp.StatusCode, loc, resp.Header.Get("Location"), want)
			}
			_, spec := send("GET", "/intelligence/api/knowledge-models/o2c/spec", "")
			servers, _ := spec["servers"].([]any)
			if len(servers) == 0 || !strings.HasPrefix(servers[0].(map[string]any)["url"].(string), want) {
				t.Errorf("/spec servers %v, want under %s", servers, want)
			}
		})
	}
}

// TestForwardedHostIsValidated is item 7 of issue 31: from a trusted proxy,
// "X-Forwarded-Host: [::1" produced "@odata.context":"https://[::1/..." and a port of 99999
// was taken as is. Both are ignored now (the listener's host is used, with the proxy's
// scheme) and logged; a valid host[:port] is still honoured.
func TestForwardedHostIsValidated(t *testing.T) {
	var log lockedBuffer
	cfg := config{trustedProxies: []string{"127.0.0.1/32"}, maxPageSize: 5000, maxBody: 1 << 20}
	a, err := newApp(&cfg, slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.handler)
	defer srv.Close()
	listener := strings.TrimPrefix(srv.URL, "http://")
	for _, c := range []struct{ host, want string }{
		{"[::1", "https://" + listener},
		{"api.example.com:99999", "https://" + listener},
		{"api.example.com:0", "https://" + listener},
		{"[::1]:8443", "https://[::1]:8443"},
		{"API.example.com:8443", "https://api.example.com:8443"},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/intelligence/api/odata/o2c.svc/ORDERS_entries?$top=1", nil)
		req.Header.Set("X-Forwarded-Host", c.host)
		req.Header.Set("X-Forwarded-Proto", "https")
		req.Header.Set("Authorization", "AppKey "+a.devKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var body struct {
			Context string `json:"@odata.context"`
		}
		if err := json.Unmarshal(b, &body); err != nil || resp.StatusCode != 200 {
			t.Fatalf("X-Forwarded-Host %q: %d %s", c.host, resp.StatusCode, b)
		}
		if want := c.want + "/intelligence/api/odata/o2c.svc/$metadata#ORDERS_entries"; body.Context != want {
			t.Errorf("X-Forwarded-Host %q: @odata.context %q, want %q", c.host, body.Context, want)
		}
	}
	for _, h := range []string{`value=[::1 `, `value=api.example.com:99999`, `value=api.example.com:0`} {
		if !strings.Contains(log.String(), `msg="publicurl: X-Forwarded-Host of a trusted proxy ignored" peer=127.0.0.1:`) || !strings.Contains(log.String(), h) {
			t.Errorf("the log does not report %s:\n%s", h, log.String())
		}
	}
}

// lockedBuffer is a bytes.Buffer for a logger that requests write to concurrently.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
