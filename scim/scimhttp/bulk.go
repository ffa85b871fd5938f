package scimhttp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/kmkit/kmkit/scim"
)

// bulkRequest is the body of POST /Bulk (RFC 7644 section 3.7).
type bulkRequest struct {
	Schemas      []string `json:"schemas"`
	FailOnErrors *int     `json:"failOnErrors"`
	Operations   []bulkOp `json:"Operations"`
}

type bulkOp struct {
	Method  string          `json:"method"`
	Path    string          `json:"path"`
	BulkID  string          `json:"bulkId"`
	Version string          `json:"version"`
	Data    json.RawMessage `json:"data"`
}

// bulkResult is one entry of the BulkResponse.
type bulkResult struct {
	Method   string          `json:"method"`
	BulkID   string          `json:"bulkId,omitempty"`
	Version  string          `json:"version,omitempty"`
	Location string          `json:"location,omitempty"`
	Status   string          `json:"status"`
	Response json.RawMessage `json:"response,omitempty"`
}

// parseBulk decodes and checks a Bulk request body.
func parseBulk(body []byte, maxOps int) (bulkRequest, *scimError) {
	var req bulkRequest
	if err := json.Unmarshal(body, &req); err != nil {
		e := apiError(http.StatusBadRequest, scim.TypeInvalidSyntax, "The bulk request is not valid: %s.", jsonProblem(err))
		return req, &e
	}
	if !hasSchema(req.Schemas, scim.BulkRequestSchema) {
		e := apiError(http.StatusBadRequest, scim.TypeInvalidSyntax, "schemas must contain %s.", scim.BulkRequestSchema)
		return req, &e
	}
	if req.FailOnErrors != nil && *req.FailOnErrors < 1 {
		e := badValue("failOnErrors must be a positive integer, not %d.", *req.FailOnErrors)
		return req, &e
	}
	if len(req.Operations) > maxOps {
		e := apiError(http.StatusRequestEntityTooLarge, "",
			"The bulk request has %d operations; maxOperations is %d.", len(req.Operations), maxOps)
		return req, &e
	}
	return req, nil
}

