package auth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/auth/idptest"
	"github.com/kmkit/kmkit/principal"
)

// syncBuffer is a log destination written by the verifier's background fetches.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newIssuerVerifier returns a verifier of idp's tokens (found by discovery unless jwks is
// set), with the token cache off so that every call verifies.
func newIssuerVerifier(t *testing.T, idp *idptest.IdP, edit func(*Issuer)) (*JWTVerifier, *syncBuffer) {
	t.Helper()
	iss := Issuer{URL: idp.URL(), Audience: []string{"kmkit"}, UnknownKIDInterval: 200 * time.Millisecond,
		Claims: ClaimMapping{Team: "org.id", Tenant: "tid", PermissionClaims: []string{"scp", "roles"},
			Scopes: map[string][]principal.Permission{
				"kmkit.read":  {principal.PermKM, principal.PermOData, principal.PermMCP},
				"kmkit.admin": {principal.PermSCIM, principal.PermMetrics},
			}}}
	if edit != nil {
		edit(&iss)
	}
	var log syncBuffer
	v, err := NewJWTVerifier(JWTConfig{Issuers: []Issuer{iss}, CacheSize: -1, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v, &log
}

func bearer(v Authenticator, tok string) (*principal.Principal, error) {
	return v.Authenticate(context.Background(), Credential{Scheme: SchemeBearer, Secret: tok})
}

// TestIssuerTokensAccepted: RS256 and ES256 tokens of an IdP found by OIDC discovery are
// accepted, and the claim mapping makes the principal (nested team claim, tenant claim,
// scopes and roles through the scope mapping; unmapped values grant nothing).
func TestIssuerTokensAccepted(t *testing.T) {
	idp := idptest.New(t)
	v, _ := newIssuerVerifier(t, idp, nil)
	for _, alg := range []string{"RS256", "ES256"} {
		tok := idp.Token(t, alg, idp.Claims("alice", map[string]any{
			"org": map[string]any{"id": "acme"}, "tid": tenantA, "scp": "kmkit.read openid", "roles": []any{"kmkit.admin", "other"}}))
		p, err := bearer(v, tok)
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		want := &principal.Principal{Name: "sub:alice@" + idp.URL(), Team: "acme", Tenant: tenantA, Permissions: []principal.Permission{
			principal.PermKM, principal.PermOData, principal.PermMCP, principal.PermSCIM, principal.PermMetrics}}
		if diff := cmp.Diff(want, p); diff != "" {
			t.Errorf("%s: principal (-want +got):\n%s", alg, diff)
		}
	}
	st := v.IssuerStatus()
	if len(st) != 1 || st[0].JWKSURL != idp.JWKSURL() || st[0].Keys != 2 || st[0].Stale() || st[0].LastSuccess.IsZero() {
		t.Errorf("status %+v", st)
	}
	if got := v.AuthorizationServers(); len(got) != 1 || got[0] != idp.URL() {
		t.Errorf("AuthorizationServers %v", got)
	}
}

// TestIssuerFixedTeamAndDefaultScopes: a fixed team and tenant, and without a scope
// mapping the words naming permissions.
func TestIssuerFixedTeamAndDefaultScopes(t *testing.T) {
	idp := idptest.New(t)
	v, _ := newIssuerVerifier(t, idp, func(iss *Issuer) {
		iss.JWKSURL = idp.JWKSURL()
		iss.Claims = ClaimMapping{FixedTeam: "blue", FixedTenant: strings.ToUpper(tenantB)}
	})
	p, err := bearer(v, idp.Token(t, "ES256", idp.Claims("bob", map[string]any{"team": "red", "scope": "km nope mcp"})))
	if err != nil {
		t.Fatal(err)
	}
	want := &principal.Principal{Name: "sub:bob@" + idp.URL(), Team: "blue", Tenant: tenantB, Permissions: []principal.Permission{principal.PermKM, principal.PermMCP}}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("principal (-want +got):\n%s", diff)
	}
}

// TestIssuerKeyRotation: the IdP rotates its keys mid-test; tokens of the new keys are
// accepted without a restart (an unknown kid fetches the JWKS again), tokens of withdrawn
// keys are refused once the JWKS is fetched again, and unknown kids fetch at most once per
// UnknownKIDInterval.
func TestIssuerKeyRotation(t *testing.T) {
	idp := idptest.New(t)
	v, _ := newIssuerVerifier(t, idp, nil)
	oldRSA := idp.Kid("RS256")
	if _, err := bearer(v, idp.Token(t, "RS256", idp.Claims("alice", nil))); err != nil {
		t.Fatal(err)
	}
	before := idp.JWKSRequests()
	newRSA := idp.Rotate(t, "RS256")
	newEC := idp.Rotate(t, "ES256")
	if _, err := bearer(v, idp.Token(t, "RS256", idp.Claims("alice", nil))); err != nil {
		t.Fatalf("a token of the rotated key %s: %v", newRSA, err)
	}
	if got := idp.JWKSRequests(); got != before+1 {
		t.Errorf("%d JWKS requests for one unknown kid", got-before)
	}
	// The fetch brought the new EC key too: no further request.
	if _, err := bearer(v, idp.Token(t, "ES256", idp.Claims("alice", nil))); err != nil {
		t.Fatalf("a token of the rotated key %s: %v", newEC, err)
	}
	// The withdrawn key is gone from the cache with that fetch.
	if _, err := bearer(v, idp.TokenWith(t, oldRSA, idp.Claims("alice", nil))); !isRefusal(err, `token kid "`+oldRSA+`" names no key of issuer `+idp.URL()) {
		t.Errorf("a token of the withdrawn key: %v", err)
	}
	// A burst of unknown kids (kid injection included) fetches at most once more.
	before = idp.JWKSRequests()
	for _, kid := range []string{"nope", "../../../etc/passwd", "' OR '1'='1", strings.Repeat("k", 500), "RS256-1\x00"} {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, idp.Claims("mallory", nil))
		tok.Header["kid"] = kid
		s, err := tok.SignedString(idp.PrivateKey(newRSA))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bearer(v, s); err == nil || !strings.Contains(err.Error(), "names no key of issuer") {
			t.Errorf("kid %q: %v", kid, err)
		}
	}
	if got := idp.JWKSRequests() - before; got > 1 {
		t.Errorf("%d JWKS requests for a burst of unknown kids, want at most 1", got)
	}
	time.Sleep(250 * time.Millisecond) // UnknownKIDInterval: the next unknown kid may fetch again
	third := idp.Rotate(t, "RS256")
	if _, err := bearer(v, idp.Token(t, "RS256", idp.Claims("alice", nil))); err != nil {
		t.Fatalf("a token of the key %s after the interval: %v", third, err)
	}
}

