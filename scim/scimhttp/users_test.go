package scimhttp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/scim/scimhttp"
	"github.com/kmkit/kmkit/scim/scimtest"
	"github.com/kmkit/kmkit/storage/memory"
)

func TestCreateUser(t *testing.T) {
	s := newServer(t)
	r := s.call("acme", "POST", "/Users", user("Jane.Doe@example.com",
		"externalId", "ext-1", "displayName", "Jane Doe",
		"name", map[string]any{"givenName": "Jane", "familyName": "Doe"},
		"emails", []any{map[string]any{"value": "jane.doe@example.com", "primary": true, "type": "work"}},
	)).must(t, http.StatusCreated)
	id := r.str("id")
	loc := base + "/Users/" + id
	want := map[string]any{
		"schemas":     []any{userURN, extURN},
		"id":          id,
		"externalId":  "ext-1",
		"userName":    "Jane.Doe@example.com",
		"displayName": "Jane Doe",
		"active":      true,
		"name":        map[string]any{"givenName": "Jane", "familyName": "Doe"},
		"emails":      []any{map[string]any{"value": "jane.doe@example.com", "primary": true, "type": "work"}},
		extURN:        map[string]any{"role": "MEMBER", "sendEmailOnInvitation": false},
		"meta": map[string]any{
			"resourceType": "User", "location": loc, "version": `W/"1"`,
			"created": r.str("meta.created"), "lastModified": r.str("meta.created"),
		},
	}
	if diff := cmp.Diff(want, r.body); diff != "" {
		t.Errorf("created user (-want +got):\n%s", diff)
	}
	if got := r.header.Get("Location"); got != loc {
		t.Errorf("Location %q, want %q", got, loc)
	}
	if got := r.header.Get("ETag"); got != `W/"1"` {
		t.Errorf("ETag %q", got)
	}
	g := s.call("acme", "GET", "/Users/"+id, nil).must(t, http.StatusOK)
	if diff := cmp.Diff(want, g.body); diff != "" {
		t.Errorf("fetched user (-want +got):\n%s", diff)
	}
}

