package odata

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/kmkit/kmkit/problem"
)

// Batch limits.
const (
	// DefaultMaxBatchBytes is the default of WithMaxBatchBytes.
	DefaultMaxBatchBytes = 1 << 20
	// MaxBatchRequests is the most requests one $batch may hold.
	MaxBatchRequests = 100
)

// batchRequest is one request of a batch, as read from either format.
type batchRequest struct {
	id      string   // JSON id, or the multipart Content-ID ("" when absent)
	group   string   // the JSON atomicityGroup ("" when none)
	deps    []string // the JSON dependsOn: ids and atomicity groups of earlier requests
	method  string
	target  string
	header  http.Header
	invalid string // why the request cannot run (a changeset, say), "" when it can
}

// batchResponse is the answer to one request of a batch.
type batchResponse struct {
	id     string
	status int
	header http.Header
	body   []byte
}

// serveBatch answers POST $batch: GET requests in a JSON batch (application/json, OData
// 4.01) or a multipart batch (multipart/mixed, OData 4.0), run one after the other
// against the service, their answers in the same format and order. Another method than
// GET inside the batch, and change sets, are answered 405 and 400 in their place (the
// services are read-only); the batch itself is 200 when it could be read.
func (h *Handler) serveBatch(w http.ResponseWriter, r *http.Request) {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && mt != "multipart/mixed") {
		h.fail(w, r, problem.New(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMedia,
			fmt.Sprintf("$batch takes application/json or multipart/mixed;boundary=..., not %q", short(ct))))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBatchBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			h.fail(w, r, problem.New(http.StatusRequestEntityTooLarge, "GENERAL_PAYLOAD_TOO_LARGE",
				fmt.Sprintf("the batch exceeds %d bytes", mbe.Limit)))
			return
		}
		h.fail(w, r, badOption(problem.CodeParameterIllegal, "reading the batch: %v", err))
		return
	}
	var reqs []batchRequest
	if mt == "application/json" {
		reqs, err = readJSONBatch(body)
	} else {
		reqs, err = readMultipartBatch(body, params["boundary"])
	}
	if err == nil && len(reqs) > MaxBatchRequests {
		err = badOption(problem.CodeConstraint, "the batch holds %d requests: at most %d are allowed", len(reqs), MaxBatchRequests)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// One time budget for the whole batch (km.Service.Budget): every part runs in it, so
	// a batch is bounded by the time limit once, not once per part.
	ctx, cancel := h.svc.Budget(r.Context())
	defer cancel()
	r = r.WithContext(ctx)
	// A failed request does not stop the batch unless the client prefers it to
	// (continue-on-error=false); when one failed and the rest ran, the answer says the
	// preference was applied, as OData asks.
	pref, val, asked := preference(r, "odata.continue-on-error", "continue-on-error")
	stop := asked && strings.EqualFold(val, "false")
	resps := make([]batchResponse, 0, len(reqs))
	failed := map[string]string{} // the ids and atomicity groups that failed -> the id of a failed request
	continued := false            // a request failed and the batch did not stop
	for _, br := range reqs {
		var rs batchResponse
		if dep, by := failedDependency(br, failed); dep != "" {
			rs = failedDependencyResponse(br, dep, by)
		} else {
			rs = h.runBatchRequest(r, br)
		}
		resps = append(resps, rs)
		if rs.status < 400 {
			continue
		}
		if stop {
			break
		}
		continued = true
		for _, k := range []string{br.id, br.group} {
			if k != "" {
				failed[k] = br.id
			}
		}
	}
	if continued {
		if !asked {
			pref = "continue-on-error"
		}
		w.Header().Set("Preference-Applied", pref+"=true")
	}
	if mt == "application/json" {
		write(w, "application/json", appendJSONBatch(nil, resps))
		return
	}
	boundary := "batchresponse_" + uuid.NewString()
	write(w, "multipart/mixed;boundary="+boundary, appendMultipartBatch(nil, resps, boundary))
}

// failedDependency returns the first entry of br's dependsOn that failed (an id or an
// atomicity group) and the id of the request that failed it, or "".
func failedDependency(br batchRequest, failed map[string]string) (dep, by string) {
	for _, d := range br.deps {
		if id, ok := failed[d]; ok {
			return d, id
		}
	}
	return "", ""
}

