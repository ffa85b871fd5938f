package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/principal"
)

func TestParseAuthorization(t *testing.T) {
	tests := []struct {
		header http.Header
		want   Credential
		err    string
	}{
		{hdr("Authorization", "AppKey abc"), Credential{SchemeAppKey, "abc"}, ""},
		{hdr("Authorization", "bEaReR x.y.z"), Credential{SchemeBearer, "x.y.z"}, ""},
		{hdr("Authorization", "Bearer\tx.y.z"), Credential{SchemeBearer, "x.y.z"}, ""},
		{hdr("AppKey", "\tabc "), Credential{SchemeAppKey, "abc"}, ""},
		{hdr("Authorization", "AppKey a b"), Credential{}, "malformed AppKey credentials: only visible ASCII characters, without spaces"},
		{hdr("Authorization", "AppKey ключ"), Credential{}, "malformed AppKey credentials: only visible ASCII characters, without spaces"},
		{hdr("Authorization", strings.Repeat("S", 80)+" x"), Credential{}, `unsupported authorization scheme "` + strings.Repeat("S", 64) + `…": use AppKey or Bearer`},
	}
	for _, tt := range tests {
		got, err := ParseAuthorization(tt.header)
		if tt.err != "" {
			if !isRefusal(err, tt.err) {
				t.Errorf("ParseAuthorization(%v): error %v, want %q", tt.header, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseAuthorization(%v): %v", tt.header, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseAuthorization(%v) (-want +got):\n%s", tt.header, diff)
		}
	}
}

func TestCredentialStringHidesSecret(t *testing.T) {
	c := Credential{Scheme: SchemeAppKey, Secret: "very-secret"}
	if s := c.String(); strings.Contains(s, "very-secret") || s != "AppKey credential" {
		t.Errorf("String() = %q", s)
	}
}

func TestParseTenant(t *testing.T) {
	tests := []struct {
		in      []string
		want    string
		err     string
		missing bool
	}{
		{[]string{tenantA}, tenantA, "", false},
		{[]string{" " + strings.ToUpper(tenantA) + " "}, tenantA, "", false},
		{nil, "", "missing x-tenant-id header", true},
		{[]string{""}, "", "empty x-tenant-id header", true},
		{[]string{"urn:uuid:" + tenantA}, "", `x-tenant-id "urn:uuid:` + tenantA + `" is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`, false},
		{[]string{"3f1c5a2e-7b4d-4c1e-9a0f-2d6b8e4c1a7g"}, "", `x-tenant-id "3f1c5a2e-7b4d-4c1e-9a0f-2d6b8e4c1a7g" is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`, false},
		{[]string{tenantA, tenantA}, "", "send one x-tenant-id header", false},
	}
	for _, tt := range tests {
		got, err := ParseTenant(tt.in)
		var te *TenantError
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("ParseTenant(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		case tt.err != "" && (!errors.As(err, &te) || te.Reason != tt.err || te.Missing != tt.missing):
			t.Errorf("ParseTenant(%q): error %#v, want %q (missing %v)", tt.in, err, tt.err, tt.missing)
		}
	}
}

func TestKeySet(t *testing.T) {
	s := newTestKeySet(t)
	if s.Len() != len(testKeys) {
		t.Errorf("Len = %d, want %d", s.Len(), len(testKeys))
	}
	ctx := context.Background()
	p, err := s.Authenticate(ctx, Credential{Scheme: SchemeAPIKey, Secret: "report-key-0001"})
	if err != nil {
		t.Fatal(err)
	}
	want := &principal.Principal{Name: "key:" + DigestOf("report-key-0001").String()[:8], Tenant: tenantA, Permissions: []principal.Permission{principal.PermReporting}}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("principal (-want +got):\n%s", diff)
	}
	if _, err := s.Authenticate(ctx, Credential{Scheme: SchemeBearer, Secret: "report-key-0001"}); !isRefusal(err, "Bearer credentials are not accepted here") {
		t.Errorf("bearer credential: %v", err)
	}
	if _, err := s.Authenticate(ctx, Credential{Scheme: SchemeAppKey, Secret: "report-key-0002"}); !isRefusal(err, "invalid application key") {
		t.Errorf("unknown key: %v", err)
	}
	_, err = NewKeySet([]Key{{Digest: DigestOf("a")}, {Digest: DigestOf("b")}, {Digest: DigestOf("a")}})
	if err == nil || err.Error() != "key 3: the same key appears twice" {
		t.Errorf("duplicate key: %v", err)
	}
}

// TestKeyNamesAreNotTokenNames: limits count per principal name, and a token's principal
// is "sub:" and its subject, a key without a name "key:" and a digest prefix. A key named
// "sub:alice" would share alice's budget, burst and concurrency slots (she could be locked
// out by the key's traffic, or the key by hers), and "key:<prefix>" another key's: such
// names are refused, through NewKeySet and the keys file alike.
func TestKeyNamesAreNotTokenNames(t *testing.T) {
	unnamed := "key:" + DigestOf("k").String()[:8]
	for _, c := range []struct{ name, reason string }{
		{"sub:alice", `key name "sub:alice" begins with "sub:", which names the principals of tokens`},
		{unnamed, `key name "` + unnamed + `" begins with "key:", which names the keys without a name`},
	} {
		_, err := NewKeySet([]Key{{Digest: DigestOf("k")}, {Digest: DigestOf("other"), Name: c.name}})
		if err == nil || err.Error() != "key 2: "+c.reason {
			t.Errorf("a key named %q: %v, want %q", c.name, err, c.reason)
		}
	}
	for _, name := range []string{"alice", "Sub:alice", "subscriber", "keys:1"} {
		if _, err := NewKeySet([]Key{{Digest: DigestOf("k"), Name: name}}); err != nil {
			t.Errorf("a key named %q: %v", name, err)
		}
	}
}