// TestIssuerDown: the IdP goes down; tokens of the cached keys are still accepted, the
// status says the keys are stale (what the metric reads) and the log says so; when it
// comes back the status is fresh again.
func TestIssuerDown(t *testing.T) {
	idp := idptest.New(t)
	v, log := newIssuerVerifier(t, idp, func(iss *Issuer) { iss.RefreshInterval = 50 * time.Millisecond })
	tok := idp.Token(t, "RS256", idp.Claims("alice", nil))
	if _, err := bearer(v, tok); err != nil {
		t.Fatal(err)
	}
	idp.SetDown(true)
	// The status turns stale before the failure is logged: wait for both.
	waitFor(t, func() bool {
		return v.IssuerStatus()[0].Stale() && strings.Contains(log.String(), "JWKS unreachable")
	})
	if _, err := bearer(v, idp.Token(t, "ES256", idp.Claims("alice", nil))); err != nil {
		t.Errorf("a token of a cached key while the IdP is down: %v", err)
	}
	st := v.IssuerStatus()[0]
	if st.Keys != 2 || st.Failures == 0 || !strings.Contains(st.LastError, "503") {
		t.Errorf("status while down: %+v", st)
	}
	if !strings.Contains(log.String(), `level=WARN msg="auth: JWKS unreachable; verifying tokens with the cached keys" issuer=`+idp.URL()) ||
		!strings.Contains(log.String(), "cachedKeys=2") {
		t.Errorf("log: %s", log.String())
	}
	// A rotated key cannot be fetched while down: refused, the old keys still work.
	idp.Rotate(t, "RS256")
	if _, err := bearer(v, idp.Token(t, "RS256", idp.Claims("alice", nil))); err == nil {
		t.Error("a token of a key the verifier could not fetch was accepted")
	}
	idp.SetDown(false)
	waitFor(t, func() bool { return !v.IssuerStatus()[0].Stale() })
	if !strings.Contains(log.String(), `msg="auth: JWKS reachable again"`) {
		t.Errorf("log: %s", log.String())
	}
}

