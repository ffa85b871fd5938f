package scimhttp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
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

// serveBulk answers POST /Bulk. Each operation runs once the operations whose bulkIds
// it names have run (bulkPlan); without failOnErrors the run stops after the first
// failure, with failOnErrors N once N operations have failed. The response lists the
// operations that ran, in the order of the request.
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
	plan := newBulkPlan(req.Operations)
	ran := make([]*bulkResult, len(req.Operations))
	failures := 0
	for failures < stopAfter {
		i, cycle := plan.next()
		if i < 0 {
			break
		}
		var res bulkResult
		if cycle != nil {
			res = bulkFailure(req.Operations[i], circular(cycle))
		} else {
			res = h.bulkOperation(r, root, team, req.Operations[i], i, plan)
		}
		ran[i] = &res
		if code, _ := strconv.Atoi(res.Status); code >= 400 {
			failures++
		}
	}
	results := make([]bulkResult, 0, len(req.Operations))
	for _, res := range ran {
		if res != nil {
			results = append(results, *res)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"schemas": []string{scim.BulkResponseSchema}, "Operations": results})
}

// bulkPlan orders the operations of a Bulk request so that an operation naming a bulkId
// ("bulkId:x" in its path or data) runs after the POST operation with that bulkId,
// which may come later in the request (RFC 7644 section 3.7.2); otherwise operations run
// in the order of the request. Operations whose references form a cycle are not
// resolved: they fail with 409, as the RFC allows.
type bulkPlan struct {
	owner   map[string]int    // bulkId -> the first POST operation with it
	created map[string]string // bulkId -> the id its operation created
	bulkIDs []string          // the bulkId of each operation
	deps    [][]int           // the operations each operation names
	done    []bool
	lo      int      // every operation before lo has run
	cycle   []string // the bulkIds of the cycle being failed
	pending []int    // its operations that are still to fail
}

// newBulkPlan reads the bulkIds the operations define and name.
func newBulkPlan(ops []bulkOp) *bulkPlan {
	n := len(ops)
	p := &bulkPlan{owner: map[string]int{}, created: map[string]string{}, bulkIDs: make([]string, n),
		deps: make([][]int, n), done: make([]bool, n)}
	for i, op := range ops {
		p.bulkIDs[i] = op.BulkID
		if _, dup := p.owner[op.BulkID]; !dup && op.BulkID != "" && strings.EqualFold(op.Method, http.MethodPost) {
			p.owner[op.BulkID] = i
		}
	}
	for i, op := range ops {
		for _, ref := range bulkRefs(op) {
			if j, ok := p.owner[ref]; ok && !slices.Contains(p.deps[i], j) {
				p.deps[i] = append(p.deps[i], j)
			}
		}
	}
	return p
}

// next returns the operation to run next and marks it run: the first in the request's
// order whose named operations have run. When the operations left all wait on one
// another, it returns, one by one, the operations of a cycle among them with the
// cycle's bulkIds, for each to fail. It returns -1 when every operation has run.
func (p *bulkPlan) next() (int, []string) {
	if len(p.pending) > 0 {
		i := p.pending[0]
		p.pending = p.pending[1:]
		p.done[i] = true
		return i, p.cycle
	}
	for p.lo < len(p.done) && p.done[p.lo] {
		p.lo++
	}
	if p.lo == len(p.done) {
		return -1, nil
	}
	for i := p.lo; i < len(p.done); i++ {
		if !p.done[i] && !slices.ContainsFunc(p.deps[i], func(j int) bool { return !p.done[j] }) {
			p.done[i] = true
			return i, nil
		}
	}
	// Every operation left waits on another one left: what the first waits on, followed,
	// leads into a cycle.
	path := []int{p.lo}
	for {
		last := path[len(path)-1]
		j := p.deps[last][slices.IndexFunc(p.deps[last], func(j int) bool { return !p.done[j] })]
		if k := slices.Index(path, j); k >= 0 {
			p.pending = slices.Sorted(slices.Values(path[k:]))
			p.cycle = make([]string, len(p.pending))
			for c, i := range p.pending {
				p.cycle[c] = p.bulkIDs[i]
			}
			return p.next()
		}
		path = append(path, j)
	}
}

