package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/kmkit/kmkit/principal"
)

// The fixed clock of the tests: ten seconds past half past five, so that the hourly window
// ends at 06:00:00Z, 1790 seconds later.
var testNow = time.Date(2026, 11, 21, 5, 30, 10, 0, time.UTC)

const (
	testIssuer   = "https://idp.example"
	testAudience = "kmkit"
	tenantA      = "3f1c5a2e-7b4d-4c1e-9a0f-2d6b8e4c1a7f"
	tenantB      = "9d2e4f60-1a3b-4c5d-8e7f-a0b1c2d3e4f5"
)

var (
	testRSA   = mustRSA()
	testEC    = mustEC()
	testHS    = []byte("a shared secret of at least 32 bytes!")
	rsaPubPEM = pemOf(&testRSA.PublicKey)
	ecPubPEM  = pemOf(&testEC.PublicKey)
)

func mustRSA() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}

func mustEC() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

func pemOf(pub any) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// testKeys are the application keys of the tests, by their plain text.
var testKeys = []struct {
	plain string
	key   Key
}{
	{"km-key-0001", Key{Name: "all", Team: "acme", Tenant: tenantA, Permissions: []principal.Permission{principal.PermKM, principal.PermOData, principal.PermSCIM, principal.PermReporting}}},
	{"scim-key-0001", Key{Team: "acme", Permissions: []principal.Permission{principal.PermSCIM}}},
	{"report-key-0001", Key{Tenant: tenantA, Permissions: []principal.Permission{principal.PermReporting}}},
	{"report-key-b", Key{Tenant: tenantB, Permissions: []principal.Permission{principal.PermKM}}},
	{"no-tenant-key", Key{Permissions: []principal.Permission{principal.PermReporting}}},
	{"small-budget", Key{Name: "small", Permissions: []principal.Permission{principal.PermKM}, RatePerWindow: 2}},
}

func newTestKeySet(t testing.TB) *KeySet {
	t.Helper()
	keys := make([]Key, len(testKeys))
	for i, k := range testKeys {
		keys[i] = k.key
		keys[i].Digest = DigestOf(k.plain)
	}
	s, err := NewKeySet(keys)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newTestVerifier returns the verifier of the test keys; now nil means testNow.
func newTestVerifier(t testing.TB, cacheSize int, now func() time.Time) *JWTVerifier {
	t.Helper()
	if now == nil {
		now = func() time.Time { return testNow }
	}
	hs, err := ParseJWTKey("hs", AlgHS256, string(testHS))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ParseJWTKey("rs", AlgRS256, rsaPubPEM)
	if err != nil {
		t.Fatal(err)
	}
	es, err := ParseJWTKey("es", AlgES256, ecPubPEM)
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewJWTVerifier(JWTConfig{
		Issuer: testIssuer, Audience: testAudience,
		Keys:      []JWTKey{rs, es, hs},
		CacheSize: cacheSize,
		Now:       now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// claims returns valid claims for subject alice, changed by the edits: a nil value deletes.
func claims(edits map[string]any) jwt.MapClaims {
	c := jwt.MapClaims{
		"sub":    "alice",
		"iss":    testIssuer,
		"aud":    testAudience,
		"exp":    testNow.Add(time.Hour).Unix(),
		"nbf":    testNow.Add(-time.Minute).Unix(),
		"scope":  "km odata",
		"team":   "acme",
		"tenant": tenantA,
	}
	for k, v := range edits {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// sign signs c with method and key, setting the kid header unless kid is "".
func sign(t testing.TB, method jwt.SigningMethod, key any, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
