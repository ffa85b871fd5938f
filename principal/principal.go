// Package principal holds the authenticated caller of a request and carries it in a
// context.Context: the one type the API handlers (km, odata, scim, reporting, mcp) and the
// authentication middleware (package auth) share.
//
// It depends on nothing but the standard library, so that an API's handler reads the
// caller without linking the credential checks, JWT included, that produced it. A host that
// authenticates requests itself puts its own principal in the request context with
// NewContext and mounts the handlers without package auth.
package principal

import (
	"context"
	"slices"
)

// Permission names an API a principal may call.
type Permission string

// The permissions, one per API (the words of a keys file's permissions and of a token's
// scope).
const (
	PermKM        Permission = "km"
	PermOData     Permission = "odata"
	PermSCIM      Permission = "scim"
	PermReporting Permission = "reporting"
	// PermMetrics allows reading a server's metrics.
	PermMetrics Permission = "metrics"
	// PermMCP allows calling the MCP server over the Knowledge Models (package mcp).
	PermMCP Permission = "mcp"
)

// Principal is the authenticated caller of a request.
type Principal struct {
	// Name identifies the caller in logs and rate limits: a key's name or digest prefix,
	// or a token's subject. Never the key itself.
	Name string
	// Team scopes the KM and SCIM APIs.
	Team string
	// Tenant is the reporting tenant (a UUID in canonical lower-case form), or "".
	Tenant string
	// Permissions lists the APIs the caller may use.
	Permissions []Permission
	// RatePerWindow overrides the limiter's budget for this principal when positive.
	RatePerWindow int
	// Burst overrides the requests per second allowed to this principal when positive.
	Burst int
	// Concurrent overrides the cap on this principal's requests in flight when positive.
	Concurrent int
}

// Can reports whether p holds permission perm.
func (p *Principal) Can(perm Permission) bool {
	return p != nil && slices.Contains(p.Permissions, perm)
}

type contextKey struct{}

// NewContext returns a copy of ctx carrying p.
func NewContext(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, contextKey{}, p)
}

// FromContext returns the principal stored in ctx by NewContext (or by the middleware of
// package auth); ok is false when there is none.
func FromContext(ctx context.Context) (p *Principal, ok bool) {
	p, ok = ctx.Value(contextKey{}).(*Principal)
	return p, ok && p != nil
}