// resolve returns the id created for the bulkId ref, or the 409 saying why there is none.
func (p *bulkPlan) resolve(ref string) (string, *scimError) {
	if id, ok := p.created[ref]; ok {
		return id, nil
	}
	var e scimError
	if i, ok := p.owner[ref]; ok {
		e = apiError(http.StatusConflict, scim.TypeInvalidValue, "bulkId %q refers to Operations[%d], which failed.", scim.Echo(ref), i)
	} else {
		e = apiError(http.StatusConflict, scim.TypeInvalidValue, "bulkId %q is not the bulkId of a POST operation of the request.", scim.Echo(ref))
	}
	return "", &e
}

// circular is the error of the operations of a cycle of references, given their bulkIds.
func circular(bulkIDs []string) scimError {
	quoted := make([]string, len(bulkIDs))
	for i, id := range bulkIDs {
		quoted[i] = fmt.Sprintf("%q", scim.Echo(id))
	}
	return apiError(http.StatusConflict, scim.TypeInvalidValue, "The bulkId references of the operations with bulkIds %s form a cycle: "+
		"each needs the id another creates. This service does not resolve circular references (RFC 7644 section 3.7.2 allows 409): "+
		"create the resources, then PATCH the references.", strings.Join(quoted, ", "))
}

// bulkRefs returns the bulkIds an operation names, in its path and its data.
func bulkRefs(op bulkOp) []string {
	var refs []string
	_, id, _ := strings.Cut(strings.TrimPrefix(op.Path, "/"), "/")
	if ref, ok := strings.CutPrefix(id, "bulkId:"); ok {
		refs = append(refs, ref)
	}
	if !bytes.Contains(op.Data, []byte("bulkId:")) {
		return refs
	}
	var data any
	if json.Unmarshal(op.Data, &data) != nil {
		return refs // the operation fails on its data when it runs
	}
	_, _ = walkStrings(data, func(s string) (string, *scimError) {
		if ref, ok := strings.CutPrefix(s, "bulkId:"); ok {
			refs = append(refs, ref)
		}
		return s, nil
	})
	return refs
}

// bulkFailure is the result of an operation that failed with e.
func bulkFailure(op bulkOp, e scimError) bulkResult {
	return bulkResult{Method: strings.ToUpper(op.Method), BulkID: op.BulkID, Status: strconv.Itoa(e.Status),
		Response: errorBody(e.Status, string(e.ScimType), e.Detail)}
}

// bulkOperation runs the operation i of the plan and records the id it created under
// its bulkId.
func (h *Handler) bulkOperation(r *http.Request, root, team string, op bulkOp, i int, plan *bulkPlan) bulkResult {
	method := strings.ToUpper(op.Method)
	out := bulkResult{Method: method, BulkID: op.BulkID}
	fail := func(e scimError) bulkResult { return bulkFailure(op, e) }
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return fail(badValue("method must be POST, PUT, PATCH or DELETE, not %q.", scim.Echo(op.Method)))
	}
	if method == http.MethodPost {
		if op.BulkID == "" {
			return fail(badValue("bulkId is required for POST operations."))
		}
		if plan.owner[op.BulkID] != i {
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
		resolved, e := plan.resolve(ref)
		if e != nil {
			return fail(*e)
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
			data, e := resolveBulkIDs(op.Data, plan)
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
				plan.created[op.BulkID] = created
			}
		}
	case method != http.MethodDelete:
		out.Location = root + c.rt.endpoint + "/" + url.PathEscape(id)
	}
	return out
}

// resolveBulkIDs replaces every string "bulkId:x" in data with the id created for x.
func resolveBulkIDs(data []byte, plan *bulkPlan) ([]byte, *scimError) {
	v, e := decodeObject(data, "operation data")
	if e != nil {
		return nil, e
	}
	resolved, e := walkStrings(v, func(s string) (string, *scimError) {
		if ref, ok := strings.CutPrefix(s, "bulkId:"); ok {
			return plan.resolve(ref)
		}
		return s, nil
	})
	if e != nil {
		return nil, e
	}
	out, err := json.Marshal(resolved)
	if err != nil {
		e := badValue("The operation data cannot be encoded again: %v.", err)
		return nil, &e
	}
	return out, nil
}

// walkStrings replaces every string of a decoded JSON value v, in place, with f of it,
// and returns the value; the first error of f stops it.
func walkStrings(v any, f func(string) (string, *scimError)) (any, *scimError) {
	switch v := v.(type) {
	case string:
		return f(v)
	case map[string]any:
		for k, x := range v {
			nx, e := walkStrings(x, f)
			if e != nil {
				return nil, e
			}
			v[k] = nx
		}
	case []any:
		for i, x := range v {
			nx, e := walkStrings(x, f)
			if e != nil {
				return nil, e
			}
			v[i] = nx
		}
	}
	return v, nil
}
