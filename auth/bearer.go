package auth

import (
	"context"
	"strings"

	"github.com/kmkit/kmkit/principal"
)

// BearerKeys authenticates Bearer credentials. A token shaped like a JWT (three parts
// separated by dots) is verified by JWT; any other token is looked up in Keys as an
// application key. Identity providers that can send a static secret only as a Bearer token
// (Microsoft Entra ID's provisioning "Secret Token", for one) can so use an application key.
type BearerKeys struct {
	// Keys holds the application keys; nil refuses tokens that are not JWTs.
	Keys *KeySet
	// JWT verifies JWTs; nil refuses them.
	JWT Authenticator
}

// Authenticate implements Authenticator.
func (b BearerKeys) Authenticate(ctx context.Context, c Credential) (*principal.Principal, error) {
	if c.Scheme != SchemeBearer {
		return nil, refusef("%s credentials are not accepted here", c.Scheme)
	}
	if strings.Count(c.Secret, ".") == 2 {
		if b.JWT == nil {
			return nil, refuse("Bearer tokens (JWT) are not accepted here: send an application key")
		}
		return b.JWT.Authenticate(ctx, c)
	}
	if b.Keys == nil {
		return nil, refuse("the Bearer credential is not a JWT")
	}
	return b.Keys.Authenticate(ctx, Credential{Scheme: SchemeAppKey, Secret: c.Secret})
}

// KeysAndTokens returns the authenticator of a server with application keys and, when jwt
// is not nil, JWTs: keys under the AppKey and x-api-key schemes, and Bearer credentials
// through BearerKeys.
func KeysAndTokens(keys *KeySet, jwt Authenticator) Schemes {
	return Schemes{
		SchemeAppKey: keys,
		SchemeAPIKey: keys,
		SchemeBearer: BearerKeys{Keys: keys, JWT: jwt},
	}
}
