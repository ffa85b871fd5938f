package auth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/auth/ratelimit"
	"github.com/kmkit/kmkit/principal"
)

// Expected bodies, written out independently of the code that writes them.
func errorBody(msg string) string { return fmt.Sprintf(`{"error":%q}`, msg) }

func problemBody(status int, code, detail string) string {
	return fmt.Sprintf(`{"title":%q,"status":%d,"detail":%q,"errorCode":%q,"type":"urn:kmkit:problem:%s"}`,
		http.StatusText(status), status, detail, code, code)
}

// odataBody is problemBody with OData's error object, as every error on OData paths.
func odataBody(status int, code, detail string) string {
	return fmt.Sprintf(`{"title":%q,"status":%d,"detail":%q,"errorCode":%q,"type":"urn:kmkit:problem:%s","error":{"code":%q,"message":%q,"details":[]}}`,
		http.StatusText(status), status, detail, code, code, code, detail)
}

func scimBody(status int, detail string) string {
	return fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"detail":%q,"status":"%d"}`, detail, status)
}

const (
	ctJSON    = "application/json"
	ctProblem = "application/problem+json"
	ctSCIM    = "application/scim+json"
	ctText    = "text/plain; charset=utf-8"
)

// echo is the protected handler: it answers with the principal's name.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	p, ok := principal.FromContext(r.Context())
	if !ok {
		http.Error(w, "no principal", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ctText)
	fmt.Fprintf(w, "ok %s team=%s tenant=%s perms=%v", p.Name, p.Team, p.Tenant, p.Permissions)
})

func newTestGuard(t testing.TB, cfg Config) *Guard {
	t.Helper()
	if cfg.Authenticator == nil {
		keys := newTestKeySet(t)
		cfg.Authenticator = Schemes{SchemeAppKey: keys, SchemeAPIKey: keys, SchemeBearer: newTestVerifier(t, 0, nil)}
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return testNow }
	}
	g, err := NewGuard(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

type response struct {
	Status  int
	Headers map[string]string
	Body    string
}

// watched are the response headers the tests compare.
var watched = []string{"Content-Type", "WWW-Authenticate", HeaderRateLimit, HeaderRateRemaining, HeaderRateReset, HeaderRetryAfter}

func serve(h http.Handler, header http.Header) response {
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	r.Header = header
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	got := response{Status: w.Code, Body: w.Body.String(), Headers: map[string]string{}}
	for _, k := range watched {
		if v := w.Header().Get(k); v != "" {
			got.Headers[k] = v
		}
	}
	return got
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

const challenge = `AppKey realm="kmkit", Bearer realm="kmkit"`

// unauthorized is the expected 401 answer of family f.
func unauthorized(f Family, msg string) response {
	switch f {
	case FamilySCIM:
		return response{401, map[string]string{"Content-Type": ctSCIM, "WWW-Authenticate": challenge}, scimBody(401, msg)}
	case FamilyReporting:
		return response{401, map[string]string{"Content-Type": ctProblem, "WWW-Authenticate": `x-api-key realm="kmkit"`},
			problemBody(401, "ADMIN_AUTHENTICATION_ERROR", msg)}
	default:
		return response{401, map[string]string{"Content-Type": ctJSON, "WWW-Authenticate": challenge}, errorBody(msg)}
	}
}

// tokenChallenge is the challenge of a 401 to a refused Bearer token (RFC 6750, 3.1).
const tokenChallenge = `AppKey realm="kmkit", Bearer realm="kmkit", error="invalid_token"`

// unauthorizedToken is the expected 401 answer of family f to a refused Bearer token.
func unauthorizedToken(f Family, msg string) response {
	r := unauthorized(f, msg)
	r.Headers["WWW-Authenticate"] = tokenChallenge
	return r
}

// rated adds the rate limit headers of a first request to an expected answer.
func rated(r response, limit, remaining int) response {
	r.Headers[HeaderRateLimit] = fmt.Sprint(limit)
	r.Headers[HeaderRateRemaining] = fmt.Sprint(remaining)
	return r
}

func forbidden(f Family, msg string) response {
	switch f {
	case FamilySCIM:
		return rated(response{403, map[string]string{"Content-Type": ctSCIM}, scimBody(403, msg)}, 6000, 5999)
	case FamilyOData:
		return rated(response{403, map[string]string{"Content-Type": ctProblem}, odataBody(403, "ADMIN_ACCESS_ERROR", msg)}, 6000, 5999)
	}
	return rated(response{403, map[string]string{"Content-Type": ctProblem}, problemBody(403, "ADMIN_ACCESS_ERROR", msg)}, 6000, 5999)
}

// forbiddenToken is the expected 403 answer of family f to a Bearer token that lacks the
// permission: the Bearer challenge says insufficient_scope (RFC 6750, 3.1).
func forbiddenToken(f Family, msg string) response {
	r := forbidden(f, msg)
	r.Headers["WWW-Authenticate"] = `Bearer realm="kmkit", error="insufficient_scope"`
	return r
}

func ok(body string) response {
	return rated(response{200, map[string]string{"Content-Type": ctText}, body}, 6000, 5999)
}

const okAll = "ok all team=acme tenant=" + tenantA + " perms=[km odata scim reporting]"

func TestGuardAuthorizationHeaders(t *testing.T) {
	tests := []struct {
		name   string
		family Family
		header http.Header
		want   response
	}{
		{"AppKey scheme", FamilyKM, hdr("Authorization", "AppKey km-key-0001"), ok(okAll)},
		{"scheme word in lower case", FamilyKM, hdr("Authorization", "appkey km-key-0001"), ok(okAll)},
		{"scheme word in upper case, tab, spaces", FamilyKM, hdr("Authorization", " APPKEY\t km-key-0001 "), ok(okAll)},
		{"AppKey header", FamilyKM, hdr("AppKey", "km-key-0001"), ok(okAll)},
		{"OData", FamilyOData, hdr("Authorization", "AppKey km-key-0001"), ok(okAll)},
		{"SCIM", FamilySCIM, hdr("Authorization", "AppKey scim-key-0001"), ok("ok key:" + DigestOf("scim-key-0001").String()[:8] + " team=acme tenant= perms=[scim]")},

		{"no header", FamilyKM, hdr(), unauthorized(FamilyKM, "missing credentials: send the Authorization header with the AppKey or Bearer scheme, or the AppKey header")},
		{"no header, SCIM", FamilySCIM, hdr(), unauthorized(FamilySCIM, "missing credentials: send the Authorization header with the AppKey or Bearer scheme, or the AppKey header")},
		{"empty Authorization", FamilyKM, hdr("Authorization", ""), unauthorized(FamilyKM, "empty Authorization header")},
		{"blank Authorization", FamilyOData, hdr("Authorization", " \t "), unauthorized(FamilyOData, "empty Authorization header")},
		{"scheme without key", FamilyKM, hdr("Authorization", "AppKey"), unauthorized(FamilyKM, "empty AppKey credentials")},
		{"scheme and blanks", FamilyKM, hdr("Authorization", "Bearer   "), unauthorized(FamilyKM, "empty Bearer credentials")},
		{"empty AppKey header", FamilyKM, hdr("AppKey", " "), unauthorized(FamilyKM, "empty AppKey header")},
		{"wrong scheme", FamilyKM, hdr("Authorization", "Basic a2V5OnNlY3JldA=="), unauthorized(FamilyKM, `unsupported authorization scheme "Basic": use AppKey or Bearer`)},
		{"wrong scheme, SCIM", FamilySCIM, hdr("Authorization", "Token abc"), unauthorized(FamilySCIM, `unsupported authorization scheme "Token": use AppKey or Bearer`)},
		{"key without scheme", FamilyKM, hdr("Authorization", "km-key-0001"), unauthorized(FamilyKM, "the Authorization header needs a scheme: AppKey or Bearer, a space, then the key or token")},
		{"unknown key", FamilyKM, hdr("Authorization", "AppKey nope"), unauthorized(FamilyKM, "invalid application key")},
		{"unknown key, AppKey header", FamilyOData, hdr("AppKey", "nope"), unauthorized(FamilyOData, "invalid application key")},
		{"unknown key, SCIM", FamilySCIM, hdr("Authorization", "AppKey nope"), unauthorized(FamilySCIM, "invalid application key")},
		{"key with a space", FamilyKM, hdr("Authorization", "AppKey km-key 0001"), unauthorized(FamilyKM, "malformed AppKey credentials: only visible ASCII characters, without spaces")},
		{"key with a control character", FamilyKM, hdr("AppKey", "km\x01key"), unauthorized(FamilyKM, "malformed AppKey header: only visible ASCII characters, without spaces")},
		{"key too long", FamilyKM, hdr("AppKey", strings.Repeat("k", MaxCredentialLength+1)), unauthorized(FamilyKM, "credentials longer than 16384 bytes")},
		{"both headers", FamilyKM, hdr("Authorization", "AppKey km-key-0001", "AppKey", "km-key-0001"), unauthorized(FamilyKM, "send credentials in one header only, Authorization or AppKey")},
		{"two Authorization headers", FamilyKM, hdr("Authorization", "AppKey km-key-0001", "Authorization", "AppKey km-key-0001"), unauthorized(FamilyKM, "send one Authorization header")},
		{"x-api-key is not for KM", FamilyKM, hdr("X-Api-Key", "km-key-0001"), unauthorized(FamilyKM, "missing credentials: send the Authorization header with the AppKey or Bearer scheme, or the AppKey header")},

		{"missing km permission", FamilyKM, hdr("Authorization", "AppKey scim-key-0001"), forbidden(FamilyKM, "the credentials lack the km permission")},
		{"missing odata permission", FamilyOData, hdr("Authorization", "AppKey report-key-b"), forbidden(FamilyOData, "the credentials lack the odata permission")},
		{"missing scim permission", FamilySCIM, hdr("Authorization", "AppKey report-key-b"), forbidden(FamilySCIM, "the credentials lack the scim permission")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newTestGuard(t, Config{})
			got := serve(g.Wrap(tt.family.policy(), echo), tt.header)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGuardBearer(t *testing.T) {
	rs := func(edits map[string]any) string {
		return sign(t, jwt.SigningMethodRS256, testRSA, "rs", claims(edits))
	}
	okAlice := func(perms string) response {
		return ok("ok sub:alice team=acme tenant=" + tenantA + " perms=" + perms)
	}
	bearer := func(tok string) http.Header { return hdr("Authorization", "Bearer "+tok) }

	valid := rs(nil)
	tampered := strings.Split(valid, ".")
	tampered[1] = strings.Split(rs(map[string]any{"sub": "mallory"}), ".")[1]

	noneToken, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims(nil)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	noneWithKid := jwt.NewWithClaims(jwt.SigningMethodNone, claims(nil))
	noneWithKid.Header["kid"] = "rs"
	noneKidToken, err := noneWithKid.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		family Family
		header http.Header
		want   response
	}{
		{"RS256", FamilyKM, bearer(valid), okAlice("[km odata]")},
		{"scheme word in lower case", FamilyKM, hdr("Authorization", "bearer "+valid), okAlice("[km odata]")},
		{"ES256", FamilyKM, bearer(sign(t, jwt.SigningMethodES256, testEC, "es", claims(nil))), okAlice("[km odata]")},
		{"HS256", FamilyKM, bearer(sign(t, jwt.SigningMethodHS256, testHS, "hs", claims(nil))), okAlice("[km odata]")},
		{"scp array", FamilySCIM, bearer(rs(map[string]any{"scope": nil, "scp": []string{"scim", "km"}})), okAlice("[scim km]")},
		{"scp string and scope", FamilyOData, bearer(rs(map[string]any{"scope": "km", "scp": "odata km"})), okAlice("[km odata]")},
		{"expired within the leeway", FamilyKM, bearer(rs(map[string]any{"exp": testNow.Add(-29 * time.Second).Unix()})), okAlice("[km odata]")},
		{"not yet valid within the leeway", FamilyKM, bearer(rs(map[string]any{"nbf": testNow.Add(29 * time.Second).Unix()})), okAlice("[km odata]")},
		{"audience in an array", FamilyKM, bearer(rs(map[string]any{"aud": []string{"other", testAudience}})), okAlice("[km odata]")},
		{"200 group ids, as Entra ID issues them (over 8 KiB)", FamilyKM, bearer(rs(map[string]any{"groups": groupIDs(200)})), okAlice("[km odata]")},
		{"NUL in the subject", FamilyKM, bearer(rs(map[string]any{"sub": "al\x00ice"})), unauthorizedToken(FamilyKM, "token subject or team claim contains a NUL character")},
		{"NUL in the team", FamilySCIM, bearer(rs(map[string]any{"team": "ac\x00me"})), unauthorizedToken(FamilySCIM, "token subject or team claim contains a NUL character")},
		{"custom team claim absent", FamilyKM, bearer(rs(map[string]any{"team": nil, "tenant": nil})), ok("ok sub:alice team= tenant= perms=[km odata]")},

		{"expired", FamilyKM, bearer(rs(map[string]any{"exp": testNow.Add(-31 * time.Second).Unix()})), unauthorizedToken(FamilyKM, "token is expired")},
		{"expired, SCIM", FamilySCIM, bearer(rs(map[string]any{"exp": testNow.Add(-time.Hour).Unix()})), unauthorizedToken(FamilySCIM, "token is expired")},
		{"not yet valid", FamilyKM, bearer(rs(map[string]any{"nbf": testNow.Add(31 * time.Second).Unix()})), unauthorizedToken(FamilyKM, "token is not valid yet")},
		{"no exp", FamilyKM, bearer(rs(map[string]any{"exp": nil})), unauthorizedToken(FamilyKM, "token has no exp claim")},
		{"wrong issuer", FamilyKM, bearer(rs(map[string]any{"iss": "https://evil.example"})), unauthorizedToken(FamilyKM, "token has the wrong issuer")},
		{"no issuer", FamilyKM, bearer(rs(map[string]any{"iss": nil})), unauthorizedToken(FamilyKM, "token has no iss claim")},
		{"empty issuer", FamilyKM, bearer(rs(map[string]any{"iss": ""})), unauthorizedToken(FamilyKM, "token has no iss claim")},
		{"no audience", FamilyKM, bearer(rs(map[string]any{"aud": nil})), unauthorizedToken(FamilyKM, "token has no aud claim")},
		{"expired and wrong issuer: exp is checked first", FamilyKM, bearer(rs(map[string]any{"exp": testNow.Add(-time.Hour).Unix(), "iss": "x"})), unauthorizedToken(FamilyKM, "token is expired")},
		{"wrong audience and issuer: aud is checked first", FamilyKM, bearer(rs(map[string]any{"aud": "x", "iss": "x"})), unauthorizedToken(FamilyKM, "token has the wrong audience")},
		{"wrong audience", FamilyKM, bearer(rs(map[string]any{"aud": "someone-else"})), unauthorizedToken(FamilyKM, "token has the wrong audience")},
		{"bad signature", FamilyKM, bearer(strings.Join(tampered, ".")), unauthorizedToken(FamilyKM, "token signature is invalid")},
		{"signed by another kid's key", FamilyKM, bearer(sign(t, jwt.SigningMethodRS256, testRSA, "es", claims(nil))), unauthorizedToken(FamilyKM, `token alg "RS256" does not match the ES256 key "es"`)},
		{"alg none", FamilyKM, bearer(noneToken), unauthorizedToken(FamilyKM, `token alg "none" is not allowed: use RS256, ES256 or HS256`)},
		{"alg none with kid", FamilyKM, bearer(noneKidToken), unauthorizedToken(FamilyKM, `token alg "none" is not allowed: use RS256, ES256 or HS256`)},
		{"HS256 signed with the RSA public key", FamilyKM, bearer(sign(t, jwt.SigningMethodHS256, []byte(rsaPubPEM), "rs", claims(nil))),
			unauthorizedToken(FamilyKM, `token alg "HS256" does not match the RS256 key "rs"`)},
		{"HS256 signed with the RSA public key, no kid", FamilyKM, bearer(sign(t, jwt.SigningMethodHS256, []byte(rsaPubPEM), "", claims(nil))),
			unauthorizedToken(FamilyKM, "token has no kid header")},
		{"PS256 is not allowed", FamilyKM, bearer(sign(t, jwt.SigningMethodPS256, testRSA, "rs", claims(nil))), unauthorizedToken(FamilyKM, `token alg "PS256" is not allowed: use RS256, ES256 or HS256`)},
		{"unknown kid", FamilyKM, bearer(sign(t, jwt.SigningMethodRS256, testRSA, "zz", claims(nil))), unauthorizedToken(FamilyKM, `token kid "zz" names no configured key`)},
		{"malformed token", FamilyKM, bearer("abc.def"), unauthorizedToken(FamilyKM, "malformed bearer token")},
		{"not base64", FamilyKM, bearer("a!.b!.c!"), unauthorizedToken(FamilyKM, "malformed bearer token")},
		{"no sub", FamilyKM, bearer(rs(map[string]any{"sub": nil})), unauthorizedToken(FamilyKM, "token has no sub claim")},
		{"sub not a string", FamilyKM, bearer(rs(map[string]any{"sub": 42})), unauthorizedToken(FamilyKM, "token has malformed claims")},
		{"exp not a number", FamilyKM, bearer(rs(map[string]any{"exp": "tomorrow"})), unauthorizedToken(FamilyKM, "token has malformed claims")},
		{"tenant not a UUID", FamilyKM, bearer(rs(map[string]any{"tenant": "acme"})), unauthorizedToken(FamilyKM, `token claim "tenant" is not a UUID`)},
		{"team not a string", FamilyKM, bearer(rs(map[string]any{"team": 7})), unauthorizedToken(FamilyKM, `token claim "team" is not a string`)},
		{"scp with a number", FamilyKM, bearer(rs(map[string]any{"scp": []any{"km", 1}})), unauthorizedToken(FamilyKM, `token claim "scp" holds a non-string`)},
		{"scope an object", FamilyKM, bearer(rs(map[string]any{"scope": map[string]any{}})), unauthorizedToken(FamilyKM, `token claim "scope" is neither a string nor an array of strings`)},
		{"bearer on reporting", FamilyReporting, bearer(valid), unauthorized(FamilyReporting, "missing x-api-key header")},

		{"missing permission", FamilySCIM, bearer(valid), forbiddenToken(FamilySCIM, "the credentials lack the scim permission")},
		{"no scope at all", FamilyKM, bearer(rs(map[string]any{"scope": nil})), forbiddenToken(FamilyKM, "the credentials lack the km permission")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newTestGuard(t, Config{})
			got := serve(g.Wrap(tt.family.policy(), echo), tt.header)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGuardReporting(t *testing.T) {
	okReport := ok("ok key:" + DigestOf("report-key-0001").String()[:8] + " team= tenant=" + tenantA + " perms=[reporting]")
	bad := func(code, detail string) response {
		return response{400, map[string]string{"Content-Type": ctProblem}, problemBody(400, code, detail)}
	}
	tests := []struct {
		name   string
		header http.Header
		want   response
	}{
		{"key and tenant", hdr("X-Api-Key", "report-key-0001", "X-Tenant-Id", tenantA), okReport},
		{"tenant in upper case", hdr("x-api-key", "report-key-0001", "x-tenant-id", strings.ToUpper(tenantA)), okReport},

		{"no key", hdr("X-Tenant-Id", tenantA), unauthorized(FamilyReporting, "missing x-api-key header")},
		{"empty key", hdr("X-Api-Key", "", "X-Tenant-Id", tenantA), unauthorized(FamilyReporting, "empty x-api-key header")},
		{"two keys", hdr("X-Api-Key", "a", "X-Api-Key", "b", "X-Tenant-Id", tenantA), unauthorized(FamilyReporting, "send one x-api-key header")},
		{"unknown key", hdr("X-Api-Key", "nope", "X-Tenant-Id", tenantA), unauthorized(FamilyReporting, "invalid application key")},
		{"AppKey is not for reporting", hdr("Authorization", "AppKey report-key-0001", "X-Tenant-Id", tenantA), unauthorized(FamilyReporting, "missing x-api-key header")},

		{"no tenant", hdr("X-Api-Key", "report-key-0001"), bad("GENERAL_PARAMETER_MISSING", "missing x-tenant-id header")},
		{"empty tenant", hdr("X-Api-Key", "report-key-0001", "X-Tenant-Id", " "), bad("GENERAL_PARAMETER_MISSING", "empty x-tenant-id header")},
		{"malformed tenant", hdr("X-Api-Key", "report-key-0001", "X-Tenant-Id", "acme"),
			bad("GENERAL_PARAMETER_ILLEGAL", `x-tenant-id "acme" is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`)},
		{"tenant without hyphens", hdr("X-Api-Key", "report-key-0001", "X-Tenant-Id", strings.ReplaceAll(tenantA, "-", "")),
			bad("GENERAL_PARAMETER_ILLEGAL", `x-tenant-id "3f1c5a2e7b4d4c1e9a0f2d6b8e4c1a7f" is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`)},
		{"tenant in braces", hdr("X-Api-Key", "report-key-0001", "X-Tenant-Id", "{"+tenantA+"}"),
			bad("GENERAL_PARAMETER_ILLEGAL", `x-tenant-id "{`+tenantA+`}" is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`)},
		{"two tenants", hdr("X-Api-Key", "report-key-0001", "X-Tenant-Id", tenantA, "X-Tenant-Id", tenantB), bad("GENERAL_PARAMETER_ILLEGAL", "send one x-tenant-id header")},
		// The key is checked before the tenant: 401 before 400.
		{"unknown key and malformed tenant", hdr("X-Api-Key", "nope", "X-Tenant-Id", "acme"), unauthorized(FamilyReporting, "invalid application key")},
		{"unknown key and no tenant", hdr("X-Api-Key", "nope"), unauthorized(FamilyReporting, "invalid application key")},
		{"no key and no tenant", hdr(), unauthorized(FamilyReporting, "missing x-api-key header")},

		{"tenant of another key", hdr("X-Api-Key", "report-key-0001", "X-Tenant-Id", tenantB),
			forbidden(FamilyReporting, "the API key does not belong to tenant "+tenantB)},
		{"key without a tenant", hdr("X-Api-Key", "no-tenant-key", "X-Tenant-Id", tenantA),
			forbidden(FamilyReporting, "the API key does not belong to tenant "+tenantA)},
		{"right tenant, no reporting permission", hdr("X-Api-Key", "report-key-b", "X-Tenant-Id", tenantB),
			forbidden(FamilyReporting, "the credentials lack the reporting permission")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newTestGuard(t, Config{})
			got := serve(g.Wrap(FamilyReporting.policy(), echo), tt.header)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGuardBudgetParallel: with many clients racing, exactly the budget succeeds; the others
// get 429 with the reset time and Retry-After.
func TestGuardBudgetParallel(t *testing.T) {
	const budget, workers, each = 25, 8, 10
	g := newTestGuard(t, Config{Limits: Limits{PerWindow: budget, Burst: -1, Concurrent: -1}})
	h := g.Wrap(FamilyKM.policy(), echo)
	var mu sync.Mutex
	counts := map[int]int{}
	var refused response
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				got := serve(h, hdr("AppKey", "km-key-0001"))
				mu.Lock()
				counts[got.Status]++
				if got.Status == http.StatusTooManyRequests {
					refused = got
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if diff := cmp.Diff(map[int]int{200: budget, 429: workers*each - budget}, counts); diff != "" {
		t.Errorf("status counts (-want +got):\n%s", diff)
	}
	want := response{429, map[string]string{
		"Content-Type":      ctProblem,
		HeaderRateLimit:     "25",
		HeaderRateRemaining: "0",
		HeaderRateReset:     "2026-11-21T06:00:00Z",
		HeaderRetryAfter:    "1790",
	}, problemBody(429, "LIMIT_RATE_EXCEEDED", "request limit of 25 per hour exceeded")}
	if diff := cmp.Diff(want, refused); diff != "" {
		t.Errorf("429 answer (-want +got):\n%s", diff)
	}
}

// TestGuardBudgetSequence follows one principal through a window and into the next, and
// checks that a key's own budget overrides the default.
func TestGuardBudgetSequence(t *testing.T) {
	now := testNow
	g := newTestGuard(t, Config{Now: func() time.Time { return now }, Limits: Limits{Burst: -1, Concurrent: -1}})
	h := g.Wrap(FamilyKM.policy(), echo)
	okSmall := func(remaining int) response {
		return rated(response{200, map[string]string{"Content-Type": ctText}, "ok small team= tenant= perms=[km]"}, 2, remaining)
	}
	tooMany := func(reset, retry string) response {
		return response{429, map[string]string{"Content-Type": ctProblem, HeaderRateLimit: "2", HeaderRateRemaining: "0",
			HeaderRateReset: reset, HeaderRetryAfter: retry}, problemBody(429, "LIMIT_RATE_EXCEEDED", "request limit of 2 per hour exceeded")}
	}
	steps := []struct {
		at   time.Time
		want response
	}{
		{testNow, okSmall(1)},
		{testNow, okSmall(0)},
		{testNow, tooMany("2026-11-21T06:00:00Z", "1790")},
		{time.Date(2026, 11, 21, 5, 59, 59, 500e6, time.UTC), tooMany("2026-11-21T06:00:00Z", "1")},
		{time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC), okSmall(1)},
	}
	for i, s := range steps {
		now = s.at
		got := serve(h, hdr("AppKey", "small-budget"))
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("step %d at %v (-want +got):\n%s", i, s.at, diff)
		}
	}
}

func TestGuardBurst(t *testing.T) {
	now := testNow
	g := newTestGuard(t, Config{Now: func() time.Time { return now }, Limits: Limits{Burst: 3, Concurrent: -1}})
	h := g.Wrap(FamilyOData.policy(), echo)
	for i := range 3 {
		if got := serve(h, hdr("AppKey", "km-key-0001")); got.Status != 200 {
			t.Fatalf("request %d in the burst: status %d, body %s", i, got.Status, got.Body)
		}
	}
	want := response{429, map[string]string{
		// 5997: the three served requests; the refused one does not spend the budget.
		"Content-Type": ctProblem, HeaderRateLimit: "6000", HeaderRateRemaining: "5997",
		HeaderRateReset: "2026-11-21T05:30:11Z", HeaderRetryAfter: "1",
	}, odataBody(429, "LIMIT_RATE_EXCEEDED", "more than 3 requests per second")}
	if diff := cmp.Diff(want, serve(h, hdr("AppKey", "km-key-0001"))); diff != "" {
		t.Errorf("fourth request in the same instant (-want +got):\n%s", diff)
	}
	if got := serve(h, hdr("AppKey", "report-key-b")); got.Status != 403 {
		t.Errorf("another principal: status %d, want 403 (its own allowance, no odata permission)", got.Status)
	}
	now = now.Add(334 * time.Millisecond)
	if got := serve(h, hdr("AppKey", "km-key-0001")); got.Status != 200 {
		t.Errorf("a third of a second later: status %d, want 200; body %s", got.Status, got.Body)
	}
}

func TestGuardConcurrency(t *testing.T) {
	g := newTestGuard(t, Config{Limits: Limits{Burst: -1, Concurrent: 2}})
	entered, release := make(chan struct{}), make(chan struct{})
	slow := g.Wrap(FamilySCIM.policy(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}))
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { serve(slow, hdr("Authorization", "AppKey scim-key-0001")) })
		<-entered
	}
	want := response{429, map[string]string{
		// 5998: the two requests in flight; the refused one does not spend the budget.
		"Content-Type": ctSCIM, HeaderRateLimit: "6000", HeaderRateRemaining: "5998",
		HeaderRateReset: "2026-11-21T05:30:11Z", HeaderRetryAfter: "1",
	}, scimBody(429, "more than 2 requests at once")}
	if diff := cmp.Diff(want, serve(slow, hdr("Authorization", "AppKey scim-key-0001"))); diff != "" {
		t.Errorf("third request in flight (-want +got):\n%s", diff)
	}
	close(release)
	wg.Wait()
	if n := g.concurrency.InFlight(testKeysName(t, "scim-key-0001")); n != 0 {
		t.Errorf("%d requests still counted in flight", n)
	}
	fast := g.Wrap(FamilySCIM.policy(), echo)
	if got := serve(fast, hdr("Authorization", "AppKey scim-key-0001")); got.Status != 200 {
		t.Errorf("after the slow requests ended: status %d, body %s", got.Status, got.Body)
	}
}

func testKeysName(t *testing.T, plain string) string {
	p, err := newTestKeySet(t).Authenticate(context.Background(), Credential{Scheme: SchemeAppKey, Secret: plain})
	if err != nil {
		t.Fatal(err)
	}
	return p.Name
}

type failingLimiter struct{}

func (failingLimiter) Allow(context.Context, string, int, time.Duration, time.Time) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errors.New("database is down")
}

type failingAuthenticator struct{ p *principal.Principal }

func (a failingAuthenticator) Authenticate(context.Context, Credential) (*principal.Principal, error) {
	if a.p != nil {
		return a.p, nil
	}
	return nil, errors.New("directory unreachable")
}

// TestGuardFailures: failures of the authenticator or the limiter are 500 answers with a
// support id that is also logged; the secret is never logged.
func TestGuardFailures(t *testing.T) {
	tests := []struct {
		name   string
		family Family
		cfg    Config
		header http.Header
		ctype  string
		prefix string
		logged string
	}{
		{"limiter, KM", FamilyKM, Config{Limiter: failingLimiter{}}, hdr("AppKey", "km-key-0001"), ctProblem,
			`{"title":"Internal Server Error","status":500,"detail":"internal error; support id `, "database is down"},
		{"limiter, SCIM", FamilySCIM, Config{Limiter: failingLimiter{}}, hdr("AppKey", "km-key-0001"), ctSCIM,
			`{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"detail":"internal error; support id `, "database is down"},
		{"authenticator, reporting", FamilyReporting, Config{Authenticator: failingAuthenticator{}}, hdr("X-Api-Key", "secret-1234", "X-Tenant-Id", tenantA), ctProblem,
			`{"title":"Internal Server Error","status":500,"detail":"internal error; support id `, "directory unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			tt.cfg.Logger = slog.New(slog.NewTextHandler(&log, nil))
			g := newTestGuard(t, tt.cfg)
			got := serve(g.Wrap(tt.family.policy(), echo), tt.header)
			if got.Status != 500 || got.Headers["Content-Type"] != tt.ctype || !strings.HasPrefix(got.Body, tt.prefix) {
				t.Fatalf("got %d %q %s; want 500 %s starting %s", got.Status, got.Headers["Content-Type"], got.Body, tt.ctype, tt.prefix)
			}
			id := strings.TrimSuffix(strings.TrimPrefix(got.Body, tt.prefix), `"}`)
			id, _, _ = strings.Cut(id, `"`)
			if len(id) != 36 || !strings.Contains(log.String(), "supportId="+id) || !strings.Contains(log.String(), tt.logged) {
				t.Errorf("support id %q not logged with %q: %s", id, tt.logged, log.String())
			}
			for _, secret := range []string{"km-key-0001", "secret-1234"} {
				if strings.Contains(log.String(), secret) {
					t.Errorf("log contains the key %q: %s", secret, log.String())
				}
			}
		})
	}
}

