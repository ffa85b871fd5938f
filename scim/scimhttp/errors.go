package scimhttp

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/kmkit/kmkit/outage"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/scim"

	scimerrors "github.com/elimity-com/scim/errors"
)

// ContentType is the media type of every response body.
const ContentType = "application/scim+json"

// scimError is the error of a request as RFC 7644 defines it; package scim words it.
type scimError = scim.Error

func apiError(status int, scimType, format string, args ...any) scimError {
	return scim.NewError(status, scimType, format, args...)
}

func badValue(format string, args ...any) scimError {
	return apiError(http.StatusBadRequest, scim.TypeInvalidValue, format, args...)
}

// libraryError turns an error of github.com/elimity-com/scim (its schema validation) into
// the Error this package answers with.
func libraryError(e *scimerrors.ScimError) *scimError {
	if e == nil {
		return nil
	}
	return &scimError{Status: e.Status, ScimType: string(e.ScimType), Detail: e.Detail}
}

// errorBody returns the RFC 7644 Error body: schemas, status as a string, scimType when
// one applies, and the detail.
func errorBody(status int, scimType, detail string) []byte {
	body, _ := json.Marshal(struct {
		Schemas  []string `json:"schemas"`
		ScimType string   `json:"scimType,omitempty"`
		Detail   string   `json:"detail,omitempty"`
		Status   string   `json:"status"`
	}{[]string{scim.ErrorSchema}, scimType, detail, strconv.Itoa(status)})
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

func writeAPIError(w http.ResponseWriter, e scimError) {
	WriteError(w, e.Status, string(e.ScimType), e.Detail)
}

// storeError turns a Store error into the error the client sees: a rule of the Store
// (scim.ErrorOf) as it is, anything else as every API answers failures
// (routing.API.Failure: 503 for a client gone or a database unavailable, else 500 with a
// logged support id, never the error's text).
func (h *Handler) storeError(ctx context.Context, err error) scimError {
	if e, ok := scim.ErrorOf(err); ok {
		return e
	}
	p, _ := h.api.Failure(ctx, nil, err) // WriteError adds Retry-After to every 503
	return apiError(p.Status, "", "%s", p.Detail)
}
