package scimhttp_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// members returns the member values of a group response.
func (r response) members() []string {
	list, _ := r.body["members"].([]any)
	out := []string{}
	for _, v := range list {
		m, _ := v.(map[string]any)
		id, _ := m["value"].(string)
		out = append(out, id)
	}
	return out
}

func TestGroupLifecycle(t *testing.T) {
	s := newServer(t)
	a := s.createUser("acme", "a@example.com", "displayName", "Ann")
	b := s.createUser("acme", "b@example.com")
	body := group("Analysts", a, b, a)
	body["role"] = "analyst"
	body["externalId"] = "g-ext"
	r := s.call("acme", "POST", "/Groups", body).must(t, http.StatusCreated)
	id := r.str("id")
	want := map[string]any{
		"schemas":     []any{groupURN},
		"id":          id,
		"externalId":  "g-ext",
		"displayName": "Analysts",
		"role":        "ANALYST",
		"members": []any{
			map[string]any{"value": a, "display": "Ann", "type": "User", "$ref": base + "/Users/" + a},
			map[string]any{"value": b, "display": "b@example.com", "type": "User", "$ref": base + "/Users/" + b},
		},
		"meta": map[string]any{"resourceType": "Group", "location": base + "/Groups/" + id, "version": r.str("meta.version"),
			"created": r.str("meta.created"), "lastModified": r.str("meta.lastModified")},
	}
	if diff := cmp.Diff(want, r.body); diff != "" {
		t.Errorf("created group (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, s.call("acme", "GET", "/Groups/"+id, nil).must(t, http.StatusOK).body); diff != "" {
		t.Errorf("fetched group (-want +got):\n%s", diff)
	}

	// PUT replaces members, role and displayName.
	r = s.call("acme", "PUT", "/Groups/"+id, map[string]any{"schemas": []any{groupURN}, "displayName": "Admins",
		"role": "ADMIN", "members": []any{map[string]any{"value": b}}}).must(t, http.StatusOK)
	if diff := cmp.Diff([]any{"Admins", "ADMIN", []string{b}}, []any{r.body["displayName"], r.body["role"], r.members()}); diff != "" {
		t.Errorf("replaced group (-want +got):\n%s", diff)
	}
	r = s.call("acme", "PUT", "/Groups/"+id, group("Admins")).must(t, http.StatusOK)
	if _, ok := r.body["role"]; ok || len(r.members()) != 0 {
		t.Errorf("PUT without role and members kept them: %s", r.raw)
	}

	// Deleting the group leaves its members in the team.
	s.call("acme", "DELETE", "/Groups/"+id, nil).must(t, http.StatusNoContent)
	s.call("acme", "GET", "/Groups/"+id, nil).wantError(t, 404, "", "Group "+id+" not found.")
	s.call("acme", "GET", "/Users/"+a, nil).must(t, http.StatusOK)
	s.call("acme", "GET", "/Users/"+b, nil).must(t, http.StatusOK)
	s.call("acme", "DELETE", "/Groups/"+id, nil).wantError(t, 404, "", "Group "+id+" not found.")
}

func TestGroupErrors(t *testing.T) {
	s := newServer(t)
	a := s.createUser("acme", "a@example.com")
	other := s.createUser("globex", "x@example.com")
	existing := s.createGroup("acme", "Existing")
	tests := []struct {
		name     string
		method   string
		path     string
		body     any
		code     int
		scimType string
		detail   string
	}{
		{"duplicate name", "POST", "/Groups", group("EXISTING"), 409, "uniqueness", `displayName "EXISTING" is already in use by another group.`},
		{"missing member", "POST", "/Groups", group("G", "nope"), 400, "invalidValue", "Group member nope does not exist in the team."},
		{"member of another team", "POST", "/Groups", group("G", other), 400, "invalidValue", "Group member " + other + " does not exist in the team."},
		{"no displayName", "POST", "/Groups", map[string]any{"schemas": []any{groupURN}}, 400, "invalidValue", "displayName is required."},
		{"empty displayName", "POST", "/Groups", group(" "), 400, "invalidValue", "displayName must be a non-empty string."},
		{"bad role", "POST", "/Groups", map[string]any{"schemas": []any{groupURN}, "displayName": "G", "role": "BOSS"}, 400, "invalidValue", `role must be one of MEMBER, ANALYST or ADMIN, not "BOSS".`},
		{"members not array", "POST", "/Groups", map[string]any{"schemas": []any{groupURN}, "displayName": "G", "members": "x"}, 400, "invalidValue", "members must be an array."},
		{"member without value", "POST", "/Groups", map[string]any{"schemas": []any{groupURN}, "displayName": "G", "members": []any{map[string]any{"display": "x"}}}, 400, "invalidValue", "members[0].value must be the id of a user."},
		{"group member", "POST", "/Groups", map[string]any{"schemas": []any{groupURN}, "displayName": "G", "members": []any{map[string]any{"value": existing, "type": "Group"}}}, 400, "invalidValue", `members[0] is of type "Group": only users can be members of a group.`},
		{"user schema", "POST", "/Groups", user("a@example.com"), 400, "invalidSyntax", "schemas must contain " + groupURN + "."},
		{"rename onto existing", "PUT", "/Groups/" + existing, group("Existing", "nope"), 400, "invalidValue", "Group member nope does not exist in the team."},
		{"unknown group", "PUT", "/Groups/nope", group("X", a), 404, "", "Group nope not found."},
		{"other team", "GET", "/Groups/" + existing, nil, 404, "", "Group " + existing + " not found."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team := "acme"
			if tt.name == "other team" {
				team = "globex"
			}
			s.call(team, tt.method, tt.path, tt.body).wantError(t, tt.code, tt.scimType, tt.detail)
		})
	}
	g2 := s.createGroup("acme", "Second")
	s.call("acme", "PUT", "/Groups/"+g2, group("existing")).
		wantError(t, 409, "uniqueness", `displayName "existing" is already in use by another group.`)
}

