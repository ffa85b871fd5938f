// Package keysfile reads the keys file of the reference server: the application keys a
// server accepts and, optionally, how it verifies Bearer tokens.
//
//	keys:
//	  - key: "plain text key"      # or sha256: <64 hex digits of the key's SHA-256>
//	    name: ci-pipeline          # optional; default "key:" and 8 hex digits of the digest; not "sub:…" or "key:…"
//	    team: acme                 # SCIM and KM scope
//	    tenant: 3f1c5a2e-...       # reporting tenant (UUID)
//	    permissions: [km, odata, scim, reporting]   # and metrics: GET /metrics
//	    ratePerHour: 6000          # optional budget of the key per limit window
//	    burst: 100                 # optional requests per second (bursts of as many)
//	    concurrency: 40            # optional cap on the key's requests in flight
//	jwt:                           # optional
//	  issuers:                     # identity providers whose keys come from their JWKS
//	    - issuer: https://login.example.com/realms/acme   # the iss of its tokens (https)
//	      audience: kmkit          # or a list: one of them must be in aud
//	      jwksURL: https://...     # optional; default: jwks_uri of issuer/.well-known/openid-configuration
//	      algorithms: [RS256, ES256]   # optional, the default; RS/PS/ES 256-512, never HS
//	      refresh: 1h              # optional: keys are fetched again this often
//	      unknownKidRefresh: 1m    # optional: least time between fetches for unknown kids
//	      claims:                  # optional claim mapping
//	        team: org.id           # claim of the team (dotted: nested), default team
//	        tenant: tid            # claim of the reporting tenant (a UUID), default tenant
//	        permissions: [scp, roles]  # claims whose values grant permissions (dotted: nested), default [scope, scp]
//	      scopes:                  # optional: value -> permissions; default: a value naming a permission grants it
//	        kmkit.read: [km, odata, mcp]
//	        kmkit.admin: [scim, metrics]
//	      team: acme               # optional: every token of the issuer is of this team
//	      tenant: 3f1c5a2e-...     # optional: likewise for the tenant
//	  issuer: https://idp.example  # tokens verified with keys written here:
//	  audience: kmkit
//	  teamClaim: team              # optional, default team
//	  tenantClaim: tenant          # optional, default tenant
//	  leeway: 30s                  # optional clock skew, default 30s; 0s allows none
//	  cacheSize: 10000             # optional number of verified tokens remembered
//	  keys:
//	    - {kid: k1, alg: RS256, pem: "-----BEGIN PUBLIC KEY-----..."}
//	    - {kid: k2, alg: HS256, secret: "at least 32 bytes"}
//	teams:                         # optional settings per team
//	  acme: {seats: 50}            # seat limit of the team's license; 0 is unlimited
//
// Plain keys are hashed as the file is read and only their digests are kept. Every error
// names the file, the line and the column of the value at fault. Unknown fields, a field
// given twice, a key given twice, an unknown permission and a key that could never be sent
// (empty, with spaces or non-ASCII characters) are errors; so is a file with neither keys
// nor a jwt section. ratePerHour is the key's budget per window of the server's limits,
// which is one hour unless the server says otherwise; burst and concurrency are the key's
// own per-second allowance and cap on requests in flight. Each of the three, when absent or
// 0, takes the server's default.
//
// The jwt section names issuers, or issuer, audience and keys (all three), or both;
// leeway and cacheSize apply to every token. An issuer's URLs must be https (http only on
// a loopback address), its algorithms asymmetric, its scopes map to known permissions and
// its tenant be a UUID (auth.CheckIssuer); the keys of the issuers are fetched when the
// server starts, not when the file is read.
package keysfile

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kmkit/kmkit/auth"
	"github.com/kmkit/kmkit/principal"
	"gopkg.in/yaml.v3"
)

