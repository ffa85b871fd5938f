package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/kmkit/kmkit/auth/idptest"
	"github.com/kmkit/kmkit/mcp"
)

// tokenSurfaces are the requests of every surface that takes Bearer tokens, and how each
// writes a refusal's detail: {"error": ...} (KM API, OData and its $batch, MCP over
// Streamable HTTP, metrics) or an RFC 7644 Error (SCIM, status as a string).
var tokenSurfaces = []struct {
	name, method, path, body string
	scim                     bool
}{
	{"KM API", "GET", "/intelligence/api/knowledge-models", "", false},
	{"OData", "GET", "/intelligence/api/odata/o2c.svc/", "", false},
	{"OData $batch", "POST", "/intelligence/api/odata/o2c.svc/$batch", `{"requests":[{"id":"1","method":"GET","url":"$metadata"}]}`, false},
	{"SCIM", "GET", "/user-provisioning/scim/v2/Users", "", true},
	{"MCP", "POST", mcp.BasePath, mcpInitialize, false},
	{"metrics", "GET", "/metrics", "", false},
}

// refusalDetail reads the detail of a refusal body in the surface's shape, checking the
// shape on the way.
func refusalDetail(t *testing.T, scim bool, status int, h http.Header, body string) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Errorf("body %q: %v", body, err)
		return ""
	}
	if scim {
		if h.Get("Content-Type") != "application/scim+json" || doc["status"] != strconv.Itoa(status) ||
			!strings.Contains(body, `"urn:ietf:params:scim:api:messages:2.0:Error"`) {
			t.Errorf("SCIM refusal %s %s", h.Get("Content-Type"), body)
		}
		d, _ := doc["detail"].(string)
		return d
	}
	if h.Get("Content-Type") != "application/json" || len(doc) != 1 {
		t.Errorf("refusal %s %s, want {\"error\": ...} as application/json", h.Get("Content-Type"), body)
	}
	d, _ := doc["error"].(string)
	return d
}

// TestTokenRefusalsAlikeOnEverySurface: a token refused for any reason gets the same
// answer from every surface that takes Bearer tokens: 401, the Bearer challenge saying
// error="invalid_token" (RFC 6750, 3.1) and naming the surface's resource metadata, no rate limit headers (no principal to count against),
// and the same reason in the surface's error shape. A token the IdP signed but that lacks
// a permission is 403 alike, as a problem body.
func TestTokenRefusalsAlikeOnEverySurface(t *testing.T) {
	idp := idptest.New(t)
	_, srv := idpApp(t, idp)
	all := func(edits map[string]any) jwt.MapClaims {
		c := idp.Claims("ann", map[string]any{"org": map[string]any{"id": "acme"}, "scp": "kmkit.all"})
		for k, v := range edits {
			c[k] = v
		}
		return c
	}
	withHeader := func(header map[string]any) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, all(nil))
		tok.Header["kid"] = idp.Kid("RS256")
		for k, v := range header {
			tok.Header[k] = v
		}
		s, err := tok.SignedString(idp.PrivateKey(idp.Kid("RS256")))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	good := idp.Token(t, "RS256", all(nil))
	forged := good[:len(good)-4] + "AAAA"
	for _, c := range []struct {
		name, token, reason string
	}{
		{"expired", idp.Token(t, "RS256", all(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()})), "token is expired"},
		{"forged signature", forged, "token signature is invalid"},
		{"other audience", idp.Token(t, "ES256", all(map[string]any{"aud": "another-api"})), "token has the wrong audience"},
		{"crit header", withHeader(map[string]any{"crit": []string{"x"}}), `token header "crit" names extensions this verifier does not process`},
		{"logout token", withHeader(map[string]any{"typ": "logout+jwt"}), `token type "logout+jwt" is not an access token: use typ JWT or at+jwt`},
		{"HS256 with the public key", "", `token alg "HS256" is not allowed: use RS256 or ES256`},
	} {
		if c.token == "" {
			c.token = hs256WithJWKS(t, idp)
		}
		for _, s := range tokenSurfaces {
			t.Run(c.name+"/"+s.name, func(t *testing.T) {
				status, h, body := call(t, s.method, srv.URL+s.path, c.token, s.body)
				if status != 401 || h.Get("X-RateLimit-Limit") != "" ||
					!strings.HasPrefix(h.Get("WWW-Authenticate"), `Bearer realm="kmkit", error="invalid_token", resource_metadata="`+srv.URL+"/.well-known/oauth-protected-resource") {
					t.Errorf("%d %q limit %q", status, h.Get("WWW-Authenticate"), h.Get("X-RateLimit-Limit"))
				}
				if got := refusalDetail(t, s.scim, status, h, body); got != c.reason {
					t.Errorf("reason %q, want %q", got, c.reason)
				}
			})
		}
	}
	// 403 is a problem (an RFC 7644 Error on SCIM) with ADMIN_ACCESS_ERROR, counted, and
	// its Bearer challenge says insufficient_scope.
	noPerms := idp.Token(t, "RS256", all(map[string]any{"scp": "openid"}))
	for _, s := range tokenSurfaces {
		status, h, body := call(t, s.method, srv.URL+s.path, noPerms, s.body)
		var doc struct{ Detail, ErrorCode string }
		json.Unmarshal([]byte(body), &doc)
		if status != 403 || h.Get("X-RateLimit-Limit") == "" || !strings.HasPrefix(doc.Detail, "the credentials lack the ") ||
			!strings.HasPrefix(h.Get("WWW-Authenticate"), `Bearer realm="kmkit", error="insufficient_scope", resource_metadata="`+srv.URL) ||
			!s.scim && doc.ErrorCode != "ADMIN_ACCESS_ERROR" {
			t.Errorf("%s without permissions: %d %s", s.name, status, body)
		}
	}
}

// hs256WithJWKS is the alg confusion attack: an HS256 token whose secret is the IdP's
// published JWKS, under the RSA key's kid.
func hs256WithJWKS(t *testing.T, idp *idptest.IdP) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, idp.Claims("ann", map[string]any{"scp": "kmkit.all"}))
	tok.Header["kid"] = idp.Kid("RS256")
	s, err := tok.SignedString(idp.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestUnreachableIdPAnswersPromptly: with an IdP whose discovery never answers, its
// tokens get a 401 saying the keys are not available yet within a few seconds (the wait
// for the first fetch under way, not the fetch's 10-second bound, and never a queue
// behind it), while application keys are served meanwhile.
func TestUnreachableIdPAnswersPromptly(t *testing.T) {
	idp := idptest.New(t)
	hang := make(chan struct{})
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(stuck.Close)
	t.Cleanup(func() { close(hang) }) // before stuck.Close, which waits for the handlers
	_, srv := issuerApp(t, stuck.URL)
	tok := idp.Token(t, "RS256", idp.Claims("ann", map[string]any{"iss": stuck.URL, "scp": "kmkit.all"}))
	want := "the signing keys of issuer " + stuck.URL + " are not available yet"
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			start := time.Now()
			status, h, body := call(t, "GET", srv.URL+"/intelligence/api/knowledge-models", tok, "")
			if status != 401 || refusalDetail(t, false, status, h, body) != want {
				t.Errorf("%d %s, want 401 %q", status, body, want)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("answered after %v", d)
			}
		}()
	}
	for range 4 {
		<-done
	}
	req, _ := http.NewRequest("GET", srv.URL+"/intelligence/api/knowledge-models", nil)
	req.Header.Set("AppKey", "app-key-00001")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("an application key while the IdP hangs: %d", resp.StatusCode)
	}
}
