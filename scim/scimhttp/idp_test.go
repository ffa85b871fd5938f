package scimhttp_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOktaFlow replays the requests of Okta's SCIM 2.0 conformance test, in its order,
// and checks what that test checks.
func TestOktaFlow(t *testing.T) {
	s := newServer(t)
	for _, n := range []string{"x@example.com", "y@example.com"} {
		s.createUser("okta", n)
	}

	// Required test: list users with count=1.
	r := s.call("okta", "GET", "/Users?count=1&startIndex=1", nil).must(t, http.StatusOK)
	if diff := cmp.Diff([]any{[]any{listURN}, 1.0, 1.0, 2.0}, []any{r.body["schemas"], r.body["itemsPerPage"],
		r.body["startIndex"], r.body["totalResults"]}); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	if len(r.ids()) != 1 {
		t.Errorf("Resources: %s", r.raw)
	}

	// Test the filter on a user that does not exist yet.
	const name = "Runscope300Zsnlsnq@atko.com"
	r = s.call("okta", "GET", "/Users?filter="+q(`userName eq "`+name+`"`), nil).must(t, http.StatusOK)
	if r.body["totalResults"] != 0.0 || len(r.ids()) != 0 {
		t.Errorf("filter before create: %s", r.raw)
	}

	// Create the user, with a password Okta sends and we must never return.
	body := map[string]any{
		"schemas":  []any{userURN},
		"userName": name,
		"name":     map[string]any{"givenName": "Runscope300", "familyName": "Zsnlsnq"},
		"emails":   []any{map[string]any{"primary": true, "value": name, "type": "work"}},
		"active":   true,
		"password": "1mz050nq",
		"groups":   []any{},
	}
	r = s.call("okta", "POST", "/Users", body).must(t, http.StatusCreated)
	id := r.str("id")
	if r.body["active"] != true || r.str("userName") != name || id == "" {
		t.Errorf("created: %s", r.raw)
	}
	if _, ok := r.body["password"]; ok {
		t.Errorf("password returned: %s", r.raw)
	}

	// Get it by id and by filter.
	r = s.call("okta", "GET", "/Users/"+id, nil).must(t, http.StatusOK)
	if r.str("userName") != name {
		t.Errorf("get: %s", r.raw)
	}
	if _, ok := r.body["password"]; ok {
		t.Errorf("password returned: %s", r.raw)
	}
	r = s.call("okta", "GET", "/Users?filter="+q(`userName eq "`+name+`"`), nil).must(t, http.StatusOK)
	if diff := cmp.Diff([]string{id}, r.ids()); diff != "" {
		t.Errorf("filter after create (-want +got):\n%s", diff)
	}

	// A duplicate is 409.
	s.call("okta", "POST", "/Users", body).wantError(t, 409, "uniqueness", `userName "`+name+`" is already in use.`)

	// An unknown id is 404 with the Error schema.
	const missing = "010101010101010101010101010101"
	s.call("okta", "GET", "/Users/"+missing, nil).wantError(t, 404, "", "User "+missing+" not found.")

	// An invalid token reaches the handler without a principal: 401 with the Error schema.
	s.call("", "GET", "/Users?filter="+q(`userName eq "`+name+`"`), nil).
		wantError(t, 401, "", "The request carries no valid credentials of a team.")

	// Profile update (PUT) and deactivation (PATCH), as Okta sends them.
	body["name"] = map[string]any{"givenName": "Run", "familyName": "Scope"}
	r = s.call("okta", "PUT", "/Users/"+id, body).must(t, http.StatusOK)
	if diff := cmp.Diff(map[string]any{"givenName": "Run", "familyName": "Scope"}, r.body["name"]); diff != "" {
		t.Errorf("PUT name (-want +got):\n%s", diff)
	}
	r = s.call("okta", "PATCH", "/Users/"+id, patch(op("replace", "", map[string]any{"active": false}))).must(t, http.StatusOK)
	if r.body["active"] != false {
		t.Errorf("deactivated: %s", r.raw)
	}

	// Group push: create, rename, membership changes, delete.
	other := s.call("okta", "GET", "/Users?filter="+q(`userName eq "x@example.com"`), nil).ids()[0]
	r = s.call("okta", "POST", "/Groups", map[string]any{"schemas": []any{groupURN}, "displayName": "Test SCIMv2", "members": []any{}}).
		must(t, http.StatusCreated)
	gid := r.str("id")
	s.call("okta", "PATCH", "/Groups/"+gid, patch(op("replace", "", map[string]any{"id": gid, "displayName": "Test SCIMv2 renamed"}))).
		must(t, http.StatusOK)
	r = s.call("okta", "PATCH", "/Groups/"+gid, patch(
		op("remove", `members[value eq "`+other+`"]`, nil),
		op("add", "members", []any{map[string]any{"value": id, "display": name}}),
		op("replace", "members", []any{map[string]any{"value": id, "display": name}, map[string]any{"value": other, "display": "x"}}),
	)).must(t, http.StatusOK)
	if diff := cmp.Diff([]any{"Test SCIMv2 renamed", []string{id, other}}, []any{r.body["displayName"], r.members()}); diff != "" {
		t.Errorf("group after membership update (-want +got):\n%s", diff)
	}
	s.call("okta", "DELETE", "/Groups/"+gid, nil).must(t, http.StatusNoContent)
}

