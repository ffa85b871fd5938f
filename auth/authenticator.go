package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/kmkit/kmkit/principal"
)

// Authenticator turns a credential into the principal it stands for.
//
// Authenticate returns a *CredentialError when the credential is refused (the middleware
// answers 401 with its reason); any other error is a failure of the authenticator itself
// (answered 500 and logged). Implementations are safe for concurrent use, and the returned
// principal may be shared between requests: callers must not modify it.
type Authenticator interface {
	Authenticate(ctx context.Context, c Credential) (*principal.Principal, error)
}

// Schemes is an Authenticator that hands each credential to the authenticator of its scheme.
// A scheme without one is refused.
type Schemes map[Scheme]Authenticator

// Authenticate implements Authenticator.
func (s Schemes) Authenticate(ctx context.Context, c Credential) (*principal.Principal, error) {
	a := s[c.Scheme]
	if a == nil {
		return nil, refusef("%s credentials are not accepted here", c.Scheme)
	}
	return a.Authenticate(ctx, c)
}

// Digest is the SHA-256 digest of a key: keys are stored and compared only as digests.
type Digest [sha256.Size]byte

// DigestOf returns the digest of key.
func DigestOf(key string) Digest { return sha256.Sum256([]byte(key)) }

// ParseDigest reads a digest written as 64 hexadecimal digits.
func ParseDigest(s string) (Digest, error) {
	var d Digest
	if len(s) != 2*len(d) {
		return d, fmt.Errorf("a SHA-256 digest has %d hexadecimal digits, not %d", 2*len(d), len(s))
	}
	if _, err := hex.Decode(d[:], []byte(s)); err != nil {
		return d, fmt.Errorf("a SHA-256 digest has only hexadecimal digits: %w", err)
	}
	return d, nil
}

// String returns the digest in hexadecimal.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// Key is one application key as the server stores it: its digest and what it grants.
type Key struct {
	Digest Digest
	// Name identifies the key in logs and limits; empty means "key:" and the first eight
	// hexadecimal digits of the digest.
	Name        string
	Team        string
	Tenant      string
	Permissions []principal.Permission
	// RatePerWindow overrides the request budget of the key when positive.
	RatePerWindow int
	// Burst overrides the requests per second allowed to the key when positive.
	Burst int
	// Concurrent overrides the cap on the key's requests in flight when positive.
	Concurrent int
}

// KeySet authenticates application keys (SchemeAppKey and SchemeAPIKey) against a fixed set
// of digests. It is immutable and safe for concurrent use.
//
// The presented key is hashed; the first eight bytes of its digest select the candidate
// keys through a map, and the whole digest is compared with each candidate in constant time.
// The lookup's timing depends only on the digest of the presented key, never on the bytes
// of a stored key.
type KeySet struct {
	byPrefix map[uint64][]storedKey
	n        int
}

type storedKey struct {
	digest    Digest
	principal *principal.Principal
}

func prefixOf(d Digest) uint64 { return binary.BigEndian.Uint64(d[:8]) }

// CheckKeyName reports what is wrong with the name of a key: the prefixes "sub:" and
// "key:" name the principals of tokens and of keys without a name, and limits count per
// principal name, so a key named with one would share another principal's limits.
func CheckKeyName(name string) error {
	for _, p := range []struct{ prefix, names string }{{"sub:", "the principals of tokens"}, {"key:", "the keys without a name"}} {
		if strings.HasPrefix(name, p.prefix) {
			return fmt.Errorf("key name %q begins with %q, which names %s", clip(name), p.prefix, p.names)
		}
	}
	return nil
}

// NewKeySet returns the set of keys. Two keys with the same digest, or a name CheckKeyName
// refuses, are an error.
func NewKeySet(keys []Key) (*KeySet, error) {
	s := &KeySet{byPrefix: make(map[uint64][]storedKey, len(keys)), n: len(keys)}
	for i, k := range keys {
		prefix := prefixOf(k.Digest)
		for _, o := range s.byPrefix[prefix] {
			if o.digest == k.Digest {
				return nil, fmt.Errorf("key %d: the same key appears twice", i+1)
			}
		}
		if err := CheckKeyName(k.Name); err != nil {
			return nil, fmt.Errorf("key %d: %w", i+1, err)
		}
		name := k.Name
		if name == "" {
			name = "key:" + k.Digest.String()[:8]
		}
		s.byPrefix[prefix] = append(s.byPrefix[prefix], storedKey{k.Digest, &principal.Principal{
			Name:          name,
			Team:          k.Team,
			Tenant:        k.Tenant,
			Permissions:   slices.Clone(k.Permissions),
			RatePerWindow: k.RatePerWindow,
			Burst:         k.Burst,
			Concurrent:    k.Concurrent,
		}})
	}
	return s, nil
}

var errUnknownKey = refuse("invalid application key")

// Authenticate implements Authenticator for application keys.
func (s *KeySet) Authenticate(_ context.Context, c Credential) (*principal.Principal, error) {
	if c.Scheme != SchemeAppKey && c.Scheme != SchemeAPIKey {
		return nil, refusef("%s credentials are not accepted here", c.Scheme)
	}
	d := DigestOf(c.Secret)
	for _, k := range s.byPrefix[prefixOf(d)] {
		if subtle.ConstantTimeCompare(k.digest[:], d[:]) == 1 {
			return k.principal, nil
		}
	}
	return nil, errUnknownKey
}

// Len returns the number of keys.
func (s *KeySet) Len() int { return s.n }