func TestGroupsPerUserLimit(t *testing.T) {
	s := newServer(t)
	a := s.createUser("acme", "a@example.com")
	b := s.createUser("acme", "b@example.com")
	for i := range 50 {
		s.createGroup("acme", fmt.Sprintf("g%d", i), a)
	}
	const detail = "User %s would belong to more than 50 groups."
	s.call("acme", "POST", "/Groups", group("g50", b, a)).wantError(t, 400, "invalidValue", fmt.Sprintf(detail, a))
	last := s.createGroup("acme", "g50", b)
	s.call("acme", "PUT", "/Groups/"+last, group("g50", b, a)).wantError(t, 400, "invalidValue", fmt.Sprintf(detail, a))
	s.call("acme", "PATCH", "/Groups/"+last, patch(op("add", "members", []any{map[string]any{"value": a}}))).
		wantError(t, 400, "invalidValue", fmt.Sprintf(detail, a))
	// Replacing a group the user is already in does not count it twice.
	first := s.call("acme", "GET", "/Groups?filter="+q(`displayName eq "g0"`), nil).ids()[0]
	s.call("acme", "PUT", "/Groups/"+first, group("g0", a, b)).must(t, http.StatusOK)
	// Leaving a group makes room.
	s.call("acme", "DELETE", "/Groups/"+first, nil).must(t, http.StatusNoContent)
	s.call("acme", "PATCH", "/Groups/"+last, patch(op("add", "members", []any{map[string]any{"value": a}}))).must(t, http.StatusOK)
}

