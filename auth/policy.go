package auth

import (
	"net/http"
	"strings"

	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/problem/problemhttp"
)

// Policy is what an API asks of the Guard: the permission its callers need, how they
// present credentials, and how its error bodies look. The Guard knows no API: each API's
// package supplies the writer of its error shape (kmhttp.WriteProblem, odata.WriteProblem,
// scimhttp.WriteProblem, reportinghttp.WriteProblem) and, for the reporting API, how a request
// names its tenant (reportinghttp.RequestTenant).
type Policy struct {
	// Name names the API in logs and to Config.Refused; default the Permission.
	Name string
	// Permission is the permission a principal needs. Required.
	Permission principal.Permission
	// Credentials is the way requests present their credentials.
	Credentials Credentials
	// Tenant, when set, reads the tenant a request names. Its error is answered as written
	// when it is a *problem.Problem, else 400 GENERAL_PARAMETER_ILLEGAL; the request is
	// refused 403 unless the tenant is the principal's. It runs after the credentials are
	// checked, so that a wrong key is 401 whatever the tenant.
	Tenant func(*http.Request) (string, error)
	// WriteError writes the error answers of the Guard: 400, 401, 403, 429, 500 and 503
	// problems. Default WriteProblem.
	WriteError ErrorWriter
	// ResourceMetadata, when set, returns the URL of the API's OAuth 2.0 Protected Resource
	// Metadata (RFC 9728; see ResourceMetadataURL) for a request: a 401 then names it in
	// its Bearer challenge (resource_metadata), so that an OAuth client finds the
	// authorization servers to sign in with.
	ResourceMetadata func(*http.Request) string
}

// ErrorWriter writes p, an error answer, in the shape of one API's error bodies. The
// status, the errorCode (one of package problem's codes) and the detail are p's; writers of
// bodies without an errorCode leave it out.
type ErrorWriter func(w http.ResponseWriter, p *problem.Problem)

// WriteProblem is the ErrorWriter of problem bodies (p.Write).
func WriteProblem(w http.ResponseWriter, p *problem.Problem) { problemhttp.Send(w, p) }

// Credentials is the way the requests of an API present their credentials.
type Credentials int

// The credential forms.
const (
	// AuthorizationHeader is "Authorization: AppKey <key>", "Authorization: Bearer <JWT>"
	// or "AppKey: <key>" (ParseAuthorization).
	AuthorizationHeader Credentials = iota
	// APIKeyHeader is "x-api-key: <key>" (ParseAPIKey).
	APIKeyHeader
)

// challenge returns the WWW-Authenticate header of a 401 answer to r (RFC 9110, 11.6.1),
// in the policy's credential form. With a resource metadata URL the Bearer challenge comes
// first and names it (RFC 9728, 5.1), as MCP clients read only a leading Bearer challenge.
// When r sent a Bearer token that was refused (token), the Bearer challenge says
// error="invalid_token" (RFC 6750, 3.1), so that an OAuth client knows to get a new token.
func (p *Policy) challenge(r *http.Request, token bool) string {
	if p.Credentials == APIKeyHeader {
		return `x-api-key realm="kmkit"`
	}
	bearerError := ""
	if token {
		bearerError = "invalid_token"
	}
	if metadata := p.metadata(r); metadata != "" {
		return bearerChallenge(bearerError, metadata) + `, AppKey realm="kmkit"`
	}
	return `AppKey realm="kmkit", ` + bearerChallenge(bearerError, "")
}

// metadata returns the URL of the resource metadata of r's API, "" when there is none.
func (p *Policy) metadata(r *http.Request) string {
	if p.ResourceMetadata == nil {
		return ""
	}
	return p.ResourceMetadata(r)
}

// bearerChallenge returns the Bearer challenge with error bearerError (RFC 6750, 3.1)
// unless it is "", and the resource metadata URL unless it is "". Alone, it is the
// challenge of a 403 to a token that lacks the permission (insufficient_scope).
func bearerChallenge(bearerError, metadata string) string {
	c := `Bearer realm="kmkit"`
	if bearerError != "" {
		c += `, error="` + bearerError + `"`
	}
	if metadata != "" {
		c += `, resource_metadata="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(metadata) + `"`
	}
	return c
}

// parse reads the credentials of a request.
func (c Credentials) parse(h http.Header) (Credential, error) {
	if c == APIKeyHeader {
		return ParseAPIKey(h)
	}
	return ParseAuthorization(h)
}

// name returns the name of the API in logs and to Config.Refused.
func (p *Policy) name() string {
	if p.Name != "" {
		return p.Name
	}
	return string(p.Permission)
}

// writeError answers with status, code ("" selects the code of the status) and detail in
// the policy's error shape.
func (p *Policy) writeError(w http.ResponseWriter, status int, code, detail string) {
	if code == "" {
		code = problemCode(status)
	}
	p.WriteError(w, problem.New(status, code, detail))
}

func problemCode(status int) string {
	switch status {
	case http.StatusBadRequest:
		return problem.CodeParameterIllegal
	case http.StatusUnauthorized:
		return problem.CodeUnauthenticated
	case http.StatusForbidden:
		return problem.CodeAccess
	case http.StatusTooManyRequests:
		return problem.CodeRateExceeded
	case http.StatusServiceUnavailable:
		return problem.CodeUnavailable
	default:
		return problem.CodeFatal
	}
}