// File is the content of a keys file.
type File struct {
	// Keys are the application keys, as digests.
	Keys []auth.Key
	// JWT configures Bearer tokens; nil when the file has no jwt section.
	JWT *auth.JWTConfig
	// Teams holds the settings of the teams the file names, by team.
	Teams map[string]Team
}

// Team is the settings of one team.
type Team struct {
	// Seats is the seat limit of the team's license (active SCIM users); 0 is unlimited.
	// nil when the file does not set it, so the server's default applies.
	Seats *int
}

// Error is an error at a place in a keys file.
type Error struct {
	File         string
	Line, Column int
	Msg          string
}

// Error returns "file:line:column: message".
func (e *Error) Error() string { return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg) }

// Load reads and parses the keys file at path.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses the keys file data; name is the file name used in errors.
func Parse(name string, data []byte) (*File, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &parser{file: name}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &Error{File: name, Line: 1, Column: 1, Msg: "the keys file is empty: it needs keys or a jwt section"}
	}
	f := &File{}
	root := resolve(doc.Content[0])
	err := p.fields(root, map[string]func(*yaml.Node) error{
		"keys":  func(n *yaml.Node) (err error) { f.Keys, err = p.keys(n); return err },
		"jwt":   func(n *yaml.Node) (err error) { f.JWT, err = p.jwt(n); return err },
		"teams": func(n *yaml.Node) (err error) { f.Teams, err = p.teams(n); return err },
	}, nil)
	if err != nil {
		return nil, err
	}
	if len(f.Keys) == 0 && f.JWT == nil {
		return nil, p.errorf(root, "the keys file defines no keys and no jwt section")
	}
	return f, nil
}

// Authenticator returns the authenticator of the file (auth.KeysAndTokens): its keys for the
// AppKey and x-api-key schemes and as Bearer tokens, and its JWT configuration, if any, for
// Bearer JWTs. The keys of its issuers are fetched in the background for as long as the
// process runs; a server that stops uses Verifier and closes it.
func (f *File) Authenticator() (auth.Authenticator, error) {
	a, _, err := f.Verifier()
	return a, err
}

// Verifier is Authenticator that also returns the JWT verifier (nil without a jwt
// section), whose Close stops the fetching of the issuers' keys and whose IssuerStatus
// and AuthorizationServers the server reports.
func (f *File) Verifier() (auth.Authenticator, *auth.JWTVerifier, error) {
	keys, err := auth.NewKeySet(f.Keys)
	if err != nil {
		return nil, nil, err
	}
	if f.JWT == nil {
		return auth.KeysAndTokens(keys, nil), nil, nil
	}
	v, err := auth.NewJWTVerifier(*f.JWT)
	if err != nil {
		return nil, nil, err
	}
	return auth.KeysAndTokens(keys, v), v, nil
}

type parser struct {
	file string
}

func (p *parser) errorf(n *yaml.Node, format string, args ...any) error {
	return &Error{File: p.file, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)}
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// fields walks mapping n, handing each value to the handler of its key. Unknown and
// repeated keys are errors, and so are missing required ones.
func (p *parser) fields(n *yaml.Node, handlers map[string]func(*yaml.Node) error, required []string) error {
	if n.Kind != yaml.MappingNode {
		return p.errorf(n, "expected a mapping of fields, found %s", kind(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return p.errorf(k, "expected a field name, found %s", kind(k))
		}
		h, ok := handlers[k.Value]
		if !ok {
			return p.errorf(k, "unknown field %q (known: %s)", k.Value, strings.Join(sortedKeys(handlers), ", "))
		}
		if seen[k.Value] {
			return p.errorf(k, "field %q appears twice", k.Value)
		}
		seen[k.Value] = true
		if err := h(v); err != nil {
			return err
		}
	}
	for _, r := range required {
		if !seen[r] {
			return p.errorf(n, "missing field %q", r)
		}
	}
	return nil
}

func sortedKeys(m map[string]func(*yaml.Node) error) []string {
	return slices.Sorted(maps.Keys(m))
}

func kind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return fmt.Sprintf("%q", clip(n.Value))
	default:
		return "an alias"
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// str reads a non-null scalar as a string.
func (p *parser) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.errorf(n, "%s must be a string, found %s", what, kind(n))
	}
	return n.Value, nil
}

