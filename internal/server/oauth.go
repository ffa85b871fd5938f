package server

import (
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kmkit/kmkit/auth"
	"github.com/kmkit/kmkit/auth/keysfile"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/mcp"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/scim/scimhttp"
	"github.com/kmkit/kmkit/web/publicurl"
)

// oauthResources are the paths of the resources whose Protected Resource Metadata the
// server publishes when the keys file names identity providers: the server as a whole ("")
// and each API that takes Bearer tokens. The reporting API takes only x-api-key.
var oauthResources = []struct {
	path, name string
}{
	{"", "kmkit"},
	{kmhttp.BasePath, "kmkit Knowledge Model API"},
	{odata.BasePath, "kmkit OData"},
	{scimhttp.BasePath, "kmkit SCIM"},
	{mcp.BasePath, "kmkit MCP server"},
}

// publicBase is the public URL of the server for r (package publicurl), "" when unknown.
func publicBase(r *http.Request) string {
	base, _ := publicurl.From(r)
	return base
}

// mountResourceMetadata serves GET /.well-known/oauth-protected-resource{path} for each of
// oauthResources, naming servers as the authorization servers and scopes as the scopes.
func mountResourceMetadata(mux *http.ServeMux, servers, scopes []string) {
	for _, res := range oauthResources {
		path, name := res.path, res.name
		mux.Handle("GET "+auth.WellKnownResourceMetadata+path, auth.ResourceMetadataHandler(func(r *http.Request) auth.ResourceMetadata {
			return auth.ResourceMetadata{Resource: publicBase(r) + path, AuthorizationServers: servers, ScopesSupported: scopes, ResourceName: name}
		}))
	}
}

// withResourceMetadata returns p naming the metadata of the resource at path in its 401s.
func withResourceMetadata(p auth.Policy, path string) auth.Policy {
	p.ResourceMetadata = func(r *http.Request) string {
		return publicBase(r) + auth.WellKnownResourceMetadata + path
	}
	return p
}

// oauthScopes are the scope values that grant access through the file's issuers: the keys
// of their scope mappings, and the permission names where an issuer has none (or keys
// written in the file verify the tokens).
func oauthScopes(f *keysfile.File) []string {
	var out []string
	names := f.JWT.Issuer != ""
	for _, iss := range f.JWT.Issuers {
		if iss.Claims.Scopes == nil {
			names = true
		}
		for s := range iss.Claims.Scopes {
			out = append(out, s)
		}
	}
	if names {
		for _, p := range auth.AllPermissions {
			out = append(out, string(p))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// registerJWKS exports the state of each issuer's key cache: kmkit_jwks_up is 0 while the
// last fetch failed and tokens are verified with the keys cached before.
func registerJWKS(reg prometheus.Registerer, v *auth.JWTVerifier) error {
	status := func(issuer string) auth.IssuerStatus {
		for _, st := range v.IssuerStatus() {
			if st.Issuer == issuer {
				return st
			}
		}
		return auth.IssuerStatus{}
	}
	for _, st := range v.IssuerStatus() {
		labels := prometheus.Labels{"issuer": st.Issuer}
		issuer := st.Issuer
		for _, c := range []prometheus.Collector{
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kmkit", Name: "jwks_up", ConstLabels: labels,
				Help: "1 when the last fetch of the issuer's JWKS succeeded; 0 while tokens are verified with the keys cached before."},
				func() float64 {
					if st := status(issuer); st.LastSuccess.IsZero() || st.Stale() {
						return 0
					}
					return 1
				}),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kmkit", Name: "jwks_keys", ConstLabels: labels,
				Help: "Signing keys of the issuer in the cache."},
				func() float64 { return float64(status(issuer).Keys) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kmkit", Name: "jwks_last_success_timestamp_seconds", ConstLabels: labels,
				Help: "Time of the last successful fetch of the issuer's JWKS (0 before the first)."},
				func() float64 {
					if t := status(issuer).LastSuccess; !t.IsZero() {
						return float64(t.UnixNano()) / 1e9
					}
					return 0
				}),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "kmkit", Name: "jwks_fetch_failures_total", ConstLabels: labels,
				Help: "Failed fetches of the issuer's discovery document or JWKS."},
				func() float64 { return float64(status(issuer).Failures) }),
		} {
			if err := reg.Register(c); err != nil {
				return err
			}
		}
	}
	return nil
}