func TestCreateUserExtension(t *testing.T) {
	tests := []struct {
		name      string
		extra     []any
		wantRole  string
		wantEmail bool
	}{
		{"defaults", nil, "MEMBER", false},
		{"extension object", []any{extURN, map[string]any{"role": "ANALYST", "sendEmailOnInvitation": true}}, "ANALYST", true},
		{"extension strings", []any{extURN, map[string]any{"role": "admin", "sendEmailOnInvitation": "TRUE"}}, "ADMIN", true},
		{"top level", []any{"role", "ADMIN", "sendEmailOnInvitation", "true"}, "ADMIN", true},
		{"top level boolean", []any{"role", "analyst", "sendEmailOnInvitation", false}, "ANALYST", false},
		{"top level wins", []any{"role", "ADMIN", extURN, map[string]any{"role": "ANALYST"}}, "ADMIN", false},
		{"urn keys", []any{extURN + ":role", "ANALYST"}, "ANALYST", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var invited []string
			s := newServer(t, scimhttp.WithNotifier(scimhttp.NotifierFunc(func(_ context.Context, team string, u scim.User) error {
				mu.Lock()
				defer mu.Unlock()
				invited = append(invited, team+"/"+u.UserName)
				return nil
			})))
			name := "u" + string(rune('a'+i)) + "@example.com"
			r := s.call("acme", "POST", "/Users", user(name, tt.extra...)).must(t, http.StatusCreated)
			want := map[string]any{"role": tt.wantRole, "sendEmailOnInvitation": tt.wantEmail}
			if diff := cmp.Diff(want, r.body[extURN]); diff != "" {
				t.Errorf("extension (-want +got):\n%s", diff)
			}
			if _, ok := r.body["role"]; ok {
				t.Errorf("role is also at the top level: %s", r.raw)
			}
			var wantInvited []string
			if tt.wantEmail {
				wantInvited = []string{"acme/" + name}
			}
			if diff := cmp.Diff(wantInvited, invited); diff != "" {
				t.Errorf("invitations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCreateUserErrors(t *testing.T) {
	long := strings.Repeat("a", 89) + "@example.com" // 101 characters
	tests := []struct {
		name     string
		body     any
		code     int
		scimType string
		detail   string
	}{
		{"empty userName", user(""), 400, "invalidValue", "userName must not be empty."},
		{"blank userName", user("   "), 400, "invalidValue", "userName must not be empty."},
		{"missing userName", map[string]any{"schemas": []any{userURN}}, 400, "invalidValue", "userName is required."},
		{"numeric userName", user("x", "userName", 5), 400, "invalidValue", "userName must be a string."},
		{"not an e-mail", user("jane"), 400, "invalidValue", `userName must be an e-mail address such as name@example.com, not "jane".`},
		{"no domain dot", user("jane@example"), 400, "invalidValue", `userName must be an e-mail address such as name@example.com, not "jane@example".`},
		{"space", user("ja ne@example.com"), 400, "invalidValue", `userName must be an e-mail address such as name@example.com, not "ja ne@example.com".`},
		{"too long", user(long), 400, "invalidValue", "userName must be at most 100 characters long; it has 101."},
		{"bad role", user("a@example.com", "role", "OWNER"), 400, "invalidValue", `role must be one of MEMBER, ANALYST or ADMIN, not "OWNER".`},
		{"bad role type", user("a@example.com", extURN, map[string]any{"role": 3}), 400, "invalidValue", "role must be one of MEMBER, ANALYST or ADMIN, not 3."},
		{"bad invitation flag", user("a@example.com", "sendEmailOnInvitation", "yes"), 400, "invalidValue", `sendEmailOnInvitation must be true or false, not "yes".`},
		{"bad active", user("a@example.com", "active", "maybe"), 400, "invalidValue", `active must be true or false, not "maybe".`},
		{"extension not an object", user("a@example.com", extURN, "x"), 400, "invalidValue", extURN + " must be a JSON object."},
		{"no schemas", map[string]any{"userName": "a@example.com"}, 400, "invalidSyntax", "schemas must contain " + userURN + "."},
		{"group schema", map[string]any{"schemas": []any{groupURN}, "userName": "a@example.com"}, 400, "invalidSyntax", "schemas must contain " + userURN + "."},
		{"not JSON", "{", 400, "invalidSyntax", "The request body is not valid JSON: the JSON body is incomplete or empty."},
		{"array", "[]", 400, "invalidSyntax", "The request body must be a JSON object."},
		{"trailing data", `{"a":1} {}`, 400, "invalidSyntax", "The request body has data after its JSON object."},
		{"empty body", "", 400, "invalidSyntax", "The request body is not valid JSON: the JSON body is incomplete or empty."},
		{"wrong type for name", user("a@example.com", "name", "Jane"), 400, "invalidValue",
			`name must be an object of its sub-attributes, not "Jane".`},
		// Issue 28, item 7: the refusal names the attribute, the value and the rule.
		{"duplicate ims", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"i@x.example.com","ims":[{"value":"a","type":"xmpp"},{"value":"a","type":"xmpp"}]}`,
			400, "invalidValue", `ims holds the value {"type":"xmpp","value":"a"} twice: a multi-valued attribute holds each value once.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			s.call("acme", "POST", "/Users", tt.body).wantError(t, tt.code, tt.scimType, tt.detail)
		})
	}
}

func TestUserNameUniqueness(t *testing.T) {
	s := newServer(t)
	s.createUser("acme", "jane@example.com")
	s.call("acme", "POST", "/Users", user("JANE@Example.com")).
		wantError(t, 409, "uniqueness", `userName "JANE@Example.com" is already in use.`)
	// Another team has its own users.
	s.createUser("globex", "jane@example.com")
}

func TestReplaceUser(t *testing.T) {
	s := newServer(t)
	id := s.createUser("acme", "jane@example.com", "role", "ADMIN", "displayName", "Jane", "title", "Boss")
	r := s.call("acme", "PUT", "/Users/"+id, user("Jane@example.com", "displayName", "Jane D.", "active", false)).
		must(t, http.StatusOK)
	got := map[string]any{"userName": r.body["userName"], "displayName": r.body["displayName"],
		"active": r.body["active"], "title": r.body["title"], "ext": r.body[extURN], "version": r.str("meta.version")}
	want := map[string]any{"userName": "Jane@example.com", "displayName": "Jane D.", "active": false, "title": nil,
		"ext": map[string]any{"role": "ADMIN", "sendEmailOnInvitation": false}, "version": `W/"2"`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replaced user (-want +got):\n%s", diff)
	}

	s.call("acme", "PUT", "/Users/"+id, user("other@example.com")).
		wantError(t, 400, "mutability", `userName cannot be changed: it is "Jane@example.com", the request has "other@example.com".`)
	s.call("acme", "PUT", "/Users/nope", user("x@example.com")).wantError(t, 404, "", "User nope not found.")
	s.call("globex", "PUT", "/Users/"+id, user("jane@example.com")).wantError(t, 404, "", "User "+id+" not found.")
	s.call("acme", "PUT", "/Users/"+id, user("bad")).
		wantError(t, 400, "invalidValue", `userName must be an e-mail address such as name@example.com, not "bad".`)
}

func TestDeleteUser(t *testing.T) {
	s := newServer(t)
	a := s.createUser("acme", "jane@example.com")
	b := s.createUser("globex", "jane@example.com")
	gid := s.createGroup("acme", "Admins", a)
	s.call("acme", "DELETE", "/Users/"+a, nil).must(t, http.StatusNoContent)
	s.call("acme", "GET", "/Users/"+a, nil).wantError(t, 404, "", "User "+a+" not found.")
	s.call("acme", "DELETE", "/Users/"+a, nil).wantError(t, 404, "", "User "+a+" not found.")
	// The user's membership of the other team is untouched, and the group lost it.
	s.call("globex", "GET", "/Users/"+b, nil).must(t, http.StatusOK)
	g := s.call("acme", "GET", "/Groups/"+gid, nil).must(t, http.StatusOK)
	if diff := cmp.Diff([]any{}, g.body["members"]); diff != "" {
		t.Errorf("members after deleting the user (-want +got):\n%s", diff)
	}
	// The name is free again.
	s.createUser("acme", "jane@example.com")
}

func TestListUsers(t *testing.T) {
	s := newServer(t)
	var ids []string
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		ids = append(ids, s.createUser("acme", n+"@example.com", "externalId", "x-"+n, "displayName", strings.ToUpper(n)))
	}
	s.createUser("globex", "z@example.com")
	tests := []struct {
		query   string
		want    []string
		total   float64
		start   float64
		perPage float64
	}{
		{"", ids, 5, 1, 5},
		{"?startIndex=2&count=2", ids[1:3], 5, 2, 2},
		{"?startIndex=5&count=10", ids[4:], 5, 5, 1},
		{"?startIndex=9", []string{}, 5, 9, 0},
		{"?count=0", []string{}, 5, 1, 0},
		{"?count=-3", []string{}, 5, 1, 0},
		{"?startIndex=0&count=1", ids[:1], 5, 1, 1},
		{"?filter=" + q(`userName eq "C@EXAMPLE.COM"`), ids[2:3], 1, 1, 1},
		{"?filter=" + q(`externalId eq "x-d"`), ids[3:4], 1, 1, 1},
		{"?filter=" + q(`externalId eq "X-D"`), []string{}, 0, 1, 0},
		{"?filter=" + q(`id eq "`+ids[1]+`"`), ids[1:2], 1, 1, 1},
		{"?filter=" + q(`displayName eq "e"`), ids[4:], 1, 1, 1},
		{"?filter=" + q(`userName eq "a@example.com" and externalId eq "x-a"`), ids[:1], 1, 1, 1},
		{"?filter=" + q(`userName eq "a@example.com" and externalId eq "x-b"`), []string{}, 0, 1, 0},
		{"?filter=" + q(`userName eq "z@example.com"`), []string{}, 0, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := s.call("acme", "GET", "/Users"+tt.query, nil).must(t, http.StatusOK)
			if diff := cmp.Diff(tt.want, r.ids()); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			got := []any{r.body["schemas"], r.body["totalResults"], r.body["startIndex"], r.body["itemsPerPage"]}
			want := []any{[]any{listURN}, tt.total, tt.start, tt.perPage}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("schemas, totalResults, startIndex, itemsPerPage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestListSort(t *testing.T) {
	s := newServer(t)
	c := s.createUser("acme", "c@example.com", "displayName", "bob", "externalId", "2")
	a := s.createUser("acme", "A@example.com", "externalId", "10")
	b := s.createUser("acme", "b@example.com", "displayName", "Alice", "externalId", "1")
	s.call("acme", "PATCH", "/Users/"+c, patch(op("replace", "active", false))).must(t, http.StatusOK)
	g2 := s.createGroup("acme", "beta")
	g1 := s.createGroup("acme", "Alpha")
	tests := []struct {
		path string
		want []string
	}{
		{"/Users?sortBy=userName", []string{a, b, c}},
		{"/Users?sortBy=userName&sortOrder=descending", []string{c, b, a}},
		{"/Users?sortBy=" + userURN + ":userName&sortOrder=DESCENDING", []string{c, b, a}},
		{"/Users?sortBy=displayName", []string{b, c, a}},                              // a has none: last
		{"/Users?sortBy=displayName&sortOrder=descending", []string{c, b, a}},         // still last
		{"/Users?sortBy=externalId", []string{b, a, c}},                               // "1" < "10" < "2"
		{"/Users?sortBy=meta.lastModified&sortOrder=descending&count=1", []string{c}}, // c was changed last
		{"/Users?sortBy=userName&startIndex=2&count=1", []string{b}},                  // sorted, then paged
		{"/Users?sortOrder=descending", []string{c, a, b}},                            // no sortBy: ignored
		{"/Users?sortBy=userName&filter=" + q(`externalId eq "2"`), []string{c}},      // filtered, then sorted
		{"/Groups?sortBy=displayName", []string{g1, g2}},
		{"/Groups?sortBy=meta.created", []string{g2, g1}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r := s.call("acme", "GET", tt.path, nil).must(t, http.StatusOK)
			if diff := cmp.Diff(tt.want, r.ids()); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
}

func TestListUsersPageSize(t *testing.T) {
	s := newServer(t, scimhttp.WithPageSize(3))
	for _, n := range []string{"a", "b", "c", "d"} {
		s.createUser("acme", n+"@example.com")
	}
	if got := len(s.call("acme", "GET", "/Users", nil).ids()); got != 3 {
		t.Errorf("default page has %d users, want 3", got)
	}
	if got := len(s.call("acme", "GET", "/Users?count=100", nil).ids()); got != 3 {
		t.Errorf("count=100 gave %d users, want 3", got)
	}
}

func TestListErrors(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		path     string
		scimType string
		detail   string
	}{
		{"/Users?filter=" + q(`userName co "a"`), "invalidFilter", `The operator "co" is not supported: filters compare with "eq" only.`},
		{"/Users?filter=" + q(`userName eq "a" or userName eq "b"`), "invalidFilter", `The operator "or" is not supported: filters combine terms with "and" only.`},
		{"/Users?filter=" + q(`title eq "x"`), "invalidFilter", "Filtering on title is not supported: User filters may use userName, externalId, id, displayName."},
		{"/Users?filter=" + q(`name.givenName eq "x"`), "invalidFilter", "Filtering on name.givenName is not supported: User filters may use userName, externalId, id, displayName."},
		{"/Users?filter=" + q(`emails[value co "x"]`), "invalidFilter", `The value filter on emails is not supported: User filters may use emails[value eq "..."] with "and type eq \"...\"".`},
		{"/Users?filter=" + q(`not (userName eq "x")`), "invalidFilter", `The operator "not" is not supported in filters.`},
		{"/Users?filter=" + q(`active eq true`), "invalidFilter", "Filtering on active is not supported: User filters may use userName, externalId, id, displayName."},
		{"/Users?filter=" + q(`userName eq 5`), "invalidFilter", "The attribute userName must be compared with a quoted string."},
		{"/Users?filter=" + q(`userName eq`), "invalidFilter", `The filter "userName eq" is not valid SCIM filter syntax.`},
		{"/Groups?filter=" + q(`userName eq "x"`), "invalidFilter", "Filtering on userName is not supported: Group filters may use displayName, externalId, id."},
		{"/Users?sortBy=title", "invalidValue", "Sorting by title is not supported: User lists sort by userName, displayName, externalId, id, meta.created, meta.lastModified."},
		{"/Groups?sortBy=userName", "invalidValue", "Sorting by userName is not supported: Group lists sort by displayName, externalId, id, meta.created, meta.lastModified."},
		{"/Users?sortBy=userName&sortOrder=up", "invalidValue", `sortOrder must be ascending or descending, not "up".`},
		{"/Users?sortOrder=sideways", "invalidValue", `sortOrder must be ascending or descending, not "sideways".`},
		{"/Users?count=ten", "", "Bad Request. Invalid parameter provided in request: count."},
		{"/Users?startIndex=x&count=y", "", "Bad Request. Invalid parameters provided in request: count, startIndex."},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			s.call("acme", "GET", tt.path, nil).wantError(t, 400, tt.scimType, tt.detail)
		})
	}
}

func TestProjection(t *testing.T) {
	s := newServer(t)
	id := s.createUser("acme", "jane@example.com", "displayName", "Jane", "externalId", "e1",
		"name", map[string]any{"givenName": "Jane", "familyName": "Doe"},
		"emails", []any{map[string]any{"value": "jane@example.com", "type": "work"}})
	keys := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if k == "meta" || k == "id" {
				v = "*"
			}
			out[k] = v
		}
		return out
	}
	// schemas names the extension only when its attributes are returned (RFC 7643
	// section 3: the schemas of the attributes present).
	schemas, core := []any{userURN, extURN}, []any{userURN}
	tests := []struct {
		query string
		want  map[string]any
	}{
		{"attributes=userName", map[string]any{"id": "*", "schemas": core, "userName": "jane@example.com"}},
		{"attributes=USERNAME,name.givenName", map[string]any{"id": "*", "schemas": core, "userName": "jane@example.com",
			"name": map[string]any{"givenName": "Jane"}}},
		{"attributes=" + userURN + ":displayName," + extURN + ":role", map[string]any{"id": "*", "schemas": schemas,
			"displayName": "Jane", extURN: map[string]any{"role": "MEMBER"}}},
		{"attributes=emails.value,meta.version", map[string]any{"id": "*", "schemas": core,
			"emails": []any{map[string]any{"value": "jane@example.com"}}, "meta": "*"}},
		{"attributes=id", map[string]any{"id": "*", "schemas": core}},
		{"attributes=nothing", map[string]any{"id": "*", "schemas": core}},
		{"excludedAttributes=name,emails,meta," + extURN + ",externalId,id,schemas", map[string]any{"id": "*", "schemas": core,
			"userName": "jane@example.com", "displayName": "Jane", "active": true}},
		{"excludedAttributes=name.familyName,active,displayName,emails,meta,externalId," + extURN + ":sendEmailOnInvitation",
			map[string]any{"id": "*", "schemas": schemas, "userName": "jane@example.com",
				"name": map[string]any{"givenName": "Jane"}, extURN: map[string]any{"role": "MEMBER"}}},
		{"attributes=userName,name&excludedAttributes=name", map[string]any{"id": "*", "schemas": core, "userName": "jane@example.com"}},
		// The extension selected, but none of its attributes has a value: no extension.
		{"attributes=userName," + extURN + ":nothing", map[string]any{"id": "*", "schemas": core, "userName": "jane@example.com"}},
		{"excludedAttributes=meta," + extURN + ":role," + extURN + ":sendEmailOnInvitation," + entURN, map[string]any{"id": "*", "schemas": core,
			"userName": "jane@example.com", "displayName": "Jane", "active": true, "externalId": "e1",
			"name": map[string]any{"givenName": "Jane", "familyName": "Doe"}, "emails": []any{map[string]any{"value": "jane@example.com", "type": "work"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			one := s.call("acme", "GET", "/Users/"+id+"?"+tt.query, nil).must(t, http.StatusOK)
			if diff := cmp.Diff(tt.want, keys(one.body)); diff != "" {
				t.Errorf("GET one (-want +got):\n%s", diff)
			}
			list := s.call("acme", "GET", "/Users?"+tt.query, nil).must(t, http.StatusOK)
			res, _ := list.body["Resources"].([]any)
			if len(res) != 1 {
				t.Fatalf("list: %s", list.raw)
			}
			if diff := cmp.Diff(tt.want, keys(res[0].(map[string]any))); diff != "" {
				t.Errorf("list (-want +got):\n%s", diff)
			}
		})
	}
	// Writes honour the parameters too.
	r := s.call("acme", "PUT", "/Users/"+id+"?attributes=userName", user("jane@example.com")).must(t, http.StatusOK)
	if diff := cmp.Diff(map[string]any{"id": "*", "schemas": core, "userName": "jane@example.com"}, keys(r.body)); diff != "" {
		t.Errorf("PUT (-want +got):\n%s", diff)
	}
	r = s.call("acme", "POST", "/Users?excludedAttributes=meta,"+extURN+",active", user("bob@example.com")).must(t, http.StatusCreated)
	if diff := cmp.Diff(map[string]any{"id": "*", "schemas": core, "userName": "bob@example.com"}, keys(r.body)); diff != "" {
		t.Errorf("POST (-want +got):\n%s", diff)
	}
}

func TestSearch(t *testing.T) {
	s := newServer(t)
	a := s.createUser("acme", "a@example.com", "externalId", "ea")
	b := s.createUser("acme", "b@example.com", "externalId", "eb")
	search := func(body map[string]any) map[string]any {
		body["schemas"] = []any{"urn:ietf:params:scim:api:messages:2.0:SearchRequest"}
		return body
	}
	r := s.call("acme", "POST", "/Users/.search", search(map[string]any{
		"filter": `externalId eq "eb"`, "attributes": []any{"userName"}, "startIndex": 1, "count": 10,
	})).must(t, http.StatusOK)
	want := map[string]any{
		"schemas": []any{listURN}, "totalResults": 1.0, "startIndex": 1.0, "itemsPerPage": 1.0,
		"Resources": []any{map[string]any{"id": b, "schemas": []any{userURN}, "userName": "b@example.com"}},
	}
	if diff := cmp.Diff(want, r.body); diff != "" {
		t.Errorf("search (-want +got):\n%s", diff)
	}
	r = s.call("acme", "POST", "/Users/.search", search(map[string]any{"count": 1, "excludedAttributes": []any{"meta"}})).
		must(t, http.StatusOK)
	if diff := cmp.Diff([]string{a}, r.ids()); diff != "" {
		t.Errorf("search page (-want +got):\n%s", diff)
	}
	s.call("acme", "POST", "/Users/.search", map[string]any{"filter": "x"}).
		wantError(t, 400, "invalidSyntax", "schemas must contain urn:ietf:params:scim:api:messages:2.0:SearchRequest.")
	s.call("acme", "POST", "/Users/.search", search(map[string]any{"attributes": "userName"})).
		wantError(t, 400, "invalidSyntax", "The search request is not valid: attributes must not be a JSON string.")
	s.call("acme", "POST", "/Users/.search", search(map[string]any{"filter": `userName sw "a"`})).
		wantError(t, 400, "invalidFilter", `The operator "sw" is not supported: filters compare with "eq" only.`)
	r = s.call("acme", "POST", "/Users/.search", search(map[string]any{"sortBy": "userName", "sortOrder": "descending"})).
		must(t, http.StatusOK)
	if diff := cmp.Diff([]string{b, a}, r.ids()); diff != "" {
		t.Errorf("sorted search (-want +got):\n%s", diff)
	}
	s.call("acme", "POST", "/Users/.search", search(map[string]any{"sortBy": "name.givenName"})).
		wantError(t, 400, "invalidValue", "Sorting by name.givenName is not supported: User lists sort by userName, displayName, externalId, id, meta.created, meta.lastModified.")
	s.call("acme", "GET", "/Users/.search", nil).wantError(t, 405, "", "method GET is not allowed on /user-provisioning/scim/v2/Users/.search; allowed: POST")
}

func TestETags(t *testing.T) {
	s := newServer(t)
	id := s.createUser("acme", "jane@example.com")
	r := s.call("acme", "GET", "/Users/"+id, nil).must(t, http.StatusOK)
	tag := r.header.Get("ETag")
	if tag != `W/"1"` || r.str("meta.version") != tag {
		t.Fatalf("ETag %q, meta.version %q", tag, r.str("meta.version"))
	}
	nm := s.call("acme", "GET", "/Users/"+id, nil, "If-None-Match", tag).must(t, http.StatusNotModified)
	if nm.raw != "" || nm.header.Get("ETag") != tag {
		t.Errorf("304: body %q, ETag %q", nm.raw, nm.header.Get("ETag"))
	}
	s.call("acme", "GET", "/Users/"+id, nil, "If-None-Match", `W/"7", "1"`).must(t, http.StatusNotModified)
	s.call("acme", "GET", "/Users/"+id, nil, "If-None-Match", `W/"7"`).must(t, http.StatusOK)

	s.call("acme", "PUT", "/Users/"+id, user("jane@example.com"), "If-Match", `W/"9"`).
		wantError(t, 412, "", `If-Match W/"9" does not match the current version W/"1".`)
	r = s.call("acme", "PUT", "/Users/"+id, user("jane@example.com"), "If-Match", tag).must(t, http.StatusOK)
	if got := r.header.Get("ETag"); got != `W/"2"` {
		t.Errorf("ETag after PUT %q", got)
	}
	s.call("acme", "PATCH", "/Users/"+id, patch(op("replace", "active", false)), "If-Match", tag).
		wantError(t, 412, "", `If-Match W/"1" does not match the current version W/"2".`)
	s.call("acme", "PATCH", "/Users/"+id, patch(op("replace", "active", false)), "If-Match", "*").must(t, http.StatusOK)
	s.call("acme", "DELETE", "/Users/"+id, nil, "If-Match", `W/"2"`).
		wantError(t, 412, "", `If-Match W/"2" does not match the current version W/"3".`)
	s.call("acme", "DELETE", "/Users/"+id, nil, "If-Match", `W/"3"`).must(t, http.StatusNoContent)
}

// TestETagsOfDerivedAttributes: a user's groups and a group's members.display are part of
// their representations, so a write that changes them changes their ETags, and a
// conditional GET does not answer 304 with what has changed.
func TestETagsOfDerivedAttributes(t *testing.T) {
	s := newServer(t)
	id := s.createUser("acme", "jane@example.com", "displayName", "Jane")
	gid := s.createGroup("acme", "G", id)
	etag := func(path string) string {
		return s.call("acme", "GET", path, nil).must(t, http.StatusOK).header.Get("ETag")
	}
	userTag := etag("/Users/" + id)

	s.call("acme", "PATCH", "/Groups/"+gid, patch(op("replace", "displayName", "Renamed"))).must(t, http.StatusOK)
	r := s.call("acme", "GET", "/Users/"+id, nil, "If-None-Match", userTag).must(t, http.StatusOK)
	if got := r.body["groups"].([]any)[0].(map[string]any)["display"]; got != "Renamed" {
		t.Errorf("groups.display after the group's rename: %v", got)
	}
	groupTag := etag("/Groups/" + gid)

	s.call("acme", "PATCH", "/Users/"+id, patch(op("replace", "displayName", "Janet"))).must(t, http.StatusOK)
	r = s.call("acme", "GET", "/Groups/"+gid, nil, "If-None-Match", groupTag).must(t, http.StatusOK)
	if got := r.body["members"].([]any)[0].(map[string]any)["display"]; got != "Janet" {
		t.Errorf("members.display after the user's rename: %v", got)
	}
	userTag = etag("/Users/" + id)

	s.call("acme", "PATCH", "/Groups/"+gid, patch(op("remove", "members", nil))).must(t, http.StatusOK)
	r = s.call("acme", "GET", "/Users/"+id, nil, "If-None-Match", userTag).must(t, http.StatusOK)
	if groups, ok := r.body["groups"]; ok {
		t.Errorf("groups after leaving the group: %v", groups)
	}
	s.call("acme", "GET", "/Users/"+id, nil, "If-None-Match", r.header.Get("ETag")).must(t, http.StatusNotModified)
}

func TestSeatLimit(t *testing.T) {
	s := newServer(t)
	s.store.SetSeatLimit("acme", 2)
	a := s.createUser("acme", "a@example.com")
	s.createUser("acme", "b@example.com")
	const full = "The license of the team is exceeded: 2 of 2 seats are in use."
	s.call("acme", "POST", "/Users", user("c@example.com")).wantError(t, 400, "", full)
	// Other teams have their own limit.
	s.createUser("globex", "c@example.com")
	// Deactivating frees a seat; reactivating takes it back.
	s.call("acme", "PATCH", "/Users/"+a, patch(op("replace", "active", false))).must(t, http.StatusOK)
	c := s.createUser("acme", "c@example.com")
	s.call("acme", "PUT", "/Users/"+a, user("a@example.com", "active", true)).wantError(t, 400, "", full)
	s.call("acme", "PATCH", "/Users/"+a, patch(op("replace", "active", true))).wantError(t, 400, "", full)
	s.call("acme", "DELETE", "/Users/"+c, nil).must(t, http.StatusNoContent)
	s.call("acme", "PATCH", "/Users/"+a, patch(op("replace", "active", true))).must(t, http.StatusOK)
	// Lowering the limit below the active users blocks writes that do not lower them.
	s.store.SetSeatLimit("acme", 1)
	s.call("acme", "POST", "/Groups", group("g")).
		wantError(t, 400, "", "The license of the team is exceeded: 2 of 1 seats are in use.")
	s.call("acme", "PATCH", "/Users/"+a, patch(op("replace", "active", false))).must(t, http.StatusOK)
	s.createGroup("acme", "g")
}

func TestProtocolErrors(t *testing.T) {
	s := newServer(t, scimhttp.WithMaxBodyBytes(100))
	s.call("", "GET", "/Users", nil).wantError(t, 401, "", "The request carries no valid credentials of a team.")
	s.call("acme", "GET", "/Nope", nil).wantError(t, 404, "", "no endpoint at /user-provisioning/scim/v2/Nope")
	s.call("acme", "GET", "Users", nil).wantError(t, 404, "", "no endpoint at /user-provisioning/scim/v2Users")
	s.call("acme", "GET", "", nil).wantError(t, 404, "", "no endpoint at /user-provisioning/scim/v2")
	s.call("acme", "GET", "/Users/a/b", nil).wantError(t, 404, "", "User a/b not found.")
	r := s.call("acme", "DELETE", "/Users", nil)
	r.wantError(t, 405, "", "method DELETE is not allowed on /user-provisioning/scim/v2/Users; allowed: GET, POST, HEAD")
	if got := r.header.Get("Allow"); got != "GET, POST, HEAD" {
		t.Errorf("Allow %q", got)
	}
	s.call("acme", "POST", "/Users", user(strings.Repeat("a", 80)+"@example.com")).
		wantError(t, 413, "", "The request body exceeds 100 bytes.")
	s.call("acme", "POST", "/ServiceProviderConfig", nil).
		wantError(t, 405, "", "method POST is not allowed on /user-provisioning/scim/v2/ServiceProviderConfig; allowed: GET, HEAD")

	req := func(ct string) response {
		return s.call("acme", "POST", "/Users", `{"schemas":["`+userURN+`"],"userName":"a@b.co"}`, "Content-Type", ct)
	}
	req("text/plain").wantError(t, 415, "", `Content-Type "text/plain" is not supported: send application/scim+json or application/json.`)
	req("application/json; charset=utf-8").must(t, http.StatusCreated)
	req("application/scim+json").wantError(t, 409, "uniqueness", `userName "a@b.co" is already in use.`)
}

func TestTeamOption(t *testing.T) {
	s := newServer(t, scimhttp.WithTeam(func(r *http.Request) (string, bool) {
		team := r.Header.Get("X-Tenant")
		return team, team != ""
	}))
	s.call("", "GET", "/Users", nil, "X-Tenant", "t1").must(t, http.StatusOK)
	s.call("acme", "GET", "/Users", nil).wantError(t, 401, "", "The request carries no valid credentials of a team.")
}

func q(s string) string {
	r := strings.NewReplacer(" ", "%20", `"`, "%22", "[", "%5B", "]", "%5D")
	return r.Replace(s)
}

func TestMountOptions(t *testing.T) {
	st := memory.New().SCIM()
	h := scimhttp.NewHandler(st, scimhttp.WithPrefix(""), scimhttp.WithBaseURL("https://idm.example.com/scim/v2/"),
		scimhttp.WithTeam(func(*http.Request) (string, bool) { return "t", true }))
	mux := http.NewServeMux()
	mux.Handle("/scim/v2/", http.StripPrefix("/scim/v2", h))
	r := httptest.NewRequest("POST", "http://internal:8080/scim/v2/Users", strings.NewReader(`{"schemas":["`+userURN+`"],"userName":"a@b.co"}`))
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	if w.Code != http.StatusCreated || !strings.HasPrefix(w.Header().Get("Location"), "https://idm.example.com/scim/v2/Users/") {
		t.Errorf("status %d, Location %q", w.Code, w.Header().Get("Location"))
	}
}

// TestETagsOfGroupsReadApart: a user's groups are read apart from the user, and a write
// to a group can come in between (scimtest.RacingStore makes it come). The ETag, which
// is meta.version, must still be the version of the groups the body shows (RFC 7644
// section 3.14, RFC 9110 section 8.8.3), in GET, in the response to a PATCH and in lists.
func TestETagsOfGroupsReadApart(t *testing.T) {
	st := memory.New().SCIM()
	racing := &scimtest.RacingStore{Store: st}
	s := &server{t: t, store: st, h: withTeamHeader(scimhttp.NewHandler(racing))}
	id := s.createUser("acme", "jane@example.com")
	gid := s.createGroup("acme", "G")
	setMembers := func(ids ...string) func() {
		return func() {
			members := []scim.Member{}
			for _, id := range ids {
				members = append(members, scim.Member{Value: id})
			}
			if _, err := st.ReplaceGroup(t.Context(), "acme", scim.Group{ID: gid, DisplayName: "G", Members: members}, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	stored := func() string {
		u, err := st.GetUser(t.Context(), "acme", id)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf(`W/"%d"`, u.Version)
	}
	groupsOf := func(m map[string]any) []string {
		out := []string{}
		list, _ := m["groups"].([]any)
		for _, g := range list {
			out = append(out, g.(map[string]any)["value"].(string))
		}
		return out
	}
	check := func(step string, r response, m map[string]any, wantGroups ...string) {
		t.Helper()
		meta, _ := m["meta"].(map[string]any)
		if tag := r.header.Get("ETag"); r.code != http.StatusOK || (tag != "" && tag != meta["version"]) || meta["version"] != stored() {
			t.Errorf("%s: status %d, ETag %q, meta.version %v, stored version %s", step, r.code, tag, meta["version"], stored())
		}
		if diff := cmp.Diff(append([]string{}, wantGroups...), groupsOf(m)); diff != "" {
			t.Errorf("%s: groups (-want +got):\n%s", step, diff)
		}
	}

	before := s.call("acme", "GET", "/Users/"+id, nil).must(t, http.StatusOK).header.Get("ETag")
	racing.Slip = setMembers(id)
	r := s.call("acme", "GET", "/Users/"+id, nil, "If-None-Match", before)
	check("GET while the user joins", r, r.body, gid)
	s.call("acme", "GET", "/Users/"+id, nil, "If-None-Match", r.header.Get("ETag")).must(t, http.StatusNotModified)

	racing.Slip = setMembers()
	r = s.call("acme", "PATCH", "/Users/"+id, patch(op("replace", "title", "Boss")))
	check("PATCH while the user leaves", r, r.body)

	racing.Slip = setMembers(id)
	r = s.call("acme", "GET", "/Users", nil).must(t, http.StatusOK)
	check("list while the user joins", r, r.body["Resources"].([]any)[0].(map[string]any), gid)

	// A user deleted between the read of the page and the read of its groups is left out
	// of the page, and the list still answers.
	racing.Slip = func() {
		if err := st.DeleteUser(t.Context(), "acme", id, 0); err != nil {
			t.Fatal(err)
		}
	}
	if ids := s.call("acme", "GET", "/Users", nil).must(t, http.StatusOK).ids(); len(ids) != 0 {
		t.Errorf("list while the user is deleted: %v", ids)
	}
}
