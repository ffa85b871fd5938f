package scimhttp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/scim/scimhttp"
)

func bulk(failOnErrors int, ops ...map[string]any) map[string]any {
	list := make([]any, len(ops))
	for i, o := range ops {
		list[i] = o
	}
	m := map[string]any{"schemas": []any{bulkURN}, "Operations": list}
	if failOnErrors > 0 {
		m["failOnErrors"] = failOnErrors
	}
	return m
}

func bop(method, path, bulkID string, data any) map[string]any {
	m := map[string]any{"method": method, "path": path}
	if bulkID != "" {
		m["bulkId"] = bulkID
	}
	if data != nil {
		m["data"] = data
	}
	return m
}

// results returns the Operations of a BulkResponse.
func (r response) results(t *testing.T) []map[string]any {
	t.Helper()
	if diff := cmp.Diff([]any{"urn:ietf:params:scim:api:messages:2.0:BulkResponse"}, r.body["schemas"]); diff != "" {
		t.Errorf("schemas (-want +got):\n%s", diff)
	}
	var out []map[string]any
	for _, v := range r.body["Operations"].([]any) {
		out = append(out, v.(map[string]any))
	}
	return out
}

// statuses returns the status of each operation result.
func statuses(res []map[string]any) []string {
	out := []string{}
	for _, r := range res {
		out = append(out, r["status"].(string))
	}
	return out
}

