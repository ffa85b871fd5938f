package auth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/kmkit/kmkit/principal"
)

// Issuer is an identity provider whose Bearer tokens are verified against the signing keys
// it publishes (a JWKS, RFC 7517), as Okta, Microsoft Entra ID, Auth0 and Keycloak do. The
// keys are fetched when the verifier starts, cached, fetched again every RefreshInterval
// and, at most once per UnknownKIDInterval, when a token names a kid the cache lacks (the
// IdP rotated its key). When the JWKS cannot be fetched the cached keys keep verifying
// tokens; IssuerStatus and the log say so.
type Issuer struct {
	// URL is the issuer: it must equal the token's iss claim. Required; https, or http on a
	// loopback address.
	URL string
	// Audience lists the accepted audiences: one of them must be in the token's aud claim.
	// Required.
	Audience []string
	// JWKSURL is where the issuer publishes its keys; default the jwks_uri of its OpenID
	// Connect discovery document (URL + "/.well-known/openid-configuration"), whose issuer
	// must be URL.
	JWKSURL string
	// Algorithms are the accepted signing algorithms; default RS256 and ES256. Only
	// asymmetric algorithms exist here (RS256, RS384, RS512, PS256, PS384, PS512, ES256,
	// ES384, ES512): a JWKS never holds a shared secret.
	Algorithms []string
	// Claims maps the token's claims to the principal.
	Claims ClaimMapping
	// RefreshInterval is how long fetched keys are used before they are fetched again;
	// default DefaultRefreshInterval.
	RefreshInterval time.Duration
	// UnknownKIDInterval is the least time between two fetches caused by tokens naming an
	// unknown kid; default DefaultUnknownKIDInterval. Tokens naming an unknown kid in
	// between are refused without a fetch.
	UnknownKIDInterval time.Duration
}

// ClaimMapping says how the claims of a verified token become a principal.
type ClaimMapping struct {
	// Team and Tenant name the claims holding the principal's team and reporting tenant (a
	// UUID); a dotted name reaches into nested objects ("org.id"). Defaults "team" and
	// "tenant".
	Team, Tenant string
	// FixedTeam and FixedTenant, when set, are the team and tenant of every token of the
	// issuer, instead of a claim.
	FixedTeam, FixedTenant string
	// PermissionClaims name the claims whose values grant permissions: a space-separated
	// string or an array of strings (scope, scp, roles, groups...; dotted names reach into
	// nested objects, as Keycloak's "realm_access.roles"). Default scope and scp.
	PermissionClaims []string
	// Scopes maps a value of those claims to the permissions it grants. Nil: a value that
	// is the name of a permission (km, odata, scim, reporting, metrics, mcp) grants it.
	Scopes map[string][]principal.Permission
}

// Defaults of Issuer.
const (
	DefaultRefreshInterval    = time.Hour
	DefaultUnknownKIDInterval = time.Minute
	// jwksTimeout bounds one discovery or JWKS request.
	jwksTimeout = 10 * time.Second
	// maxDiscoveryBytes bounds a discovery document.
	maxDiscoveryBytes = 1 << 20
	// fetchWait bounds the wait of a token for a fetch of its issuer's keys (the first,
	// or one for its unknown kid); the fetch goes on in the background, up to jwksTimeout,
	// and its keys serve the next tokens.
	fetchWait = time.Second
	// maxJWKSBytes bounds a JWKS document.
	maxJWKSBytes = 1 << 20
)

// asymmetric are the algorithms an Issuer may accept, by the key type they need.
var asymmetric = map[string]string{
	"RS256": "RSA", "RS384": "RSA", "RS512": "RSA", "PS256": "RSA", "PS384": "RSA", "PS512": "RSA",
	"ES256": "P-256", "ES384": "P-384", "ES512": "P-521",
}

// IssuerStatus is the state of an Issuer's key cache, for metrics and health pages.
type IssuerStatus struct {
	// Issuer is the issuer URL; JWKSURL where its keys come from ("" before discovery
	// succeeded).
	Issuer, JWKSURL string
	// Keys is the number of keys cached.
	Keys int
	// LastSuccess is the time of the last successful fetch (zero before the first).
	LastSuccess time.Time
	// LastError is the error of the last fetch when it failed, else "".
	LastError string
	// Failures counts failed fetches since the start.
	Failures uint64
}