func TestGuardNilPrincipal(t *testing.T) {
	g := newTestGuard(t, Config{Authenticator: failingAuthenticator{p: nil}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	g.auth = nilAuthenticator{}
	if got := serve(g.Wrap(FamilyKM.policy(), echo), hdr("AppKey", "x")); got.Status != 500 {
		t.Errorf("status %d, want 500", got.Status)
	}
}

type nilAuthenticator struct{}

func (nilAuthenticator) Authenticate(context.Context, Credential) (*principal.Principal, error) {
	return nil, nil
}

func TestNewGuardNeedsAuthenticator(t *testing.T) {
	if _, err := NewGuard(Config{}); err == nil {
		t.Error("NewGuard without an Authenticator: no error")
	}
}

func TestGuardLimitsDisabled(t *testing.T) {
	g := newTestGuard(t, Config{Limits: Limits{PerWindow: -1, Burst: -1, Concurrent: -1}})
	want := response{200, map[string]string{"Content-Type": ctText}, okAll}
	for range 50 {
		if diff := cmp.Diff(want, serve(g.Wrap(FamilyKM.policy(), echo), hdr("AppKey", "km-key-0001"))); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
	}
	// A key's own budget still applies.
	statuses := []int{}
	for range 3 {
		statuses = append(statuses, serve(g.Wrap(FamilyKM.policy(), echo), hdr("AppKey", "small-budget")).Status)
	}
	if diff := cmp.Diff([]int{200, 200, 429}, statuses); diff != "" {
		t.Errorf("key with its own budget of 2 (-want +got):\n%s", diff)
	}
}

// groupIDs returns n distinct group ids in the form Entra ID writes them in a token's
// groups claim.
func groupIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%08x-4c2e-4b8a-9f3d-%012x", i, i*7919)
	}
	return ids
}
