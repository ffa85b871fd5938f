package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/principal"
)

func TestJWTCache(t *testing.T) {
	now := testNow
	v := newTestVerifier(t, 10, func() time.Time { return now })
	ctx := context.Background()
	tok := sign(t, jwt.SigningMethodRS256, testRSA, "rs", claims(map[string]any{"exp": testNow.Add(time.Minute).Unix()}))
	bearer := Credential{Scheme: SchemeBearer, Secret: tok}

	first, err := v.Authenticate(ctx, bearer)
	if err != nil {
		t.Fatal(err)
	}
	second, err := v.Authenticate(ctx, bearer)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Error("second authentication of the same token did not come from the cache")
	}
	// Still valid within the leeway after exp, from the cache.
	now = testNow.Add(time.Minute + DefaultLeeway - time.Second)
	if p, err := v.Authenticate(ctx, bearer); err != nil || p != first {
		t.Errorf("within the leeway: %v, %v; want the cached principal", p, err)
	}
	// Past exp plus leeway the cache no longer answers and the token is refused.
	now = testNow.Add(time.Minute + DefaultLeeway)
	if _, err := v.Authenticate(ctx, bearer); !isRefusal(err, "token is expired") {
		t.Errorf("after expiry: %v, want the refusal %q", err, "token is expired")
	}

	// A refused token is not cached.
	now = testNow
	bad := sign(t, jwt.SigningMethodRS256, testRSA, "rs", claims(map[string]any{"iss": "x"}))
	for range 2 {
		if _, err := v.Authenticate(ctx, Credential{Scheme: SchemeBearer, Secret: bad}); !isRefusal(err, "token has the wrong issuer") {
			t.Errorf("refused token: %v", err)
		}
	}
	// The cache stays within its bound.
	for i := range 25 {
		tok := sign(t, jwt.SigningMethodHS256, testHS, "hs", claims(map[string]any{"sub": fmt.Sprint("user", i)}))
		p, err := v.Authenticate(ctx, Credential{Scheme: SchemeBearer, Secret: tok})
		if err != nil || p.Name != fmt.Sprint("sub:user", i) {
			t.Fatalf("token %d: %v, %v", i, p, err)
		}
		if n := v.cache.len(); n > 10 {
			t.Fatalf("cache holds %d tokens, bound 10", n)
		}
	}
}

func TestJWTCacheDisabled(t *testing.T) {
	v := newTestVerifier(t, -1, nil)
	tok := sign(t, jwt.SigningMethodES256, testEC, "es", claims(nil))
	for range 2 {
		if _, err := v.Authenticate(context.Background(), Credential{Scheme: SchemeBearer, Secret: tok}); err != nil {
			t.Fatal(err)
		}
	}
	if v.cache != nil {
		t.Error("a negative CacheSize left a cache")
	}
}

func TestJWTVerifierWrongScheme(t *testing.T) {
	v := newTestVerifier(t, 0, nil)
	_, err := v.Authenticate(context.Background(), Credential{Scheme: SchemeAppKey, Secret: "k"})
	if !isRefusal(err, "AppKey credentials are not accepted here") {
		t.Errorf("got %v", err)
	}
}