func (p *parser) nonEmpty(n *yaml.Node, what string) (string, error) {
	s, err := p.str(n, what)
	if err == nil && strings.TrimSpace(s) == "" {
		err = p.errorf(n, "%s is empty", what)
	}
	return s, err
}

// count reads a non-negative integer.
func (p *parser) count(n *yaml.Node, what string) (int, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, p.errorf(n, "%s must be a whole number, found %s", what, kind(n))
	}
	v, err := strconv.ParseInt(n.Value, 0, 0)
	if err != nil || v < 0 {
		return 0, p.errorf(n, "%s must be a whole number from 0 to %d, found %s", what, int64(^uint(0)>>1), n.Value)
	}
	return int(v), nil
}

type located struct {
	node *yaml.Node
	key  auth.Key
}

func (p *parser) keys(n *yaml.Node) ([]auth.Key, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errorf(n, "keys must be a list, found %s", kind(n))
	}
	var all []located
	for _, item := range n.Content {
		item = resolve(item)
		k, err := p.key(item)
		if err != nil {
			return nil, err
		}
		for _, o := range all {
			if o.key.Digest == k.Digest {
				return nil, p.errorf(item, "the same key as line %d", o.node.Line)
			}
			if k.Name != "" && o.key.Name == k.Name {
				return nil, p.errorf(item, "the name %q is already used on line %d", k.Name, o.node.Line)
			}
		}
		all = append(all, located{item, k})
	}
	keys := make([]auth.Key, len(all))
	for i, l := range all {
		keys[i] = l.key
	}
	return keys, nil
}

var knownPermissions = []principal.Permission{principal.PermKM, principal.PermOData, principal.PermSCIM, principal.PermReporting, principal.PermMetrics, principal.PermMCP}

func (p *parser) key(n *yaml.Node) (auth.Key, error) {
	var k auth.Key
	var secret, digest *yaml.Node
	var perms *yaml.Node
	err := p.fields(n, map[string]func(*yaml.Node) error{
		"key":    func(v *yaml.Node) error { secret = v; return nil },
		"sha256": func(v *yaml.Node) error { digest = v; return nil },
		"name": func(v *yaml.Node) (err error) {
			if k.Name, err = p.nonEmpty(v, "name"); err == nil {
				if err = auth.CheckKeyName(k.Name); err != nil {
					err = p.errorf(v, "%v", err)
				}
			}
			return err
		},
		"team": func(v *yaml.Node) (err error) { k.Team, err = p.str(v, "team"); return err },
		"tenant": func(v *yaml.Node) error {
			s, err := p.str(v, "tenant")
			if err != nil {
				return err
			}
			if k.Tenant, err = auth.ParseTenant([]string{s}); err != nil || s == "" {
				return p.errorf(v, "tenant %q is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", clip(s))
			}
			return nil
		},
		"permissions": func(v *yaml.Node) error { perms = v; return nil },
		"ratePerHour": func(v *yaml.Node) (err error) { k.RatePerWindow, err = p.count(v, "ratePerHour"); return err },
		"burst":       func(v *yaml.Node) (err error) { k.Burst, err = p.count(v, "burst"); return err },
		"concurrency": func(v *yaml.Node) (err error) { k.Concurrent, err = p.count(v, "concurrency"); return err },
	}, []string{"permissions"})
	if err != nil {
		return k, err
	}
	switch {
	case secret != nil && digest != nil:
		return k, p.errorf(digest, "give either key or sha256, not both")
	case secret != nil:
		s, err := p.nonEmpty(secret, "key")
		if err != nil {
			return k, err
		}
		if len(s) > auth.MaxCredentialLength || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
			return k, p.errorf(secret, "a key is at most %d visible ASCII characters without spaces; clients could not send this one", auth.MaxCredentialLength)
		}
		k.Digest = auth.DigestOf(s)
	case digest != nil:
		s, err := p.str(digest, "sha256")
		if err != nil {
			return k, err
		}
		if k.Digest, err = auth.ParseDigest(s); err != nil {
			return k, p.errorf(digest, "sha256: %v", err)
		}
	default:
		return k, p.errorf(n, "a key needs key (the key itself) or sha256 (the hex digest of the key)")
	}
	k.Permissions, err = p.permissions(perms)
	return k, err
}

