package auth

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
)

// Scheme names the way a request presents its credentials.
type Scheme string

// The credential schemes.
const (
	// SchemeAppKey is an application key: "Authorization: AppKey <key>" or "AppKey: <key>".
	SchemeAppKey Scheme = "AppKey"
	// SchemeBearer is a JWT: "Authorization: Bearer <token>".
	SchemeBearer Scheme = "Bearer"
	// SchemeAPIKey is the reporting API's key: "x-api-key: <key>" with "x-tenant-id".
	SchemeAPIKey Scheme = "x-api-key"
)

// Header names read by this package, in the canonical form of http.CanonicalHeaderKey (the
// form of the keys of an http.Header), so that they index a header map directly.
const (
	HeaderAuthorization = "Authorization"
	HeaderAppKey        = "Appkey"
	HeaderAPIKey        = "X-Api-Key"
)

// MaxCredentialLength bounds the length of a key or token; longer ones are refused unread.
// 16 KiB holds the access tokens identity providers issue with their largest group
// claims (Entra ID puts up to 200 group ids in a token, about 12 KiB).
const MaxCredentialLength = 16 << 10

// Credential is what a request presents to prove who it is.
type Credential struct {
	Scheme Scheme
	// Secret is the key or the token. Never log it.
	Secret string
}

// String describes c without its secret, so that a Credential is safe to log.
func (c Credential) String() string { return string(c.Scheme) + " credential" }

// CredentialError is a refused credential: the middleware answers 401 with Reason, which is
// written for the client and never contains the secret.
type CredentialError struct {
	Reason string
}

// Error returns the reason.
func (e *CredentialError) Error() string { return e.Reason }

func refuse(reason string) error { return &CredentialError{Reason: reason} }

func refusef(format string, args ...any) error {
	return &CredentialError{Reason: fmt.Sprintf(format, args...)}
}

// Reasons for refusing the headers of a request.
var (
	errNoCredentials = refuse("missing credentials: send the Authorization header with the AppKey or Bearer scheme, or the AppKey header")
	errTwoHeaders    = refuse("send credentials in one header only, Authorization or AppKey")
	errManyValues    = refuse("send one Authorization header")
	errTooLong       = refuse(fmt.Sprintf("credentials longer than %d bytes", MaxCredentialLength))
	errNoAPIKey      = refuse("missing x-api-key header")
)

// ParseAuthorization reads the credentials of a KM, OData or SCIM request: the Authorization
// header with the scheme AppKey or Bearer (scheme word case-insensitive), or the AppKey
// header. h must have canonical keys, as the headers of a request received by net/http do. Sending both headers is refused as ambiguous. Errors are *CredentialError.
func ParseAuthorization(h http.Header) (Credential, error) {
	authz, appKey := h[HeaderAuthorization], h[HeaderAppKey]
	switch {
	case len(authz) == 0 && len(appKey) == 0:
		return Credential{}, errNoCredentials
	case len(authz) > 0 && len(appKey) > 0:
		return Credential{}, errTwoHeaders
	case len(authz) > 1 || len(appKey) > 1:
		return Credential{}, errManyValues
	case len(appKey) == 1:
		secret, err := parseSecret(appKey[0], "AppKey header")
		return Credential{Scheme: SchemeAppKey, Secret: secret}, err
	}
	v := strings.Trim(authz[0], " \t")
	if v == "" {
		return Credential{}, refuse("empty Authorization header")
	}
	word, rest, found := v, "", false
	if i := strings.IndexAny(v, " \t"); i >= 0 {
		word, rest, found = v[:i], v[i+1:], true
	}
	var scheme Scheme
	switch {
	case strings.EqualFold(word, string(SchemeAppKey)):
		scheme = SchemeAppKey
	case strings.EqualFold(word, string(SchemeBearer)):
		scheme = SchemeBearer
	case rest == "" && !found:
		return Credential{}, refuse("the Authorization header needs a scheme: AppKey or Bearer, a space, then the key or token")
	default:
		return Credential{}, refusef("unsupported authorization scheme %q: use AppKey or Bearer", clip(word))
	}
	what := "AppKey credentials"
	if scheme == SchemeBearer {
		what = "Bearer credentials"
	}
	secret, err := parseSecret(rest, what)
	return Credential{Scheme: scheme, Secret: secret}, err
}

// ParseAPIKey reads the x-api-key header of a request (h with canonical keys), the
// credentials of the reporting API. A missing, repeated or malformed key is a
// *CredentialError. The tenant the request names (x-tenant-id) is the API's to read: see
// Policy.Tenant.
func ParseAPIKey(h http.Header) (Credential, error) {
	keys := h[HeaderAPIKey]
	switch len(keys) {
	case 0:
		return Credential{}, errNoAPIKey
	case 1:
	default:
		return Credential{}, refuse("send one x-api-key header")
	}
	secret, err := parseSecret(keys[0], "x-api-key header")
	if err != nil {
		return Credential{}, err
	}
	return Credential{Scheme: SchemeAPIKey, Secret: secret}, nil
}

// TenantError is a missing or malformed tenant id.
type TenantError struct {
	// Missing is true when the header is absent.
	Missing bool
	Reason  string
}

// Error returns the reason.
func (e *TenantError) Error() string { return e.Reason }

// ParseTenant checks the tenant id of a key or a token, given as the values of a header
// (x-tenant-id): exactly one UUID in the hyphenated 36-character form, any case. It returns
// the UUID in lower case. The reporting API reads its x-tenant-id header by the same rules
// (reportinghttp.ParseTenant).
func ParseTenant(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", &TenantError{Missing: true, Reason: "missing x-tenant-id header"}
	case 1:
	default:
		return "", &TenantError{Reason: "send one x-tenant-id header"}
	}
	v := strings.Trim(values[0], " \t")
	if v == "" {
		return "", &TenantError{Missing: true, Reason: "empty x-tenant-id header"}
	}
	id, err := uuid.Parse(v)
	if err != nil || len(v) != 36 {
		return "", &TenantError{Reason: fmt.Sprintf("x-tenant-id %q is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", clip(v))}
	}
	return id.String(), nil
}

// parseSecret trims optional white space around a key or token and checks that what
// remains is one non-empty run of visible ASCII characters.
func parseSecret(v, what string) (string, error) {
	v = strings.Trim(v, " \t")
	switch {
	case v == "":
		return "", refusef("empty %s", what)
	case len(v) > MaxCredentialLength:
		return "", errTooLong
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c >= 0x7f {
			return "", refusef("malformed %s: only visible ASCII characters, without spaces", what)
		}
	}
	return v, nil
}

// clip shortens client input quoted back in an error message.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