// Stale reports whether the last fetch failed: the issuer's tokens are verified with the
// keys cached before, if any.
func (s IssuerStatus) Stale() bool { return s.LastError != "" }

// issuerSource verifies the tokens of one Issuer.
type issuerSource struct {
	iss    Issuer
	parser *jwt.Parser
	// unknownKID allows a fetch of the JWKS for a token naming a kid the cache lacks.
	unknownKID *rate.Limiter
	client     *http.Client
	log        *slog.Logger
	ctx        context.Context

	// keys is nil until the JWKS URL is known and the storage made.
	keys atomic.Pointer[issuerKeys]
	// mu guards attempt, lastStart and refetching.
	mu         sync.Mutex
	attempt    chan struct{} // closed when the attempt under way to make the storage ends
	refetching chan struct{} // closed when the fetch under way for an unknown kid ends
	lastStart  time.Time     // the last attempt to discover and make the storage
	jwksURL    string        // read and written by one attempt at a time

	// statusMu guards status and storage; it is never held while mu is taken.
	statusMu sync.Mutex
	storage  jwkset.Storage
	status   IssuerStatus
}

// checkURL reports what is wrong with the URL s of an issuer or of its JWKS: it must be
// absolute, without user information or fragment, and secure (secureURL). A JWKS URL may
// have a query (Microsoft Entra ID's keys?appid=...); an issuer may not (OpenID Connect
// Discovery 1.0, 3), as tokens name it exactly.
func checkURL(what, s string, query bool) error {
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "" || u.User != nil || u.Fragment != "":
		return fmt.Errorf("%s %q is not an absolute URL", what, s)
	case u.RawQuery != "" && !query:
		return fmt.Errorf("%s %q must not have a query", what, s)
	}
	if !secureURL(u) {
		return fmt.Errorf("%s %q must use https (http only on a loopback address)", what, s)
	}
	return nil
}

// secureURL reports whether u uses https, or http on a loopback address.
func secureURL(u *url.URL) bool {
	if u.Scheme == "http" {
		a, err := netip.ParseAddr(u.Hostname())
		return err == nil && a.IsLoopback() || u.Hostname() == "localhost"
	}
	return u.Scheme == "https"
}

// secureRedirects is the CheckRedirect of the fetches of discovery documents and JWKS: a
// redirect may not lead where an Issuer's URLs may not (to plain http, where anyone on
// the path could change the keys).
func secureRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if !secureURL(req.URL) {
		return fmt.Errorf("redirect to %q: it must use https (http only on a loopback address)", req.URL)
	}
	return nil
}

// CheckIssuer reports what is wrong with iss, as NewJWTVerifier would: the URLs, the
// audience, the algorithms, the permissions of the scope mapping, the fixed tenant.
func CheckIssuer(iss Issuer) error {
	_, err := normalizeIssuer(iss)
	return err
}

// normalizeIssuer checks iss and fills in its defaults.
func normalizeIssuer(iss Issuer) (Issuer, error) {
	if err := checkURL("issuer", iss.URL, false); err != nil {
		return iss, err
	}
	if len(iss.Audience) == 0 || slices.Contains(iss.Audience, "") {
		return iss, fmt.Errorf("issuer %s: an audience is required", iss.URL)
	}
	if iss.JWKSURL != "" {
		if err := checkURL("jwksURL", iss.JWKSURL, true); err != nil {
			return iss, fmt.Errorf("issuer %s: %w", iss.URL, err)
		}
	}
	if len(iss.Algorithms) == 0 {
		iss.Algorithms = []string{AlgRS256, AlgES256}
	}
	for _, a := range iss.Algorithms {
		if asymmetric[a] == "" {
			return iss, fmt.Errorf("issuer %s: algorithm %q is not accepted: use RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384 or ES512", iss.URL, a)
		}
	}
	for _, pc := range iss.Claims.Scopes {
		for _, p := range pc {
			if !slices.Contains(AllPermissions, p) {
				return iss, fmt.Errorf("issuer %s: unknown permission %q in the scope mapping", iss.URL, p)
			}
		}
	}
	if iss.Claims.FixedTenant != "" {
		t, err := ParseTenant([]string{iss.Claims.FixedTenant})
		if err != nil {
			return iss, fmt.Errorf("issuer %s: tenant %q is not a UUID", iss.URL, iss.Claims.FixedTenant)
		}
		iss.Claims.FixedTenant = t
	}
	if iss.Claims.Team == "" {
		iss.Claims.Team = DefaultTeamClaim
	}
	if iss.Claims.Tenant == "" {
		iss.Claims.Tenant = DefaultTenantClaim
	}
	if len(iss.Claims.PermissionClaims) == 0 {
		iss.Claims.PermissionClaims = []string{"scope", "scp"}
	}
	if iss.RefreshInterval <= 0 {
		iss.RefreshInterval = DefaultRefreshInterval
	}
	if iss.UnknownKIDInterval <= 0 {
		iss.UnknownKIDInterval = DefaultUnknownKIDInterval
	}
	return iss, nil
}