func (p *parser) permissions(n *yaml.Node) ([]principal.Permission, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errorf(n, "permissions must be a list, found %s", kind(n))
	}
	if len(n.Content) == 0 {
		return nil, p.errorf(n, "permissions is empty: name at least one of km, odata, scim, reporting, metrics")
	}
	var perms []principal.Permission
	for _, item := range n.Content {
		item = resolve(item)
		s, err := p.str(item, "a permission")
		if err != nil {
			return nil, err
		}
		perm := principal.Permission(s)
		known := false
		for _, k := range knownPermissions {
			known = known || k == perm
		}
		if !known {
			return nil, p.errorf(item, "unknown permission %q: use km, odata, scim, reporting or metrics", clip(s))
		}
		for _, o := range perms {
			if o == perm {
				return nil, p.errorf(item, "permission %q appears twice", s)
			}
		}
		perms = append(perms, perm)
	}
	return perms, nil
}

func (p *parser) jwt(n *yaml.Node) (*auth.JWTConfig, error) {
	cfg := &auth.JWTConfig{}
	var keys, cacheSize *yaml.Node
	err := p.fields(n, map[string]func(*yaml.Node) error{
		"issuer":      func(v *yaml.Node) (err error) { cfg.Issuer, err = p.nonEmpty(v, "issuer"); return err },
		"audience":    func(v *yaml.Node) (err error) { cfg.Audience, err = p.nonEmpty(v, "audience"); return err },
		"teamClaim":   func(v *yaml.Node) (err error) { cfg.TeamClaim, err = p.nonEmpty(v, "teamClaim"); return err },
		"tenantClaim": func(v *yaml.Node) (err error) { cfg.TenantClaim, err = p.nonEmpty(v, "tenantClaim"); return err },
		"cacheSize": func(v *yaml.Node) (err error) {
			cacheSize = v
			cfg.CacheSize, err = p.count(v, "cacheSize")
			return err
		},
		"leeway": func(v *yaml.Node) error {
			s, err := p.str(v, "leeway")
			if err != nil {
				return err
			}
			d, err := time.ParseDuration(s)
			if err != nil || d < 0 {
				return p.errorf(v, "leeway %q is not a duration such as 30s or 1m", clip(s))
			}
			if d == 0 {
				d = -1 // JWTConfig: negative allows no skew, zero takes the default
			}
			cfg.Leeway = d
			return nil
		},
		"keys":    func(v *yaml.Node) error { keys = v; return nil },
		"issuers": func(v *yaml.Node) (err error) { cfg.Issuers, err = p.issuers(v); return err },
	}, nil)
	if err != nil {
		return nil, err
	}
	// The tokens verified with keys written here need issuer, audience and keys; the
	// issuers section alone is enough.
	if len(cfg.Issuers) == 0 || cfg.Issuer != "" || cfg.Audience != "" || keys != nil {
		for _, f := range []struct {
			name string
			set  bool
		}{{"issuer", cfg.Issuer != ""}, {"audience", cfg.Audience != ""}, {"keys", keys != nil}} {
			if !f.set {
				if len(cfg.Issuers) == 0 && f.name == "issuer" && cfg.Audience == "" && keys == nil {
					return nil, p.errorf(n, "the jwt section needs issuers (identity providers with a JWKS), or issuer, audience and keys")
				}
				return nil, p.errorf(n, "missing field %q", f.name)
			}
		}
	}
	if keys == nil {
		if cacheSize != nil && cfg.CacheSize == 0 {
			cfg.CacheSize = -1
		}
		return cfg, nil
	}
	if keys.Kind != yaml.SequenceNode || len(keys.Content) == 0 {
		return nil, p.errorf(keys, "jwt keys must be a list of at least one key, found %s", kind(keys))
	}
	lines := map[string]int{}
	for _, item := range keys.Content {
		item = resolve(item)
		k, err := p.jwtKey(item)
		if err != nil {
			return nil, err
		}
		if line, dup := lines[k.ID]; dup {
			return nil, p.errorf(item, "kid %q is already used on line %d", k.ID, line)
		}
		lines[k.ID] = item.Line
		cfg.Keys = append(cfg.Keys, k)
	}
	if cacheSize != nil && cfg.CacheSize == 0 {
		cfg.CacheSize = -1 // an explicit 0 turns the cache off; JWTConfig reads 0 as the default
	}
	return cfg, nil
}

