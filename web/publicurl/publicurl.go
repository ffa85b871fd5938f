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
//
// X-Forwarded-Host must be host[:port] (ParseHost): a DNS name, an IPv4 address or a
// bracketed IPv6 address, and a port from 1 to 65535. A trusted proxy's value that is not
// is ignored (the listener's host is used) and logged at level warn with the peer's
// address, so that a misconfigured proxy shows up in the log rather than in the URLs.
package publicurl

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Resolver is the middleware. Create it with New.
type Resolver struct {
	base    string
	trusted []netip.Prefix
	log     *slog.Logger
}

// Option configures a Resolver.
type Option func(*Resolver)

// WithLogger sets the logger of ignored X-Forwarded-Host values (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(r *Resolver) {
		if l != nil {
			r.log = l
		}
	}
}

// New returns the Resolver of base ("" or an absolute http(s) URL without query, whose path
// is the prefix the APIs are mounted under publicly) and trustedProxies (CIDRs, or single
// addresses, of the proxies whose X-Forwarded-* headers are honoured).
func New(base string, trustedProxies []string, opts ...Option) (*Resolver, error) {
	r := &Resolver{log: slog.Default()}
	for _, o := range opts {
		o(r)
	}
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
		if h := first(r.Header.Get("X-Forwarded-Host")); h != "" {
			if parsed, err := ParseHost(h); err == nil {
				host = parsed
			} else {
				res.log.WarnContext(r.Context(), "publicurl: X-Forwarded-Host of a trusted proxy ignored",
					"peer", r.RemoteAddr, "value", clip(h), "reason", err.Error())
			}
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

// clip shortens a logged header value.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// ParseHost checks that s is host[:port] as X-Forwarded-Host carries it and returns it in
// lower case: a DNS name (letters, digits, hyphens and dots, labels of at most 63
// characters, at most 253 in all), an IPv4 address, or an IPv6 address in brackets
// (without zone), optionally followed by a colon and a port from 1 to 65535.
func ParseHost(s string) (string, error) {
	s = strings.ToLower(s)
	if s == "" || len(s) > 261 {
		return "", fmt.Errorf("host %q: empty or too long", clip(s))
	}
	var host, port string
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", fmt.Errorf("host %q: an IPv6 address without its closing bracket", clip(s))
		}
		a, err := netip.ParseAddr(s[1:end])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", fmt.Errorf("host %q: not an IPv6 address in brackets", clip(s))
		}
		port = s[end+1:]
		if port != "" && port[0] != ':' {
			return "", fmt.Errorf("host %q: text after the IPv6 address", clip(s))
		}
	} else if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i:]
		if !dnsName(host) {
			return "", fmt.Errorf("host %q: not a DNS name or an IPv4 address", clip(s))
		}
	} else if !dnsName(s) {
		return "", fmt.Errorf("host %q: not a DNS name or an IPv4 address", clip(s))
	}
	if port != "" {
		digits := port[1:]
		n, err := strconv.Atoi(digits)
		if err != nil || digits == "" || len(digits) > 5 || strings.TrimLeft(digits, "0123456789") != "" || n < 1 || n > 65535 {
			return "", fmt.Errorf("host %q: the port is not a number from 1 to 65535", clip(s))
		}
	}
	return s, nil
}

// dnsName reports whether s is a DNS name or an IPv4 address in dotted form.
func dnsName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	if strings.TrimLeft(s, "0123456789.") == "" {
		a, err := netip.ParseAddr(s)
		return err == nil && a.Is4()
	}
	for label := range strings.SplitSeq(strings.TrimSuffix(s, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
