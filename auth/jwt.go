package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/kmkit/kmkit/principal"
)

// The token signing algorithms a JWTKey may use.
const (
	AlgRS256 = "RS256"
	AlgES256 = "ES256"
	AlgHS256 = "HS256"
)

// JWTKey is one key that verifies Bearer tokens, selected by the token's kid header.
type JWTKey struct {
	// ID is matched against the token's kid header.
	ID string
	// Alg is AlgRS256, AlgES256 or AlgHS256; a token must name the same alg.
	Alg string
	// Key is a *rsa.PublicKey for RS256, a P-256 *ecdsa.PublicKey for ES256, or the
	// []byte secret for HS256.
	Key any
}

// ParseJWTKey builds a JWTKey from configuration text: a PEM public key for RS256 and
// ES256, the shared secret for HS256.
func ParseJWTKey(id, alg, material string) (JWTKey, error) {
	k := JWTKey{ID: id, Alg: alg}
	var err error
	switch alg {
	case AlgRS256:
		k.Key, err = jwt.ParseRSAPublicKeyFromPEM([]byte(material))
	case AlgES256:
		k.Key, err = jwt.ParseECPublicKeyFromPEM([]byte(material))
	case AlgHS256:
		k.Key = []byte(material)
	default:
		return k, fmt.Errorf("unsupported alg %q: use RS256, ES256 or HS256", alg)
	}
	if err != nil {
		return k, fmt.Errorf("%s key %q: %w", alg, id, err)
	}
	return k, k.check()
}

// minHS256Secret is the shortest HS256 secret accepted: RFC 7518 (3.2) asks for a key at
// least as long as the hash output.
const minHS256Secret = 32

func (k JWTKey) check() error {
	if k.ID == "" {
		return errors.New("a JWT key needs a kid")
	}
	ok := false
	switch k.Alg {
	case AlgRS256:
		pub, isRSA := k.Key.(*rsa.PublicKey)
		ok = isRSA && pub.N.BitLen() >= 2048
	case AlgES256:
		pub, isEC := k.Key.(*ecdsa.PublicKey)
		ok = isEC && pub.Curve == elliptic.P256()
	case AlgHS256:
		secret, isBytes := k.Key.([]byte)
		ok = isBytes && len(secret) >= minHS256Secret
	default:
		return fmt.Errorf("key %q: unsupported alg %q: use RS256, ES256 or HS256", k.ID, k.Alg)
	}
	if !ok {
		return fmt.Errorf("key %q: %s needs %s", k.ID, k.Alg, keyNeeds[k.Alg])
	}
	return nil
}

var keyNeeds = map[string]string{
	AlgRS256: "an RSA public key of at least 2048 bits",
	AlgES256: "an ECDSA public key on the P-256 curve",
	AlgHS256: fmt.Sprintf("a secret of at least %d bytes", minHS256Secret),
}

// JWTConfig configures the verification of Bearer tokens: the tokens of Issuers, verified
// with the keys each publishes, and those of Issuer, verified with Keys. At least one of
// the two is required.
type JWTConfig struct {
	// Issuers are identity providers whose keys come from their JWKS (OpenID Connect
	// discovery or a JWKS URL). A token goes to the Issuer its iss claim names.
	Issuers []Issuer
	// Issuer must equal the token's iss claim for the tokens verified with Keys; with
	// Audience and Keys, or none of the three.
	Issuer string
	// Audience must be among the token's aud claim.
	Audience string
	// Keys verify the signatures, selected by kid. A token without kid is accepted only
	// when there is exactly one key.
	Keys []JWTKey
	// TeamClaim and TenantClaim name the claims holding the principal's team and reporting
	// tenant; defaults "team" and "tenant".
	TeamClaim, TenantClaim string
	// Leeway is the clock skew allowed when checking exp and nbf; default 30 seconds.
	// A negative value allows none.
	Leeway time.Duration
	// CacheSize bounds the number of verified tokens remembered until their expiry;
	// default 10000. A negative value disables the cache.
	CacheSize int
	// Now returns the current time; default time.Now.
	Now func() time.Time
	// HTTPClient's Transport fetches the discovery documents and the JWKS of Issuers;
	// default http.DefaultTransport. Each request is bounded to 10 seconds, and may be
	// redirected only where an Issuer's URLs may point (https, or http on a loopback
	// address).
	HTTPClient *http.Client
	// Logger receives the failures of fetches (never tokens); default slog.Default().
	Logger *slog.Logger
}