func TestListGroups(t *testing.T) {
	s := newServer(t)
	a := s.createUser("acme", "a@example.com")
	g1 := s.createGroup("acme", "One", a)
	g2 := s.createGroup("acme", "Two")
	s.createGroup("globex", "One")
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{g1, g2}},
		{"?count=1&startIndex=2", []string{g2}},
		{"?filter=" + q(`displayName eq "one"`), []string{g1}},
		{"?filter=" + q(`id eq "`+g2+`" and displayName eq "Two"`), []string{g2}},
		{"?filter=" + q(`externalId eq "x"`), []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := s.call("acme", "GET", "/Groups"+tt.query, nil).must(t, http.StatusOK)
			if diff := cmp.Diff(tt.want, r.ids()); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
	r := s.call("acme", "POST", "/Groups/.search", map[string]any{
		"schemas": []any{"urn:ietf:params:scim:api:messages:2.0:SearchRequest"},
		"filter":  `displayName eq "TWO"`, "excludedAttributes": []any{"members", "meta"},
	}).must(t, http.StatusOK)
	want := map[string]any{"schemas": []any{listURN}, "totalResults": 1.0, "startIndex": 1.0, "itemsPerPage": 1.0,
		"Resources": []any{map[string]any{"id": g2, "schemas": []any{groupURN}, "displayName": "Two"}}}
	if diff := cmp.Diff(want, r.body); diff != "" {
		t.Errorf(".search (-want +got):\n%s", diff)
	}
	r = s.call("acme", "GET", "/Groups?excludedAttributes=members", nil).must(t, http.StatusOK)
	for _, res := range r.body["Resources"].([]any) {
		if _, ok := res.(map[string]any)["members"]; ok {
			t.Errorf("members not excluded: %s", r.raw)
		}
	}
	r = s.call("acme", "GET", "/Groups/"+g1+"?attributes=members.value", nil).must(t, http.StatusOK)
	want = map[string]any{"id": g1, "schemas": []any{groupURN}, "members": []any{map[string]any{"value": a}}}
	if diff := cmp.Diff(want, r.body); diff != "" {
		t.Errorf("members.value (-want +got):\n%s", diff)
	}
}

func TestPatchUser(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name  string
		ops   []map[string]any
		check func(t *testing.T, r response)
	}{
		{"replace active", []map[string]any{op("Replace", "active", false)}, func(t *testing.T, r response) {
			if r.body["active"] != false {
				t.Errorf("active: %s", r.raw)
			}
		}},
		{"replace active string", []map[string]any{op("replace", "active", "False")}, func(t *testing.T, r response) {
			if r.body["active"] != false {
				t.Errorf("active: %s", r.raw)
			}
		}},
		{"replace without path", []map[string]any{op("replace", "", map[string]any{"active": false, "displayName": "J"})}, func(t *testing.T, r response) {
			if r.body["active"] != false || r.body["displayName"] != "J" {
				t.Errorf("body: %s", r.raw)
			}
		}},
		{"sub-attribute", []map[string]any{op("add", "name.familyName", "Doe"), op("replace", "name.givenName", "Jane")}, func(t *testing.T, r response) {
			if diff := cmp.Diff(map[string]any{"familyName": "Doe", "givenName": "Jane"}, r.body["name"]); diff != "" {
				t.Errorf("name (-want +got):\n%s", diff)
			}
		}},
		{"role at the top level", []map[string]any{op("replace", "role", "admin")}, func(t *testing.T, r response) {
			if diff := cmp.Diff(map[string]any{"role": "ADMIN", "sendEmailOnInvitation": false}, r.body[extURN]); diff != "" {
				t.Errorf("extension (-want +got):\n%s", diff)
			}
		}},
		{"role by URN", []map[string]any{op("replace", extURN+":role", "ANALYST")}, func(t *testing.T, r response) {
			if diff := cmp.Diff(map[string]any{"role": "ANALYST", "sendEmailOnInvitation": false}, r.body[extURN]); diff != "" {
				t.Errorf("extension (-want +got):\n%s", diff)
			}
		}},
		{"role in a value", []map[string]any{op("replace", "", map[string]any{"role": "ADMIN"})}, func(t *testing.T, r response) {
			if diff := cmp.Diff(map[string]any{"role": "ADMIN", "sendEmailOnInvitation": false}, r.body[extURN]); diff != "" {
				t.Errorf("extension (-want +got):\n%s", diff)
			}
		}},
		{"remove displayName", []map[string]any{op("add", "displayName", "X"), op("remove", "displayName", nil)}, func(t *testing.T, r response) {
			if _, ok := r.body["displayName"]; ok {
				t.Errorf("displayName kept: %s", r.raw)
			}
		}},
		{"externalId", []map[string]any{op("add", "externalId", "e-9")}, func(t *testing.T, r response) {
			if r.body["externalId"] != "e-9" {
				t.Errorf("externalId: %s", r.raw)
			}
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := s.createUser("acme", fmt.Sprintf("p%d@example.com", i))
			r := s.call("acme", "PATCH", "/Users/"+id, patch(tt.ops...)).must(t, http.StatusOK)
			tt.check(t, r)
			again := s.call("acme", "GET", "/Users/"+id, nil).must(t, http.StatusOK)
			delete(r.body, "meta")
			delete(again.body, "meta")
			if diff := cmp.Diff(r.body, again.body); diff != "" {
				t.Errorf("stored user differs from the PATCH response (-patch +get):\n%s", diff)
			}
		})
	}
}