func (p *parser) jwtKey(n *yaml.Node) (auth.JWTKey, error) {
	var kid, alg string
	var pem, secret *yaml.Node
	err := p.fields(n, map[string]func(*yaml.Node) error{
		"kid":    func(v *yaml.Node) (err error) { kid, err = p.nonEmpty(v, "kid"); return err },
		"alg":    func(v *yaml.Node) (err error) { alg, err = p.nonEmpty(v, "alg"); return err },
		"pem":    func(v *yaml.Node) error { pem = v; return nil },
		"secret": func(v *yaml.Node) error { secret = v; return nil },
	}, []string{"kid", "alg"})
	if err != nil {
		return auth.JWTKey{}, err
	}
	material, what := pem, "pem"
	switch {
	case pem != nil && secret != nil:
		return auth.JWTKey{}, p.errorf(secret, "give either pem or secret, not both")
	case alg == auth.AlgHS256 && secret == nil:
		return auth.JWTKey{}, p.errorf(n, "an HS256 key needs secret")
	case alg == auth.AlgHS256:
		material, what = secret, "secret"
	case alg != auth.AlgRS256 && alg != auth.AlgES256:
		return auth.JWTKey{}, p.errorf(n, "unsupported alg %q: use RS256, ES256 or HS256", clip(alg))
	case pem == nil:
		return auth.JWTKey{}, p.errorf(n, "an %s key needs pem (the public key)", alg)
	}
	text, err := p.str(material, what)
	if err != nil {
		return auth.JWTKey{}, err
	}
	k, err := auth.ParseJWTKey(kid, alg, text)
	if err != nil {
		return k, p.errorf(material, "%v", err)
	}
	return k, nil
}

// issuers reads the issuers of the jwt section: identity providers with a JWKS.
func (p *parser) issuers(n *yaml.Node) ([]auth.Issuer, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, p.errorf(n, "issuers must be a list of at least one issuer, found %s", kind(n))
	}
	var out []auth.Issuer
	lines := map[string]int{}
	for _, item := range n.Content {
		item = resolve(item)
		iss, err := p.issuer(item)
		if err != nil {
			return nil, err
		}
		if line, dup := lines[iss.URL]; dup {
			return nil, p.errorf(item, "issuer %q is already named on line %d", clip(iss.URL), line)
		}
		lines[iss.URL] = item.Line
		out = append(out, iss)
	}
	return out, nil
}

func (p *parser) duration(n *yaml.Node, what string) (time.Duration, error) {
	s, err := p.str(n, what)
	if err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, p.errorf(n, "%s %q is not a positive duration such as 1h or 30s", what, clip(s))
	}
	return d, nil
}

