// Package idptest is a local identity provider for tests: an httptest server publishing an
// OpenID Connect discovery document and a JWKS, signing RS256 and ES256 tokens, rotating
// its keys and going down on request, as Okta, Entra ID, Auth0 or Keycloak would.
package idptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// IdP is the identity provider. Create it with New; it stops with the test.
type IdP struct {
	srv *httptest.Server
	// Audience is the aud of the tokens Token signs; default "kmkit".
	Audience string

	mu      sync.Mutex
	keys    map[string]*key // every key ever made, by kid
	current map[string]string
	seq     int

	down         atomic.Bool
	jwksRequests atomic.Int64

	// UserClaims are added to the access tokens the token endpoint issues (the signed-in
	// user's team, tenant...); set them before the sign-in.
	UserClaims map[string]any
	codes      map[string]grant // authorization codes not yet exchanged
}

// grant is what an authorization code stands for.
type grant struct {
	clientID, redirectURI, challenge, resource, scope string
}

type key struct {
	kid, alg string
	private  any
	public   bool // published in the JWKS
}

// New starts an IdP with one RS256 and one ES256 key.
func New(t testing.TB) *IdP {
	t.Helper()
	idp := &IdP{Audience: "kmkit", keys: map[string]*key{}, current: map[string]string{}, codes: map[string]grant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", idp.discovery)
	mux.HandleFunc("GET /jwks", idp.jwks)
	mux.HandleFunc("GET /authorize", idp.authorize)
	mux.HandleFunc("POST /token", idp.token)
	idp.srv = httptest.NewServer(mux)
	t.Cleanup(idp.srv.Close)
	for _, alg := range []string{"RS256", "ES256"} {
		idp.Rotate(t, alg)
	}
	return idp
}

// URL is the issuer URL, without a trailing slash.
func (idp *IdP) URL() string { return idp.srv.URL }

// JWKSURL is where the keys are published.
func (idp *IdP) JWKSURL() string { return idp.srv.URL + "/jwks" }

// Handle adds a route to the IdP's server (an authorization or token endpoint a test needs).
func (idp *IdP) Handle(pattern string, h http.Handler) {
	idp.srv.Config.Handler.(*http.ServeMux).Handle(pattern, h)
}

// SetDown makes the IdP answer 503 to every request (true) or serve again (false).
func (idp *IdP) SetDown(down bool) { idp.down.Store(down) }

// JWKSRequests counts the requests for the JWKS so far.
func (idp *IdP) JWKSRequests() int64 { return idp.jwksRequests.Load() }

// Rotate makes a new key for alg (RS256 or ES256), publishes it in place of the previous
// one, which is withdrawn from the JWKS, and returns the new kid.
func (idp *IdP) Rotate(t testing.TB, alg string) string {
	t.Helper()
	var priv any
	var err error
	switch alg {
	case "RS256":
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case "ES256":
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		t.Fatalf("idptest: no keys for %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	idp.mu.Lock()
	defer idp.mu.Unlock()
	idp.seq++
	kid := alg + "-" + strconv.Itoa(idp.seq)
	if old, ok := idp.keys[idp.current[alg]]; ok {
		old.public = false
	}
	idp.keys[kid] = &key{kid: kid, alg: alg, private: priv, public: true}
	idp.current[alg] = kid
	return kid
}

// Kid returns the kid of the current key of alg.
func (idp *IdP) Kid(alg string) string {
	idp.mu.Lock()
	defer idp.mu.Unlock()
	return idp.current[alg]
}

// PrivateKey returns the private key of kid (nil when there is none).
func (idp *IdP) PrivateKey(kid string) any {
	idp.mu.Lock()
	defer idp.mu.Unlock()
	if k := idp.keys[kid]; k != nil {
		return k.private
	}
	return nil
}

// Claims returns the claims of a valid token for subject sub: iss, aud, sub, iat and exp
// (an hour from now), with edits applied (a nil value removes the claim).
func (idp *IdP) Claims(sub string, edits map[string]any) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"iss": idp.URL(), "aud": idp.Audience, "sub": sub, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range edits {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// Token signs claims with the current key of alg.
func (idp *IdP) Token(t testing.TB, alg string, claims jwt.MapClaims) string {
	t.Helper()
	return idp.TokenWith(t, idp.Kid(alg), claims)
}

// TokenWith signs claims with the key kid, published or not.
func (idp *IdP) TokenWith(t testing.TB, kid string, claims jwt.MapClaims) string {
	t.Helper()
	idp.mu.Lock()
	k := idp.keys[kid]
	idp.mu.Unlock()
	if k == nil {
		t.Fatalf("idptest: no key %q", kid)
	}
	tok := jwt.NewWithClaims(jwt.GetSigningMethod(k.alg), claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(k.private)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (idp *IdP) discovery(w http.ResponseWriter, r *http.Request) {
	if idp.down.Load() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"issuer": idp.URL(), "jwks_uri": idp.JWKSURL(),
		"authorization_endpoint": idp.URL() + "/authorize", "token_endpoint": idp.URL() + "/token",
		"response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
		"code_challenge_methods_supported":      []string{"S256"},
		"grant_types_supported":                 []string{"authorization_code"},
		"token_endpoint_auth_methods_supported": []string{"none"},
	})
}

func (idp *IdP) jwks(w http.ResponseWriter, r *http.Request) {
	idp.jwksRequests.Add(1)
	if idp.down.Load() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(idp.JWKS())
}

// JWKS returns the published keys as a JWK Set.
func (idp *IdP) JWKS() []byte {
	idp.mu.Lock()
	defer idp.mu.Unlock()
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	keys := []map[string]string{}
	for _, k := range idp.keys {
		if !k.public {
			continue
		}
		switch p := k.private.(type) {
		case *rsa.PrivateKey:
			keys = append(keys, map[string]string{"kty": "RSA", "use": "sig", "alg": k.alg, "kid": k.kid,
				"n": b64(p.N.Bytes()), "e": b64(big.NewInt(int64(p.E)).Bytes())})
		case *ecdsa.PrivateKey:
			pub, _ := p.PublicKey.Bytes() // 0x04 || X || Y
			keys = append(keys, map[string]string{"kty": "EC", "use": "sig", "alg": k.alg, "kid": k.kid, "crv": "P-256",
				"x": b64(pub[1:33]), "y": b64(pub[33:65])})
		}
	}
	b, _ := json.Marshal(map[string]any{"keys": keys})
	return b
}

// authorize is the authorization endpoint of the authorization code flow with PKCE (S256):
// the user is signed in at once, and the browser is sent back to redirect_uri with a code
// and the state.
func (idp *IdP) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if idp.down.Load() || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" ||
		q.Get("client_id") == "" || q.Get("redirect_uri") == "" {
		http.Error(w, "invalid_request", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	idp.mu.Lock()
	idp.codes[code] = grant{clientID: q.Get("client_id"), redirectURI: q.Get("redirect_uri"), challenge: q.Get("code_challenge"),
		resource: q.Get("resource"), scope: q.Get("scope")}
	idp.mu.Unlock()
	u, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "invalid_request", http.StatusBadRequest)
		return
	}
	back := u.Query()
	back.Set("code", code)
	back.Set("state", q.Get("state"))
	u.RawQuery = back.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// token is the token endpoint: it exchanges a code for an access token, a JWT signed with
// the current RS256 key whose audience is the resource the client named (RFC 8707), whose
// scp is the granted scope, carrying UserClaims.
func (idp *IdP) token(w http.ResponseWriter, r *http.Request) {
	fail := func(code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"error": code})
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "authorization_code" {
		fail("unsupported_grant_type")
		return
	}
	code := r.PostForm.Get("code")
	idp.mu.Lock()
	g, ok := idp.codes[code]
	delete(idp.codes, code)
	idp.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	clientID := r.PostForm.Get("client_id")
	if id, _, basic := r.BasicAuth(); basic {
		clientID = id
	}
	if !ok || g.redirectURI != r.PostForm.Get("redirect_uri") || g.clientID != clientID ||
		base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		fail("invalid_grant")
		return
	}
	aud := g.resource
	if aud == "" {
		aud = idp.Audience
	}
	claims := idp.Claims("user-"+g.clientID, map[string]any{"aud": aud, "scp": g.scope, "client_id": g.clientID})
	for k, v := range idp.UserClaims {
		claims[k] = v
	}
	idp.mu.Lock()
	k := idp.keys[idp.current["RS256"]]
	idp.mu.Unlock()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = k.kid
	signed, err := tok.SignedString(k.private)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]any{"access_token": signed, "token_type": "Bearer", "expires_in": 3600, "scope": g.scope})
}