// newIssuerSource checks iss and returns its source; the first fetch happens in start.
func newIssuerSource(ctx context.Context, iss Issuer, leeway time.Duration, now func() time.Time, client *http.Client, log *slog.Logger) (*issuerSource, error) {
	iss, err := normalizeIssuer(iss)
	if err != nil {
		return nil, err
	}
	s := &issuerSource{iss: iss, client: client, log: log, ctx: ctx, jwksURL: iss.JWKSURL,
		unknownKID: rate.NewLimiter(rate.Every(iss.UnknownKIDInterval), 1)}
	s.status.Issuer, s.status.JWKSURL = iss.URL, iss.JWKSURL
	s.parser = jwt.NewParser(
		jwt.WithValidMethods(iss.Algorithms),
		jwt.WithIssuer(iss.URL),
		jwt.WithAudience(iss.Audience...),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(leeway),
		jwt.WithTimeFunc(now),
	)
	return s, nil
}

// AllPermissions are the permissions a principal can hold.
var AllPermissions = []principal.Permission{principal.PermKM, principal.PermOData, principal.PermSCIM, principal.PermReporting, principal.PermMetrics, principal.PermMCP}

// issuerKeys is the key storage of an issuer.
type issuerKeys struct {
	kf    keyfunc.Keyfunc // reads through the cache, fetching the JWKS for an unknown kid
	cache jwkset.Storage  // the keys fetched, read without fetching
}

// begin starts making the key storage in the background, unless it is made, being made,
// or was tried less than UnknownKIDInterval ago. It returns a channel closed when the
// attempt under way ends, nil when there is none.
func (s *issuerSource) begin() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.attempt != nil || s.keys.Load() != nil {
		return s.attempt
	}
	if !s.lastStart.IsZero() && time.Since(s.lastStart) < s.iss.UnknownKIDInterval {
		return nil
	}
	s.lastStart = time.Now()
	done := make(chan struct{})
	s.attempt = done
	go func() {
		s.start()
		s.mu.Lock()
		s.attempt = nil
		s.mu.Unlock()
		close(done)
	}()
	return done
}

// ready returns the key storage, waiting at most fetchWait for an attempt to make it
// (begun now if need be); fresh reports that the attempt happened during the wait.
func (s *issuerSource) ready(ctx context.Context) (keys *issuerKeys, fresh bool, err error) {
	if k := s.keys.Load(); k != nil {
		return k, false, nil
	}
	if done := s.begin(); done != nil {
		await(ctx, done)
	}
	if k := s.keys.Load(); k != nil {
		return k, true, nil
	}
	return nil, false, refusef("the signing keys of issuer %s are not available yet", s.iss.URL)
}