// TestEntraFlow replays what Microsoft Entra ID's provisioning service sends, in the order
// its SCIM validator does.
func TestEntraFlow(t *testing.T) {
	s := newServer(t)
	const name = "Test_User_dfeef4c5-5681-4387-b016-bdf221e82081@contoso.com"
	const enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"

	// Existence check before creating.
	r := s.call("entra", "GET", "/Users?filter="+q(`userName eq "`+name+`"`), nil).must(t, http.StatusOK)
	if r.body["totalResults"] != 0.0 {
		t.Errorf("existence check: %s", r.raw)
	}

	r = s.call("entra", "POST", "/Users", map[string]any{
		"schemas":    []any{userURN, enterprise},
		"externalId": "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef",
		"userName":   name,
		"active":     true,
		"emails":     []any{map[string]any{"primary": true, "type": "work", "value": "Test_User_fd0ea19b@testuser.com"}},
		"meta":       map[string]any{"resourceType": "User"},
		"name":       map[string]any{"formatted": "givenName familyName", "familyName": "familyName", "givenName": "givenName"},
		"roles":      []any{},
		enterprise:   map[string]any{"department": "Finance"},
	}).must(t, http.StatusCreated)
	id := r.str("id")
	if diff := cmp.Diff(map[string]any{"department": "Finance"}, r.body[enterprise]); diff != "" {
		t.Errorf("enterprise extension on create (-want +got):\n%s", diff)
	}

	r = s.call("entra", "GET", "/Users?filter="+q(`externalId eq "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef"`), nil).must(t, http.StatusOK)
	if diff := cmp.Diff([]string{id}, r.ids()); diff != "" {
		t.Errorf("filter on externalId (-want +got):\n%s", diff)
	}

	// PATCH replace of attributes, with Entra's capitalised op names.
	r = s.call("entra", "PATCH", "/Users/"+id, patch(
		op("Replace", `emails[type eq "work"].value`, "updatedEmail@microsoft.com"),
		op("Replace", "name.familyName", "updatedFamilyName"),
		op("Add", "displayName", "Updated Name"),
	)).must(t, http.StatusOK)
	wantName := map[string]any{"formatted": "givenName familyName", "familyName": "updatedFamilyName", "givenName": "givenName"}
	wantEmails := []any{map[string]any{"primary": true, "type": "work", "value": "updatedEmail@microsoft.com"}}
	if diff := cmp.Diff([]any{wantName, wantEmails, "Updated Name"}, []any{r.body["name"], r.body["emails"], r.body["displayName"]}); diff != "" {
		t.Errorf("after PATCH replace (-want +got):\n%s", diff)
	}

	// Enterprise attributes of Entra's default mappings: department, and the manager as a bare id.
	mgr := s.createUser("entra", "boss@contoso.com")
	r = s.call("entra", "PATCH", "/Users/"+id, patch(
		op("Replace", enterprise+":department", "Sales"),
		op("Add", enterprise+":manager", mgr),
		op("Add", enterprise+":employeeNumber", "42"),
	)).must(t, http.StatusOK)
	wantEnt := map[string]any{"department": "Sales", "employeeNumber": "42", "manager": map[string]any{"value": mgr}}
	if diff := cmp.Diff(wantEnt, r.body[enterprise]); diff != "" {
		t.Errorf("enterprise extension (-want +got):\n%s", diff)
	}
	r = s.call("entra", "GET", "/Users/"+id+"?attributes="+enterprise+":department", nil).must(t, http.StatusOK)
	if diff := cmp.Diff(map[string]any{"department": "Sales"}, r.body[enterprise]); diff != "" {
		t.Errorf("enterprise projection (-want +got):\n%s", diff)
	}

	// Changing userName is refused.
	s.call("entra", "PATCH", "/Users/"+id, patch(op("Replace", "userName", "5b50642d@testuser.com"))).
		wantError(t, 400, "mutability", `userName cannot be changed: it is "`+name+`", the request has "5b50642d@testuser.com".`)

	// Disable the user, as Entra does: boolean or, with older tenants, the string "False".
	r = s.call("entra", "PATCH", "/Users/"+id, patch(op("Replace", "active", false))).must(t, http.StatusOK)
	if r.body["active"] != false {
		t.Errorf("active after PATCH: %s", r.raw)
	}
	s.call("entra", "PATCH", "/Users/"+id, patch(op("Replace", "active", "True"))).must(t, http.StatusOK)
	r = s.call("entra", "PATCH", "/Users/"+id, patch(op("Replace", "active", "False"))).must(t, http.StatusOK)
	if r.body["active"] != false {
		t.Errorf("active after PATCH with a string: %s", r.raw)
	}

	// Groups: create, existence check without members, membership changes.
	member := s.createUser("entra", "member@contoso.com")
	r = s.call("entra", "POST", "/Groups", map[string]any{
		"schemas": []any{groupURN}, "externalId": "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159",
		"displayName": "displayName", "meta": map[string]any{"resourceType": "Group"}, "members": []any{},
	}).must(t, http.StatusCreated)
	gid := r.str("id")
	r = s.call("entra", "GET", "/Groups/"+gid+"?excludedAttributes=members", nil).must(t, http.StatusOK)
	if _, ok := r.body["members"]; ok || r.body["displayName"] != "displayName" {
		t.Errorf("group without members: %s", r.raw)
	}
	r = s.call("entra", "GET", "/Groups?excludedAttributes=members&filter="+q(`displayName eq "displayName"`), nil).must(t, http.StatusOK)
	if diff := cmp.Diff([]string{gid}, r.ids()); diff != "" {
		t.Errorf("group filter (-want +got):\n%s", diff)
	}
	r = s.call("entra", "PATCH", "/Groups/"+gid, patch(
		op("Replace", "displayName", "1879db59updatedDisplayName"),
		op("Add", "members", []any{map[string]any{"$ref": nil, "value": member}}),
	)).must(t, http.StatusOK)
	if diff := cmp.Diff([]string{member}, r.members()); diff != "" {
		t.Errorf("after add (-want +got):\n%s", diff)
	}
	r = s.call("entra", "PATCH", "/Groups/"+gid, patch(op("Remove", "members", []any{map[string]any{"$ref": nil, "value": member}}))).
		must(t, http.StatusOK)
	if diff := cmp.Diff([]any{"1879db59updatedDisplayName", []string{}}, []any{r.body["displayName"], r.members()}); diff != "" {
		t.Errorf("after remove (-want +got):\n%s", diff)
	}

	s.call("entra", "DELETE", "/Users/"+id, nil).must(t, http.StatusNoContent)
	s.call("entra", "DELETE", "/Groups/"+gid, nil).must(t, http.StatusNoContent)
}

