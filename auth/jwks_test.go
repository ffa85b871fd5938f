package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/auth/idptest"
	"github.com/kmkit/kmkit/principal"
)

// servedJWKS serves body as the JWKS of a test.
func servedJWKS(t *testing.T, body func() []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// withKeys returns the IdP's JWKS with extra keys appended.
func withKeys(t *testing.T, idp *idptest.IdP, extra ...any) []byte {
	t.Helper()
	var set struct {
		Keys []any `json:"keys"`
	}
	if err := json.Unmarshal(idp.JWKS(), &set); err != nil {
		t.Fatal(err)
	}
	set.Keys = append(set.Keys, extra...)
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestIssuerJWKSSkipsBadKeys: RFC 7517 (section 5) asks a JWK Set's reader to ignore the
// keys it cannot use. One key of the IdP's JWKS that is broken (an EC point off its curve,
// an RSA key without its modulus, a member of the wrong JSON type) must not take the
// others with it: tokens of the good keys are accepted, and the log names the skipped
// keys. A key that reads well but is too weak (RSA under 2048 bits) is kept but verifies
// no token.
func TestIssuerJWKSSkipsBadKeys(t *testing.T) {
	idp := idptest.New(t)
	b64 := base64.RawURLEncoding.EncodeToString
	offCurve := map[string]any{"kty": "EC", "crv": "P-256", "kid": "off-curve", "use": "sig",
		"x": b64(make([]byte, 32)), "y": b64(append(make([]byte, 31), 1))}
	noModulus := map[string]any{"kty": "RSA", "kid": "no-modulus", "e": "AQAB"}
	wrongType := map[string]any{"kty": "RSA", "kid": "wrong-type", "n": 12345, "e": "AQAB"}
	// A key that reads well but is too weak to trust: RSA under 2048 bits (RFC 8725, 3.5).
	weak, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	weakJWK := map[string]any{"kty": "RSA", "kid": "weak", "use": "sig", "n": b64(weak.N.Bytes()), "e": "AQAB"}
	srv := servedJWKS(t, func() []byte { return withKeys(t, idp, offCurve, noModulus, wrongType, weakJWK) })
	v, log := newIssuerVerifier(t, idp, func(iss *Issuer) { iss.JWKSURL = srv.URL })
	waitFor(t, func() bool { return !v.IssuerStatus()[0].LastSuccess.IsZero() || v.IssuerStatus()[0].Failures > 0 })
	for _, alg := range []string{"RS256", "ES256"} {
		if _, err := bearer(v, idp.Token(t, alg, idp.Claims("alice", nil))); err != nil {
			t.Errorf("%s token of a good key beside broken ones: %v", alg, err)
		}
	}
	weakTok := jwt.NewWithClaims(jwt.SigningMethodRS256, idp.Claims("alice", nil))
	weakTok.Header["kid"] = "weak"
	signed, err := weakTok.SignedString(weak)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bearer(v, signed); !isRefusal(err, `token alg "RS256" does not fit the key "weak" of issuer `+idp.URL()) {
		t.Errorf("a token of a 1024-bit RSA key: %v", err)
	}
	st := v.IssuerStatus()[0]
	if st.Keys != 3 || st.Stale() || st.Failures != 0 {
		t.Errorf("status %+v, want the 2 good keys and the weak one, fresh", st)
	}
	for _, kid := range []string{"off-curve", "no-modulus", "wrong-type"} {
		if !strings.Contains(log.String(), `msg="auth: JWKS key skipped" issuer=`+idp.URL()+" kid="+kid) {
			t.Errorf("the log does not name the skipped key %s:\n%s", kid, log)
		}
	}
}

// TestIssuerJWKSGarbage: a JWKS answer that is too large (beyond maxJWKSBytes: an IdP
// answering with a huge page, or a hostile one; it is not read past the bound), an HTML
// page, a JSON document without keys, or a set of only broken keys is a failed fetch: the
// status says why, the cached keys stay in use, and the next good answer is used again.
func TestIssuerJWKSGarbage(t *testing.T) {
	idp := idptest.New(t)
	var answer atomic.Value
	answer.Store(idp.JWKS())
	srv := servedJWKS(t, func() []byte { return answer.Load().([]byte) })
	v, _ := newIssuerVerifier(t, idp, func(iss *Issuer) { iss.JWKSURL = srv.URL; iss.UnknownKIDInterval = time.Millisecond })
	if _, err := bearer(v, idp.Token(t, "RS256", idp.Claims("alice", nil))); err != nil {
		t.Fatal(err)
	}
	unknownKid := jwt.NewWithClaims(jwt.SigningMethodRS256, idp.Claims("alice", nil))
	unknownKid.Header["kid"] = "unknown"
	unknown, err := unknownKid.SignedString(idp.PrivateKey(idp.Kid("RS256")))
	if err != nil {
		t.Fatal(err)
	}
	var set map[string]any
	json.Unmarshal(idp.JWKS(), &set)
	set["padding"] = strings.Repeat("A", 4*maxJWKSBytes) // valid but for its size
	huge, _ := json.Marshal(set)
	for _, c := range []struct {
		name   string
		answer []byte
		reason string
	}{
		{"too large", huge, "JWKS larger than 1048576 bytes"},
		{"HTML", []byte("<html><body>Sign in</body></html>"), "the JWKS is not a JSON JWK Set with a keys array"},
		{"no keys member", []byte(`{"kid":"x"}`), "the JWKS is not a JSON JWK Set with a keys array"},
		{"only broken keys", []byte(`{"keys":[{"kty":"RSA","kid":"x"}]}`), "none of the 1 keys of the JWKS is usable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			answer.Store(c.answer)
			time.Sleep(5 * time.Millisecond) // UnknownKIDInterval
			// An unknown kid makes the verifier fetch the answer.
			if _, err := bearer(v, unknown); err == nil {
				t.Error("a token of an unknown kid was accepted")
			}
			st := v.IssuerStatus()[0]
			if !strings.Contains(st.LastError, c.reason) || st.Keys != 2 {
				t.Errorf("status %+v, want the error %q and the 2 cached keys", st, c.reason)
			}
			if _, err := bearer(v, idp.Token(t, "ES256", idp.Claims("alice", nil))); err != nil {
				t.Errorf("a token of a cached key after the failed fetch: %v", err)
			}
		})
	}
	// Recovery: the rotated key arrives with the next good answer.
	idp.Rotate(t, "RS256")
	answer.Store(idp.JWKS())
	time.Sleep(5 * time.Millisecond)
	if _, err := bearer(v, idp.Token(t, "RS256", idp.Claims("alice", nil))); err != nil {
		t.Errorf("after recovery: %v", err)
	}
	if st := v.IssuerStatus()[0]; st.Stale() {
		t.Errorf("status after recovery %+v", st)
	}
}

// TestIssuerSlowIdPRefusesAtOnce: while the verifier's first fetch of a slow IdP's JWKS is
// under way, the issuer's tokens are refused at once ("not available yet"), as the package
// doc says of an issuer whose keys have not arrived; they do not queue behind the fetch
// for up to its 10-second bound (they did, and one waited for a second fetch: 20 seconds).
// When the IdP answers, its tokens are accepted.
func TestIssuerSlowIdPRefusesAtOnce(t *testing.T) {
	idp := idptest.New(t)
	release := make(chan struct{})
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		select {
		case <-release:
			w.Write(idp.JWKS())
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	v, _ := newIssuerVerifier(t, idp, func(iss *Issuer) { iss.JWKSURL = srv.URL })
	waitFor(t, func() bool { return asked.Load() > 0 })
	tok := idp.Token(t, "RS256", idp.Claims("alice", nil))
	done := make(chan time.Duration, 3)
	for range 3 {
		go func() {
			start := time.Now()
			if _, err := bearer(v, tok); err == nil || !strings.Contains(err.Error(), "are not available yet") {
				t.Errorf("during the first fetch: %v", err)
			}
			done <- time.Since(start)
		}()
	}
	for range 3 {
		if d := <-done; d > fetchWait+time.Second {
			t.Errorf("a request waited %v for the IdP", d)
		}
	}
	close(release)
	waitFor(t, func() bool { return v.IssuerStatus()[0].Keys == 2 })
	if _, err := bearer(v, tok); err != nil {
		t.Errorf("after the IdP answered: %v", err)
	}
}

// TestIssuerRedirectsStayOnHTTPS: the issuer, its discovery's jwks_uri and its JWKS URL
// must use https (http only on a loopback address) so that no one on the path can put
// keys in the JWKS; a redirect of the discovery document or the JWKS to a plain http URL
// would undo that, and is refused like the URL itself, without a request to it.
func TestIssuerRedirectsStayOnHTTPS(t *testing.T) {
	idp := idptest.New(t)
	var plainAsked atomic.Int64
	plain := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == "keys.example" {
			plainAsked.Add(1)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	redirect := httptest.NewServer(http.RedirectHandler("http://keys.example/jwks", http.StatusFound))
	t.Cleanup(redirect.Close)
	for _, iss := range []Issuer{
		{URL: idp.URL(), Audience: []string{"kmkit"}, JWKSURL: redirect.URL}, // the JWKS
		{URL: redirect.URL, Audience: []string{"kmkit"}},                     // the discovery document
	} {
		v, err := NewJWTVerifier(JWTConfig{Issuers: []Issuer{iss}, CacheSize: -1, HTTPClient: plain,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		waitFor(t, func() bool { return v.IssuerStatus()[0].Failures > 0 })
		want := `redirect to "http://keys.example/jwks": it must use https (http only on a loopback address)`
		if st := v.IssuerStatus()[0]; !strings.Contains(st.LastError, want) || plainAsked.Load() != 0 {
			t.Errorf("status %+v after %d requests to the http URL; want the error %q", st, plainAsked.Load(), want)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestIssuerSlowRotation: the IdP rotates its key and then answers its JWKS slowly. The
// first token of the new kid waits for the fetch at most fetchWait (not the fetch's 10
// seconds) and is refused; the fetch goes on, and once it is answered the new key's
// tokens are accepted without another fetch.
func TestIssuerSlowRotation(t *testing.T) {
	idp := idptest.New(t)
	var slow atomic.Bool
	release := make(chan struct{})
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if slow.Load() {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		w.Write(idp.JWKS())
	}))
	t.Cleanup(srv.Close)
	v, _ := newIssuerVerifier(t, idp, func(iss *Issuer) { iss.JWKSURL = srv.URL; iss.UnknownKIDInterval = time.Hour })
	if _, err := bearer(v, idp.Token(t, "RS256", idp.Claims("alice", nil))); err != nil {
		t.Fatal(err)
	}
	slow.Store(true)
	idp.Rotate(t, "RS256")
	tok := idp.Token(t, "RS256", idp.Claims("alice", nil))
	start := time.Now()
	if _, err := bearer(v, tok); err == nil {
		t.Error("a token of a key not fetched yet was accepted")
	}
	if d := time.Since(start); d > fetchWait+time.Second {
		t.Errorf("the token waited %v for the slow IdP", d)
	}
	before := asked.Load()
	close(release)
	waitFor(t, func() bool { _, err := bearer(v, tok); return err == nil })
	if asked.Load() != before {
		t.Errorf("%d more JWKS requests; the background fetch should have brought the key", asked.Load()-before)
	}
}

// TestIssuerKeyAlgBindsTheToken: a JWK that names its alg verifies only tokens of that
// alg, even when the issuer accepts both and the key's type fits both (RFC 8725, 3.1): the
// IdP's RSA key published as RS384 does not verify an RS256 or PS256 token it signed.
func TestIssuerKeyAlgBindsTheToken(t *testing.T) {
	idp := idptest.New(t)
	srv := servedJWKS(t, func() []byte {
		return []byte(strings.Replace(string(idp.JWKS()), `"alg":"RS256"`, `"alg":"RS384"`, 1))
	})
	v, _ := newIssuerVerifier(t, idp, func(iss *Issuer) {
		iss.JWKSURL = srv.URL
		iss.Algorithms = []string{"RS256", "RS384", "PS256"}
	})
	kid := idp.Kid("RS256")
	for _, method := range []jwt.SigningMethod{jwt.SigningMethodRS256, jwt.SigningMethodPS256} {
		tok := jwt.NewWithClaims(method, idp.Claims("alice", nil))
		tok.Header["kid"] = kid
		s, err := tok.SignedString(idp.PrivateKey(kid))
		if err != nil {
			t.Fatal(err)
		}
		want := `token alg "` + method.Alg() + `" does not fit the key "` + kid + `" of issuer ` + idp.URL()
		if _, err := bearer(v, s); !isRefusal(err, want) {
			t.Errorf("%s: %v, want %q", method.Alg(), err, want)
		}
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS384, idp.Claims("alice", nil))
	tok.Header["kid"] = kid
	s, err := tok.SignedString(idp.PrivateKey(kid))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bearer(v, s); err != nil {
		t.Errorf("RS384, the key's alg: %v", err)
	}
}

// TestIssuerSharedKid: RFC 7517 (4.5) lets keys of different types share a kid, and some
// IdPs publish an encryption key beside the signing key under one kid. A token names the
// kid and an alg; the key that fits them verifies it, whichever comes first in the set.
func TestIssuerSharedKid(t *testing.T) {
	idp := idptest.New(t)
	rsaKid, ecKid := idp.Kid("RS256"), idp.Kid("ES256")
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(idp.JWKS(), &set); err != nil {
		t.Fatal(err)
	}
	var shared []any
	for _, k := range set.Keys { // the EC key first, then the RSA key, both as "shared"
		if k["kid"] == ecKid {
			k["kid"] = "shared"
			shared = append([]any{k}, shared...)
		} else {
			k["kid"] = "shared"
			shared = append(shared, k)
		}
	}
	// An encryption key under the same kid, first of all: never a signing key.
	enc := map[string]any{}
	for k, v := range set.Keys[0] {
		enc[k] = v
	}
	enc["use"], enc["alg"] = "enc", "RSA-OAEP"
	doc, _ := json.Marshal(map[string]any{"keys": append([]any{enc}, shared...)})
	srv := servedJWKS(t, func() []byte { return doc })
	v, _ := newIssuerVerifier(t, idp, func(iss *Issuer) {
		iss.JWKSURL = srv.URL
		iss.Algorithms = []string{"RS256", "ES256", "PS256"}
	})
	for alg, kid := range map[string]string{"RS256": rsaKid, "ES256": ecKid} {
		tok := jwt.NewWithClaims(jwt.GetSigningMethod(alg), idp.Claims("alice", nil))
		tok.Header["kid"] = "shared"
		s, err := tok.SignedString(idp.PrivateKey(kid))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bearer(v, s); err != nil {
			t.Errorf("%s token under the shared kid: %v", alg, err)
		}
	}
	// A token no key of the kid fits is still refused so.
	tok := jwt.NewWithClaims(jwt.SigningMethodPS256, idp.Claims("alice", nil))
	tok.Header["kid"] = "shared"
	s, _ := tok.SignedString(idp.PrivateKey(rsaKid))
	if _, err := bearer(v, s); !isRefusal(err, `token alg "PS256" does not fit the key "shared" of issuer `+idp.URL()) {
		t.Errorf("PS256 under the shared kid: %v", err)
	}
}

// TestIssuerNestedPermissionClaim: permission claims are named as the team and tenant
// claims are, dotted names reaching into nested objects, so that Keycloak's realm roles
// (realm_access.roles) grant permissions; a claim whose own name has dots (Auth0's
// namespaced claims) is read as it is.
func TestIssuerNestedPermissionClaim(t *testing.T) {
	idp := idptest.New(t)
	v, _ := newIssuerVerifier(t, idp, func(iss *Issuer) {
		iss.Claims.PermissionClaims = []string{"realm_access.roles", "https://kmkit.example/perms"}
	})
	tok := idp.Token(t, "ES256", idp.Claims("alice", map[string]any{
		"realm_access":                map[string]any{"roles": []any{"kmkit.read", "offline_access"}},
		"https://kmkit.example/perms": "kmkit.admin",
	}))
	p, err := bearer(v, tok)
	if err != nil {
		t.Fatal(err)
	}
	want := []principal.Permission{principal.PermKM, principal.PermOData, principal.PermMCP, principal.PermSCIM, principal.PermMetrics}
	if diff := cmp.Diff(want, p.Permissions); diff != "" {
		t.Errorf("permissions (-want +got):\n%s", diff)
	}
	bad := idp.Token(t, "ES256", idp.Claims("alice", map[string]any{"realm_access": map[string]any{"roles": 7}}))
	if _, err := bearer(v, bad); !isRefusal(err, `token claim "realm_access.roles" is neither a string nor an array of strings`) {
		t.Errorf("roles a number: %v", err)
	}
}

// TestIssuerJWKSURLWithQuery: a JWKS URL may carry a query; Microsoft Entra ID names
// https://login.microsoftonline.com/<tenant>/discovery/v2.0/keys?appid=<app> for an
// application with its own signing keys. Only the issuer URL is barred from one (OpenID
// Connect Discovery 1.0, 3): a jwks_uri or jwksURL with a query is fetched as given.
func TestIssuerJWKSURLWithQuery(t *testing.T) {
	idp := idptest.New(t)
	var issuerURL string
	discovery := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": issuerURL, "jwks_uri": idp.JWKSURL() + "?appid=kmkit"})
	}))
	t.Cleanup(discovery.Close)
	issuerURL = discovery.URL
	claims := idp.Claims("alice", map[string]any{"iss": issuerURL})
	for _, iss := range []Issuer{
		{URL: issuerURL, Audience: []string{"kmkit"}},                                          // found by discovery
		{URL: issuerURL, Audience: []string{"kmkit"}, JWKSURL: idp.JWKSURL() + "?appid=kmkit"}, // configured
	} {
		if err := CheckIssuer(iss); err != nil {
			t.Errorf("%+v: %v", iss, err)
			continue
		}
		v, err := NewJWTVerifier(JWTConfig{Issuers: []Issuer{iss}, CacheSize: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		waitFor(t, func() bool { st := v.IssuerStatus()[0]; return st.Keys > 0 || st.Failures > 0 })
		if _, err := bearer(v, idp.Token(t, "RS256", claims)); err != nil {
			t.Errorf("jwksURL %q: %v (status %+v)", iss.JWKSURL, err, v.IssuerStatus()[0])
		}
	}
}

// TestIssuerUnknownKidsFetchOneAtATime: tokens naming unknown kids cannot make kmkit hammer
// a slow IdP. Even with an UnknownKIDInterval shorter than the IdP's answers, at most one
// fetch for unknown kids runs at a time (each token waits for it at most fetchWait).
func TestIssuerUnknownKidsFetchOneAtATime(t *testing.T) {
	idp := idptest.New(t)
	var slow atomic.Bool
	var inFlight, most, asked atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		asked.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if slow.Load() {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		w.Write(idp.JWKS())
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // before srv.Close, which waits for the handlers
	v, _ := newIssuerVerifier(t, idp, func(iss *Issuer) { iss.JWKSURL = srv.URL; iss.UnknownKIDInterval = time.Millisecond })
	if _, err := bearer(v, idp.Token(t, "RS256", idp.Claims("alice", nil))); err != nil {
		t.Fatal(err)
	}
	slow.Store(true)
	most.Store(0)
	key := idp.PrivateKey(idp.Kid("RS256"))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, idp.Claims("mallory", nil))
			tok.Header["kid"] = fmt.Sprint("unknown-", i)
			s, err := tok.SignedString(key)
			if err != nil {
				t.Error(err)
				return
			}
			for range 3 {
				if _, err := bearer(v, s); err == nil {
					t.Error("a token of an unknown kid was accepted")
				}
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	if most.Load() > 1 {
		t.Errorf("%d JWKS fetches at once (%d in all) for unknown kids", most.Load(), asked.Load())
	}
}

// FuzzUsableKeys: whatever an IdP answers, the JWKS filter does not panic, and what it
// hands on is a JWK Set of keys jwkset reads, no more keys than it was given.
func FuzzUsableKeys(f *testing.F) {
	idp := idptest.New(f)
	f.Add(idp.JWKS())
	f.Add([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"AA","y":"AQ"},{"kty":"RSA","n":5}]}`))
	f.Add([]byte(`{"keys":null}`))
	f.Add([]byte(`<html>`))
	s := &issuerSource{iss: Issuer{URL: "https://idp.example"}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, err := s.usableKeys(doc)
		if err != nil {
			return
		}
		var in, set struct {
			Keys []json.RawMessage `json:"keys"`
		}
		json.Unmarshal(doc, &in)
		if err := json.Unmarshal(out, &set); err != nil || set.Keys == nil || len(set.Keys) > len(in.Keys) {
			t.Fatalf("%s gave %s (%v)", doc, out, err)
		}
		for _, raw := range set.Keys {
			var m jwkset.JWKMarshal
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("kept %s: %v", raw, err)
			}
			if _, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{Private: true}, jwkset.JWKValidateOptions{}); err != nil {
				t.Fatalf("kept %s: %v", raw, err)
			}
		}
	})
}