// failedDependencyResponse is the answer to a request that depends on one that failed:
// it is not run, and answers 424 Failed Dependency, as OData's JSON batch format asks.
func failedDependencyResponse(br batchRequest, dep, by string) batchResponse {
	detail := fmt.Sprintf("request %q depends on request %q, which failed: it was not run", short(br.id), short(by))
	if dep != by {
		detail = fmt.Sprintf("request %q depends on atomicity group %q, whose request %q failed: it was not run", short(br.id), short(dep), short(by))
	}
	return problemResponse(br, http.StatusFailedDependency, problem.CodeConstraint, detail)
}

// problemResponse is br's answer with a problem body, in the error form br's headers ask,
// with OData-Version as every answer of the handler has it.
func problemResponse(br batchRequest, status int, code, detail string) batchResponse {
	rec := &recorder{header: http.Header{}}
	rec.header.Set("OData-Version", Version)
	writeProblem(rec, &http.Request{Header: br.header}, status, code, detail)
	return batchResponse{id: br.id, status: rec.status, header: rec.header, body: rec.body.Bytes()}
}

// runBatchRequest runs one request of the batch against the handler, as a request of its
// own with the batch's context (principal, deadline), host and TLS state.
func (h *Handler) runBatchRequest(outer *http.Request, br batchRequest) batchResponse {
	fail := func(status int, code, detail string) batchResponse { return problemResponse(br, status, code, detail) }
	switch {
	case br.invalid != "":
		return fail(http.StatusBadRequest, problem.CodeParameterIllegal, br.invalid)
	case !sameCredentials(outer.Header, br.header):
		return fail(http.StatusBadRequest, problem.CodeParameterIllegal, "a request in a batch runs as the batch's caller: "+
			"its credential headers ("+strings.Join(credentialHeaders, ", ")+") must be the batch request's or absent, and this request's differ")
	case br.method != http.MethodGet:
		rs := fail(http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed,
			"method "+short(br.method)+" is not allowed in a batch: the OData services are read-only; allowed: GET")
		rs.header.Set("Allow", "GET")
		return rs
	}
	// Targets are relative to the service root (the batch's URL without $batch), or
	// absolute paths or URLs; only their path and query count.
	base := *outer.URL
	base.Path = strings.TrimSuffix(outer.URL.Path, "$batch")
	base.RawPath, base.RawQuery = "", ""
	ref, err := url.Parse(br.target)
	if err != nil || br.target == "" {
		return fail(http.StatusBadRequest, problem.CodeParameterIllegal, fmt.Sprintf("request URL %q is not a URL", short(br.target)))
	}
	u := base.ResolveReference(&url.URL{Path: ref.Path, RawPath: ref.RawPath, RawQuery: ref.RawQuery})
	if ref.IsAbs() || strings.HasPrefix(br.target, "/") {
		u = &url.URL{Path: ref.Path, RawPath: ref.RawPath, RawQuery: ref.RawQuery}
	}
	if strings.HasSuffix(u.Path, "/$batch") {
		return fail(http.StatusBadRequest, problem.CodeParameterIllegal, "a batch cannot contain $batch")
	}
	inner, err := http.NewRequestWithContext(outer.Context(), http.MethodGet, u.RequestURI(), nil)
	if err != nil {
		return fail(http.StatusBadRequest, problem.CodeParameterIllegal, fmt.Sprintf("request URL %q: %v", short(br.target), err))
	}
	inner.Host, inner.TLS, inner.RemoteAddr = outer.Host, outer.TLS, outer.RemoteAddr
	inner.Header = br.header
	rec := &recorder{header: http.Header{}}
	h.ServeHTTP(rec, inner)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return batchResponse{id: br.id, status: rec.status, header: rec.header, body: rec.body.Bytes()}
}

// credentialHeaders are the headers that carry a caller's credentials to the kmkit APIs:
// HTTP's Authorization, and the AppKey header the KM API's specification names.
var credentialHeaders = []string{"Authorization", "AppKey"}

// sameCredentials reports whether the credential headers of a request in a batch (part)
// are absent or the same as the batch request's (batch): a request in a batch runs as
// the batch's caller, whom the authentication in front of the handler admitted, so one
// that names another credential would either run as somebody it does not name or, were
// its own credential used, escape that authentication. Values compare after trimming
// white space, the scheme word of an Authorization value ignoring case (RFC 9110
// section 11.1).
func sameCredentials(batch, part http.Header) bool {
	for _, name := range credentialHeaders {
		pv := part.Values(name)
		if len(pv) == 0 {
			continue
		}
		bv := batch.Values(name)
		if len(pv) != len(bv) {
			return false
		}
		for i := range pv {
			if !sameCredential(bv[i], pv[i]) {
				return false
			}
		}
	}
	return true
}

