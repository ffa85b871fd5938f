// Package problem holds RFC 9457 problem bodies in the shape the Knowledge Model API uses:
// {title, status, detail, errorCode, type}, served as application/problem+json.
//
// Every errorCode has a stable type URI, "urn:kmkit:problem:" followed by the code, so that
// clients can tell problems apart without parsing the detail text.
//
// A *Problem is also the error value domain packages (km's planner, the stores) return for
// a request they refuse, so this package imports no net/http: writing a problem as a
// response is package problem/problemhttp.
package problem

// ContentType is the media type of problem bodies.
const ContentType = "application/problem+json"

// TypePrefix starts the type URI of every problem; the errorCode follows it.
const TypePrefix = "urn:kmkit:problem:"

// Error codes shared by the APIs. Packages add their own codes of the same style.
const (
	CodeParameterMissing  = "GENERAL_PARAMETER_MISSING"
	CodeConstraint        = "GENERAL_CONSTRAINT_VIOLATION"
	CodeParameterMismatch = "GENERAL_PARAMETER_MISSMATCH" // spelled as the real service spells it
	CodeParameterIllegal  = "GENERAL_PARAMETER_ILLEGAL"
	CodeNotFoundPath      = "GENERAL_NOTFOUND_PATH"
	CodeMethodNotAllowed  = "GENERAL_METHOD_NOT_ALLOWED"
	CodeAccess            = "ADMIN_ACCESS_ERROR"
	CodeUnauthenticated   = "ADMIN_AUTHENTICATION_ERROR" // 401: missing or refused credentials
	CodeFatal             = "ADMIN_FATAL_ERROR"
	CodeRateExceeded      = "LIMIT_RATE_EXCEEDED"
	CodeUnsupportedMedia  = "GENERAL_UNSUPPORTED_MEDIA_TYPE"
	CodeUnavailable       = "GENERAL_SERVICE_UNAVAILABLE" // 503: the database cannot be reached; see package outage
)

// Problem is one problem body.
type Problem struct {
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	ErrorCode string `json:"errorCode"`
	Type      string `json:"type"`
}

// New returns the problem for status and code with the given detail; its title is the
// status text and its type the code's URI.
func New(status int, code, detail string) *Problem {
	return &Problem{
		Title:     StatusText(status),
		Status:    status,
		Detail:    detail,
		ErrorCode: code,
		Type:      TypePrefix + code,
	}
}

// Error returns the detail, so that a *Problem can travel as an error.
func (p *Problem) Error() string { return p.ErrorCode + ": " + p.Detail }

// ODataBody is the body of error answers on OData paths: the problem members and, in the
// same object, OData's JSON error (OData JSON Format 4.0, section 21.1), so that OData
// clients, which read error.message, show the detail too.
type ODataBody struct {
	Problem
	Error ODataError `json:"error"`
}

// ODataError is OData's error object. Target names the query option or header at fault,
// when one is; Details is always an array (empty: one error per answer).
type ODataError struct {
	Code    string             `json:"code"`
	Message string             `json:"message"`
	Target  string             `json:"target,omitempty"`
	Details []ODataErrorDetail `json:"details"`
}

// ODataErrorDetail is an entry of ODataError.Details.
type ODataErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Target  string `json:"target,omitempty"`
}
