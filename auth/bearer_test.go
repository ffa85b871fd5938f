package auth

import (
	"context"
	"errors"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

func TestBearerKeys(t *testing.T) {
	keys := newTestKeySet(t)
	token := sign(t, jwt.SigningMethodHS256, testHS, "hs", claims(nil))
	both := KeysAndTokens(keys, newTestVerifier(t, 0, nil))
	keysOnly := KeysAndTokens(keys, nil)

	tests := []struct {
		name     string
		authn    Authenticator
		cred     Credential
		wantName string // principal name; "" means refused with wantErr
		wantErr  string
	}{
		{"key as bearer", both, Credential{SchemeBearer, "km-key-0001"}, "all", ""},
		{"key as bearer without jwt", keysOnly, Credential{SchemeBearer, "scim-key-0001"}, "key:" + DigestOf("scim-key-0001").String()[:8], ""},
		{"jwt as bearer", both, Credential{SchemeBearer, token}, "sub:alice", ""},
		{"unknown key as bearer", both, Credential{SchemeBearer, "no-such-key"}, "", "invalid application key"},
		{"jwt where none are accepted", keysOnly, Credential{SchemeBearer, token}, "", "Bearer tokens (JWT) are not accepted here: send an application key"},
		{"key as AppKey", keysOnly, Credential{SchemeAppKey, "km-key-0001"}, "all", ""},
		{"no keys", BearerKeys{}, Credential{SchemeBearer, "km-key-0001"}, "", "the Bearer credential is not a JWT"},
		{"wrong scheme", BearerKeys{Keys: keys}, Credential{SchemeAppKey, "km-key-0001"}, "", "AppKey credentials are not accepted here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.authn.Authenticate(context.Background(), tt.cred)
			if tt.wantName != "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if p.Name != tt.wantName {
					t.Fatalf("principal %q, want %q", p.Name, tt.wantName)
				}
				return
			}
			var ce *CredentialError
			if !errors.As(err, &ce) || ce.Reason != tt.wantErr {
				t.Fatalf("err = %v, want credential error %q", err, tt.wantErr)
			}
		})
	}
}