// TestIssuerDownAtStart: an IdP unreachable when the verifier starts refuses its tokens
// (keys not available) and is tried again, at most once per UnknownKIDInterval, until it
// answers.
func TestIssuerDownAtStart(t *testing.T) {
	idp := idptest.New(t)
	idp.SetDown(true)
	v, _ := newIssuerVerifier(t, idp, nil)
	tok := idp.Token(t, "RS256", idp.Claims("alice", nil))
	waitFor(t, func() bool { return v.IssuerStatus()[0].Failures > 0 })
	if _, err := bearer(v, tok); err == nil || !strings.Contains(err.Error(), "not available yet") {
		t.Errorf("while down: %v", err)
	}
	idp.SetDown(false)
	time.Sleep(250 * time.Millisecond)
	if _, err := bearer(v, tok); err != nil {
		t.Errorf("after the IdP came up: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIssuerRefusals: the attacks on the new path. Each token is refused with its reason.
func TestIssuerRefusals(t *testing.T) {
	idp := idptest.New(t)
	v, _ := newIssuerVerifier(t, idp, nil)
	rsaKid, ecKid := idp.Kid("RS256"), idp.Kid("ES256")
	rsaPriv := idp.PrivateKey(rsaKid).(*rsa.PrivateKey)
	// Another IdP's key, and a server that would serve it as a JWKS (jku): it must never
	// be asked.
	attacker, _ := rsa.GenerateKey(rand.Reader, 2048)
	var jkuHits atomic.Int64
	jku := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { jkuHits.Add(1) }))
	defer jku.Close()
	pubDER, _ := x509.MarshalPKIXPublicKey(&rsaPriv.PublicKey)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	b64 := base64.RawURLEncoding.EncodeToString

	signed := func(method jwt.SigningMethod, key any, header map[string]any, c jwt.MapClaims) string {
		tok := jwt.NewWithClaims(method, c)
		for k, val := range header {
			tok.Header[k] = val
		}
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	valid := idp.Claims("alice", nil)
	ecOther, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cases := []struct {
		name, token, reason string
	}{
		{"alg none", signed(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, map[string]any{"kid": rsaKid}, valid),
			`token alg "none" is not allowed: use RS256 or ES256`},
		{"HS256 with the RSA public key as secret (alg confusion)", signed(jwt.SigningMethodHS256, pubPEM, map[string]any{"kid": rsaKid}, valid),
			`token alg "HS256" is not allowed: use RS256 or ES256`},
		{"HS256 with the JWK's modulus as secret", signed(jwt.SigningMethodHS256, rsaPriv.N.Bytes(), map[string]any{"kid": rsaKid}, valid),
			`token alg "HS256" is not allowed: use RS256 or ES256`},
		{"RS256 token naming the EC key", signed(jwt.SigningMethodRS256, rsaPriv, map[string]any{"kid": ecKid}, valid),
			`token alg "RS256" does not fit the key "` + ecKid + `" of issuer ` + idp.URL()},
		{"ES256 token naming the RSA key", signed(jwt.SigningMethodES256, ecOther, map[string]any{"kid": rsaKid}, valid),
			`token alg "ES256" does not fit the key "` + rsaKid + `" of issuer ` + idp.URL()},
		{"signed by another key under the IdP's kid", signed(jwt.SigningMethodRS256, attacker, map[string]any{"kid": rsaKid}, valid),
			"token signature is invalid"},
		{"embedded jwk", signed(jwt.SigningMethodRS256, attacker, map[string]any{"kid": "attacker", "jwk": map[string]any{
			"kty": "RSA", "kid": "attacker", "n": b64(attacker.N.Bytes()), "e": "AQAB"}}, valid),
			`token header "jwk" is not accepted: keys come only from the issuer's JWKS`},
		{"jku", signed(jwt.SigningMethodRS256, attacker, map[string]any{"kid": "attacker", "jku": jku.URL}, valid),
			`token header "jku" is not accepted: keys come only from the issuer's JWKS`},
		{"x5u", signed(jwt.SigningMethodRS256, attacker, map[string]any{"kid": rsaKid, "x5u": jku.URL}, valid),
			`token header "x5u" is not accepted: keys come only from the issuer's JWKS`},
		{"x5c", signed(jwt.SigningMethodRS256, attacker, map[string]any{"kid": rsaKid, "x5c": []string{"MIIB"}}, valid),
			`token header "x5c" is not accepted: keys come only from the issuer's JWKS`},
		{"no kid", signed(jwt.SigningMethodRS256, rsaPriv, nil, valid), "token has no kid header"},
		{"expired", idp.Token(t, "RS256", idp.Claims("alice", map[string]any{"exp": time.Now().Add(-time.Hour).Unix()})), "token is expired"},
		{"no exp", idp.Token(t, "RS256", idp.Claims("alice", map[string]any{"exp": nil})), "token has no exp claim"},
		{"not yet valid", idp.Token(t, "RS256", idp.Claims("alice", map[string]any{"nbf": time.Now().Add(time.Hour).Unix()})), "token is not valid yet"},
		{"wrong audience", idp.Token(t, "RS256", idp.Claims("alice", map[string]any{"aud": "other-api"})), "token has the wrong audience"},
		{"no audience", idp.Token(t, "RS256", idp.Claims("alice", map[string]any{"aud": nil})), "token has no aud claim"},
		{"wrong issuer", idp.Token(t, "RS256", idp.Claims("alice", map[string]any{"iss": "https://evil.example"})), "token has the wrong issuer"},
		{"issuer with a trailing slash", idp.Token(t, "RS256", idp.Claims("alice", map[string]any{"iss": idp.URL() + "/"})), "token has the wrong issuer"},
		{"no issuer", idp.Token(t, "RS256", idp.Claims("alice", map[string]any{"iss": nil})), "token has no iss claim"},
		{"no subject", idp.Token(t, "RS256", idp.Claims("", nil)), "token has no sub claim"},
		{"tenant not a UUID", idp.Token(t, "RS256", idp.Claims("alice", map[string]any{"tid": "acme"})), `token claim "tid" is not a UUID`},
		{"team not a string", idp.Token(t, "RS256", idp.Claims("alice", map[string]any{"org": map[string]any{"id": 7}})), `token claim "org.id" is not a string`},
		{"malformed", "a.b.c", "malformed bearer token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := bearer(v, c.token)
			if !isRefusal(err, c.reason) {
				t.Errorf("got %v, %v; want the refusal %q", p, err, c.reason)
			}
		})
	}
	if jkuHits.Load() != 0 {
		t.Errorf("the jku URL was fetched %d times", jkuHits.Load())
	}
}

// TestIssuerTenantIsolation: through the claim mapping, a token's tenant is its tid claim;
// a Guard whose Policy reads the tenant refuses a token of another tenant with 403.
func TestIssuerTenantIsolation(t *testing.T) {
	idp := idptest.New(t)
	v, _ := newIssuerVerifier(t, idp, nil)
	g, err := NewGuard(Config{Authenticator: KeysAndTokens(nil, v), Limits: Limits{PerWindow: -1, Burst: -1, Concurrent: -1}})
	if err != nil {
		t.Fatal(err)
	}
	h := g.Wrap(Policy{Permission: principal.PermKM, Tenant: func(r *http.Request) (string, error) {
		return ParseTenant(r.Header.Values("X-Tenant-Id"))
	}}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := principal.FromContext(r.Context())
		json.NewEncoder(w).Encode(map[string]string{"team": p.Team, "tenant": p.Tenant})
	}))
	for _, c := range []struct {
		tid, asks string
		status    int
	}{{tenantA, tenantA, 200}, {tenantA, tenantB, 403}, {tenantB, tenantB, 200}, {tenantB, tenantA, 403}} {
		tok := idp.Token(t, "ES256", idp.Claims("alice", map[string]any{"org": map[string]any{"id": "acme"}, "tid": c.tid, "scp": "kmkit.read"}))
		r := httptest.NewRequest(http.MethodGet, "/x", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		r.Header.Set("X-Tenant-Id", c.asks)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.status {
			t.Errorf("tid %s asking for %s: %d %s, want %d", c.tid, c.asks, w.Code, w.Body, c.status)
		}
		if c.status == 200 && w.Body.String() != `{"team":"acme","tenant":"`+c.tid+`"}`+"\n" {
			t.Errorf("principal %s", w.Body)
		}
	}
}

