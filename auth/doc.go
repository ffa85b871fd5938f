// Package auth authenticates requests to the kmkit APIs and limits their rate.
//
// A request's caller becomes a *principal.Principal (package principal) carried in the
// request context; handlers read it with principal.FromContext. Hosts that authenticate
// requests themselves put their own principal there with principal.NewContext and mount the
// handlers without this package's middleware (and may still answer in each API's error
// shape with the API's writer, such as scimhttp.WriteProblem).
//
// The middleware is a Guard: NewGuard takes an Authenticator (KeySet for application keys,
// JWTVerifier for Bearer tokens, Schemes to combine them, or the host's own), a
// ratelimit.Limiter for request budgets, and the Limits. Guard.Wrap puts a handler behind it
// with the Policy of the handler's API. The package knows no API: a Policy says which
// permission the API needs, how its requests present credentials, how a request names its
// tenant (when it does) and how the API writes its error bodies (an ErrorWriter, which each
// API's package supplies: kmhttp.WriteProblem, odata.WriteProblem, scimhttp.WriteProblem,
// reportinghttp.WriteProblem). The reference server (internal/server) guards the APIs so:
//
//   - KM, OData, SCIM (and mcp and the metrics, with the KM API's errors) read
//     "Authorization: AppKey <key>", "Authorization: Bearer <JWT>" (scheme word in any
//     case) or the header "AppKey: <key>" (AuthorizationHeader); reporting reads x-api-key
//     (APIKeyHeader) and its tenant from x-tenant-id (reportinghttp.RequestTenant).
//   - Refused credentials are 401, with WWW-Authenticate naming the credential form (and,
//     for a refused Bearer token, error="invalid_token", RFC 6750 section 3.1): the
//     policy's writer receives a problem with errorCode ADMIN_AUTHENTICATION_ERROR, which
//     the KM API and OData write as {"error": "..."} (application/json), SCIM as an RFC 7644
//     Error body (application/scim+json, status as a string), reporting as a problem body.
//   - A missing permission is 403 ADMIN_ACCESS_ERROR (to a Bearer token, with the challenge
//     Bearer error="insufficient_scope", RFC 6750). With Policy.Tenant, a key used with
//     another tenant's id is 403, and the reader's errors (for reporting, a missing or
//     malformed x-tenant-id: 400 GENERAL_PARAMETER_MISSING or GENERAL_PARAMETER_ILLEGAL) are
//     answered as it returns them.
//   - Limits give 429 LIMIT_RATE_EXCEEDED with X-RateLimit-Reset and Retry-After. A failing
//     Authenticator or Limiter gives 500 ADMIN_FATAL_ERROR with a support id that is logged
//     with the error, or, when its database cannot be reached (package outage), 503
//     GENERAL_SERVICE_UNAVAILABLE with Retry-After.
//
// Behaviours chosen where the specification is silent:
//
//   - Order of checks: credentials, then (with Policy.Tenant) the tenant the request names,
//     so that a wrong key is 401 whatever the tenant header, then the limits, then the
//     key's tenant, then the permission. So every answer to an authenticated caller, 403 included, carries
//     X-RateLimit-Limit and X-RateLimit-Remaining; answers to unauthenticated requests (401,
//     400) carry neither, since there is no principal to count them against.
//   - Limits apply in the order burst, concurrency, budget, so that only requests that are
//     served count against the budget: one refused by the burst allowance or the
//     concurrency cap spends none of it (its rate limit headers are read without counting,
//     from a ratelimit.Peeker), and one refused by the budget is not counted either.
//   - Each limit has a default in Limits (budget 6000 per hour, burst 50 per second,
//     concurrency 20) that a principal's own RatePerWindow, Burst or Concurrent overrides
//     (the keys file's ratePerHour, burst and concurrency).
//   - On a 429 from the budget, X-RateLimit-Reset is the end of the window; from the burst
//     allowance, the moment a request will be accepted again; from the concurrency cap, one
//     second later. It is rounded up to a whole second, and Retry-After is the number of
//     seconds until then, at least 1.
//   - Limits count per principal (principal.Principal.Name) across all the APIs of one Guard.
//   - Config.Refused, when set, hears of every 429 with the limit that refused it
//     (RefusedBudget, RefusedBurst, RefusedConcurrency); package metrics counts them.
//   - Sending both Authorization and AppKey, or either twice, is refused as ambiguous. Keys
//     and tokens are at most 16 KiB of visible ASCII.
//   - Keys are stored only as SHA-256 digests. A key's principal is named by the key's name
//     or "key:" and the first eight hexadecimal digits of its digest; a token's principal
//     "sub:" and its subject; a key name beginning "sub:" or "key:" is refused, so that no
//     key counts against another principal's limits. Errors and logs never contain a key
//     or a token.
//   - Bearer tokens verified with keys written in the configuration (JWTConfig.Keys) must
//     name a kid (unless exactly one key is configured) and the alg of that key; only
//     RS256, ES256 and HS256 exist there. exp is required; exp and nbf allow 30
//     seconds of clock skew by default; iss and aud must match. On every token, a crit header
//     (no extension is understood) or a typ other than JWT or at+jwt (another kind of
//     token) is refused. Permissions are the words
//     of scope and scp. A verified token is remembered by its SHA-256 digest until its
//     expiry (bounded; default 10000 tokens), so repeated requests skip the signature check.
//   - The tenant in x-tenant-id must be a hyphenated UUID (any case); a key belongs to at
//     most one tenant.
//
// # Identity providers
//
// JWTConfig.Issuers names identity providers whose tokens are verified against the keys
// they publish (Issuer): the JWKS URL is given or found by OpenID Connect discovery
// (issuer + "/.well-known/openid-configuration", whose issuer must match), and the keys
// (through github.com/MicahParks/keyfunc and jwkset) are fetched when the verifier starts,
// again every Issuer.RefreshInterval, and, at most once per Issuer.UnknownKIDInterval and
// one at a time, when a token names a kid the cache lacks; tokens naming unknown kids in
// between are refused at once, never queued. A token waits for a fetch (its issuer's first, or one
// its unknown kid causes) at most a second, and is refused if the fetch has not brought
// its key by then; the fetch goes on in the background, bounded to 10 seconds, and its
// keys serve the next tokens. A JWKS is read up to 1 MiB; a key in it that cannot be
// used is skipped (RFC 7517, section 5) and logged ("auth: JWKS key skipped"), and a
// document too large, not a JWK Set, or holding no usable key is a failed fetch. A failed
// fetch leaves the cached keys in use: JWTVerifier.IssuerStatus reports it (the reference
// server exports it as kmkit_jwks_up and friends) and the Logger warns "JWKS unreachable;
// verifying tokens with the cached keys". JWTVerifier.Close stops the fetching.
//
// A token goes to the issuer its iss names. It must carry a kid of that issuer's JWKS
// (a key with use "sig" or none; of keys sharing the kid, the one that fits), an
// asymmetric alg among Issuer.Algorithms (default RS256 and ES256) that fits the key's
// type and curve (and the key's alg, if it names one), an audience among Issuer.Audience
// and an exp; a jwk, jku, x5u, x5c or crit header is refused whatever the signature. The ClaimMapping makes the principal: Team and Tenant name claims
// (dotted names reach into nested objects, "org.id"), or FixedTeam and FixedTenant set them
// for every token of the issuer; the values of PermissionClaims (default scope and scp;
// "roles" and "groups" are common too) grant the permissions Scopes maps them to, or, with
// no mapping, the permission they name. The principal is named "sub:" subject "@" issuer.
//
// # Protected resource metadata
//
// OAuth clients, MCP hosts among them, learn where to sign in from OAuth 2.0 Protected
// Resource Metadata (RFC 9728). ResourceMetadataHandler serves a ResourceMetadata document
// (at WellKnownResourceMetadata + the resource's path), and a Policy whose ResourceMetadata
// returns its URL makes every 401 lead with a Bearer challenge naming it:
//
//	WWW-Authenticate: Bearer realm="kmkit", resource_metadata="https://host/.well-known/oauth-protected-resource/intelligence/api/mcp", AppKey realm="kmkit"
//
// Package auth/idptest is a local identity provider for tests of all this.
package auth
