// Package problemhttp writes problems (package problem) as HTTP responses: the problem body
// as application/problem+json, or with OData's error object on OData paths.
package problemhttp

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/kmkit/kmkit/problem"
)

// Send sends p as the response.
func Send(w http.ResponseWriter, p *problem.Problem) {
	body, err := json.Marshal(p)
	if err != nil { // unreachable: every member is a string or an int
		body = []byte(`{"title":"Internal Server Error","status":500,"errorCode":"` + problem.CodeFatal + `"}`)
	}
	h := w.Header()
	h.Set("Content-Type", problem.ContentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(p.Status)
	_, _ = w.Write(body)
}

// Write sends a problem with status, code and detail.
func Write(w http.ResponseWriter, status int, code, detail string) {
	Send(w, problem.New(status, code, detail))
}

// SendOData sends p with OData's error object (target may be empty) as contentType,
// problem.ContentType or application/json.
func SendOData(w http.ResponseWriter, p *problem.Problem, target, contentType string) {
	body, err := json.Marshal(problem.ODataBody{Problem: *p, Error: problem.ODataError{
		Code: p.ErrorCode, Message: p.Detail, Target: target, Details: []problem.ODataErrorDetail{},
	}})
	if err != nil { // unreachable: strings and an int
		Send(w, p)
		return
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(p.Status)
	_, _ = w.Write(body)
}

// SendKM writes p in the Knowledge Model APIs' error shape: a 401 as {"error": detail}
// (application/json), as the KM API's clients expect, anything else as a problem body
// (Send). The KM API and the OData service answer a failed authentication alike.
func SendKM(w http.ResponseWriter, p *problem.Problem) {
	if p.Status != http.StatusUnauthorized {
		Send(w, p)
		return
	}
	body, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{p.Detail}) // a string: cannot fail
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(p.Status)
	_, _ = w.Write(body)
}
