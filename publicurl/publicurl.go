// Package publicurl decides the public URL that absolute URLs in answers start with (OData
// @odata.context and next links, SCIM meta.location and Location, the KM /spec servers),
// so that a client cannot choose it with a Host or X-Forwarded-* header.
//
// A Resolver is middleware in front of the API handlers. For each request it takes, in this
// order: the configured Base URL; else, when the request comes from a trusted proxy (its
// peer address is in TrustedProxies), the scheme of X-Forwarded-Proto and the host of
// X-Forwarded-Host (first values), falling back to the listener's for a header that is
// absent; else the address of the listener the request arrived at (http, or https over
// TLS). The Host header is never used. X-Forwarded-* headers of requests from other peers
// are removed before the handlers see them. The handlers read the result with From.
package publicurl

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Resolver is the middleware. Create it with New.
type Resolver struct {
	base    string
	trusted []netip.Prefix
}

// New returns the Resolver of base ("" or an absolute http(s) URL without query, whose path
// is the prefix the APIs are mounted under publicly) and trustedProxies (CIDRs, or single
// addresses, of the proxies whose X-Forwarded-* headers are honoured).
func New(base string, trustedProxies []string) (*Resolver, error) {
	r := &Resolver{}
	if base != "" {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, fmt.Errorf("base URL %q: want http(s)://host[:port][/path], without user, query or fragment", base)
		}
		r.base = strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/")
	}
	for _, s := range trustedProxies {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("trusted proxy %q: not a CIDR or an IP address", s)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		r.trusted = append(r.trusted, p.Masked())
	}
	return r, nil
}

type originKey struct{}

// From returns the public URL the Resolver chose for r (scheme, host and public prefix,
// without a trailing slash), or false when no Resolver ran.
func From(r *http.Request) (string, bool) {
	s, ok := r.Context().Value(originKey{}).(string)
	return s, ok && s != ""
}

// forwarded are the headers a trusted proxy sets.
var forwarded = []string{"X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-For", "X-Forwarded-Prefix", "Forwarded"}

// Wrap returns next behind the Resolver.
func (res *Resolver) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		trusted := res.fromTrusted(r)
		if !trusted {
			for _, h := range forwarded {
				r.Header.Del(h)
			}
		}
		if origin := res.origin(r, trusted); origin != "" {
			r = r.WithContext(context.WithValue(r.Context(), originKey{}, origin))
		}
		next.ServeHTTP(w, r)
	})
}

func (res *Resolver) origin(r *http.Request, trusted bool) string {
	if res.base != "" {
		return res.base
	}
	scheme, host := "http", ""
	if r.TLS != nil {
		scheme = "https"
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		host = a.String()
		if ap, err := netip.ParseAddrPort(host); err == nil && ap.Addr().Is4In6() {
			host = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).String()
		}
	}
	if trusted {
		if p := first(r.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
			scheme = p
		}
		if h := first(r.Header.Get("X-Forwarded-Host")); validHost(h) {
			host = h
		}
	}
	if host == "" {
		return ""
	}
	return scheme + "://" + host
}

// fromTrusted reports whether the peer of r is a trusted proxy.
func (res *Resolver) fromTrusted(r *http.Request) bool {
	if len(res.trusted) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	a := ap.Addr().Unmap()
	for _, p := range res.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func first(v string) string {
	v, _, _ = strings.Cut(v, ",")
	return strings.ToLower(strings.TrimSpace(v))
}

// validHost accepts host[:port] made of the characters of DNS names, IP addresses and ports.
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == ':' || c == '[' || c == ']') {
			return false
		}
	}
	return true
}