// sameCredential reports whether the header values a and b are the same credential: equal
// after trimming white space, but for the case of a leading scheme word.
func sameCredential(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	as, arest, _ := strings.Cut(a, " ")
	bs, brest, _ := strings.Cut(b, " ")
	return strings.EqualFold(as, bs) && strings.TrimSpace(arest) == strings.TrimSpace(brest) && (arest != "" || as == bs)
}

// recorder is the http.ResponseWriter of a request inside a batch.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (rc *recorder) Header() http.Header { return rc.header }

func (rc *recorder) WriteHeader(status int) {
	if rc.status == 0 {
		rc.status = status
	}
}

func (rc *recorder) Write(p []byte) (int, error) {
	if rc.status == 0 {
		rc.status = http.StatusOK
	}
	return rc.body.Write(p)
}

// readJSONBatch reads a JSON batch: {"requests": [{"id", "method", "url", "headers",
// "atomicityGroup", "dependsOn", "body"}, ...]}. Requests run in order, so dependsOn
// holds; each of its entries must name an earlier request or atomicity group (forward
// references are not allowed), and a request that depends on a failed one is not run
// (424). An atomicity group (a change set) cannot run in a read-only service.
func readJSONBatch(body []byte) ([]batchRequest, error) {
	var env struct {
		Requests []struct {
			ID             string            `json:"id"`
			Method         string            `json:"method"`
			URL            string            `json:"url"`
			Headers        map[string]string `json:"headers"`
			AtomicityGroup string            `json:"atomicityGroup"`
			DependsOn      []string          `json:"dependsOn"`
			Body           json.RawMessage   `json:"body"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, badOption(problem.CodeParameterIllegal, "the batch is not a JSON batch {\"requests\": [...]}: %v", err)
	}
	if env.Requests == nil {
		return nil, badOption(problem.CodeParameterMissing, "the batch has no requests member")
	}
	out := make([]batchRequest, len(env.Requests))
	ids := map[string]bool{}     // the requests' ids
	earlier := map[string]bool{} // the ids and atomicity groups of the requests read so far
	for i, q := range env.Requests {
		if q.ID == "" {
			return nil, badOption(problem.CodeParameterMissing, "request %d of the batch has no id", i+1)
		}
		if ids[q.ID] {
			return nil, badOption(problem.CodeParameterIllegal, "request id %q occurs twice in the batch", short(q.ID))
		}
		ids[q.ID] = true
		for _, d := range q.DependsOn {
			if !earlier[d] {
				return nil, badOption(problem.CodeParameterIllegal,
					"request %q depends on %q, which is no earlier request or atomicity group of the batch", short(q.ID), short(d))
			}
		}
		earlier[q.ID] = true
		if q.AtomicityGroup != "" {
			earlier[q.AtomicityGroup] = true
		}
		br := batchRequest{id: q.ID, group: q.AtomicityGroup, deps: q.DependsOn, method: strings.ToUpper(q.Method), target: q.URL, header: http.Header{}}
		for k, v := range q.Headers {
			br.header.Set(k, v)
		}
		if q.AtomicityGroup != "" {
			br.invalid = "atomicity groups (change sets) are not supported: the OData services are read-only"
		}
		out[i] = br
	}
	return out, nil
}

// readMultipartBatch reads a multipart/mixed batch: parts of type application/http, each
// an HTTP request (request line, headers, empty line). A nested multipart/mixed part is a
// change set, which a read-only service cannot run.
func readMultipartBatch(body []byte, boundary string) ([]batchRequest, error) {
	if boundary == "" {
		return nil, badOption(problem.CodeParameterMissing, "the multipart batch has no boundary parameter in its Content-Type")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var out []batchRequest
	for {
		part, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, badOption(problem.CodeParameterIllegal, "the multipart batch is malformed: %v", err)
		}
		if len(out) == MaxBatchRequests {
			return nil, badOption(problem.CodeConstraint, "the batch holds more than %d requests", MaxBatchRequests)
		}
		br := batchRequest{id: part.Header.Get("Content-ID"), header: http.Header{}}
		pmt, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
		switch pmt {
		case "application/http":
			if err := readHTTPRequest(part, &br); err != nil {
				return nil, err
			}
		case "multipart/mixed":
			br.invalid = "change sets are not supported: the OData services are read-only"
			br.method = http.MethodGet
		default:
			return nil, badOption(problem.CodeParameterIllegal, "a batch part has Content-Type %q: want application/http", short(part.Header.Get("Content-Type")))
		}
		out = append(out, br)
	}
	if out == nil {
		return nil, badOption(problem.CodeParameterIllegal, "the multipart batch holds no part (boundary %q)", short(boundary))
	}
	return out, nil
}

// readHTTPRequest reads the request line and headers of an application/http part.
func readHTTPRequest(part io.Reader, br *batchRequest) error {
	tp := textproto.NewReader(bufio.NewReader(io.LimitReader(part, DefaultMaxBatchBytes)))
	line, err := tp.ReadLine()
	for err == nil && strings.TrimSpace(line) == "" {
		line, err = tp.ReadLine()
	}
	if err != nil {
		return badOption(problem.CodeParameterIllegal, "a batch part holds no request line: %v", err)
	}
	fields := strings.Fields(line)
	if len(fields) != 3 || !strings.HasPrefix(fields[2], "HTTP/") {
		return badOption(problem.CodeParameterIllegal, "batch request line %q: want METHOD URL HTTP/1.1", short(line))
	}
	br.method, br.target = strings.ToUpper(fields[0]), fields[1]
	hdr, err := tp.ReadMIMEHeader()
	if err != nil && err != io.EOF {
		return badOption(problem.CodeParameterIllegal, "the headers of batch request %q: %v", short(line), err)
	}
	br.header = http.Header(hdr)
	return nil
}

// appendJSONBatch writes the JSON batch answer: {"responses": [{"id", "status",
// "headers", "body"}]}, the body as JSON when the answer is JSON, else as a string.
func appendJSONBatch(b []byte, resps []batchResponse) []byte {
	b = append(b, `{"responses":[`...)
	for i, rs := range resps {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		id, _ := json.Marshal(rs.id)
		b = append(b, id...)
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(rs.status), 10)
		b = append(b, `,"headers":{`...)
		n := 0
		for _, k := range []string{"Content-Type", "OData-Version", "Allow", "Preference-Applied"} {
			if v := rs.header.Get(k); v != "" {
				if n > 0 {
					b = append(b, ',')
				}
				n++
				kj, _ := json.Marshal(strings.ToLower(k))
				vj, _ := json.Marshal(v)
				b = append(b, kj...)
				b = append(b, ':')
				b = append(b, vj...)
			}
		}
		b = append(b, '}')
		if len(rs.body) > 0 {
			b = append(b, `,"body":`...)
			mt, _, _ := mime.ParseMediaType(rs.header.Get("Content-Type"))
			if (mt == "application/json" || strings.HasSuffix(mt, "+json")) && json.Valid(rs.body) {
				b = append(b, rs.body...)
			} else {
				s, _ := json.Marshal(string(rs.body))
				b = append(b, s...)
			}
		}
		b = append(b, '}')
	}
	return append(b, `]}`...)
}

// appendMultipartBatch writes the multipart batch answer: one application/http part per
// request, with its Content-ID when it had one.
func appendMultipartBatch(b []byte, resps []batchResponse, boundary string) []byte {
	for _, rs := range resps {
		b = append(b, "--"+boundary+"\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n"...)
		if rs.id != "" {
			b = append(b, "Content-ID: "+rs.id+"\r\n"...)
		}
		b = append(b, "\r\nHTTP/1.1 "...)
		b = strconv.AppendInt(b, int64(rs.status), 10)
		b = append(b, ' ')
		b = append(b, http.StatusText(rs.status)...)
		b = append(b, "\r\n"...)
		for _, k := range []string{"Content-Type", "OData-Version", "Allow", "Preference-Applied"} {
			if v := rs.header.Get(k); v != "" {
				b = append(b, k+": "+v+"\r\n"...)
			}
		}
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(rs.body)), 10)
		b = append(b, "\r\n\r\n"...)
		b = append(b, rs.body...)
		b = append(b, "\r\n"...)
	}
	return append(b, "--"+boundary+"--\r\n"...)
}
