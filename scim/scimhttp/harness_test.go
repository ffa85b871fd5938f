package scimhttp_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/scim/scimhttp"
	"github.com/kmkit/kmkit/storage/memory"
)

const (
	host      = "http://idm.example"
	base      = host + scimhttp.BasePath
	userURN   = "urn:ietf:params:scim:schemas:core:2.0:User"
	groupURN  = "urn:ietf:params:scim:schemas:core:2.0:Group"
	extURN    = "urn:celonis:params:scim:schemas:extension:2.0:User"
	entURN    = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	errURN    = "urn:ietf:params:scim:api:messages:2.0:Error"
	listURN   = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	patchURN  = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	bulkURN   = "urn:ietf:params:scim:api:messages:2.0:BulkRequest"
	searchURN = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"
)

// withTeamHeader stands in for the auth middleware: the X-Test-Team header becomes the
// principal's team; without it there is no principal.
func withTeamHeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if team := r.Header.Get("X-Test-Team"); team != "" {
			p := &principal.Principal{Name: "test", Team: team, Permissions: []principal.Permission{principal.PermSCIM}}
			r = r.WithContext(principal.NewContext(r.Context(), p))
		}
		next.ServeHTTP(w, r)
	})
}

// server is a handler over a fresh memory store.
type server struct {
	t     *testing.T
	store *memory.SCIMStore
	h     http.Handler
}

func newServer(t *testing.T, opts ...scimhttp.Option) *server {
	t.Helper()
	st := memory.New().SCIM()
	return &server{t: t, store: st, h: withTeamHeader(scimhttp.NewHandler(st, opts...))}
}

type response struct {
	code   int
	header http.Header
	raw    string
	body   map[string]any
}

// call sends a request as team (none when team is ""). body may be a string (sent as is)
// or a value (sent as JSON). Extra headers come as name, value pairs.
func (s *server) call(team, method, path string, body any, headers ...string) response {
	s.t.Helper()
	var rd *bytes.Reader
	switch b := body.(type) {
	case nil:
		rd = bytes.NewReader(nil)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	r := httptest.NewRequest(method, base+path, rd)
	if body != nil {
		r.Header.Set("Content-Type", "application/scim+json")
	}
	if team != "" {
		r.Header.Set("X-Test-Team", team)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	res := response{code: w.Code, header: w.Header(), raw: w.Body.String()}
	if w.Body.Len() > 0 {
		d := json.NewDecoder(strings.NewReader(res.raw))
		if err := d.Decode(&res.body); err != nil {
			s.t.Fatalf("%s %s: body is not a JSON object: %v\n%s", method, path, err, res.raw)
		}
		if ct := w.Header().Get("Content-Type"); ct != scimhttp.ContentType {
			s.t.Errorf("%s %s: Content-Type %q, want %q", method, path, ct, scimhttp.ContentType)
		}
	}
	return res
}

// must fails the test unless the response has the status.
func (r response) must(t *testing.T, code int) response {
	t.Helper()
	if r.code != code {
		t.Fatalf("status %d, want %d; body %s", r.code, code, r.raw)
	}
	return r
}

// str returns the string at a dotted path of the body.
func (r response) str(path string) string {
	var v any = r.body
	for _, k := range strings.Split(path, ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// scimErr is the RFC 7644 Error body for status, scimType and detail.
func scimErr(status, scimType, detail string) map[string]any {
	m := map[string]any{"schemas": []any{errURN}, "status": status, "detail": detail}
	if scimType != "" {
		m["scimType"] = scimType
	}
	return m
}

// wantError checks the status and the whole error body.
func (r response) wantError(t *testing.T, code int, scimType, detail string) {
	t.Helper()
	if r.code != code {
		t.Errorf("status %d, want %d; body %s", r.code, code, r.raw)
	}
	want := scimErr(strconv.Itoa(code), scimType, detail)
	if diff := cmp.Diff(want, r.body); diff != "" {
		t.Errorf("error body (-want +got):\n%s", diff)
	}
}

func user(name string, extra ...any) map[string]any {
	m := map[string]any{"schemas": []any{userURN}, "userName": name}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	return m
}

func group(name string, memberIDs ...string) map[string]any {
	members := []any{}
	for _, id := range memberIDs {
		members = append(members, map[string]any{"value": id})
	}
	return map[string]any{"schemas": []any{groupURN}, "displayName": name, "members": members}
}

func patch(ops ...map[string]any) map[string]any {
	list := make([]any, len(ops))
	for i, o := range ops {
		list[i] = o
	}
	return map[string]any{"schemas": []any{patchURN}, "Operations": list}
}

func op(name, path string, value any) map[string]any {
	m := map[string]any{"op": name}
	if path != "" {
		m["path"] = path
	}
	if value != nil {
		m["value"] = value
	}
	return m
}

// createUser creates a user in team and returns its id.
func (s *server) createUser(team, name string, extra ...any) string {
	s.t.Helper()
	r := s.call(team, "POST", "/Users", user(name, extra...)).must(s.t, http.StatusCreated)
	return r.str("id")
}

func (s *server) createGroup(team, name string, memberIDs ...string) string {
	s.t.Helper()
	r := s.call(team, "POST", "/Groups", group(name, memberIDs...)).must(s.t, http.StatusCreated)
	return r.str("id")
}

// ids returns the ids of the Resources of a list response.
func (r response) ids() []string {
	list, _ := r.body["Resources"].([]any)
	out := []string{}
	for _, v := range list {
		m, _ := v.(map[string]any)
		id, _ := m["id"].(string)
		out = append(out, id)
	}
	return out
}