// TestEntraClearsManager clears the enterprise manager with an empty id, as Entra ID does
// when a user's manager is removed, in each form a PATCH, POST or PUT may carry it: the
// answer and the stored user have no manager (an empty id refers to no user), and the
// other enterprise attributes stay.
func TestEntraClearsManager(t *testing.T) {
	s := newServer(t)
	const enterprise = entURN
	mgr := s.createUser("entra", "boss@contoso.com")
	id := s.createUser("entra", "emp@contoso.com", enterprise, map[string]any{"department": "Sales"})
	setManager := func() {
		t.Helper()
		r := s.call("entra", "PATCH", "/Users/"+id, patch(op("Add", enterprise+":manager", mgr))).must(t, http.StatusOK)
		if diff := cmp.Diff(map[string]any{"department": "Sales", "manager": map[string]any{"value": mgr}}, r.body[enterprise]); diff != "" {
			t.Fatalf("manager not set (-want +got):\n%s", diff)
		}
	}
	wantCleared := func(label string, r response) {
		t.Helper()
		r.must(t, http.StatusOK)
		for _, got := range []response{r, s.call("entra", "GET", "/Users/"+id, nil)} {
			if diff := cmp.Diff(map[string]any{"department": "Sales"}, got.body[enterprise]); diff != "" {
				t.Errorf("%s: enterprise extension (-want +got):\n%s", label, diff)
			}
		}
	}
	for _, tc := range []struct {
		label string
		op    map[string]any
	}{
		{"replace with an empty id", op("Replace", enterprise+":manager", "")},
		{"replace with an empty value", op("Replace", enterprise+":manager", map[string]any{"value": ""})},
		{"replace of manager.value with an empty id", op("Replace", enterprise+":manager.value", "")},
		{"add with an empty id", op("Add", enterprise+":manager", "")},
		{"replace of the extension with an empty manager", op("Replace", "", map[string]any{enterprise: map[string]any{"manager": ""}})},
		{"path-less replace with an empty manager", op("Replace", "", map[string]any{enterprise + ":manager": ""})},
		{"remove with an empty value", op("Remove", enterprise+":manager", []any{map[string]any{"value": ""}})},
	} {
		setManager()
		wantCleared(tc.label, s.call("entra", "PATCH", "/Users/"+id, patch(tc.op)))
	}

	setManager()
	wantCleared("PUT", s.call("entra", "PUT", "/Users/"+id, user("emp@contoso.com", enterprise, map[string]any{"department": "Sales", "manager": ""})))
	r := s.call("entra", "POST", "/Users", user("new@contoso.com", enterprise, map[string]any{"department": "Sales", "manager": map[string]any{"value": ""}})).
		must(t, http.StatusCreated)
	if diff := cmp.Diff(map[string]any{"department": "Sales"}, r.body[enterprise]); diff != "" {
		t.Errorf("POST: enterprise extension (-want +got):\n%s", diff)
	}
}