func TestPatchErrors(t *testing.T) {
	s := newServer(t)
	id := s.createUser("acme", "jane@example.com")
	gid := s.createGroup("acme", "G")
	tests := []struct {
		name     string
		path     string
		body     any
		code     int
		scimType string
		detail   string
	}{
		{"userName change", "/Users/" + id, patch(op("replace", "userName", "other@example.com")), 400, "mutability",
			`userName cannot be changed: it is "jane@example.com", the request has "other@example.com".`},
		{"bad op", "/Users/" + id, patch(op("move", "active", true)), 400, "invalidValue", `Operations[0].op must be add, remove or replace, not "move".`},
		{"no operations", "/Users/" + id, map[string]any{"schemas": []any{patchURN}, "Operations": []any{}}, 400, "invalidValue",
			"Operations must be a non-empty array of PATCH operations."},
		{"no schema", "/Users/" + id, map[string]any{"Operations": []any{op("add", "active", true)}}, 400, "invalidSyntax",
			"schemas must contain " + patchURN + "."},
		{"bad active", "/Users/" + id, patch(op("replace", "active", "nope")), 400, "invalidValue", `active must be true or false, not "nope".`},
		{"bad role", "/Users/" + id, patch(op("replace", "role", "BOSS")), 400, "invalidValue", `role must be one of MEMBER, ANALYST or ADMIN, not "BOSS".`},
		{"unknown path", "/Users/" + id, patch(op("replace", "shoeSize", 3)), 400, "invalidPath", `Operations[0]: The path "shoeSize" names no attribute of the resource.`},
		{"remove without path", "/Users/" + id, patch(op("remove", "", nil)), 400, "noTarget", "Operations[0]: remove needs a path."},
		{"unknown user", "/Users/nope", patch(op("replace", "active", true)), 404, "", "User nope not found."},
		{"unknown member", "/Groups/" + gid, patch(op("add", "members", []any{map[string]any{"value": "nope"}})), 400, "invalidValue",
			"Group member nope does not exist in the team."},
		{"empty displayName", "/Groups/" + gid, patch(op("replace", "displayName", "")), 400, "invalidValue", "displayName must be a non-empty string."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.call("acme", "PATCH", tt.path, tt.body).wantError(t, tt.code, tt.scimType, tt.detail)
		})
	}
}