// Defaults of JWTConfig.
const (
	DefaultTeamClaim   = "team"
	DefaultTenantClaim = "tenant"
	DefaultLeeway      = 30 * time.Second
	DefaultCacheSize   = 10000
)

// JWTVerifier authenticates Bearer tokens (SchemeBearer). Create it with NewJWTVerifier; it
// is safe for concurrent use. With Issuers it fetches their keys in the background until
// Close.
//
// A token of one of the Issuers is verified with the key of its kid in the issuer's JWKS;
// its principal is named "sub:" subject "@" issuer and mapped by the issuer's ClaimMapping.
// The other tokens are verified with Keys:
// The principal of a token is named "sub:" and its subject; its permissions are the words
// of the scope claim (a space-separated string) and of the scp claim (an array of strings,
// or a space-separated string); team and tenant come from the configured claims, the tenant
// being a UUID.
type JWTVerifier struct {
	cfg     JWTConfig
	keys    map[string]JWTKey
	parser  *jwt.Parser
	cache   *tokenCache
	issuers map[string]*issuerSource
	order   []*issuerSource // as configured
	cancel  context.CancelFunc
}

// NewJWTVerifier checks cfg and returns its verifier. It starts fetching the keys of the
// Issuers in the background: an unreachable issuer does not stop it, and its tokens are
// refused until its keys arrive.
func NewJWTVerifier(cfg JWTConfig) (*JWTVerifier, error) {
	static := cfg.Issuer != "" || cfg.Audience != "" || len(cfg.Keys) > 0
	switch {
	case !static && len(cfg.Issuers) == 0:
		return nil, errors.New("jwt: name issuers, or an issuer with its keys")
	case static && cfg.Issuer == "":
		return nil, errors.New("jwt: issuer is required")
	case static && cfg.Audience == "":
		return nil, errors.New("jwt: audience is required")
	case static && len(cfg.Keys) == 0:
		return nil, errors.New("jwt: at least one key is required")
	}
	keys := make(map[string]JWTKey, len(cfg.Keys))
	for _, k := range cfg.Keys {
		if err := k.check(); err != nil {
			return nil, fmt.Errorf("jwt: %w", err)
		}
		if _, dup := keys[k.ID]; dup {
			return nil, fmt.Errorf("jwt: kid %q appears twice", k.ID)
		}
		keys[k.ID] = k
	}
	if cfg.TeamClaim == "" {
		cfg.TeamClaim = DefaultTeamClaim
	}
	if cfg.TenantClaim == "" {
		cfg.TenantClaim = DefaultTenantClaim
	}
	switch {
	case cfg.Leeway == 0:
		cfg.Leeway = DefaultLeeway
	case cfg.Leeway < 0:
		cfg.Leeway = 0
	}
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	v := &JWTVerifier{cfg: cfg, keys: keys, issuers: map[string]*issuerSource{}}
	ctx, cancel := context.WithCancel(context.Background())
	for _, iss := range cfg.Issuers {
		src, err := newIssuerSource(ctx, iss, cfg.Leeway, cfg.Now, cfg.HTTPClient, cfg.Logger)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("jwt: %w", err)
		}
		if _, dup := v.issuers[iss.URL]; dup || static && iss.URL == cfg.Issuer {
			cancel()
			return nil, fmt.Errorf("jwt: issuer %s appears twice", iss.URL)
		}
		v.issuers[iss.URL] = src
		v.order = append(v.order, src)
	}
	v.cancel = cancel
	for _, src := range v.order {
		src.begin()
	}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods([]string{AlgRS256, AlgES256, AlgHS256}),
		jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(cfg.Leeway),
		jwt.WithTimeFunc(cfg.Now),
	)
	if cfg.CacheSize > 0 {
		v.cache = newTokenCache(cfg.CacheSize)
	}
	return v, nil
}

