package mcp

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/kmkit/kmkit/web/publicurl"
)

// WithAllowedOrigins names the browser origins, besides the server's own, whose pages may
// call the MCP endpoint (the Origin check of the Streamable HTTP transport): each is "*"
// (any origin) or scheme://host[:port], optionally with one "*" in the host, compared
// without regard to case, as the reference server's -cors-origins takes them.
func WithAllowedOrigins(origins ...string) Option {
	return func(c *config) { c.origins = append(c.origins, origins...) }
}

// CheckOrigin returns next behind the Origin check of the MCP Streamable HTTP transport,
// which says servers must validate the Origin header of every request to defeat DNS
// rebinding: a request without Origin (a non-browser client) passes; so does one whose
// Origin is the server's own public origin (package publicurl's choice for the request,
// never its Host header; a loopback public address also accepts http://localhost on the
// same port) or one of WithAllowedOrigins. Any other Origin, "null" included, is answered
// 403 with a JSON-RPC error without id. A host that mounts the handler without a
// publicurl.Resolver in front has no public origin to compare with: there, browser pages
// need WithAllowedOrigins, even those of the host's own origin.
//
// Handler.ServeHTTP applies the check itself; a server mounting the handler behind its
// authentication wraps the whole chain in CheckOrigin as well, so that a foreign page is
// refused before its credentials are looked at:
//
//	mux.Handle(mcp.BasePath, h.CheckOrigin(guard.Wrap(mcpPolicy, h)))
func (s *Handler) CheckOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.originAllowed(r) {
			refuseOrigin(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// originAllowed reports whether the Origin header of r, if any, may call the endpoint.
func (s *Handler) originAllowed(r *http.Request) bool {
	values := r.Header.Values("Origin")
	switch len(values) {
	case 0:
		return true
	case 1:
	default:
		return false
	}
	origin := strings.ToLower(strings.TrimSpace(values[0]))
	if public, ok := publicurl.From(r); ok && sameOrigin(origin, public) {
		return true
	}
	for _, pattern := range s.opts.origins {
		if matchOrigin(strings.ToLower(pattern), origin) {
			return true
		}
	}
	return false
}

// sameOrigin reports whether origin is the origin of the public URL public.
func sameOrigin(origin, public string) bool {
	p, err := url.Parse(public)
	if err != nil || p.Host == "" {
		return false
	}
	o, err := url.Parse(origin)
	if err != nil || o.Host == "" || o.Path != "" || o.RawQuery != "" || o.User != nil {
		return false
	}
	if !strings.EqualFold(o.Scheme, p.Scheme) {
		return false
	}
	if strings.EqualFold(hostPort(o), hostPort(p)) {
		return true
	}
	// A server whose public address is a loopback one is the page's own when the page
	// was loaded from localhost on the same port.
	if a, err := netip.ParseAddr(p.Hostname()); err == nil && a.IsLoopback() {
		return strings.EqualFold(o.Hostname(), "localhost") && port(o) == port(p)
	}
	return false
}

// hostPort returns the host of u with its port made explicit.
func hostPort(u *url.URL) string { return net.JoinHostPort(u.Hostname(), port(u)) }

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// matchOrigin matches origin against pattern: "*", an origin, or an origin with one "*"
// standing for any text. Both are lower case.
func matchOrigin(pattern, origin string) bool {
	if pattern == "*" {
		return true
	}
	before, after, wild := strings.Cut(pattern, "*")
	if !wild {
		return pattern == origin
	}
	return len(origin) >= len(before)+len(after) && strings.HasPrefix(origin, before) && strings.HasSuffix(origin, after)
}

// originRefusal is the body of a 403 for a foreign Origin: a JSON-RPC error without id, as
// the transport allows.
const originRefusal = `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: the Origin header names an origin that may not call this MCP server"}}` + "\n"

func refuseOrigin(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte(originRefusal))
}
