package keysfile

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kmkit/kmkit/auth"
	"github.com/kmkit/kmkit/principal"
)

const tenant = "3f1c5a2e-7b4d-4c1e-9a0f-2d6b8e4c1a7f"

var (
	rsaKey = func() *rsa.PrivateKey {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		return k
	}()
	ecKey = func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		return k
	}()
)

// quotedPEM returns the PEM of pub as a YAML double-quoted scalar.
func quotedPEM(pub any) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		panic(err)
	}
	q, _ := json.Marshal(string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})))
	return string(q)
}

var fullFile = `# keys of the tests
keys:
  - key: "plain-key-1"
    name: ci
    team: acme
    tenant: ` + strings.ToUpper(tenant) + `
    permissions: [km, odata, scim, reporting]
    ratePerHour: 100
    burst: 200
    concurrency: 40
  - sha256: ` + auth.DigestOf("hashed-key-2").String() + `
    permissions:
      - reporting
    tenant: ` + tenant + `
  - key: 12345
    permissions: [km]
jwt:
  issuer: https://idp.example
  audience: kmkit
  teamClaim: org
  leeway: 1m
  keys:
    - {kid: k1, alg: RS256, pem: ` + quotedPEM(&rsaKey.PublicKey) + `}
    - {kid: k2, alg: ES256, pem: ` + quotedPEM(&ecKey.PublicKey) + `}
    - {kid: k3, alg: HS256, secret: "a shared secret of at least 32 bytes"}
`