// Reasons for refusing a token.
var (
	errTokenMalformed  = refuse("malformed bearer token")
	errTokenExpired    = refuse("token is expired")
	errTokenNotYet     = refuse("token is not valid yet")
	errTokenIssuer     = refuse("token has the wrong issuer")
	errTokenAudience   = refuse("token has the wrong audience")
	errTokenNoExp      = refuse("token has no exp claim")
	errTokenNoIssuer   = refuse("token has no iss claim")
	errTokenNoAudience = refuse("token has no aud claim")
	errTokenSignature  = refuse("token signature is invalid")
	errTokenClaims     = refuse("token has malformed claims")
	errTokenNoSubject  = refuse("token has no sub claim")
	errTokenNoKid      = refuse("token has no kid header")
)

// issuerOf returns the Issuer source of the token's (unverified) iss claim: nil for the
// tokens verified with Keys, a refusal when no configured issuer has that name.
func (v *JWTVerifier) issuerOf(token string) (*issuerSource, error) {
	if len(v.issuers) == 0 {
		return nil, nil
	}
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err != nil {
		return nil, errTokenMalformed
	}
	iss, _ := claims["iss"].(string)
	if src := v.issuers[iss]; src != nil {
		return src, nil
	}
	if v.parser != nil && len(v.keys) > 0 {
		return nil, nil // Keys' issuer checks the claim itself
	}
	if iss == "" {
		return nil, errTokenNoIssuer
	}
	return nil, errTokenIssuer
}

// Close stops fetching the keys of the Issuers. Tokens are still verified with the keys
// fetched before.
func (v *JWTVerifier) Close() error {
	v.cancel()
	return nil
}

// IssuerStatus returns the state of the key cache of each Issuer, in configuration order.
func (v *JWTVerifier) IssuerStatus() []IssuerStatus {
	out := make([]IssuerStatus, 0, len(v.order))
	for _, src := range v.order {
		out = append(out, src.Status())
	}
	return out
}

// AuthorizationServers returns the issuer URLs whose tokens the verifier accepts: the
// Issuers and Issuer, as protected resource metadata names them.
func (v *JWTVerifier) AuthorizationServers() []string {
	var out []string
	for _, src := range v.order {
		out = append(out, src.iss.URL)
	}
	if len(v.keys) > 0 {
		out = append(out, v.cfg.Issuer)
	}
	return out
}

// Authenticate implements Authenticator for Bearer tokens.
func (v *JWTVerifier) Authenticate(ctx context.Context, c Credential) (*principal.Principal, error) {
	if c.Scheme != SchemeBearer {
		return nil, refusef("%s credentials are not accepted here", c.Scheme)
	}
	now := v.cfg.Now()
	var digest [sha256.Size]byte
	if v.cache != nil {
		digest = sha256.Sum256([]byte(c.Secret))
		if p := v.cache.get(digest, now); p != nil {
			return p, nil
		}
	}
	claims := jwt.MapClaims{}
	var p *principal.Principal
	if src, err := v.issuerOf(c.Secret); err != nil {
		return nil, err
	} else if src != nil {
		token, err := src.parser.ParseWithClaims(c.Secret, claims, src.key(ctx))
		if err != nil {
			return nil, explain(token, claims, err, src.iss.Algorithms)
		}
		if p, err = src.principal(claims); err != nil {
			return nil, err
		}
	} else {
		token, err := v.parser.ParseWithClaims(c.Secret, claims, v.key)
		if err != nil {
			return nil, explain(token, claims, err, staticAlgs)
		}
		if p, err = v.principal(claims); err != nil {
			return nil, err
		}
	}
	if v.cache != nil {
		exp, _ := claims.GetExpirationTime() // present and valid: the parser checked it
		v.cache.put(digest, p, exp.Add(v.cfg.Leeway), now)
	}
	return p, nil
}

