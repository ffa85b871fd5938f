package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kmkit/kmkit/auth/idptest"
	"github.com/kmkit/kmkit/mcp"
)

// idpApp starts the reference server with a keys file naming idp as an identity provider
// (found by OIDC discovery), its claims mapped: org.id the team, tid the tenant, the scope
// kmkit.all every permission, kmkit.read km and mcp.
func idpApp(t *testing.T, idp *idptest.IdP) (*app, *httptest.Server) {
	t.Helper()
	return issuerApp(t, idp.URL())
}

// issuerApp is idpApp for the identity provider at issuer.
func issuerApp(t *testing.T, issuer string) (*app, *httptest.Server) {
	t.Helper()
	keys := filepath.Join(t.TempDir(), "keys.yaml")
	data := fmt.Sprintf(`keys:
  - {key: "app-key-00001", name: app, team: acme, permissions: [km]}
jwt:
  issuers:
    - issuer: %s
      audience: kmkit
      unknownKidRefresh: 100ms
      claims: {team: org.id, tenant: tid, permissions: [scp]}
      scopes:
        kmkit.all: [km, odata, scim, mcp, metrics]
        kmkit.read: [km, mcp]
`, issuer)
	if err := os.WriteFile(keys, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newTestApp(t, config{keysFile: keys, db: "memory:", burst: -1, concurrency: -1})
	t.Cleanup(func() { a.close() })
	srv := httptest.NewServer(a.handler)
	t.Cleanup(srv.Close)
	return a, srv
}

// call sends method path with a Bearer token (none when ""), and returns the status, the
// headers and the body.
func call(t *testing.T, method, url, token, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestProtectedResourceMetadata is item 5 of issue 31: /.well-known/oauth-protected-resource
// was 404 and a 401 did not point to it, so an MCP client that signs in with OAuth could
// not connect. The metadata names the configured identity provider, for the server and
// for each API that takes Bearer tokens, and a 401 names it.
func TestProtectedResourceMetadata(t *testing.T) {
	idp := idptest.New(t)
	_, srv := idpApp(t, idp)
	for _, path := range []string{"", "/intelligence/api", "/intelligence/api/odata", "/user-provisioning/scim/v2", "/intelligence/api/mcp"} {
		status, h, body := call(t, "GET", srv.URL+"/.well-known/oauth-protected-resource"+path, "", "")
		var doc map[string]any
		if status != 200 || h.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(body), &doc) != nil {
			t.Fatalf("%s: %d %s", path, status, body)
		}
		want := map[string]any{"resource": srv.URL + path, "authorization_servers": []any{idp.URL()},
			"scopes_supported": []any{"kmkit.all", "kmkit.read"}, "bearer_methods_supported": []any{"header"}}
		for k, v := range want {
			if fmt.Sprint(doc[k]) != fmt.Sprint(v) {
				t.Errorf("%s: %s = %v, want %v", path, k, doc[k], v)
			}
		}
	}
	// The request of the issue: an MCP client's first call without a token.
	status, h, body := call(t, "POST", srv.URL+mcp.BasePath, "", mcpInitialize)
	want := `Bearer realm="kmkit", resource_metadata="` + srv.URL + `/.well-known/oauth-protected-resource/intelligence/api/mcp", AppKey realm="kmkit"`
	if status != 401 || h.Get("WWW-Authenticate") != want {
		t.Errorf("MCP without a token: %d %q %s; want 401 %q", status, h.Get("WWW-Authenticate"), body, want)
	}
	for path, resource := range map[string]string{
		"/intelligence/api/knowledge-models": "/intelligence/api",
		"/intelligence/api/odata/o2c.svc/":   "/intelligence/api/odata",
		"/user-provisioning/scim/v2/Users":   "/user-provisioning/scim/v2",
		"/metrics":                           "",
	} {
		status, h, _ := call(t, "GET", srv.URL+path, "expired.or.forged", "")
		if want := `resource_metadata="` + srv.URL + `/.well-known/oauth-protected-resource` + resource + `"`; status != 401 || !strings.Contains(h.Get("WWW-Authenticate"), want) {
			t.Errorf("%s: %d %q, want 401 naming %s", path, status, h.Get("WWW-Authenticate"), want)
		}
	}
	// The reporting API takes x-api-key only: no Bearer challenge.
	if status, h, _ := call(t, "GET", srv.URL+"/api/v1/facets", "", ""); status != 401 || h.Get("WWW-Authenticate") != `x-api-key realm="kmkit"` {
		t.Errorf("reporting: %d %q", status, h.Get("WWW-Authenticate"))
	}
	// Without identity providers there is no metadata, and the challenge is as before.
	b := newTestApp(t, config{burst: -1, concurrency: -1})
	if w := get(t, b.handler, "/.well-known/oauth-protected-resource", ""); w.Code != 404 {
		t.Errorf("without issuers: %d", w.Code)
	}
	if w := get(t, b.handler, "/intelligence/api/knowledge-models", ""); w.Header().Get("WWW-Authenticate") != `AppKey realm="kmkit", Bearer realm="kmkit"` {
		t.Errorf("without issuers: %q", w.Header().Get("WWW-Authenticate"))
	}
}

// TestIdentityProviderTokens is item 6 of issue 31 through the server: tokens of an IdP
// found by discovery are accepted by the APIs; its key rotation needs no restart; while
// its JWKS is unreachable the cached keys serve and the metrics say so; teams are kept
// apart through the mapped claims.
func TestIdentityProviderTokens(t *testing.T) {
	idp := idptest.New(t)
	_, srv := idpApp(t, idp)
	acme := func(alg string) string {
		return idp.Token(t, alg, idp.Claims("ann", map[string]any{"org": map[string]any{"id": "acme"}, "scp": []any{"kmkit.all"}}))
	}
	blue := idp.Token(t, "ES256", idp.Claims("bob", map[string]any{"org": map[string]any{"id": "blue"}, "scp": "kmkit.all"}))
	reader := idp.Token(t, "RS256", idp.Claims("rita", map[string]any{"org": map[string]any{"id": "acme"}, "scp": "kmkit.read"}))
	for _, tok := range []string{acme("RS256"), acme("ES256")} {
		if status, _, body := call(t, "GET", srv.URL+"/intelligence/api/knowledge-models", tok, ""); status != 200 || !strings.Contains(body, `"o2c"`) {
			t.Fatalf("KM API with an IdP token: %d %s", status, body)
		}
	}
	if status, _, body := call(t, "GET", srv.URL+"/user-provisioning/scim/v2/Users", reader, ""); status != 403 || !strings.Contains(body, "scim permission") {
		t.Errorf("kmkit.read on SCIM: %d %s", status, body)
	}
	// Teams apart: a user acme creates is not blue's.
	status, _, body := call(t, "POST", srv.URL+"/user-provisioning/scim/v2/Users", acme("RS256"),
		`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"ann@acme.example"}`)
	if status != 201 {
		t.Fatalf("SCIM create: %d %s", status, body)
	}
	for _, c := range []struct {
		tok  string
		want string
	}{{acme("ES256"), `"totalResults":1`}, {blue, `"totalResults":0`}} {
		if status, _, body := call(t, "GET", srv.URL+`/user-provisioning/scim/v2/Users?filter=userName%20eq%20%22ann@acme.example%22`, c.tok, ""); status != 200 || !strings.Contains(body, c.want) {
			t.Errorf("SCIM list: %d %s, want %s", status, body, c.want)
		}
	}
	// The IdP rotates its key: the new key's tokens work without a restart.
	idp.Rotate(t, "RS256")
	if status, _, body := call(t, "GET", srv.URL+"/intelligence/api/knowledge-models", acme("RS256"), ""); status != 200 {
		t.Fatalf("after rotation: %d %s", status, body)
	}
	metric := func(name string) string {
		_, _, body := call(t, "GET", srv.URL+"/metrics", acme("RS256"), "")
		for line := range strings.SplitSeq(body, "\n") {
			if strings.HasPrefix(line, name+`{issuer="`+idp.URL()+`"}`) {
				return strings.Fields(line)[1]
			}
		}
		t.Fatalf("no %s in the metrics", name)
		return ""
	}
	if up, keys := metric("kmkit_jwks_up"), metric("kmkit_jwks_keys"); up != "1" || keys != "2" {
		t.Errorf("kmkit_jwks_up %s, kmkit_jwks_keys %s; want 1 and 2", up, keys)
	}
	// The IdP goes down; a token naming a new kid makes the server try the JWKS, fail,
	// and keep serving with the cached keys.
	idp.SetDown(true)
	time.Sleep(150 * time.Millisecond)
	idp.Rotate(t, "ES256")
	if status, _, _ := call(t, "GET", srv.URL+"/intelligence/api/knowledge-models", acme("ES256"), ""); status != 401 {
		t.Errorf("a key fetched while the IdP is down: %d", status)
	}
	if status, _, _ := call(t, "GET", srv.URL+"/intelligence/api/knowledge-models", acme("RS256"), ""); status != 200 {
		t.Errorf("a cached key while the IdP is down: %d", status)
	}
	if up, failures := metric("kmkit_jwks_up"), metric("kmkit_jwks_fetch_failures_total"); up != "0" || failures == "0" {
		t.Errorf("while down: kmkit_jwks_up %s, failures %s", up, failures)
	}
}
