package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/kmkit/kmkit/auth/idptest"
)

// withHeader signs c with method and key under the given header members.
func withHeader(t *testing.T, method jwt.SigningMethod, key any, header map[string]any, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, c)
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const (
	critReason = `token header "crit" names extensions this verifier does not process`
)

func typReason(typ string) string {
	return `token type "` + typ + `" is not an access token: use typ JWT or at+jwt`
}

// TestJOSEHeaders: the header checks RFC 7515 and RFC 8725 ask of every token, whether its
// key is configured or published by an issuer. A crit header names extensions the
// recipient must understand (RFC 7515, 4.1.11): this verifier understands none, so such
// a token is refused even though its signature is good. A typ other than JWT or at+jwt
// (RFC 9068), in any case and with or without "application/", is another kind of token
// (a security event, a logout token) that must not pass as an access token (RFC 8725,
// 3.11).
func TestJOSEHeaders(t *testing.T) {
	static := newTestVerifier(t, -1, nil)
	idp := idptest.New(t)
	issuer, _ := newIssuerVerifier(t, idp, nil)
	rsaKid := idp.Kid("RS256")
	idpKey := idp.PrivateKey(rsaKid)
	for _, c := range []struct {
		header map[string]any
		reason string // "" accepted
	}{
		{map[string]any{"crit": []string{"x-unknown"}, "x-unknown": true}, critReason},
		{map[string]any{"crit": []string{"exp"}}, critReason},
		{map[string]any{"crit": []string{}}, critReason},
		{map[string]any{"typ": "secevent+jwt"}, typReason("secevent+jwt")},
		{map[string]any{"typ": "logout+jwt"}, typReason("logout+jwt")},
		{map[string]any{"typ": "application/dpop+jwt"}, typReason("application/dpop+jwt")},
		{map[string]any{"typ": 7}, `token header "typ" is not a string`},
		{map[string]any{"typ": "JWT"}, ""},
		{map[string]any{"typ": "jwt"}, ""},
		{map[string]any{"typ": "at+jwt"}, ""},
		{map[string]any{"typ": "application/at+JWT"}, ""},
		{map[string]any{"typ": nil}, ""},
	} {
		name, _ := json.Marshal(c.header)
		t.Run(string(name), func(t *testing.T) {
			h := map[string]any{"kid": "rs"}
			for k, v := range c.header {
				h[k] = v
			}
			if c.header["typ"] == nil {
				delete(h, "typ")
			}
			tok := withHeader(t, jwt.SigningMethodRS256, testRSA, h, claims(nil))
			if c.header["typ"] == nil {
				tok = withoutTyp(t, tok, testRSA)
			}
			p, err := bearer(static, tok)
			if c.reason == "" && err != nil || c.reason != "" && !isRefusal(err, c.reason) {
				t.Errorf("configured key: %v, %v; want refusal %q", p, err, c.reason)
			}
			h["kid"] = rsaKid
			tok = withHeader(t, jwt.SigningMethodRS256, idpKey, h, idp.Claims("alice", nil))
			if c.header["typ"] == nil {
				tok = withoutTyp(t, tok, idpKey)
			}
			p, err = bearer(issuer, tok)
			if c.reason == "" && err != nil || c.reason != "" && !isRefusal(err, c.reason) {
				t.Errorf("issuer's key: %v, %v; want refusal %q", p, err, c.reason)
			}
		})
	}
}

// withoutTyp re-signs tok (RS256) with its typ header removed: golang-jwt always writes one.
func withoutTyp(t *testing.T, tok string, key any) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	json.Unmarshal(raw, &h)
	delete(h, "typ")
	raw, _ = json.Marshal(h)
	input := base64.RawURLEncoding.EncodeToString(raw) + "." + parts[1]
	sig, err := jwt.SigningMethodRS256.Sign(input, key)
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// TestJWTEncodingsHeld: what golang-jwt and the verifier already refuse or read as the
// RFCs say, kept so that a change of library or options shows: an ES256 signature in DER
// (RFC 7518, 3.4 wants r||s), base64 with padding or the standard alphabet (RFC 7515, 2),
// duplicate claim names (RFC 7519, 4: the last one counts, in the signed text), exp and
// nbf exactly at the edge of the leeway, aud as an array.
func TestJWTEncodingsHeld(t *testing.T) {
	v := newTestVerifier(t, -1, nil)
	enc := base64.RawURLEncoding.EncodeToString
	good := sign(t, jwt.SigningMethodRS256, testRSA, "rs", claims(nil))
	parts := strings.Split(good, ".")

	es := jwt.NewWithClaims(jwt.SigningMethodES256, claims(nil))
	es.Header["kid"] = "es"
	input, err := es.SigningString()
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, testEC, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	der, _ := asn1.Marshal(struct{ R, S *big.Int }{r, s})

	body, _ := json.Marshal(claims(nil))
	dup := enc([]byte(`{"alg":"HS256","kid":"hs"}`)) + "." + enc([]byte(`{"sub":"mallory",`+string(body[1:])))
	dupSig, _ := jwt.SigningMethodHS256.Sign(dup, testHS)

	for _, c := range []struct {
		name, token, reason, subject string
	}{
		{"ES256 signature in DER", input + "." + enc(der), "token signature is invalid", ""},
		{"padded signature", good + strings.Repeat("=", (4-len(parts[2])%4)%4), "malformed bearer token", ""},
		{"standard alphabet", parts[0] + "." + parts[1] + "." + strings.NewReplacer("-", "+", "_", "/").Replace(parts[2]) + "+/", "malformed bearer token", ""},
		{"duplicate sub: the last counts", dup + "." + enc(dupSig), "", "sub:alice"},
		{"exp at the leeway's edge", sign(t, jwt.SigningMethodRS256, testRSA, "rs", claims(map[string]any{"exp": testNow.Add(-DefaultLeeway).Unix()})), "token is expired", ""},
		{"exp within the leeway", sign(t, jwt.SigningMethodRS256, testRSA, "rs", claims(map[string]any{"exp": testNow.Add(-DefaultLeeway + time.Second).Unix()})), "", "sub:alice"},
		{"nbf at the leeway's edge", sign(t, jwt.SigningMethodRS256, testRSA, "rs", claims(map[string]any{"nbf": testNow.Add(DefaultLeeway).Unix()})), "", "sub:alice"},
		{"nbf past the leeway", sign(t, jwt.SigningMethodRS256, testRSA, "rs", claims(map[string]any{"nbf": testNow.Add(DefaultLeeway + time.Second).Unix()})), "token is not valid yet", ""},
		{"aud array", sign(t, jwt.SigningMethodRS256, testRSA, "rs", claims(map[string]any{"aud": []string{"other", testAudience}})), "", "sub:alice"},
		{"aud array without us", sign(t, jwt.SigningMethodRS256, testRSA, "rs", claims(map[string]any{"aud": []string{"other", "more"}})), "token has the wrong audience", ""},
		{"exp a string", sign(t, jwt.SigningMethodRS256, testRSA, "rs", claims(map[string]any{"exp": "2099-01-01"})), "token has malformed claims", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := v.Authenticate(context.Background(), Credential{Scheme: SchemeBearer, Secret: c.token})
			switch {
			case c.reason != "" && !isRefusal(err, c.reason):
				t.Errorf("got %v, %v; want the refusal %q", p, err, c.reason)
			case c.reason == "" && (err != nil || p.Name != c.subject):
				t.Errorf("got %v, %v; want %s", p, err, c.subject)
			}
		})
	}
}