// key selects the verification key by kid and insists that the token names the key's
// algorithm: this is what defeats alg "none" and HS256 tokens signed with a public key.
func (v *JWTVerifier) key(t *jwt.Token) (any, error) {
	if err := checkHeader(t); err != nil {
		return nil, err
	}
	var k JWTKey
	switch kid, _ := t.Header["kid"].(string); {
	case kid != "":
		var ok bool
		if k, ok = v.keys[kid]; !ok {
			return nil, refusef("token kid %q names no configured key", clip(kid))
		}
	case len(v.keys) == 1:
		for _, only := range v.keys {
			k = only
		}
	default:
		return nil, errTokenNoKid
	}
	if alg := t.Method.Alg(); alg != k.Alg {
		return nil, refusef("token alg %q does not match the %s key %q", clip(alg), k.Alg, k.ID)
	}
	return k.Key, nil
}

// checkHeader refuses the tokens whose header asks what no verifier here does: a crit
// header names extensions the recipient must understand (RFC 7515, 4.1.11), and none is
// understood; a typ other than JWT or at+jwt (RFC 9068, 2.1; case-insensitive, with or
// without "application/") marks another kind of token, a logout or security event token,
// that must not pass for an access token (RFC 8725, 3.11).
func checkHeader(t *jwt.Token) error {
	if _, ok := t.Header["crit"]; ok {
		return refuse(`token header "crit" names extensions this verifier does not process`)
	}
	typ, ok := t.Header["typ"]
	if !ok {
		return nil
	}
	s, ok := typ.(string)
	if !ok {
		return refuse(`token header "typ" is not a string`)
	}
	// Compared without allocating: this is on the path of every verification.
	const app = "application/"
	mediaType := s
	if len(s) > len(app) && strings.EqualFold(s[:len(app)], app) {
		mediaType = s[len(app):]
	}
	if !strings.EqualFold(mediaType, "jwt") && !strings.EqualFold(mediaType, "at+jwt") {
		return refusef("token type %q is not an access token: use typ JWT or at+jwt", clip(s))
	}
	return nil
}

// staticAlgs are the algorithms of the keys written in the configuration.
var staticAlgs = []string{AlgRS256, AlgES256, AlgHS256}

// explain turns a parse error into the refusal the client sees; allowed are the algorithms
// the token could have named.
func explain(t *jwt.Token, claims jwt.MapClaims, err error, allowed []string) error {
	var ce *CredentialError
	switch {
	case errors.As(err, &ce):
		return ce
	case errors.Is(err, jwt.ErrTokenMalformed):
		return errTokenMalformed
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		if t != nil && t.Method != nil && !slices.Contains(allowed, t.Method.Alg()) {
			return refusef("token alg %q is not allowed: use %s", clip(t.Method.Alg()), orList(allowed))
		}
		return errTokenSignature
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		if t != nil {
			if alg, _ := t.Header["alg"].(string); alg != "" {
				return refusef("token alg %q is not allowed: use %s", clip(alg), orList(allowed))
			}
		}
		return refuse("token has no alg header")
	case errors.Is(err, jwt.ErrTokenInvalidClaims):
		return explainClaims(claims, err)
	default:
		return errTokenClaims
	}
}

