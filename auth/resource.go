package auth

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// WellKnownResourceMetadata is the path prefix of OAuth 2.0 Protected Resource Metadata
// (RFC 9728, section 3): the metadata of the resource https://host/p is served at
// https://host/.well-known/oauth-protected-resource/p.
const WellKnownResourceMetadata = "/.well-known/oauth-protected-resource"

// ResourceMetadata is the Protected Resource Metadata document of one resource (RFC 9728,
// section 2): what an OAuth client (an MCP host, for one) reads to learn which
// authorization servers issue tokens for the resource.
type ResourceMetadata struct {
	// Resource is the resource's identifier: its URL, as clients name it in token requests
	// (RFC 8707) and as the metadata URL is derived from.
	Resource string `json:"resource"`
	// AuthorizationServers are the issuers whose tokens the resource accepts.
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	// ScopesSupported are the scope values that grant access.
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// BearerMethodsSupported is ["header"]: tokens travel in the Authorization header.
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
	// ResourceName is a human-readable name of the resource.
	ResourceName string `json:"resource_name,omitempty"`
}

// ResourceMetadataURL returns the URL of the metadata of resource, an absolute URL, as RFC
// 9728 (section 3.1) derives it: the well-known prefix inserted between the origin and the
// resource's path.
func ResourceMetadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	return u.Scheme + "://" + u.Host + WellKnownResourceMetadata + path
}

// ResourceMetadataHandler serves the metadata document meta returns for a request, as
// application/json. Clients fetch it without credentials, often from a browser: it is
// public, cacheable for an hour, and readable from any origin.
func ResourceMetadataHandler(meta func(*http.Request) ResourceMetadata) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := meta(r)
		if len(m.BearerMethodsSupported) == 0 {
			m.BearerMethodsSupported = []string{"header"}
		}
		b, err := json.Marshal(m)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "public, max-age=3600")
		h.Set("Access-Control-Allow-Origin", "*")
		w.Write(append(b, '\n'))
	})
}