func TestJWTSingleKeyWithoutKid(t *testing.T) {
	k, err := ParseJWTKey("only", AlgHS256, string(testHS))
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewJWTVerifier(JWTConfig{Issuer: testIssuer, Audience: testAudience, Keys: []JWTKey{k},
		TeamClaim: "org", TenantClaim: "https://kmkit/tenant", Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	tok := sign(t, jwt.SigningMethodHS256, testHS, "", claims(map[string]any{"org": "umbrella", "https://kmkit/tenant": tenantB}))
	p, err := v.Authenticate(context.Background(), Credential{Scheme: SchemeBearer, Secret: tok})
	if err != nil {
		t.Fatal(err)
	}
	want := &principal.Principal{Name: "sub:alice", Team: "umbrella", Tenant: tenantB, Permissions: []principal.Permission{principal.PermKM, principal.PermOData}}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("principal (-want +got):\n%s", diff)
	}
}

func isRefusal(err error, reason string) bool {
	var ce *CredentialError
	return errors.As(err, &ce) && ce.Reason == reason
}

func TestNewJWTVerifierErrors(t *testing.T) {
	hs := JWTKey{ID: "hs", Alg: AlgHS256, Key: testHS}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  JWTConfig
		want string
	}{
		{"no issuer", JWTConfig{Audience: "a", Keys: []JWTKey{hs}}, "jwt: issuer is required"},
		{"no audience", JWTConfig{Issuer: "i", Keys: []JWTKey{hs}}, "jwt: audience is required"},
		{"no keys", JWTConfig{Issuer: "i", Audience: "a"}, "jwt: at least one key is required"},
		{"same kid twice", JWTConfig{Issuer: "i", Audience: "a", Keys: []JWTKey{hs, hs}}, `jwt: kid "hs" appears twice`},
		{"no kid", JWTConfig{Issuer: "i", Audience: "a", Keys: []JWTKey{{Alg: AlgHS256, Key: testHS}}}, "jwt: a JWT key needs a kid"},
		{"short secret", JWTConfig{Issuer: "i", Audience: "a", Keys: []JWTKey{{ID: "s", Alg: AlgHS256, Key: []byte("short")}}},
			`jwt: key "s": HS256 needs a secret of at least 32 bytes`},
		{"small RSA key", JWTConfig{Issuer: "i", Audience: "a", Keys: []JWTKey{{ID: "r", Alg: AlgRS256, Key: &small.PublicKey}}},
			`jwt: key "r": RS256 needs an RSA public key of at least 2048 bits`},
		{"RSA key for ES256", JWTConfig{Issuer: "i", Audience: "a", Keys: []JWTKey{{ID: "e", Alg: AlgES256, Key: &testRSA.PublicKey}}},
			`jwt: key "e": ES256 needs an ECDSA public key on the P-256 curve`},
		{"P-384 key for ES256", JWTConfig{Issuer: "i", Audience: "a", Keys: []JWTKey{{ID: "e", Alg: AlgES256, Key: &p384.PublicKey}}},
			`jwt: key "e": ES256 needs an ECDSA public key on the P-256 curve`},
		{"unknown alg", JWTConfig{Issuer: "i", Audience: "a", Keys: []JWTKey{{ID: "x", Alg: "RS512", Key: &testRSA.PublicKey}}},
			`jwt: key "x": unsupported alg "RS512": use RS256, ES256 or HS256`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewJWTVerifier(tt.cfg)
			if err == nil || err.Error() != tt.want {
				t.Errorf("NewJWTVerifier: %v, want %q", err, tt.want)
			}
		})
	}
}

func TestParseJWTKeyErrors(t *testing.T) {
	tests := []struct {
		alg, material, want string
	}{
		{AlgRS256, "not pem", `RS256 key "k": invalid key: Key must be a PEM encoded PKCS1 or PKCS8 key`},
		{AlgES256, rsaPubPEM, `ES256 key "k": key is not a valid ECDSA public key`},
		{AlgRS256, ecPubPEM, `RS256 key "k": key is not a valid RSA public key`},
		{"none", "", `unsupported alg "none": use RS256, ES256 or HS256`},
		{AlgHS256, "", `key "k": HS256 needs a secret of at least 32 bytes`},
	}
	for _, tt := range tests {
		_, err := ParseJWTKey("k", tt.alg, tt.material)
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseJWTKey(%s, %.10q): %v, want %q", tt.alg, tt.material, err, tt.want)
		}
	}
}

// FuzzJWTAuthenticate: any bearer token is verified or refused with a *CredentialError,
// never a panic or another error.
func FuzzJWTAuthenticate(f *testing.F) {
	v := newTestVerifier(f, 0, nil)
	f.Add(sign(f, jwt.SigningMethodRS256, testRSA, "rs", claims(nil)))
	f.Add(sign(f, jwt.SigningMethodHS256, testHS, "hs", claims(map[string]any{"scp": []any{"km", 1}})))
	f.Add(sign(f, jwt.SigningMethodHS256, []byte(rsaPubPEM), "rs", claims(nil)))
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.")
	f.Add("a.b.c")
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		p, err := v.Authenticate(context.Background(), Credential{Scheme: SchemeBearer, Secret: token})
		var ce *CredentialError
		switch {
		case err == nil && (p == nil || !strings.HasPrefix(p.Name, "sub:")):
			t.Fatalf("principal %+v", p)
		case err != nil && !errors.As(err, &ce):
			t.Fatalf("error %T %v", err, err)
		}
	})
}