func TestPatchGroupMembers(t *testing.T) {
	s := newServer(t)
	a := s.createUser("acme", "a@example.com")
	b := s.createUser("acme", "b@example.com")
	c := s.createUser("acme", "c@example.com")
	gid := s.createGroup("acme", "G", a)
	steps := []struct {
		name string
		ops  []map[string]any
		want []string
	}{
		{"add", []map[string]any{op("add", "members", []any{map[string]any{"value": b}, map[string]any{"value": c}})}, []string{a, b, c}},
		{"add again", []map[string]any{op("Add", "members", []any{map[string]any{"value": b}})}, []string{a, b, c}},
		{"remove by filter", []map[string]any{op("remove", `members[value eq "`+b+`"]`, nil)}, []string{a, c}},
		{"remove by value list", []map[string]any{op("Remove", "members", []any{map[string]any{"value": a}})}, []string{c}},
		{"replace", []map[string]any{op("replace", "members", []any{map[string]any{"value": a}, map[string]any{"value": b}})}, []string{a, b}},
		{"rename and role", []map[string]any{op("replace", "displayName", "H"), op("replace", "role", "ADMIN")}, []string{a, b}},
		{"replace by value", []map[string]any{op("replace", "", map[string]any{"id": gid, "displayName": "I"})}, []string{a, b}},
		{"remove all", []map[string]any{op("remove", "members", nil)}, []string{}},
	}
	for _, st := range steps {
		r := s.call("acme", "PATCH", "/Groups/"+gid, patch(st.ops...)).must(t, http.StatusOK)
		if diff := cmp.Diff(st.want, r.members()); diff != "" {
			t.Errorf("%s: members (-want +got):\n%s", st.name, diff)
		}
	}
	r := s.call("acme", "GET", "/Groups/"+gid, nil).must(t, http.StatusOK)
	if r.body["displayName"] != "I" || r.body["role"] != "ADMIN" {
		t.Errorf("group after patches: %s", r.raw)
	}
}