// await waits until done is closed, at most fetchWait, and no longer than ctx.
func await(ctx context.Context, done <-chan struct{}) {
	t := time.NewTimer(fetchWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// start discovers the JWKS URL when needed and makes the key storage, which fetches the
// keys now and every RefreshInterval. A failure is remembered in the status and retried
// by the next token, at most once per UnknownKIDInterval. Only begin calls it.
func (s *issuerSource) start() {
	ctx := s.ctx
	if s.jwksURL == "" {
		u, err := s.discover(ctx)
		if err != nil {
			s.failed(ctx, fmt.Errorf("discovery: %w", err))
			return
		}
		s.jwksURL = u
		s.statusMu.Lock()
		s.status.JWKSURL = u
		s.statusMu.Unlock()
	}
	store, err := jwkset.NewStorageFromHTTP(s.jwksURL, jwkset.HTTPClientStorageOptions{
		Client: &http.Client{Transport: jwksTransport{next: s.client.Transport, src: s}, Timeout: jwksTimeout, CheckRedirect: secureRedirects},
		Ctx:    s.ctx,
		// The first fetch's error is handled here: the storage is kept, empty, and
		// refreshed by the next unknown kid or tick.
		NoErrorReturnFirstHTTPReq: true,
		RefreshErrorHandler:       s.failed,
		RefreshInterval:           s.iss.RefreshInterval,
		HTTPTimeout:               jwksTimeout,
	})
	if err != nil {
		s.failed(ctx, err)
		return
	}
	client, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs: map[string]jwkset.Storage{s.jwksURL: store},
		// Reading an unknown kid through the client fetches the keys again. key reads the
		// cache first and goes through the client only when s.unknownKID allows it, so that
		// a token naming an unknown kid is refused at once rather than made to wait.
		RefreshUnknownKID: rate.NewLimiter(rate.Inf, 1),
	})
	if err != nil {
		s.failed(ctx, err)
		return
	}
	kf, err := keyfunc.New(keyfunc.Options{Ctx: s.ctx, Storage: client, UseWhitelist: []jwkset.USE{jwkset.UseSig, ""}})
	if err != nil {
		s.failed(ctx, err)
		return
	}
	s.statusMu.Lock()
	s.storage = store
	s.statusMu.Unlock()
	s.keys.Store(&issuerKeys{kf: kf, cache: store})
}

// refetch fetches the JWKS again for kid in the background, unless a fetch for an unknown
// kid is under way already (so that at most one runs, whatever UnknownKIDInterval and the
// IdP's speed), and waits for the fetch at most fetchWait (no longer than ctx): a slow IdP
// makes one token wait a second, not the fetch's 10 seconds, and the keys it brings serve
// the next tokens.
func (s *issuerSource) refetch(ctx context.Context, keys *issuerKeys, kid string) {
	s.mu.Lock()
	done := s.refetching
	if done == nil {
		done = make(chan struct{})
		s.refetching = done
		go func() {
			fetchCtx, cancel := context.WithTimeout(s.ctx, jwksTimeout)
			keys.kf.Storage().KeyRead(fetchCtx, kid) // refreshes the cache; kid may still be unknown
			cancel()
			s.mu.Lock()
			s.refetching = nil
			s.mu.Unlock()
			close(done)
		}()
	}
	s.mu.Unlock()
	await(ctx, done)
}

// discover reads the issuer's OpenID Connect discovery document and returns its jwks_uri.
func (s *issuerSource) discover(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, jwksTimeout)
	defer cancel()
	u := strings.TrimSuffix(s.iss.URL, "/") + "/.well-known/openid-configuration"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	client := &http.Client{Transport: s.client.Transport, CheckRedirect: secureRedirects}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxDiscoveryBytes)).Decode(&doc); err != nil {
		return "", fmt.Errorf("GET %s: %w", u, err)
	}
	if doc.Issuer != s.iss.URL {
		return "", fmt.Errorf("GET %s: the document names issuer %q, not %q", u, doc.Issuer, s.iss.URL)
	}
	if err := checkURL("jwks_uri", doc.JWKSURI, true); err != nil {
		return "", fmt.Errorf("GET %s: %w", u, err)
	}
	return doc.JWKSURI, nil
}

// fetched records a successful fetch of the JWKS.
func (s *issuerSource) fetched() {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	if s.status.LastError != "" {
		s.log.Info("auth: JWKS reachable again", "issuer", s.iss.URL, "url", s.status.JWKSURL)
	}
	s.status.LastSuccess, s.status.LastError = time.Now(), ""
}