func TestParse(t *testing.T) {
	f, err := Parse("keys.yaml", []byte(fullFile))
	if err != nil {
		t.Fatal(err)
	}
	wantKeys := []auth.Key{
		{Digest: auth.DigestOf("plain-key-1"), Name: "ci", Team: "acme", Tenant: tenant,
			Permissions: []principal.Permission{"km", "odata", "scim", "reporting"}, RatePerWindow: 100, Burst: 200, Concurrent: 40},
		{Digest: auth.DigestOf("hashed-key-2"), Tenant: tenant, Permissions: []principal.Permission{"reporting"}},
		{Digest: auth.DigestOf("12345"), Permissions: []principal.Permission{"km"}},
	}
	if diff := cmp.Diff(wantKeys, f.Keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	wantJWT := auth.JWTConfig{Issuer: "https://idp.example", Audience: "kmkit", TeamClaim: "org", Leeway: time.Minute}
	if diff := cmp.Diff(wantJWT, *f.JWT, cmpopts.IgnoreFields(auth.JWTConfig{}, "Keys", "Now")); diff != "" {
		t.Errorf("jwt (-want +got):\n%s", diff)
	}
	if len(f.JWT.Keys) != 3 {
		t.Fatalf("%d jwt keys, want 3", len(f.JWT.Keys))
	}
	rs, ok := f.JWT.Keys[0].Key.(*rsa.PublicKey)
	if !ok || !rs.Equal(&rsaKey.PublicKey) || f.JWT.Keys[0].ID != "k1" || f.JWT.Keys[0].Alg != "RS256" {
		t.Errorf("first jwt key: %+v", f.JWT.Keys[0])
	}
	es, ok := f.JWT.Keys[1].Key.(*ecdsa.PublicKey)
	if !ok || !es.Equal(&ecKey.PublicKey) || f.JWT.Keys[1].ID != "k2" {
		t.Errorf("second jwt key: %+v", f.JWT.Keys[1])
	}
	if diff := cmp.Diff(auth.JWTKey{ID: "k3", Alg: "HS256", Key: []byte("a shared secret of at least 32 bytes")}, f.JWT.Keys[2]); diff != "" {
		t.Errorf("third jwt key (-want +got):\n%s", diff)
	}
}

// TestAuthenticator: the file's authenticator accepts its keys and its tokens.
func TestAuthenticator(t *testing.T) {
	f, err := Parse("keys.yaml", []byte(fullFile))
	if err != nil {
		t.Fatal(err)
	}
	a, err := f.Authenticator()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := a.Authenticate(ctx, auth.Credential{Scheme: auth.SchemeAPIKey, Secret: "hashed-key-2"})
	if err != nil || p.Tenant != tenant {
		t.Errorf("x-api-key: %+v, %v", p, err)
	}
	p, err = a.Authenticate(ctx, auth.Credential{Scheme: auth.SchemeAppKey, Secret: "plain-key-1"})
	if err != nil || p.Name != "ci" || p.RatePerWindow != 100 {
		t.Errorf("AppKey: %+v, %v", p, err)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"sub": "bob", "iss": "https://idp.example", "aud": "kmkit", "exp": time.Now().Add(time.Hour).Unix(), "org": "umbrella", "scope": "km",
	})
	tok.Header["kid"] = "k1"
	signed, err := tok.SignedString(rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	p, err = a.Authenticate(ctx, auth.Credential{Scheme: auth.SchemeBearer, Secret: signed})
	if err != nil || p.Name != "sub:bob" || p.Team != "umbrella" {
		t.Errorf("Bearer: %+v, %v", p, err)
	}

	onlyKeys, err := Parse("k.yaml", []byte("keys: [{key: k, permissions: [km]}]"))
	if err != nil {
		t.Fatal(err)
	}
	a, err = onlyKeys.Authenticator()
	if err != nil {
		t.Fatal(err)
	}
	var ce *auth.CredentialError
	if _, err := a.Authenticate(ctx, auth.Credential{Scheme: auth.SchemeBearer, Secret: signed}); !errors.As(err, &ce) || ce.Reason != "Bearer tokens (JWT) are not accepted here: send an application key" {
		t.Errorf("Bearer JWT without a jwt section: %v", err)
	}
	if p, err := a.Authenticate(ctx, auth.Credential{Scheme: auth.SchemeBearer, Secret: "k"}); err != nil || !p.Can(principal.PermKM) {
		t.Errorf("key as a Bearer token: %+v, %v", p, err)
	}
}

func TestParseJWTOptions(t *testing.T) {
	tests := []struct {
		name, extra string
		leeway      time.Duration
		cacheSize   int
	}{
		{"defaults", "", 0, 0},
		{"no leeway", "  leeway: 0s\n", -1, 0},
		{"no cache", "  cacheSize: 0\n", 0, -1},
		{"cache size", "  cacheSize: 50\n", 0, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := "jwt:\n  issuer: i\n  audience: a\n  keys: [{kid: k, alg: HS256, secret: " + strings.Repeat("s", 32) + "}]\n" + tt.extra
			f, err := Parse("k.yaml", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			if f.JWT.Leeway != tt.leeway || f.JWT.CacheSize != tt.cacheSize {
				t.Errorf("leeway %v, cacheSize %d; want %v, %d", f.JWT.Leeway, f.JWT.CacheSize, tt.leeway, tt.cacheSize)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	digest := auth.DigestOf("k").String()
	hsKey := "{kid: k, alg: HS256, secret: " + strings.Repeat("s", 32) + "}"
	tests := []struct {
		name, data, want string
	}{
		{"empty", "", "k.yaml:1:1: the keys file is empty: it needs keys or a jwt section"},
		{"only a comment", "# nothing\n", "k.yaml:1:1: the keys file is empty: it needs keys or a jwt section"},
		{"not a mapping", "- a\n", "k.yaml:1:1: expected a mapping of fields, found a list"},
		{"nothing defined", "keys: []\n", "k.yaml:1:1: the keys file defines no keys and no jwt section"},
		{"yaml syntax", "keys: [\n", "k.yaml: yaml: line 1: did not find expected node content"},
		{"unknown top field", "keys: []\nlimits: {}\n", `k.yaml:2:1: unknown field "limits" (known: jwt, keys, teams)`},
		{"keys not a list", "keys: {key: a}\n", "k.yaml:1:7: keys must be a list, found a mapping"},
		{"key entry not a mapping", "keys:\n  - abc\n", `k.yaml:2:5: expected a mapping of fields, found "abc"`},
		{"unknown key field", "keys:\n  - key: a\n    permissions: [km]\n    role: admin\n",
			`k.yaml:4:5: unknown field "role" (known: burst, concurrency, key, name, permissions, ratePerHour, sha256, team, tenant)`},
		{"field twice", "keys:\n  - key: a\n    key: b\n    permissions: [km]\n", `k.yaml:3:5: field "key" appears twice`},
		{"no key or digest", "keys:\n  - team: acme\n    permissions: [km]\n",
			"k.yaml:2:5: a key needs key (the key itself) or sha256 (the hex digest of the key)"},
		{"key and digest", "keys:\n  - key: a\n    sha256: " + digest + "\n    permissions: [km]\n", "k.yaml:3:13: give either key or sha256, not both"},
		{"empty key", "keys:\n  - key: \"\"\n    permissions: [km]\n", "k.yaml:2:10: key is empty"},
		{"null key", "keys:\n  - key:\n    permissions: [km]\n", "k.yaml:2:9: key must be a string, found null"},
		{"key with a space", "keys:\n  - key: two words\n    permissions: [km]\n",
			"k.yaml:2:10: a key is at most 16384 visible ASCII characters without spaces; clients could not send this one"},
		{"short digest", "keys:\n  - sha256: abc\n    permissions: [km]\n", "k.yaml:2:13: sha256: a SHA-256 digest has 64 hexadecimal digits, not 3"},
		{"name of a token's principal", "keys:\n  - key: a\n    name: sub:alice\n    permissions: [km]\n",
			`k.yaml:3:11: key name "sub:alice" begins with "sub:", which names the principals of tokens`},
		{"same key twice", "keys:\n  - key: k\n    permissions: [km]\n  - sha256: " + digest + "\n    permissions: [scim]\n", "k.yaml:4:5: the same key as line 2"},
		{"same name twice", "keys:\n  - {key: a, name: n, permissions: [km]}\n  - {key: b, name: n, permissions: [km]}\n", `k.yaml:3:5: the name "n" is already used on line 2`},
		{"no permissions", "keys:\n  - key: a\n", `k.yaml:2:5: missing field "permissions"`},
		{"empty permissions", "keys:\n  - key: a\n    permissions: []\n", "k.yaml:3:18: permissions is empty: name at least one of km, odata, scim, reporting, metrics"},
		{"unknown permission", "keys:\n  - key: a\n    permissions: [km, admin]\n", `k.yaml:3:23: unknown permission "admin": use km, odata, scim, reporting or metrics`},
		{"permission twice", "keys:\n  - key: a\n    permissions: [km, km]\n", `k.yaml:3:23: permission "km" appears twice`},
		{"permissions not a list", "keys:\n  - key: a\n    permissions: km\n", `k.yaml:3:18: permissions must be a list, found "km"`},
		{"bad tenant", "keys:\n  - key: a\n    tenant: acme\n    permissions: [km]\n", `k.yaml:3:13: tenant "acme" is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`},
		{"empty tenant", "keys:\n  - key: a\n    tenant: ''\n    permissions: [km]\n", `k.yaml:3:13: tenant "" is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`},
		{"negative rate", "keys:\n  - key: a\n    ratePerHour: -5\n    permissions: [km]\n", "k.yaml:3:18: ratePerHour must be a whole number from 0 to 9223372036854775807, found -5"},
		{"negative burst", "keys:\n  - key: a\n    burst: -1\n    permissions: [km]\n", "k.yaml:3:12: burst must be a whole number from 0 to 9223372036854775807, found -1"},
		{"concurrency not a number", "keys:\n  - key: a\n    concurrency: 2.5\n    permissions: [km]\n", `k.yaml:3:18: concurrency must be a whole number, found "2.5"`},
		{"rate not a number", "keys:\n  - key: a\n    ratePerHour: lots\n    permissions: [km]\n", `k.yaml:3:18: ratePerHour must be a whole number, found "lots"`},
		{"jwt without issuer", "jwt:\n  audience: a\n  keys: [" + hsKey + "]\n", `k.yaml:2:3: missing field "issuer"`},
		{"jwt unknown field", "jwt:\n  issuer: i\n  audience: a\n  keys: [" + hsKey + "]\n  algorithms: [RS256]\n",
			`k.yaml:5:3: unknown field "algorithms" (known: audience, cacheSize, issuer, issuers, keys, leeway, teamClaim, tenantClaim)`},
		{"jwt no keys", "jwt:\n  issuer: i\n  audience: a\n  keys: []\n", "k.yaml:4:9: jwt keys must be a list of at least one key, found a list"},
		{"jwt bad leeway", "jwt:\n  issuer: i\n  audience: a\n  leeway: soon\n  keys: [" + hsKey + "]\n", `k.yaml:4:11: leeway "soon" is not a duration such as 30s or 1m`},
		{"jwt negative leeway", "jwt:\n  issuer: i\n  audience: a\n  leeway: -1s\n  keys: [" + hsKey + "]\n", `k.yaml:4:11: leeway "-1s" is not a duration such as 30s or 1m`},
		{"jwt kid twice", "jwt:\n  issuer: i\n  audience: a\n  keys:\n    - " + hsKey + "\n    - " + hsKey + "\n", `k.yaml:6:7: kid "k" is already used on line 5`},
		{"jwt key without alg", "jwt:\n  issuer: i\n  audience: a\n  keys: [{kid: k, secret: s}]\n", `k.yaml:4:10: missing field "alg"`},
		{"jwt unknown alg", "jwt:\n  issuer: i\n  audience: a\n  keys: [{kid: k, alg: none, secret: s}]\n", `k.yaml:4:10: unsupported alg "none": use RS256, ES256 or HS256`},
		{"jwt HS256 without secret", "jwt:\n  issuer: i\n  audience: a\n  keys: [{kid: k, alg: HS256, pem: x}]\n", "k.yaml:4:10: an HS256 key needs secret"},
		{"jwt RS256 without pem", "jwt:\n  issuer: i\n  audience: a\n  keys: [{kid: k, alg: RS256, secret: x}]\n", "k.yaml:4:10: an RS256 key needs pem (the public key)"},
		{"jwt pem and secret", "jwt:\n  issuer: i\n  audience: a\n  keys: [{kid: k, alg: RS256, pem: x, secret: y}]\n", "k.yaml:4:47: give either pem or secret, not both"},
		{"jwt bad pem", "jwt:\n  issuer: i\n  audience: a\n  keys: [{kid: k, alg: RS256, pem: nonsense}]\n",
			`k.yaml:4:36: RS256 key "k": invalid key: Key must be a PEM encoded PKCS1 or PKCS8 key`},
		{"jwt EC pem for RS256", "jwt:\n  issuer: i\n  audience: a\n  keys: [{kid: k, alg: RS256, pem: " + quotedPEM(&ecKey.PublicKey) + "}]\n",
			`k.yaml:4:36: RS256 key "k": key is not a valid RSA public key`},
		{"jwt short secret", "jwt:\n  issuer: i\n  audience: a\n  keys: [{kid: k, alg: HS256, secret: short}]\n",
			`k.yaml:4:39: key "k": HS256 needs a secret of at least 32 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("k.yaml", []byte(tt.data))
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %q\nwant %q", err.Error(), tt.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.yaml")
	if err := os.WriteFile(path, []byte("keys:\n  - key: a\n    permissions: [kmx]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	var fe *Error
	if !errors.As(err, &fe) || fe.File != path || fe.Line != 3 {
		t.Errorf("Load: %#v, want an *Error at %s line 3", err, path)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "absent.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file: %v", err)
	}
}

// FuzzParse: any input parses or fails with an error; what parses yields usable keys.
func FuzzParse(f *testing.F) {
	f.Add(fullFile)
	f.Add("keys:\n  - key: a\n    permissions: [km]\n")
	f.Add("keys: [{sha256: " + auth.DigestOf("x").String() + ", permissions: [scim], tenant: " + tenant + "}]")
	f.Add("jwt: {issuer: i, audience: a, keys: [{kid: k, alg: HS256, secret: " + strings.Repeat("s", 32) + "}]}")
	f.Add(issuersFile)
	f.Add("jwt: {issuers: [{issuer: https://i.example, audience: [a, b], scopes: {r: [km]}}]}")
	f.Add("a: &x [1]\nb: *x\n")
	f.Add("keys: &k [{key: a, permissions: &p [km]}]\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, data string) {
		file, err := Parse("f.yaml", []byte(data))
		if err != nil {
			return
		}
		if len(file.Keys) == 0 && file.JWT == nil {
			t.Fatal("parsed a file with neither keys nor jwt")
		}
		for _, k := range file.Keys {
			if len(k.Permissions) == 0 {
				t.Fatalf("key without permissions: %+v", k)
			}
		}
		if file.JWT != nil && len(file.JWT.Issuers) > 0 {
			for _, iss := range file.JWT.Issuers {
				if err := auth.CheckIssuer(iss); err != nil {
					t.Fatalf("parsed issuer refused: %v", err)
				}
			}
			return // the verifier would fetch keys from the issuers
		}
		if _, err := file.Authenticator(); err != nil {
			t.Fatalf("parsed file has no authenticator: %v", err)
		}
	})
}

func TestParseTeams(t *testing.T) {
	f, err := Parse("k.yaml", []byte("keys:\n  - {key: a, team: acme, permissions: [scim]}\nteams:\n  acme: {seats: 50}\n  beta:\n    seats: 0\n  gamma: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	fifty, zero := 50, 0
	want := map[string]Team{"acme": {Seats: &fifty}, "beta": {Seats: &zero}, "gamma": {}}
	if diff := cmp.Diff(want, f.Teams); diff != "" {
		t.Errorf("teams (-want +got):\n%s", diff)
	}
	for _, tt := range []struct{ name, teams, err string }{
		{"not a mapping", "teams: [acme]\n", "k.yaml:3:8: teams must be a mapping from team name to its settings, found a list"},
		{"negative seats", "teams:\n  acme: {seats: -1}\n", "k.yaml:4:17: seats must be a whole number from 0 to 9223372036854775807, found -1"},
		{"text seats", "teams:\n  acme: {seats: many}\n", `k.yaml:4:17: seats must be a whole number, found "many"`},
		{"unknown field", "teams:\n  acme: {seat: 5}\n", `k.yaml:4:10: unknown field "seat" (known: seats)`},
		{"team twice", "teams:\n  acme: {seats: 1}\n  acme: {seats: 2}\n", `k.yaml:5:3: team "acme" is given twice`},
		{"empty name", "teams:\n  \"\": {seats: 1}\n", "k.yaml:4:3: a team name is empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("k.yaml", []byte("keys:\n  - {key: a, team: acme, permissions: [scim]}\n"+tt.teams))
			if err == nil || err.Error() != tt.err {
				t.Errorf("error %v, want %s", err, tt.err)
			}
		})
	}
}

const issuersFile = `keys:
  - {key: k, permissions: [km]}
jwt:
  leeway: 10s
  issuers:
    - issuer: https://login.example.com/realms/acme
      audience: [kmkit, api://kmkit]
      algorithms: [RS256, PS256, ES256]
      refresh: 30m
      unknownKidRefresh: 10s
      claims:
        team: org.id
        tenant: tid
        permissions: [scp, roles]
      scopes:
        kmkit.read: [km, odata, mcp]
        kmkit.admin: [scim, metrics]
    - issuer: https://acme.okta.example/oauth2/default
      audience: kmkit
      jwksURL: https://acme.okta.example/oauth2/default/v1/keys
      team: acme
      tenant: ` + tenant + `
`

func TestParseIssuers(t *testing.T) {
	f, err := Parse("keys.yaml", []byte(issuersFile))
	if err != nil {
		t.Fatal(err)
	}
	want := []auth.Issuer{
		{URL: "https://login.example.com/realms/acme", Audience: []string{"kmkit", "api://kmkit"}, Algorithms: []string{"RS256", "PS256", "ES256"},
			RefreshInterval: 30 * time.Minute, UnknownKIDInterval: 10 * time.Second,
			Claims: auth.ClaimMapping{Team: "org.id", Tenant: "tid", PermissionClaims: []string{"scp", "roles"},
				Scopes: map[string][]principal.Permission{"kmkit.read": {"km", "odata", "mcp"}, "kmkit.admin": {"scim", "metrics"}}}},
		{URL: "https://acme.okta.example/oauth2/default", Audience: []string{"kmkit"}, JWKSURL: "https://acme.okta.example/oauth2/default/v1/keys",
			Claims: auth.ClaimMapping{FixedTeam: "acme", FixedTenant: tenant}},
	}
	if diff := cmp.Diff(want, f.JWT.Issuers); diff != "" {
		t.Errorf("issuers (-want +got):\n%s", diff)
	}
	if f.JWT.Leeway != 10*time.Second || f.JWT.Issuer != "" || len(f.JWT.Keys) != 0 {
		t.Errorf("jwt %+v", f.JWT)
	}
}

func TestParseIssuersErrors(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"empty jwt", "jwt: {leeway: 1s}\n", "k.yaml:1:6: the jwt section needs issuers (identity providers with a JWKS), or issuer, audience and keys"},
		{"no audience", "jwt:\n  issuers:\n    - issuer: https://i.example\n", `k.yaml:3:7: missing field "audience"`},
		{"http issuer", "jwt:\n  issuers:\n    - {issuer: http://i.example, audience: a}\n",
			`k.yaml:3:7: issuer "http://i.example" must use https (http only on a loopback address)`},
		{"HS256", "jwt:\n  issuers:\n    - {issuer: https://i.example, audience: a, algorithms: [HS256]}\n",
			`k.yaml:3:7: issuer https://i.example: algorithm "HS256" is not accepted: use RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384 or ES512`},
		{"unknown permission", "jwt:\n  issuers:\n    - {issuer: https://i.example, audience: a, scopes: {r: [root]}}\n",
			`k.yaml:3:61: unknown permission "root": use km, odata, scim, reporting or metrics`},
		{"bad refresh", "jwt:\n  issuers:\n    - {issuer: https://i.example, audience: a, refresh: soon}\n",
			`k.yaml:3:57: refresh "soon" is not a positive duration such as 1h or 30s`},
		{"twice", "jwt:\n  issuers:\n    - {issuer: https://i.example, audience: a}\n    - {issuer: https://i.example, audience: b}\n",
			`k.yaml:4:7: issuer "https://i.example" is already named on line 3`},
		{"unknown claim field", "jwt:\n  issuers:\n    - {issuer: https://i.example, audience: a, claims: {group: g}}\n",
			`k.yaml:3:57: unknown field "group" (known: permissions, team, tenant)`},
		{"audience and keys half given", "jwt:\n  audience: a\n  issuers: [{issuer: https://i.example, audience: a}]\n", `k.yaml:2:3: missing field "issuer"`},
	} {
		_, err := Parse("k.yaml", []byte(c.data))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