func TestDiscovery(t *testing.T) {
	s := newServer(t)
	r := s.call("acme", "GET", "/ServiceProviderConfig", nil).must(t, http.StatusOK)
	want := map[string]any{
		"schemas":        []any{"urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"},
		"patch":          map[string]any{"supported": true},
		"bulk":           map[string]any{"supported": true, "maxOperations": 1000.0, "maxPayloadSize": 1048576.0},
		"filter":         map[string]any{"supported": true, "maxResults": 200.0},
		"changePassword": map[string]any{"supported": false},
		"sort":           map[string]any{"supported": true},
		"etag":           map[string]any{"supported": true},
		"authenticationSchemes": []any{
			map[string]any{"type": "oauthbearertoken", "name": "OAuth Bearer Token", "primary": true,
				"description": "A JSON Web Token in the header: Authorization: Bearer <token>.",
				"specUri":     "https://www.rfc-editor.org/info/rfc6750"},
			map[string]any{"type": "appkey", "name": "Application key", "primary": false,
				"description": "An application key in the header: Authorization: AppKey <key>."},
		},
		"meta": map[string]any{"resourceType": "ServiceProviderConfig", "location": base + "/ServiceProviderConfig"},
	}
	if diff := cmp.Diff(want, r.body); diff != "" {
		t.Errorf("ServiceProviderConfig (-want +got):\n%s", diff)
	}

	r = s.call("acme", "GET", "/Schemas", nil).must(t, http.StatusOK)
	var ids []string
	for _, v := range r.body["Resources"].([]any) {
		ids = append(ids, v.(map[string]any)["id"].(string))
	}
	for _, want := range []string{userURN, groupURN, extURN} {
		found := false
		for _, id := range ids {
			found = found || id == want
		}
		if !found {
			t.Errorf("schema %s missing from %v", want, ids)
		}
	}
	for _, urn := range []string{userURN, groupURN, extURN} {
		r := s.call("acme", "GET", "/Schemas/"+urn, nil).must(t, http.StatusOK)
		if r.body["id"] != urn {
			t.Errorf("schema %s: %s", urn, r.raw)
		}
	}
	r = s.call("acme", "GET", "/Schemas/"+groupURN, nil)
	var names []string
	for _, a := range r.body["attributes"].([]any) {
		// The uniqueness the service enforces: displayName is 409 uniqueness when taken.
		names = append(names, fmt.Sprintf("%s %v", a.(map[string]any)["name"], a.(map[string]any)["uniqueness"]))
	}
	if diff := cmp.Diff([]string{"displayName server", "members <nil>", "role none"}, names); diff != "" {
		t.Errorf("group schema attributes (-want +got):\n%s", diff)
	}
	// Members are users only (a member of type Group is refused), and the schema says so.
	var memberSubs []string
	for _, a := range r.body["attributes"].([]any)[1].(map[string]any)["subAttributes"].([]any) {
		a := a.(map[string]any)
		memberSubs = append(memberSubs, fmt.Sprintf("%s %v %v", a["name"], a["canonicalValues"], a["referenceTypes"]))
	}
	if diff := cmp.Diff([]string{"value <nil> <nil>", "$ref <nil> [User]", "type [User] <nil>", "display <nil> <nil>"}, memberSubs); diff != "" {
		t.Errorf("group members sub-attributes (-want +got):\n%s", diff)
	}
	s.call("acme", "GET", "/Schemas/urn:nope", nil).wantError(t, 404, "", "Resource urn:nope not found.")

	r = s.call("acme", "GET", "/ResourceTypes", nil).must(t, http.StatusOK)
	if got := r.body["totalResults"]; got != 2.0 {
		t.Errorf("ResourceTypes totalResults %v", got)
	}
	r = s.call("acme", "GET", "/ResourceTypes/Group", nil).must(t, http.StatusOK)
	if r.body["endpoint"] != "/Groups" || r.body["schema"] != groupURN {
		t.Errorf("ResourceTypes/Group: %s", r.raw)
	}
	s.call("acme", "GET", "/ResourceTypes/Device", nil).wantError(t, 404, "", "Resource Device not found.")

	// Discovery lists honour attributes and count resources in itemsPerPage.
	r = s.call("acme", "GET", "/ResourceTypes?attributes=name", nil).must(t, http.StatusOK)
	want = map[string]any{
		"schemas": []any{listURN}, "totalResults": 2.0, "startIndex": 1.0, "itemsPerPage": 2.0,
		"Resources": []any{
			map[string]any{"id": "User", "name": "User", "schemas": []any{"urn:ietf:params:scim:schemas:core:2.0:ResourceType"}},
			map[string]any{"id": "Group", "name": "Group", "schemas": []any{"urn:ietf:params:scim:schemas:core:2.0:ResourceType"}},
		},
	}
	if diff := cmp.Diff(want, r.body); diff != "" {
		t.Errorf("ResourceTypes?attributes=name (-want +got):\n%s", diff)
	}
	r = s.call("acme", "GET", "/Schemas/"+extURN+"?excludedAttributes=attributes,description", nil).must(t, http.StatusOK)
	want = map[string]any{"id": extURN, "name": "CelonisUser", "schemas": []any{"urn:ietf:params:scim:schemas:core:2.0:Schema"}}
	if diff := cmp.Diff(want, r.body); diff != "" {
		t.Errorf("Schemas/ext?excludedAttributes (-want +got):\n%s", diff)
	}
}

// TestNoOpPatchKeepsETag is item 6 of issue 28 over HTTP: adding a member that is there
// already changes nothing (RFC 7644 section 3.5.2.1), so the ETag stays and a client that
// sends it as If-Match again gets 200, not 412.
func TestNoOpPatchKeepsETag(t *testing.T) {
	s := newServer(t)
	a := s.createUser("acme", "a@example.com")
	r := s.call("acme", "POST", "/Groups", group("G", a)).must(t, http.StatusCreated)
	id, tag := r.str("id"), r.header.Get("ETag")
	for range 2 {
		got := s.call("acme", "PATCH", "/Groups/"+id, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"add","path":"members","value":[{"value":"`+a+`"}]}]}`,
			"If-Match", tag).must(t, http.StatusOK)
		if got.header.Get("ETag") != tag || got.str("meta.version") != tag || got.str("meta.lastModified") != r.str("meta.lastModified") {
			t.Errorf("ETag %q, meta.version %q, lastModified %q; want %q and %q", got.header.Get("ETag"), got.str("meta.version"),
				got.str("meta.lastModified"), tag, r.str("meta.lastModified"))
		}
	}
}
