package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/kmkit/kmkit/principal"
)

func TestResourceMetadataURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.example.com":                           "https://api.example.com/.well-known/oauth-protected-resource",
		"https://api.example.com/":                          "https://api.example.com/.well-known/oauth-protected-resource",
		"https://api.example.com:8443/intelligence/api/mcp": "https://api.example.com:8443/.well-known/oauth-protected-resource/intelligence/api/mcp",
	} {
		if got := ResourceMetadataURL(in); got != want {
			t.Errorf("ResourceMetadataURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestChallengeNamesResourceMetadata: with Policy.ResourceMetadata a 401 leads with a
// Bearer challenge naming the metadata; a 403 to a token that lacks the permission says
// insufficient_scope there too (RFC 6750, 3.1), and a 403 to a key carries no challenge.
func TestChallengeNamesResourceMetadata(t *testing.T) {
	g := newTestGuard(t, Config{})
	h := g.Wrap(Policy{Permission: principal.PermSCIM, ResourceMetadata: func(r *http.Request) string {
		return "https://api.example.com" + WellKnownResourceMetadata + "/x"
	}}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	want := `Bearer realm="kmkit", resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/x", AppKey realm="kmkit"`
	if w.Code != 401 || w.Header().Get("WWW-Authenticate") != want {
		t.Errorf("%d %q, want 401 %q", w.Code, w.Header().Get("WWW-Authenticate"), want)
	}
	// A refused token: the Bearer challenge says so (RFC 6750, 3.1), before the metadata.
	r.Header.Set("Authorization", "Bearer "+sign(t, jwt.SigningMethodRS256, testRSA, "rs", claims(map[string]any{"aud": "x"})))
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	want = `Bearer realm="kmkit", error="invalid_token", resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/x", AppKey realm="kmkit"`
	if w.Code != 401 || w.Header().Get("WWW-Authenticate") != want {
		t.Errorf("a refused token: %d %q, want 401 %q", w.Code, w.Header().Get("WWW-Authenticate"), want)
	}
	r.Header.Set("Authorization", "Bearer "+sign(t, jwt.SigningMethodRS256, testRSA, "rs", claims(nil))) // km odata, not scim
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	want = `Bearer realm="kmkit", error="insufficient_scope", resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/x"`
	if w.Code != 403 || w.Header().Get("WWW-Authenticate") != want {
		t.Errorf("a token without the permission: %d %q, want 403 %q", w.Code, w.Header().Get("WWW-Authenticate"), want)
	}
	r.Header.Set("Authorization", "AppKey report-key-0001") // reporting, not scim
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 403 || w.Header().Get("WWW-Authenticate") != "" {
		t.Errorf("a key without the permission: %d %q, want 403 without a challenge", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}

func TestResourceMetadataHandler(t *testing.T) {
	h := ResourceMetadataHandler(func(r *http.Request) ResourceMetadata {
		return ResourceMetadata{Resource: "https://api.example.com/mcp", AuthorizationServers: []string{"https://idp.example"}, ScopesSupported: []string{"mcp"}}
	})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	want := `{"resource":"https://api.example.com/mcp","authorization_servers":["https://idp.example"],"scopes_supported":["mcp"],"bearer_methods_supported":["header"]}` + "\n"
	if w.Code != 200 || w.Body.String() != want || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("%d %s %q", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
}
