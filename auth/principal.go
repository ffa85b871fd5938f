package auth

import (
	"context"
	"slices"
)

// Permission names an API family a principal may call.
type Permission string

// The permissions, one per API family.
const (
	PermKM        Permission = "km"
	PermOData     Permission = "odata"
	PermSCIM      Permission = "scim"
	PermReporting Permission = "reporting"
	// PermMetrics allows reading the server's metrics (FamilyMetrics).
	PermMetrics Permission = "metrics"
	// PermMCP allows calling the MCP server over the Knowledge Models (FamilyMCP).
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
	// Permissions lists the API families the caller may use.
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

type principalKey struct{}

// WithPrincipal returns a copy of ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal stored in ctx by WithPrincipal (or by the middleware).
func PrincipalFrom(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(*Principal)
	return p, ok && p != nil
}