// explainClaims names the first failed claim check of a verified token, in the order in
// which the parser checks them: exp, nbf, aud, iss.
func explainClaims(claims jwt.MapClaims, err error) error {
	aud, _ := claims.GetAudience()
	iss, _ := claims.GetIssuer()
	switch {
	case claims["exp"] == nil:
		return errTokenNoExp
	case errors.Is(err, jwt.ErrTokenExpired):
		return errTokenExpired
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return errTokenNotYet
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return errTokenAudience
	case claims["aud"] == nil || len(aud) == 0 || len(aud) == 1 && aud[0] == "":
		return errTokenNoAudience
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return errTokenIssuer
	case claims["iss"] == nil || iss == "":
		return errTokenNoIssuer
	default:
		return errTokenClaims
	}
}

// orList writes "A, B or C".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// principal reads the principal of verified claims.
func (v *JWTVerifier) principal(claims jwt.MapClaims) (*principal.Principal, error) {
	sub, err := claims.GetSubject()
	if err != nil {
		return nil, errTokenClaims
	}
	if sub == "" {
		return nil, errTokenNoSubject
	}
	p := &principal.Principal{Name: "sub:" + sub}
	if p.Team, err = stringClaim(claims, v.cfg.TeamClaim); err != nil {
		return nil, err
	}
	// The subject names the principal in the limiter's table and the team scopes the
	// stores: text no database can hold (a NUL, from a \u0000 escape) is refused here.
	if strings.ContainsRune(sub, 0) || strings.ContainsRune(p.Team, 0) {
		return nil, refuse("token subject or team claim contains a NUL character")
	}
	tenant, err := stringClaim(claims, v.cfg.TenantClaim)
	if err != nil {
		return nil, err
	}
	if tenant != "" {
		if p.Tenant, err = ParseTenant([]string{tenant}); err != nil {
			return nil, refusef("token claim %q is not a UUID", v.cfg.TenantClaim)
		}
	}
	for _, name := range []string{"scope", "scp"} {
		words, err := scopeClaim(claims, name)
		if err != nil {
			return nil, err
		}
		for _, w := range words {
			if perm := principal.Permission(w); !p.Can(perm) {
				p.Permissions = append(p.Permissions, perm)
			}
		}
	}
	return p, nil
}

func stringClaim(claims jwt.MapClaims, name string) (string, error) {
	switch v := claims[name].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", refusef("token claim %q is not a string", name)
	}
}

// scopeClaim reads the words of the permission claim name (dotted, as claimAt reads it):
// a space-separated string or an array of them.
func scopeClaim(claims jwt.MapClaims, name string) ([]string, error) {
	switch v := claimAt(claims, name).(type) {
	case nil:
		return nil, nil
	case string:
		return strings.Fields(v), nil
	case []any:
		words := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, refusef("token claim %q holds a non-string", name)
			}
			words = append(words, strings.Fields(s)...)
		}
		return words, nil
	default:
		return nil, refusef("token claim %q is neither a string nor an array of strings", name)
	}
}

// tokenCache remembers verified tokens by the SHA-256 digest of the token until their expiry.
type tokenCache struct {
	max     int
	mu      sync.RWMutex
	entries map[[sha256.Size]byte]cachedToken
}

type cachedToken struct {
	principal *principal.Principal
	until     time.Time
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{max: max, entries: make(map[[sha256.Size]byte]cachedToken)}
}

func (c *tokenCache) get(d [sha256.Size]byte, now time.Time) *principal.Principal {
	c.mu.RLock()
	e, ok := c.entries[d]
	c.mu.RUnlock()
	if !ok || !now.Before(e.until) {
		return nil
	}
	return e.principal
}

// put remembers a token valid until until. A full cache first forgets expired tokens, then,
// if still full, arbitrary ones (Go's map order is random) until a tenth is free.
func (c *tokenCache) put(d [sha256.Size]byte, p *principal.Principal, until, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		for k, e := range c.entries {
			if !now.Before(e.until) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < c.max-c.max/10 {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[d] = cachedToken{principal: p, until: until}
}

func (c *tokenCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