func TestKeySetPrefixCollision(t *testing.T) {
	// Two digests sharing the first eight bytes land in one bucket; each finds its own key.
	var a, b Digest
	a[31], b[31] = 1, 2
	s, err := NewKeySet([]Key{{Digest: a, Name: "a"}, {Digest: b, Name: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.byPrefix); n != 1 {
		t.Fatalf("%d buckets, want 1", n)
	}
	for _, k := range s.byPrefix[0] {
		var found *principal.Principal
		for _, c := range s.byPrefix[prefixOf(k.digest)] {
			if c.digest == k.digest {
				found = c.principal
			}
		}
		if found == nil || found.Name != map[Digest]string{a: "a", b: "b"}[k.digest] {
			t.Errorf("digest %v found %v", k.digest, found)
		}
	}
}

func TestParseDigest(t *testing.T) {
	d := DigestOf("abc")
	got, err := ParseDigest(strings.ToUpper(d.String()))
	if err != nil || got != d {
		t.Errorf("ParseDigest(upper case) = %v, %v", got, err)
	}
	for in, want := range map[string]string{
		"abc":                   "a SHA-256 digest has 64 hexadecimal digits, not 3",
		strings.Repeat("g", 64): "a SHA-256 digest has only hexadecimal digits: encoding/hex: invalid byte: U+0067 'g'",
	} {
		if _, err := ParseDigest(in); err == nil || err.Error() != want {
			t.Errorf("ParseDigest(%q): %v, want %q", in, err, want)
		}
	}
}

func TestSchemes(t *testing.T) {
	keys := newTestKeySet(t)
	s := Schemes{SchemeAppKey: keys}
	if _, err := s.Authenticate(context.Background(), Credential{Scheme: SchemeAppKey, Secret: "km-key-0001"}); err != nil {
		t.Error(err)
	}
	if _, err := s.Authenticate(context.Background(), Credential{Scheme: SchemeBearer, Secret: "x"}); !isRefusal(err, "Bearer credentials are not accepted here") {
		t.Errorf("scheme without authenticator: %v", err)
	}
}

// FuzzParseAuthorization: any header values give a credential of a known scheme with a
// clean secret, or a refusal whose reason is one of the fixed texts or names the scheme
// word, never the secret.
func FuzzParseAuthorization(f *testing.F) {
	for _, seed := range [][2]string{
		{"AppKey abc", ""}, {"Bearer a.b.c", ""}, {"", "key"}, {"", ""}, {"basic x", ""},
		{"APPKEY\t\tk", ""}, {" ", ""}, {"AppKey", ""}, {"AppKey a b", ""}, {"x", "y"},
		{"Bearer " + strings.Repeat("t", 9000), ""}, {"\x00AppKey k", ""}, {"AppKey ключ", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	fixed := map[string]bool{}
	for _, e := range []error{errNoCredentials, errTwoHeaders, errManyValues, errTooLong} {
		fixed[e.Error()] = true
	}
	for _, what := range []string{"AppKey header", "AppKey credentials", "Bearer credentials"} {
		fixed["empty "+what] = true
		fixed["malformed "+what+": only visible ASCII characters, without spaces"] = true
	}
	fixed["empty Authorization header"] = true
	fixed["the Authorization header needs a scheme: AppKey or Bearer, a space, then the key or token"] = true

	f.Fuzz(func(t *testing.T, authz, appKey string) {
		h := http.Header{}
		if authz != "" {
			h.Set("Authorization", authz)
		}
		if appKey != "" {
			h.Set("AppKey", appKey)
		}
		c, err := ParseAuthorization(h)
		if err == nil {
			if c.Scheme != SchemeAppKey && c.Scheme != SchemeBearer {
				t.Fatalf("scheme %q", c.Scheme)
			}
			if c.Secret == "" || len(c.Secret) > MaxCredentialLength || strings.ContainsFunc(c.Secret, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
				t.Fatalf("secret %q", c.Secret)
			}
			return
		}
		var ce *CredentialError
		if !errors.As(err, &ce) {
			t.Fatalf("error %T %v is not a *CredentialError", err, err)
		}
		if fixed[ce.Reason] {
			return
		}
		word := strings.Trim(authz, " \t")
		if i := strings.IndexAny(word, " \t"); i >= 0 {
			word = word[:i]
		}
		if want := fmt.Sprintf("unsupported authorization scheme %q: use AppKey or Bearer", clip(word)); ce.Reason != want {
			t.Fatalf("reason %q, want %q", ce.Reason, want)
		}
	})
}

// FuzzParseAPIKey: any x-api-key header gives a clean key or a *CredentialError.
func FuzzParseAPIKey(f *testing.F) {
	for _, seed := range []string{"key", "", " key\t", "k y", "k\x01y", strings.Repeat("k", MaxCredentialLength+1)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, key string) {
		h := http.Header{}
		if key != "" {
			h.Set(HeaderAPIKey, key)
		}
		c, err := ParseAPIKey(h)
		var ce *CredentialError
		switch {
		case err == nil:
			if c.Scheme != SchemeAPIKey || c.Secret == "" || c.Secret != strings.Trim(key, " \t") {
				t.Fatalf("ParseAPIKey(%q) = %v %q", key, c.Scheme, c.Secret)
			}
		case errors.As(err, &ce):
		default:
			t.Fatalf("error %T %v", err, err)
		}
	})
}