func TestBulkCreatesAndReferences(t *testing.T) {
	s := newServer(t)
	r := s.call("acme", "POST", "/Bulk", bulk(0,
		bop("POST", "/Users", "u1", user("a@example.com")),
		bop("POST", "/Users", "u2", user("b@example.com")),
		bop("POST", "/Groups", "g1", group("Team", "bulkId:u1", "bulkId:u2")),
		bop("PATCH", "/Users/bulkId:u1", "", patch(op("replace", "active", false))),
		bop("PUT", "/Groups/bulkId:g1", "", group("Team 2", "bulkId:u2")),
		bop("DELETE", "/Users/bulkId:u1", "", nil),
	)).must(t, http.StatusOK)
	res := r.results(t)
	if diff := cmp.Diff([]string{"201", "201", "201", "200", "200", "204"}, statuses(res)); diff != "" {
		t.Fatalf("statuses (-want +got):\n%s\n%s", diff, r.raw)
	}
	u1 := strings.TrimPrefix(res[0]["location"].(string), base+"/Users/")
	u2 := strings.TrimPrefix(res[1]["location"].(string), base+"/Users/")
	g1 := strings.TrimPrefix(res[2]["location"].(string), base+"/Groups/")
	want := []map[string]any{
		{"method": "POST", "bulkId": "u1", "status": "201", "location": base + "/Users/" + u1, "version": `W/"1"`},
		{"method": "POST", "bulkId": "u2", "status": "201", "location": base + "/Users/" + u2, "version": `W/"2"`},
		{"method": "POST", "bulkId": "g1", "status": "201", "location": base + "/Groups/" + g1, "version": `W/"3"`},
		{"method": "PATCH", "status": "200", "location": base + "/Users/" + u1, "version": `W/"4"`},
		{"method": "PUT", "status": "200", "location": base + "/Groups/" + g1, "version": `W/"5"`},
		{"method": "DELETE", "status": "204"},
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	g := s.call("acme", "GET", "/Groups/"+g1, nil).must(t, http.StatusOK)
	if diff := cmp.Diff([]string{u2}, g.members()); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	s.call("acme", "GET", "/Users/"+u1, nil).must(t, http.StatusNotFound)
}

func TestBulkFailOnErrors(t *testing.T) {
	ops := func() []map[string]any {
		return []map[string]any{
			bop("POST", "/Users", "a", user("a@example.com")),
			bop("POST", "/Users", "dup", user("a@example.com")),
			bop("POST", "/Users", "b", user("b@example.com")),
			bop("POST", "/Users", "bad", user("nope")),
			bop("POST", "/Users", "c", user("c@example.com")),
		}
	}
	tests := []struct {
		name         string
		failOnErrors int
		want         []string
	}{
		{"stop at the first failure", 0, []string{"201", "409"}},
		{"one", 1, []string{"201", "409"}},
		{"two", 2, []string{"201", "409", "201", "400"}},
		{"more than fail", 5, []string{"201", "409", "201", "400", "201"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			r := s.call("acme", "POST", "/Bulk", bulk(tt.failOnErrors, ops()...)).must(t, http.StatusOK)
			res := r.results(t)
			if diff := cmp.Diff(tt.want, statuses(res)); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			want := map[string]any{"method": "POST", "bulkId": "dup", "status": "409",
				"response": scimErr("409", "uniqueness", `userName "a@example.com" is already in use.`)}
			if diff := cmp.Diff(want, res[1]); diff != "" {
				t.Errorf("failed operation (-want +got):\n%s", diff)
			}
			// What is stored is what was answered: a user for each 201, in its location,
			// none for the failed operations nor for those the run did not reach.
			var created []string
			for _, op := range res {
				if op["status"] == "201" {
					created = append(created, strings.TrimPrefix(op["location"].(string), base+"/Users/"))
				}
			}
			stored := s.call("acme", "GET", "/Users", nil).must(t, http.StatusOK).ids()
			if diff := cmp.Diff(created, stored); diff != "" {
				t.Errorf("stored users (-answered +stored):\n%s", diff)
			}
		})
	}
}

func TestBulkOperationErrors(t *testing.T) {
	tests := []struct {
		name     string
		op       map[string]any
		status   string
		scimType string
		detail   string
	}{
		{"unknown reference in data", bop("POST", "/Groups", "g", group("G", "bulkId:zz")), "409", "invalidValue",
			`bulkId "zz" is not the bulkId of a POST operation of the request.`},
		{"unknown reference in path", bop("DELETE", "/Users/bulkId:zz", "", nil), "409", "invalidValue",
			`bulkId "zz" is not the bulkId of a POST operation of the request.`},
		{"no bulkId", bop("POST", "/Users", "", user("x@example.com")), "400", "invalidValue", "bulkId is required for POST operations."},
		{"reused bulkId", bop("POST", "/Users", "u", user("y@example.com")), "400", "invalidValue", `bulkId "u" is used by an earlier operation.`},
		{"GET", bop("GET", "/Users", "", nil), "400", "invalidValue", `method must be POST, PUT, PATCH or DELETE, not "GET".`},
		{"bad path", bop("POST", "/Devices", "d", user("x@example.com")), "400", "invalidPath", `path must start with /Users or /Groups, not "/Devices".`},
		{"POST with id", bop("POST", "/Users/abc", "x", user("x@example.com")), "400", "invalidPath", `POST operations take the path /Users, not "/Users/abc".`},
		{"PUT without id", bop("PUT", "/Users", "", user("x@example.com")), "400", "invalidPath", `PUT operations need a resource id in the path "/Users".`},
		{"no data", bop("PATCH", "/Users/abc", "", nil), "400", "invalidValue", "data is required for PATCH operations."},
		{"missing user", bop("DELETE", "/Users/abc", "", nil), "404", "", "User abc not found."},
		{"version mismatch", map[string]any{"method": "DELETE", "path": "/Users/bulkId:u", "version": `W/"9"`}, "412", "",
			`If-Match W/"9" does not match the current version W/"1".`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			r := s.call("acme", "POST", "/Bulk", bulk(0,
				bop("POST", "/Users", "u", user("u@example.com")), tt.op)).must(t, http.StatusOK)
			res := r.results(t)
			if len(res) != 2 {
				t.Fatalf("results: %s", r.raw)
			}
			got := res[1]
			if got["status"] != tt.status {
				t.Errorf("status %v, want %s", got["status"], tt.status)
			}
			if diff := cmp.Diff(scimErr(tt.status, tt.scimType, tt.detail), got["response"]); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBulkRequestErrors(t *testing.T) {
	s := newServer(t, scimhttp.WithBulkMaxOperations(2), scimhttp.WithMaxBodyBytes(400))
	three := bulk(0, bop("DELETE", "/Users/a", "", nil), bop("DELETE", "/Users/b", "", nil), bop("DELETE", "/Users/c", "", nil))
	s.call("acme", "POST", "/Bulk", three).wantError(t, 413, "", "The bulk request has 3 operations; maxOperations is 2.")
	big := bulk(0, bop("POST", "/Users", "u", user(strings.Repeat("x", 400)+"@example.com")))
	s.call("acme", "POST", "/Bulk", big).wantError(t, 413, "", "The bulk request exceeds maxPayloadSize (400 bytes).")
	s.call("acme", "POST", "/Bulk", map[string]any{"Operations": []any{}}).
		wantError(t, 400, "invalidSyntax", "schemas must contain urn:ietf:params:scim:api:messages:2.0:BulkRequest.")
	s.call("acme", "POST", "/Bulk", `{"schemas":["`+bulkURN+`"],"failOnErrors":0,"Operations":[]}`).
		wantError(t, 400, "invalidValue", "failOnErrors must be a positive integer, not 0.")
	s.call("acme", "POST", "/Bulk", `{"schemas":["`+bulkURN+`"],"Operations":{}}`).
		wantError(t, 400, "invalidSyntax", "The bulk request is not valid: Operations must not be a JSON object.")
	s.call("acme", "POST", "/Bulk", `{"schemas":`).
		wantError(t, 400, "invalidSyntax", "The bulk request is not valid: the JSON body is incomplete or empty.")
	s.call("acme", "GET", "/Bulk", nil).wantError(t, 405, "", "method GET is not allowed on /user-provisioning/scim/v2/Bulk; allowed: POST")
	r := s.call("acme", "POST", "/Bulk", bulk(0)).must(t, http.StatusOK)
	if diff := cmp.Diff([]any{}, r.body["Operations"]); diff != "" {
		t.Errorf("empty bulk (-want +got):\n%s", diff)
	}
}

// TestBulkThousand runs the largest request the defaults allow.
func TestBulkThousand(t *testing.T) {
	s := newServer(t)
	ops := make([]map[string]any, 1000)
	for i := range ops {
		ops[i] = bop("POST", "/Users", fmt.Sprint(i), user(fmt.Sprintf("u%d@example.com", i)))
	}
	r := s.call("acme", "POST", "/Bulk", bulk(0, ops...)).must(t, http.StatusOK)
	for i, st := range statuses(r.results(t)) {
		if st != "201" {
			t.Fatalf("operation %d: %s", i, st)
		}
	}
	l := s.call("acme", "GET", "/Users?count=1", nil).must(t, http.StatusOK)
	if l.body["totalResults"] != 1000.0 {
		t.Errorf("totalResults %v", l.body["totalResults"])
	}
}

// location returns the id at the end of a result's location.
func location(t *testing.T, res map[string]any) string {
	t.Helper()
	loc, _ := res["location"].(string)
	i := strings.LastIndexByte(loc, '/')
	if i < 0 {
		t.Fatalf("no location in %v", res)
	}
	return loc[i+1:]
}

// TestBulkForwardReferences sends operations that name, by bulkId, resources created
// by later operations of the request. RFC 7644 section 3.7.2 asks the service provider
// to resolve them: each operation runs once the operations it names have run, and the
// results are listed in the order of the request (as the RFC's examples list them).
func TestBulkForwardReferences(t *testing.T) {
	s := newServer(t)
	r := s.call("acme", "POST", "/Bulk", bulk(0,
		bop("POST", "/Groups", "crew", group("Crew", "bulkId:ann", "bulkId:bob")),
		bop("PATCH", "/Users/bulkId:bob", "", patch(op("replace", "displayName", "Bob B."))),
		bop("POST", "/Users", "ann", user("ann@example.com")),
		bop("POST", "/Users", "bob", user("bob@example.com")),
		bop("DELETE", "/Users/bulkId:cid", "", nil),
		bop("POST", "/Users", "cid", user("cid@example.com")),
	)).must(t, http.StatusOK)
	res := r.results(t)
	if diff := cmp.Diff([]string{"201", "200", "201", "201", "204", "201"}, statuses(res)); diff != "" {
		t.Fatalf("statuses (-want +got):\n%s\n%s", diff, r.raw)
	}
	crew, ann, bob, cid := location(t, res[0]), location(t, res[2]), location(t, res[3]), location(t, res[5])
	// Versions show the order the operations ran in: ann, bob, then the first operation
	// of the request whose references are resolved each time (crew, the PATCH, cid, and
	// the DELETE, which answers no version).
	want := []map[string]any{
		{"method": "POST", "bulkId": "crew", "status": "201", "location": base + "/Groups/" + crew, "version": `W/"3"`},
		{"method": "PATCH", "status": "200", "location": base + "/Users/" + bob, "version": `W/"4"`},
		{"method": "POST", "bulkId": "ann", "status": "201", "location": base + "/Users/" + ann, "version": `W/"1"`},
		{"method": "POST", "bulkId": "bob", "status": "201", "location": base + "/Users/" + bob, "version": `W/"2"`},
		{"method": "DELETE", "status": "204"},
		{"method": "POST", "bulkId": "cid", "status": "201", "location": base + "/Users/" + cid, "version": `W/"5"`},
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	g := s.call("acme", "GET", "/Groups/"+crew, nil).must(t, http.StatusOK)
	if diff := cmp.Diff([]string{ann, bob}, g.members()); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if got := s.call("acme", "GET", "/Users/"+bob, nil).must(t, http.StatusOK).str("displayName"); got != "Bob B." {
		t.Errorf("displayName of bob %q, want the PATCH's", got)
	}
	s.call("acme", "GET", "/Users/"+cid, nil).must(t, http.StatusNotFound)
}

// TestBulkReferenceFailures: a reference to an operation that failed, to a bulkId no
// operation has, and references that form a cycle are answered 409 invalidValue, each
// saying which; failures count toward failOnErrors in the order the operations ran, and
// a failed operation stores nothing.
func TestBulkReferenceFailures(t *testing.T) {
	manager := func(ref string) any {
		return map[string]any{"manager": map[string]any{"value": ref}}
	}
	const ent = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	s := newServer(t)
	s.createUser("acme", "taken@example.com")
	r := s.call("acme", "POST", "/Bulk", bulk(10,
		bop("POST", "/Groups", "g", group("G", "bulkId:dup")),
		bop("POST", "/Users", "dup", user("taken@example.com")),
		bop("POST", "/Users", "boss", user("boss@example.com", "schemas", []any{userURN, ent}, ent, manager("bulkId:aide"))),
		bop("POST", "/Users", "aide", user("aide@example.com", "schemas", []any{userURN, ent}, ent, manager("bulkId:boss"))),
		bop("POST", "/Groups", "self", group("Self", "bulkId:self")),
		bop("PATCH", "/Users/bulkId:nobody", "", patch(op("replace", "active", false))),
		bop("POST", "/Groups", "h", group("H", "bulkId:boss")),
	)).must(t, http.StatusOK)
	cycle := "The bulkId references of the operations with bulkIds %s form a cycle: each needs the id another creates. " +
		"This service does not resolve circular references (RFC 7644 section 3.7.2 allows 409): create the resources, then PATCH the references."
	want := []map[string]any{
		{"method": "POST", "bulkId": "g", "status": "409", "response": scimErr("409", "invalidValue",
			`bulkId "dup" refers to Operations[1], which failed.`)},
		{"method": "POST", "bulkId": "dup", "status": "409", "response": scimErr("409", "uniqueness",
			`userName "taken@example.com" is already in use.`)},
		{"method": "POST", "bulkId": "boss", "status": "409", "response": scimErr("409", "invalidValue", fmt.Sprintf(cycle, `"boss", "aide"`))},
		{"method": "POST", "bulkId": "aide", "status": "409", "response": scimErr("409", "invalidValue", fmt.Sprintf(cycle, `"boss", "aide"`))},
		{"method": "POST", "bulkId": "self", "status": "409", "response": scimErr("409", "invalidValue", fmt.Sprintf(cycle, `"self"`))},
		{"method": "PATCH", "status": "409", "response": scimErr("409", "invalidValue",
			`bulkId "nobody" is not the bulkId of a POST operation of the request.`)},
		{"method": "POST", "bulkId": "h", "status": "409", "response": scimErr("409", "invalidValue",
			`bulkId "boss" refers to Operations[2], which failed.`)},
	}
	if diff := cmp.Diff(want, r.results(t)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if ids := s.call("acme", "GET", "/Users", nil).must(t, http.StatusOK).ids(); len(ids) != 1 {
		t.Errorf("users %v, want only the one created before", ids)
	}
	if ids := s.call("acme", "GET", "/Groups", nil).must(t, http.StatusOK).ids(); len(ids) != 0 {
		t.Errorf("groups %v, want none", ids)
	}

	// failOnErrors counts the failures in the order the operations run: the PATCH waits
	// for the user it names and fails, which stops the run before the last operation; the
	// response lists, in the request's order, the operations that ran.
	s = newServer(t)
	r = s.call("acme", "POST", "/Bulk", bulk(1,
		bop("PATCH", "/Users/bulkId:u", "", patch(op("replace", "userName", "other@example.com"))),
		bop("POST", "/Users", "u", user("u@example.com")),
		bop("POST", "/Users", "v", user("v@example.com")),
	)).must(t, http.StatusOK)
	res := r.results(t)
	if diff := cmp.Diff([]string{"400", "201"}, statuses(res)); diff != "" {
		t.Fatalf("statuses (-want +got):\n%s\n%s", diff, r.raw)
	}
	if res[0]["method"] != "PATCH" || res[1]["bulkId"] != "u" {
		t.Errorf("results not in the request's order: %s", r.raw)
	}
	if diff := cmp.Diff([]string{location(t, res[1])}, s.call("acme", "GET", "/Users", nil).must(t, http.StatusOK).ids()); diff != "" {
		t.Errorf("stored users (-want +got):\n%s", diff)
	}
}
