package scimhttp_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// RFC 7644 section 4: discovery endpoints ignore filter, sorting, count and startIndex.
func TestDiscoveryIgnoresListParameters(t *testing.T) {
	s := newServer(t)
	all := s.call("acme", "GET", "/Schemas", nil).must(t, http.StatusOK)
	n := len(all.body["Resources"].([]any))
	if n != 7 || all.body["totalResults"] != 7.0 || all.body["itemsPerPage"] != 7.0 {
		t.Fatalf("schemas: %d resources, %s", n, all.raw)
	}
	for _, path := range []string{
		"/Schemas?count=1", "/Schemas?startIndex=3&count=2", "/Schemas?filter=" + q(`id eq "x"`),
		"/Schemas?sortBy=id&sortOrder=descending", "/Schemas?count=abc&startIndex=x",
	} {
		r := s.call("acme", "GET", path, nil).must(t, http.StatusOK)
		if diff := cmp.Diff(all.body, r.body); diff != "" {
			t.Errorf("%s (-plain +got):\n%s", path, diff)
		}
	}
	rt := s.call("acme", "GET", "/ResourceTypes", nil).must(t, http.StatusOK)
	for _, path := range []string{"/ResourceTypes?count=abc", "/ResourceTypes?count=1&startIndex=2", "/ResourceTypes?filter=nonsense"} {
		r := s.call("acme", "GET", path, nil).must(t, http.StatusOK)
		if diff := cmp.Diff(rt.body, r.body); diff != "" {
			t.Errorf("%s (-plain +got):\n%s", path, diff)
		}
	}
}

// The seed gives discovery 400s the FrontendHandledBackendError body: frontendErrorKey and
// errorInformation, here next to the RFC 7644 Error members.
func TestDiscoveryErrorBody(t *testing.T) {
	s := newServer(t)
	r := s.call("acme", "GET", "/Schemas?attributes="+q("name[x]"), nil)
	want := map[string]any{
		"schemas":          []any{errURN},
		"status":           "400",
		"detail":           `The attribute name "name[x]" is not valid.`,
		"frontendErrorKey": "invalidAttributes",
		"errorInformation": map[string]any{"attribute": "name[x]", "message": `The attribute name "name[x]" is not valid.`},
	}
	if diff := cmp.Diff(want, r.body); r.code != http.StatusBadRequest || diff != "" {
		t.Errorf("status %d, body (-want +got):\n%s", r.code, diff)
	}
}

// Endpoint names are matched ignoring case: Microsoft's collection sends /users.
func TestLowerCaseEndpoints(t *testing.T) {
	s := newServer(t)
	r := s.call("acme", "POST", "/users", user("low@example.com")).must(t, http.StatusCreated)
	id := r.str("id")
	if loc := r.header.Get("Location"); loc != base+"/Users/"+id {
		t.Errorf("Location %q", loc)
	}
	s.call("acme", "GET", "/users/"+id, nil).must(t, http.StatusOK)
	s.call("acme", "GET", "/USERS?filter="+q(`userName eq "low@example.com"`), nil).must(t, http.StatusOK)
	s.call("acme", "GET", "/groups", nil).must(t, http.StatusOK)
	s.call("acme", "GET", "/serviceproviderconfig", nil).must(t, http.StatusOK)
	s.call("acme", "GET", "/resourcetypes/User", nil).must(t, http.StatusOK)
}

// Entra ID matches users by e-mail with a value path followed by a comparison.
func TestEmailFilter(t *testing.T) {
	s := newServer(t)
	id := s.call("acme", "POST", "/Users", user("x@example.com", "emails", []any{
		map[string]any{"value": "Work@Example.com", "type": "work"}})).must(t, http.StatusCreated).str("id")
	s.createUser("acme", "y@example.com")
	for filter, want := range map[string]float64{
		`emails[type eq "work"].value eq "work@example.com"`: 1,
		`emails[type eq "home"].value eq "work@example.com"`: 0,
		`emails.value eq "WORK@example.com"`:                 1,
	} {
		r := s.call("acme", "GET", "/Users?filter="+q(filter), nil).must(t, http.StatusOK)
		if r.body["totalResults"] != want {
			t.Errorf("%s: %s", filter, r.raw)
		}
		if want == 1 && r.body["Resources"].([]any)[0].(map[string]any)["id"] != id {
			t.Errorf("%s: %s", filter, r.raw)
		}
	}
}

// attributes may carry a value filter, as Microsoft's test collection sends: the values
// of the multi-valued attribute that match it are returned.
func TestAttributesWithValueFilter(t *testing.T) {
	s := newServer(t)
	work := map[string]any{"value": "w@example.com", "type": "work"}
	home := map[string]any{"value": "h@example.com", "type": "home"}
	id := s.call("acme", "POST", "/Users", user("v@example.com", "emails", []any{work, home})).must(t, http.StatusCreated).str("id")
	for query, want := range map[string]map[string]any{
		"attributes=" + q(`emails[type eq "work"]`):                            {"emails": []any{work}},
		"attributes=" + q(`emails[value eq "H@example.com"]`):                  {"emails": []any{home}},
		"attributes=" + q(`emails[type eq "other"]`):                           {},
		"attributes=" + q(`userName,emails[type eq "home" or type eq "work"]`): {"userName": "v@example.com", "emails": []any{work, home}},
		"excludedAttributes=" + q(`emails[type eq "work"],meta,active,name,`+extURN): {
			"userName": "v@example.com", "emails": []any{home}},
	} {
		r := s.call("acme", "GET", "/Users/"+id+"?"+query, nil).must(t, http.StatusOK)
		want["id"], want["schemas"] = id, []any{userURN} // no attribute of the extension is returned
		if diff := cmp.Diff(want, r.body); diff != "" {
			t.Errorf("%s (-want +got):\n%s", query, diff)
		}
	}
}