// serveBulk answers POST /Bulk: the operations run in order; without failOnErrors the run
// stops after the first failure, with failOnErrors N once N operations have failed.
func (h *Handler) serveBulk(w http.ResponseWriter, r *http.Request, root, team string) {
	body, e := h.readBody(w, r, h.maxBody)
	if e != nil {
		if e.Status == http.StatusRequestEntityTooLarge {
			e.Detail = fmt.Sprintf("The bulk request exceeds maxPayloadSize (%d bytes).", h.maxBody)
		}
		writeAPIError(w, *e)
		return
	}
	req, e := parseBulk(body, h.maxOps)
	if e != nil {
		writeAPIError(w, *e)
		return
	}
	stopAfter := 1
	if req.FailOnErrors != nil {
		stopAfter = *req.FailOnErrors
	}
	ids := map[string]string{} // bulkId -> id of the resource its operation created
	results := make([]bulkResult, 0, len(req.Operations))
	failures := 0
	for _, op := range req.Operations {
		res := h.bulkOperation(r, root, team, op, ids)
		results = append(results, res)
		if code, _ := strconv.Atoi(res.Status); code >= 400 {
			failures++
			if failures >= stopAfter {
				break
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"schemas": []string{scim.BulkResponseSchema}, "Operations": results})
}

// bulkOperation runs one operation and records the id it created under its bulkId.
func (h *Handler) bulkOperation(r *http.Request, root, team string, op bulkOp, ids map[string]string) bulkResult {
	method := strings.ToUpper(op.Method)
	out := bulkResult{Method: method, BulkID: op.BulkID}
	fail := func(e scimError) bulkResult {
		out.Status = strconv.Itoa(e.Status)
		out.Response = errorBody(e.Status, string(e.ScimType), e.Detail)
		return out
	}
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return fail(badValue("method must be POST, PUT, PATCH or DELETE, not %q.", scim.Echo(op.Method)))
	}
	if method == http.MethodPost {
		if op.BulkID == "" {
			return fail(badValue("bulkId is required for POST operations."))
		}
		if _, dup := ids[op.BulkID]; dup {
			return fail(badValue("bulkId %q is used by an earlier operation.", scim.Echo(op.BulkID)))
		}
	}
	c := call{method: method, query: url.Values{}, ifMatch: op.Version}
	endpoint, id, _ := strings.Cut(strings.TrimPrefix(op.Path, "/"), "/")
	switch strings.ToLower(endpoint) {
	case "users":
		c.rt = h.users
	case "groups":
		c.rt = h.groups
	default:
		return fail(apiError(http.StatusBadRequest, scim.TypeInvalidPath, "path must start with /Users or /Groups, not %q.", scim.Echo(op.Path)))
	}
	if (method == http.MethodPost) != (id == "") {
		if method == http.MethodPost {
			return fail(apiError(http.StatusBadRequest, scim.TypeInvalidPath, "POST operations take the path /%s, not %q.", endpoint, scim.Echo(op.Path)))
		}
		return fail(apiError(http.StatusBadRequest, scim.TypeInvalidPath, "%s operations need a resource id in the path %q.", method, scim.Echo(op.Path)))
	}
	if ref, ok := strings.CutPrefix(id, "bulkId:"); ok {
		resolved, ok := ids[ref]
		if !ok {
			return fail(apiError(http.StatusConflict, scim.TypeInvalidValue, "bulkId %q does not refer to a resource created by an earlier operation.", scim.Echo(ref)))
		}
		id = resolved
	}
	c.id = id
	if method != http.MethodDelete {
		if len(bytes.TrimSpace(op.Data)) == 0 || bytes.Equal(bytes.TrimSpace(op.Data), []byte("null")) {
			return fail(badValue("data is required for %s operations.", method))
		}
		c.body = op.Data
		if bytes.Contains(op.Data, []byte("bulkId:")) {
			data, e := resolveBulkIDs(op.Data, ids)
			if e != nil {
				return fail(*e)
			}
			c.body = data
		}
	}
	res := h.do(r.Context(), root, team, c)
	out.Status = strconv.Itoa(res.status)
	if res.status >= 400 {
		out.Response = res.body
		return out
	}
	out.Version = res.header.Get("Etag")
	switch {
	case method == http.MethodPost:
		out.Location = res.header.Get("Location")
		if i := strings.LastIndexByte(out.Location, '/'); i >= 0 {
			created, err := url.PathUnescape(out.Location[i+1:])
			if err == nil {
				ids[op.BulkID] = created
			}
		}
	case method != http.MethodDelete:
		out.Location = root + c.rt.endpoint + "/" + url.PathEscape(id)
	}
	return out
}

// resolveBulkIDs replaces every string "bulkId:x" in data with the id created for x.
func resolveBulkIDs(data []byte, ids map[string]string) ([]byte, *scimError) {
	v, e := decodeObject(data, "operation data")
	if e != nil {
		return nil, e
	}
	var walk func(any) (any, *scimError)
	walk = func(v any) (any, *scimError) {
		switch v := v.(type) {
		case string:
			ref, ok := strings.CutPrefix(v, "bulkId:")
			if !ok {
				return v, nil
			}
			id, ok := ids[ref]
			if !ok {
				e := apiError(http.StatusConflict, scim.TypeInvalidValue, "bulkId %q does not refer to a resource created by an earlier operation.", scim.Echo(ref))
				return nil, &e
			}
			return id, nil
		case map[string]any:
			for k, x := range v {
				nx, e := walk(x)
				if e != nil {
					return nil, e
				}
				v[k] = nx
			}
		case []any:
			for i, x := range v {
				nx, e := walk(x)
				if e != nil {
					return nil, e
				}
				v[i] = nx
			}
		}
		return v, nil
	}
	if _, e := walk(v); e != nil {
		return nil, e
	}
	out, err := json.Marshal(v)
	if err != nil {
		e := badValue("The operation data cannot be encoded again: %v.", err)
		return nil, &e
	}
	return out, nil
}