// failed records a failed discovery or fetch; the cached keys, if any, stay in use.
func (s *issuerSource) failed(ctx context.Context, err error) {
	s.statusMu.Lock()
	s.status.LastError = err.Error()
	s.status.Failures++
	store, u := s.storage, s.status.JWKSURL
	s.statusMu.Unlock()
	keys := 0
	if store != nil {
		if all, err := store.KeyReadAll(ctx); err == nil {
			keys = len(all)
		}
	}
	s.log.Warn("auth: JWKS unreachable; verifying tokens with the cached keys", "issuer", s.iss.URL, "url", u, "cachedKeys", keys, "error", err)
}

// Status returns the state of the key cache.
func (s *issuerSource) Status() IssuerStatus {
	s.statusMu.Lock()
	st, store := s.status, s.storage
	s.statusMu.Unlock()
	if store != nil {
		if all, err := store.KeyReadAll(context.Background()); err == nil {
			st.Keys = len(all)
		}
	}
	return st
}

// jwksTransport is the transport of JWKS fetches. It reads a 200 answer up to maxJWKSBytes
// and hands jwkset only the keys it can use, so that one broken key (RFC 7517, section 5:
// ignore the keys that cannot be used) does not fail the fetch of the others; it records
// the fetch as successful once the document is read.
type jwksTransport struct {
	next http.RoundTripper
	src  *issuerSource
}

func (t jwksTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	defer resp.Body.Close()
	doc, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(doc) > maxJWKSBytes {
		return nil, fmt.Errorf("JWKS larger than %d bytes", maxJWKSBytes)
	}
	if doc, err = t.src.usableKeys(doc); err != nil {
		return nil, err
	}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(doc)), int64(len(doc))
	resp.Header.Del("Content-Length")
	t.src.fetched()
	return resp, nil
}

// usableKeys returns the JWK Set doc with only the keys jwkset reads as it would, logging
// the others. A document that is no JWK Set, or whose keys are all unusable, is an error:
// the cached keys stay in use rather than being replaced by none.
func (s *issuerSource) usableKeys(doc []byte) ([]byte, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil || set.Keys == nil {
		return nil, fmt.Errorf("the JWKS is not a JSON JWK Set with a keys array")
	}
	kept := set.Keys[:0]
	for _, raw := range set.Keys {
		var m jwkset.JWKMarshal
		err := json.Unmarshal(raw, &m) // a type error still fills the other members, kid too
		if err == nil {
			_, err = jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{Private: true}, jwkset.JWKValidateOptions{})
		}
		if err != nil {
			s.log.Warn("auth: JWKS key skipped", "issuer", s.iss.URL, "kid", clip(m.KID), "error", err)
			continue
		}
		kept = append(kept, raw)
	}
	if len(kept) == 0 && len(set.Keys) > 0 {
		return nil, fmt.Errorf("none of the %d keys of the JWKS is usable", len(set.Keys))
	}
	return json.Marshal(map[string][]json.RawMessage{"keys": kept})
}

// forbiddenHeaders are JOSE header parameters that carry or point to a key: a token
// naming one is refused, whatever its signature, so that no key ever comes from the token
// itself.
var forbiddenHeaders = []string{"jwk", "jku", "x5u", "x5c"}

// key returns the verification key of a token of this issuer: the JWKS key of its kid,
// which must be of the type the token's alg needs.
func (s *issuerSource) key(ctx context.Context) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		for _, h := range forbiddenHeaders {
			if _, ok := t.Header[h]; ok {
				return nil, refusef("token header %q is not accepted: keys come only from the issuer's JWKS", h)
			}
		}
		if err := checkHeader(t); err != nil {
			return nil, err
		}
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			return nil, errTokenNoKid
		}
		keys, fresh, err := s.ready(ctx)
		if err != nil {
			return nil, err
		}
		// The kid's keys from the cache, or from the JWKS fetched again when the cache
		// has none (the IdP rotated its key), at most once per UnknownKIDInterval; not
		// again when this token's wait just saw the first fetch.
		jwks := keysOf(ctx, keys.cache, kid)
		if len(jwks) == 0 && !fresh && s.unknownKID.Allow() {
			s.refetch(ctx, keys, kid)
			jwks = keysOf(ctx, keys.cache, kid)
		}
		if len(jwks) == 0 {
			return nil, refusef("token kid %q names no key of issuer %s", clip(kid), s.iss.URL)
		}
		// Keys of different types may share a kid (RFC 7517, 4.5): the one that fits.
		alg := t.Method.Alg()
		for _, jwk := range jwks {
			if k := fitting(jwk, alg); k != nil {
				return k, nil
			}
		}
		return nil, refusef("token alg %q does not fit the key %q of issuer %s", clip(alg), clip(kid), s.iss.URL)
	}
}

