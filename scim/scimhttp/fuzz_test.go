package scimhttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/scim/scimhttp"
	"github.com/kmkit/kmkit/storage/memory"
)

// FuzzBulk posts arbitrary bodies to /Bulk: the answer is always a SCIM JSON body with a
// status the RFC allows for Bulk, never a panic or a 500.
func FuzzBulk(f *testing.F) {
	seeds := []string{
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],"Operations":[{"method":"POST","path":"/Users","bulkId":"u","data":{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"a@b.co"}},{"method":"POST","path":"/Groups","bulkId":"g","data":{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"G","members":[{"value":"bulkId:u"}]}}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],"failOnErrors":2,"Operations":[{"method":"PATCH","path":"/Users/bulkId:u","data":{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"active","value":false}]}},{"method":"DELETE","path":"/Groups/x","version":"W/\"1\""}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],"Operations":[{"method":"PUT","path":"/Users/bulkId:","data":null}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],"failOnErrors":9,"Operations":[{"method":"POST","path":"/Groups","bulkId":"g","data":{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"G","members":[{"value":"bulkId:u"},{"value":"bulkId:g"}]}},{"method":"POST","path":"/Users","bulkId":"u","data":{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"a@b.co","title":"bulkId:v"}},{"method":"post","path":"/Users","bulkId":"v","data":{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"b@b.co","title":"bulkId:u"}}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],"Operations":[{"method":"DELETE","path":"/Users/bulkId:u"},{"method":"POST","path":"/Users","bulkId":"u","data":{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"a@b.co"}},{"method":"POST","path":"/Users","bulkId":"u","data":{}}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],"failOnErrors":-1}`,
		`{"Operations":[]}`, `[]`, `{`, ``, `null`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		h := scimhttp.NewHandler(memory.New().SCIM(), scimhttp.WithTeam(func(*http.Request) (string, bool) { return "t", true }))
		r := httptest.NewRequest("POST", "http://x"+scimhttp.BasePath+"/Bulk", strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch w.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for %q: %s", w.Code, body, w.Body)
		}
		if ct := w.Header().Get("Content-Type"); ct != scimhttp.ContentType {
			t.Fatalf("Content-Type %q", ct)
		}
		var out struct {
			Schemas    []string
			Operations []struct{ Status string }
		}
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || len(out.Schemas) != 1 {
			t.Fatalf("body %s: %v", w.Body, err)
		}
		for _, op := range out.Operations {
			if op.Status == "500" {
				t.Fatalf("operation failed with 500 for %q: %s", body, w.Body)
			}
		}
	})
}

// FuzzListFilter sends arbitrary filters and attributes to GET /Users: 200 or 400 only.
func FuzzListFilter(f *testing.F) {
	for _, s := range []string{`userName eq "a@b.co"`, `id eq "1" and externalId eq "2"`, `title co "x"`, `(`, `members[value eq "1"]`,
		`emails[type eq "work"].value eq "x@y.z"`, `emails[type eq "a]b\"c"].value eq "x" and userName eq "u"`, `emails.value eq "e"`} {
		f.Add(s, "")
		f.Add(`userName eq "a@b.co"`, s)
	}
	f.Add("", `emails[type eq "work"],name.givenName`)
	st := memory.New().SCIM()
	h := scimhttp.NewHandler(st, scimhttp.WithTeam(func(*http.Request) (string, bool) { return "t", true }))
	if _, err := st.CreateUser(context.Background(), "t", scim.User{UserName: "a@b.co", Attributes: map[string]any{
		"emails": []any{map[string]any{"value": "x@y.z", "type": "work"}}}}); err != nil {
		f.Fatal(err)
	}
	// filter goes to filter; attributes, a projection with value filters, to attributes.
	f.Fuzz(func(t *testing.T, filter, attributes string) {
		r := httptest.NewRequest("GET", "http://x"+scimhttp.BasePath+"/Users", nil)
		r.URL.RawQuery = "filter=" + url.QueryEscape(filter) + "&attributes=" + url.QueryEscape(attributes)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK && w.Code != http.StatusBadRequest {
			t.Fatalf("status %d for %q: %s", w.Code, filter, w.Body)
		}
	})
}

// FuzzWrites sends arbitrary bodies to the create, replace and patch endpoints of users
// and groups: the answer is a SCIM body with a 2xx or 4xx status, never a panic or a 500.
func FuzzWrites(f *testing.F) {
	seeds := []string{
		`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"a@b.co","role":"ADMIN","sendEmailOnInvitation":"true","name":{"givenName":"A"}}`,
		`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"u@b.co","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"manager":"x"}}`,
		`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"G","members":[{"value":"u"}],"role":"MEMBER"}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"active","value":"False"},{"op":"add","value":{"role":"ADMIN","displayName":"X"}}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"remove","path":"members[value eq \"u\"]"},{"op":"Remove","path":"members","value":[{"value":"u"}]}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":"u"}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"remove","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value"},{"op":"Add","path":"phoneNumbers[type eq \"mobile\"].value","value":"555"}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"displayName":"B","name.givenName":"K","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":null}}},{"op":"Replace","path":"title","value":null}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"add","path":"emails[type eq \"work\" and primary eq true]","value":{"value":"a@b.co"}},{"op":"replace","path":"members[value eq \"u\"].value","value":"u"}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"remove","path":"emails[(type eq \"work\" or type eq \"home\") and value ew \"example.com\"].display"},{"op":"add","path":"emails","value":[{"value":"a@b.co","type":"home","primary":true},{"Value":"A@B.CO","Type":"home"}]}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"emails[type eq \"home\"].primary","value":true},{"op":"replace","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User","value":{"department":"D2"}},{"op":"replace","path":"emails.type","value":"work"}]}`,
		`{}`, `[]`, `{"schemas":null}`,
	}
	for _, s := range seeds {
		for target := range uint8(6) {
			f.Add(target, s)
		}
	}
	f.Fuzz(func(t *testing.T, target uint8, body string) {
		st := memory.New().SCIM()
		h := scimhttp.NewHandler(st, scimhttp.WithTeam(func(*http.Request) (string, bool) { return "t", true }))
		send := func(method, path, body string) *httptest.ResponseRecorder {
			r := httptest.NewRequest(method, "http://x"+scimhttp.BasePath+path, strings.NewReader(body))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			return w
		}
		u := send("POST", "/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"u@b.co"}`)
		var created struct{ ID string }
		_ = json.Unmarshal(u.Body.Bytes(), &created)
		g := send("POST", "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"G0","members":[{"value":"`+created.ID+`"}]}`)
		var group struct{ ID string }
		_ = json.Unmarshal(g.Body.Bytes(), &group)
		body = strings.ReplaceAll(body, `"u"`, `"`+created.ID+`"`)
		targets := []struct{ method, path string }{
			{"POST", "/Users"}, {"PUT", "/Users/" + created.ID}, {"PATCH", "/Users/" + created.ID},
			{"POST", "/Groups"}, {"PUT", "/Groups/" + group.ID}, {"PATCH", "/Groups/" + group.ID},
		}
		tg := targets[int(target)%len(targets)]
		w := send(tg.method, tg.path, body)
		if w.Code >= 500 || w.Code < 200 {
			t.Fatalf("%s %s %q: status %d %s", tg.method, tg.path, body, w.Code, w.Body)
		}
		if w.Header().Get("Content-Type") != scimhttp.ContentType {
			t.Fatalf("Content-Type %q", w.Header().Get("Content-Type"))
		}
	})
}