// strings reads a string or a list of non-empty strings.
func (p *parser) strings(n *yaml.Node, what string) ([]string, error) {
	if n.Kind == yaml.ScalarNode {
		s, err := p.nonEmpty(n, what)
		return []string{s}, err
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, p.errorf(n, "%s must be a string or a list of strings, found %s", what, kind(n))
	}
	var out []string
	for _, item := range n.Content {
		s, err := p.nonEmpty(resolve(item), what)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// issuer reads one issuer and checks it as auth.NewJWTVerifier will.
func (p *parser) issuer(n *yaml.Node) (auth.Issuer, error) {
	var iss auth.Issuer
	var perms *yaml.Node
	err := p.fields(n, map[string]func(*yaml.Node) error{
		"issuer":     func(v *yaml.Node) (err error) { iss.URL, err = p.nonEmpty(v, "issuer"); return err },
		"audience":   func(v *yaml.Node) (err error) { iss.Audience, err = p.strings(v, "audience"); return err },
		"jwksURL":    func(v *yaml.Node) (err error) { iss.JWKSURL, err = p.nonEmpty(v, "jwksURL"); return err },
		"algorithms": func(v *yaml.Node) (err error) { iss.Algorithms, err = p.strings(v, "algorithms"); return err },
		"refresh":    func(v *yaml.Node) (err error) { iss.RefreshInterval, err = p.duration(v, "refresh"); return err },
		"unknownKidRefresh": func(v *yaml.Node) (err error) {
			iss.UnknownKIDInterval, err = p.duration(v, "unknownKidRefresh")
			return err
		},
		"team":   func(v *yaml.Node) (err error) { iss.Claims.FixedTeam, err = p.nonEmpty(v, "team"); return err },
		"tenant": func(v *yaml.Node) (err error) { iss.Claims.FixedTenant, err = p.nonEmpty(v, "tenant"); return err },
		"claims": func(v *yaml.Node) error {
			return p.fields(v, map[string]func(*yaml.Node) error{
				"team":   func(v *yaml.Node) (err error) { iss.Claims.Team, err = p.nonEmpty(v, "claims.team"); return err },
				"tenant": func(v *yaml.Node) (err error) { iss.Claims.Tenant, err = p.nonEmpty(v, "claims.tenant"); return err },
				"permissions": func(v *yaml.Node) (err error) {
					iss.Claims.PermissionClaims, err = p.strings(v, "claims.permissions")
					return err
				},
			}, nil)
		},
		"scopes": func(v *yaml.Node) error { perms = v; return nil },
	}, []string{"issuer", "audience"})
	if err != nil {
		return iss, err
	}
	if perms != nil {
		if perms.Kind != yaml.MappingNode || len(perms.Content) == 0 {
			return iss, p.errorf(perms, "scopes must map scope or role values to lists of permissions, found %s", kind(perms))
		}
		iss.Claims.Scopes = map[string][]principal.Permission{}
		for i := 0; i+1 < len(perms.Content); i += 2 {
			name, err := p.nonEmpty(perms.Content[i], "a scope")
			if err != nil {
				return iss, err
			}
			if _, dup := iss.Claims.Scopes[name]; dup {
				return iss, p.errorf(perms.Content[i], "scope %q is mapped twice", clip(name))
			}
			if iss.Claims.Scopes[name], err = p.permissions(resolve(perms.Content[i+1])); err != nil {
				return iss, err
			}
		}
	}
	if err := auth.CheckIssuer(iss); err != nil {
		return iss, p.errorf(n, "%v", err)
	}
	return iss, nil
}

// teams reads the teams section: a mapping from team name to its settings.
func (p *parser) teams(n *yaml.Node) (map[string]Team, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errorf(n, "teams must be a mapping from team name to its settings, found %s", kind(n))
	}
	out := make(map[string]Team, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, err := p.nonEmpty(n.Content[i], "a team name")
		if err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, p.errorf(n.Content[i], "team %q is given twice", name)
		}
		var t Team
		err = p.fields(resolve(n.Content[i+1]), map[string]func(*yaml.Node) error{
			"seats": func(v *yaml.Node) error {
				seats, err := p.count(v, "seats")
				t.Seats = &seats
				return err
			},
		}, nil)
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}
