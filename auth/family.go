package auth

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/problem"
)

// Family is an API family: it decides how a request presents credentials, which permission
// it needs and the shape of the error bodies.
type Family int

// The API families.
const (
	// FamilyKM is the Knowledge Model API: 401 {"error": "..."}, other errors problem bodies.
	FamilyKM Family = iota
	// FamilyOData is the OData service of the KM API, with the KM API's error bodies.
	FamilyOData
	// FamilySCIM is SCIM 2.0: every error is an RFC 7644 Error body.
	FamilySCIM
	// FamilyReporting is the reporting API: x-api-key with x-tenant-id; problem bodies.
	FamilyReporting
	// FamilyMetrics is an operator's endpoint, such as Prometheus metrics, with the KM
	// API's credentials and error bodies and the metrics permission.
	FamilyMetrics
	// FamilyMCP is the MCP server over the Knowledge Models (package mcp), with the KM
	// API's credentials and error bodies and the mcp permission.
	FamilyMCP
)

// Permission returns the permission a principal needs to call the family.
func (f Family) Permission() principal.Permission {
	switch f {
	case FamilyOData:
		return principal.PermOData
	case FamilySCIM:
		return principal.PermSCIM
	case FamilyReporting:
		return principal.PermReporting
	case FamilyMetrics:
		return principal.PermMetrics
	case FamilyMCP:
		return principal.PermMCP
	default:
		return principal.PermKM
	}
}

// String returns the family's permission name.
func (f Family) String() string { return string(f.Permission()) }

// CodeUnauthenticated is the errorCode of the reporting API's 401 problem bodies.
const CodeUnauthenticated = "ADMIN_AUTHENTICATION_ERROR"

// SCIMErrorSchema is the schema URN of RFC 7644 Error bodies.
const SCIMErrorSchema = "urn:ietf:params:scim:api:messages:2.0:Error"

// SCIMContentType is the media type of SCIM bodies.
const SCIMContentType = "application/scim+json"

// challenge is the WWW-Authenticate header of 401 answers (RFC 9110, 11.6.1).
const (
	challengeAuthorization = `AppKey realm="kmkit", Bearer realm="kmkit"`
	challengeAPIKey        = `x-api-key realm="kmkit"`
)

// WriteError sends the error body of family f: status is 400, 401, 403, 429, 500 or 503, and
// detail the message for the client. Hosts mounting the handlers behind their own
// authentication use it to answer in the shape clients of each API expect.
func (f Family) WriteError(w http.ResponseWriter, status int, detail string) {
	f.writeError(w, status, "", detail)
}

// writeError is WriteError with the errorCode of problem bodies chosen by the caller; ""
// selects the code of the status.
func (f Family) writeError(w http.ResponseWriter, status int, code, detail string) {
	if status == http.StatusUnauthorized {
		if f == FamilyReporting {
			w.Header().Set("WWW-Authenticate", challengeAPIKey)
		} else {
			w.Header().Set("WWW-Authenticate", challengeAuthorization)
		}
	}
	switch {
	case f == FamilySCIM:
		writeSCIMError(w, status, detail)
	case status == http.StatusUnauthorized && f != FamilyReporting:
		writeJSON(w, status, "application/json", struct {
			Error string `json:"error"`
		}{detail})
	case f == FamilyOData:
		if code == "" {
			code = problemCode(status)
		}
		problem.New(status, code, detail).WriteOData(w, "", problem.ContentType)
	default:
		if code == "" {
			code = problemCode(status)
		}
		problem.Write(w, status, code, detail)
	}
}

func problemCode(status int) string {
	switch status {
	case http.StatusBadRequest:
		return problem.CodeParameterIllegal
	case http.StatusUnauthorized:
		return CodeUnauthenticated
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

func writeSCIMError(w http.ResponseWriter, status int, detail string) {
	writeJSON(w, status, SCIMContentType, struct {
		Schemas []string `json:"schemas"`
		Status  string   `json:"status"`
		Detail  string   `json:"detail"`
	}{[]string{SCIMErrorSchema}, strconv.Itoa(status), detail})
}

func writeJSON(w http.ResponseWriter, status int, contentType string, v any) {
	body, _ := json.Marshal(v) // strings only: cannot fail
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