// keysOf returns the keys of kid in store.
func keysOf(ctx context.Context, store jwkset.Storage, kid string) []jwkset.JWK {
	all, err := store.KeyReadAll(ctx) // a copy
	if err != nil {
		return nil
	}
	out := all[:0]
	for _, k := range all {
		if k.Marshal().KID == kid {
			out = append(out, k)
		}
	}
	return out
}

// fitting returns the public key of jwk when it verifies tokens of alg: a signing key
// whose alg, if it names one, is alg, of the type and size alg needs; else nil.
func fitting(jwk jwkset.JWK, alg string) any {
	m := jwk.Marshal()
	if m.USE == jwkset.UseEnc || m.ALG != "" && m.ALG.String() != alg {
		return nil
	}
	var k any = jwk.Key()
	if pk, ok := k.(interface{ Public() crypto.PublicKey }); ok {
		k = pk.Public()
	}
	switch pub := k.(type) {
	case *rsa.PublicKey:
		if asymmetric[alg] == "RSA" && pub.N.BitLen() >= 2048 {
			return pub
		}
	case *ecdsa.PublicKey:
		if asymmetric[alg] == pub.Curve.Params().Name && curveOK(pub.Curve) {
			return pub
		}
	}
	return nil
}

func curveOK(c elliptic.Curve) bool {
	return c == elliptic.P256() || c == elliptic.P384() || c == elliptic.P521()
}

// principal maps the claims of a verified token of this issuer.
func (s *issuerSource) principal(claims jwt.MapClaims) (*principal.Principal, error) {
	m := s.iss.Claims
	sub, err := claims.GetSubject()
	if err != nil {
		return nil, errTokenClaims
	}
	if sub == "" {
		return nil, errTokenNoSubject
	}
	p := &principal.Principal{Name: "sub:" + sub + "@" + s.iss.URL, Team: m.FixedTeam, Tenant: m.FixedTenant}
	if p.Team == "" {
		if p.Team, err = pathClaim(claims, m.Team); err != nil {
			return nil, err
		}
	}
	if strings.ContainsRune(sub, 0) || strings.ContainsRune(p.Team, 0) {
		return nil, refuse("token subject or team claim contains a NUL character")
	}
	if p.Tenant == "" {
		tenant, err := pathClaim(claims, m.Tenant)
		if err != nil {
			return nil, err
		}
		if tenant != "" {
			if p.Tenant, err = ParseTenant([]string{tenant}); err != nil {
				return nil, refusef("token claim %q is not a UUID", m.Tenant)
			}
		}
	}
	for _, name := range m.PermissionClaims {
		words, err := scopeClaim(claims, name)
		if err != nil {
			return nil, err
		}
		for _, w := range words {
			grants := []principal.Permission{principal.Permission(w)}
			if m.Scopes != nil {
				grants = m.Scopes[w]
			} else if !slices.Contains(AllPermissions, grants[0]) {
				continue
			}
			for _, perm := range grants {
				if !p.Can(perm) {
					p.Permissions = append(p.Permissions, perm)
				}
			}
		}
	}
	return p, nil
}

// claimAt returns the claim named path: the claim of that name when there is one (a
// name with dots: URIs, as Auth0 names custom claims), else the value reached through
// nested objects by its dotted parts; nil when absent.
func claimAt(claims jwt.MapClaims, path string) any {
	if v, ok := claims[path]; ok {
		return v
	}
	var v any = map[string]any(claims)
	for part := range strings.SplitSeq(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[part]
	}
	return v
}

// pathClaim reads a string claim by a dotted path into nested objects (claimAt); a claim
// that is absent is "".
func pathClaim(claims jwt.MapClaims, path string) (string, error) {
	v := claimAt(claims, path)
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", refusef("token claim %q is not a string", path)
	}
}
