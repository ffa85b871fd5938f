package odata

import (
	"errors"
	"net/http"
	"strings"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/problem/problemhttp"
	"github.com/kmkit/kmkit/query"
)

// targeted is a problem with the query option or header it is about.
type targeted struct {
	*problem.Problem
	target string
}

func (t *targeted) Unwrap() error { return t.Problem }

// withTarget attaches the name of the option or header at fault to a problem.
func withTarget(p *problem.Problem, target string) error { return &targeted{p, target} }

// errorContentType is the media type of an error body for a request with the given
// Accept header: application/problem+json, unless the header admits application/json
// but not problem+json (OData clients send Accept: application/json and parse only
// answers of that type), in which case the same body goes as application/json.
func errorContentType(accept string) string {
	if strings.TrimSpace(accept) == "" {
		return problem.ContentType
	}
	best, bestQ := problem.ContentType, 0.0
	for item := range strings.SplitSeq(accept, ",") {
		mt, params, _ := strings.Cut(item, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
		q := acceptQ(params)
		switch {
		case q <= 0:
		case mt == problem.ContentType || mt == "*/*" || mt == "application/*":
			if q >= bestQ {
				best, bestQ = problem.ContentType, q
			}
		case mt == "application/json" && q > bestQ:
			best, bestQ = "application/json", q
		}
	}
	return best
}

// writeError writes p with OData's error object, in the media type errorContentType
// picks for the request r.
func writeError(w http.ResponseWriter, r *http.Request, p *problem.Problem, target string) {
	problemhttp.SendOData(w, p, target, errorContentType(r.Header.Get("Accept")))
}

// writeProblem writes the error of status, code and detail.
func writeProblem(w http.ResponseWriter, r *http.Request, status int, code, detail string) {
	writeError(w, r, problem.New(status, code, detail), "")
}

// fail answers err: client errors with their 4xx body, anything else as every API
// answers failures (routing.API.Fail). Error bodies are JSON whatever format the
// request asked for.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var t *targeted
	var p *problem.Problem
	var qe *query.Error
	switch {
	case errors.As(err, &t):
		writeError(w, r, t.Problem, t.target)
	case errors.As(err, &p):
		writeError(w, r, p, "")
	case errors.As(err, &qe):
		status := http.StatusBadRequest
		if qe.Kind == query.KindUnsupported {
			// Valid OData outside what the service implements (OData's Minimal
			// conformance level): 501, with the reason.
			status = http.StatusNotImplemented
		}
		writeError(w, r, problem.New(status, qe.Code, qe.Error()), qe.Param)
	default:
		h.api.Fail(w, r, err)
	}
}

// WriteProblem writes p in the error shape of OData paths, with the OData-Version header
// of every OData answer: a 401 as the KM API's {"error": detail}, anything else as the
// problem with OData's error object, served as application/problem+json. It is the error
// writer to give the auth middleware (auth.Policy.WriteError) in front of the handler.
func WriteProblem(w http.ResponseWriter, p *problem.Problem) {
	w.Header().Set("OData-Version", Version)
	if p.Status == http.StatusUnauthorized {
		problemhttp.SendKM(w, p)
		return
	}
	problemhttp.SendOData(w, p, "", problem.ContentType)
}
