package scim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/kmkit/kmkit/outage"
	"github.com/kmkit/kmkit/problem"

	scimerrors "github.com/elimity-com/scim/errors"
)

// ContentType is the media type of every response body.
const ContentType = "application/scim+json"

// The scimType keywords of RFC 7644 section 3.12 that this package uses.
const (
	TypeInvalidFilter = string(scimerrors.ScimTypeInvalidFilter)
	TypeUniqueness    = string(scimerrors.ScimTypeUniqueness)
	TypeMutability    = string(scimerrors.ScimTypeMutability)
	TypeInvalidSyntax = string(scimerrors.ScimTypeInvalidSyntax)
	TypeInvalidPath   = string(scimerrors.ScimTypeInvalidPath)
	TypeNoTarget      = string(scimerrors.ScimTypeNoTarget)
	TypeInvalidValue  = string(scimerrors.ScimTypeInvalidValue)
)

// apiError builds the library's error value, which the library's handlers recognise with
// errors.As and which marshals to the RFC 7644 Error body.
func apiError(status int, scimType, format string, args ...any) scimerrors.ScimError {
	return scimerrors.ScimError{Status: status, ScimType: scimerrors.ScimType(scimType), Detail: fmt.Sprintf(format, args...)}
}

func badValue(format string, args ...any) scimerrors.ScimError {
	return apiError(http.StatusBadRequest, TypeInvalidValue, format, args...)
}

// errorBody returns the RFC 7644 Error body: schemas, status as a string, scimType when
// one applies, and the detail.
func errorBody(status int, scimType, detail string) []byte {
	body, _ := json.Marshal(struct {
		Schemas  []string `json:"schemas"`
		ScimType string   `json:"scimType,omitempty"`
		Detail   string   `json:"detail,omitempty"`
		Status   string   `json:"status"`
	}{[]string{ErrorSchema}, scimType, detail, strconv.Itoa(status)})
	return body
}

// WriteError writes an RFC 7644 Error response. scimType may be empty. Authentication
// middleware in front of the handler can use it for SCIM-shaped 401 and 403 bodies.
func WriteError(w http.ResponseWriter, status int, scimType, detail string) {
	body := errorBody(status, scimType, detail)
	h := w.Header()
	if status == http.StatusServiceUnavailable {
		h.Set("Retry-After", outage.RetryAfterSeconds)
	}
	h.Set("Content-Type", ContentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// WriteProblem writes p as an RFC 7644 Error body with p's status and detail (SCIM bodies
// have no errorCode). It is the error writer to give the auth middleware
// (auth.Policy.WriteError) in front of the handler, so that its 401, 403 and 429 answers
// are SCIM errors too.
func WriteProblem(w http.ResponseWriter, p *problem.Problem) {
	WriteError(w, p.Status, "", p.Detail)
}

func writeAPIError(w http.ResponseWriter, e scimerrors.ScimError) {
	WriteError(w, e.Status, string(e.ScimType), e.Detail)
}

// storeError turns a Store error into the error the client sees. Errors that are not
// rules of the Store are logged and answered with 500 without their text.
func (h *Handler) storeError(err error) scimerrors.ScimError {
	detail := err.Error()
	var re *RuleError
	if errors.As(err, &re) {
		detail = re.Detail
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return apiError(http.StatusNotFound, "", "%s", detail)
	case errors.Is(err, ErrUniqueness):
		return apiError(http.StatusConflict, TypeUniqueness, "%s", detail)
	case errors.Is(err, ErrMutability):
		return apiError(http.StatusBadRequest, TypeMutability, "%s", detail)
	case errors.Is(err, ErrNoSuchMember), errors.Is(err, ErrTooManyGroups):
		return apiError(http.StatusBadRequest, TypeInvalidValue, "%s", detail)
	case errors.Is(err, ErrLicenseExceeded):
		return apiError(http.StatusBadRequest, "", "%s", detail)
	case errors.Is(err, ErrVersionMismatch):
		return apiError(http.StatusPreconditionFailed, "", "%s", detail)
	}
	var se scimerrors.ScimError
	if errors.As(err, &se) {
		return se
	}
	if outage.Is(err) {
		h.log.Warn("scim: database unavailable", "error", err)
		return apiError(http.StatusServiceUnavailable, "", "%s", outage.Detail)
	}
	p := h.api.Internal(context.Background(), nil, err)
	return apiError(p.Status, "", "%s", p.Detail)
}