func TestCheckIssuer(t *testing.T) {
	for _, c := range []struct {
		iss  Issuer
		want string
	}{
		{Issuer{URL: "http://idp.example", Audience: []string{"a"}}, `issuer "http://idp.example" must use https (http only on a loopback address)`},
		{Issuer{URL: "idp", Audience: []string{"a"}}, `issuer "idp" is not an absolute URL`},
		{Issuer{URL: "https://idp.example?tenant=x", Audience: []string{"a"}}, `issuer "https://idp.example?tenant=x" must not have a query`},
		{Issuer{URL: "https://idp.example", Audience: []string{"a"}, JWKSURL: "https://idp.example/keys?appid=x"}, ""},
		{Issuer{URL: "https://idp.example"}, "issuer https://idp.example: an audience is required"},
		{Issuer{URL: "https://idp.example", Audience: []string{"a"}, Algorithms: []string{"HS256"}},
			`issuer https://idp.example: algorithm "HS256" is not accepted: use RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384 or ES512`},
		{Issuer{URL: "https://idp.example", Audience: []string{"a"}, Algorithms: []string{"none"}},
			`issuer https://idp.example: algorithm "none" is not accepted: use RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384 or ES512`},
		{Issuer{URL: "https://idp.example", Audience: []string{"a"}, JWKSURL: "http://keys.example/jwks"},
			`issuer https://idp.example: jwksURL "http://keys.example/jwks" must use https (http only on a loopback address)`},
		{Issuer{URL: "https://idp.example", Audience: []string{"a"}, Claims: ClaimMapping{Scopes: map[string][]principal.Permission{"x": {"root"}}}},
			`issuer https://idp.example: unknown permission "root" in the scope mapping`},
		{Issuer{URL: "https://idp.example", Audience: []string{"a"}, Claims: ClaimMapping{FixedTenant: "acme"}},
			`issuer https://idp.example: tenant "acme" is not a UUID`},
		{Issuer{URL: "https://idp.example", Audience: []string{"a"}}, ""},
		{Issuer{URL: "http://127.0.0.1:9/realms/x", Audience: []string{"a"}}, ""},
	} {
		err := CheckIssuer(c.iss)
		if got := ""; err != nil {
			got = err.Error()
			if got != c.want {
				t.Errorf("%+v: %q, want %q", c.iss, got, c.want)
			}
		} else if c.want != "" {
			t.Errorf("%+v: accepted, want %q", c.iss, c.want)
		}
	}
}

// FuzzIssuerAuthenticate: no token makes the issuer path panic, and what it accepts is a
// token of the IdP's keys (the seeds' signatures are the only valid ones).
func FuzzIssuerAuthenticate(f *testing.F) {
	idp := idptest.New(f)
	v, err := NewJWTVerifier(JWTConfig{Issuers: []Issuer{{URL: idp.URL(), Audience: []string{"kmkit"}}}, CacheSize: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { v.Close() })
	f.Add(idp.Token(f, "RS256", idp.Claims("alice", nil)))
	f.Add(idp.Token(f, "ES256", idp.Claims("bob", map[string]any{"scope": "km"})))
	f.Add("eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4In0.")
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, tok string) {
		p, err := bearer(v, tok)
		if err == nil && (p == nil || !strings.HasSuffix(p.Name, "@"+idp.URL())) {
			t.Fatalf("accepted %q as %+v", tok, p)
		}
	})
}
