package scim_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/storage/memory"
)

// FuzzBulk posts arbitrary bodies to /Bulk: the answer is always a SCIM JSON body with a
// status the RFC allows for Bulk, never a panic or a 500.
func FuzzBulk(f *testing.F) {
	seeds := []string{
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],"Operations":[{"method":"POST","path":"/Users","bulkId":"u","data":{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"a@b.co"}},{"method":"POST","path":"/Groups","bulkId":"g","data":{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"G","members":[{"value":"bulkId:u"}]}}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],"failOnErrors":2,"Operations":[{"method":"PATCH","path":"/Users/bulkId:u","data":{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"active","value":false}]}},{"method":"DELETE","path":"/Groups/x","version":"W/\"1\""}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],"Operations":[{"method":"PUT","path":"/Users/bulkId:","data":null}]}`,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],"failOnErrors":-1}`,
		`{"Operations":[]}`, `[]`, `{`, ``, `null`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		h := scim.NewHandler(memory.NewSCIMStore(), scim.WithTeam(func(*http.Request) (string, bool) { return "t", true }))
		r := httptest.NewRequest("POST", "http://x"+scim.DefaultPrefix+"/Bulk", strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch w.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for %q: %s", w.Code, body, w.Body)
		}
		if ct := w.Header().Get("Content-Type"); ct != scim.ContentType {
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

// FuzzListFilter sends arbitrary filters to GET /Users: 200 or 400 invalidFilter only.
func FuzzListFilter(f *testing.F) {
	for _, s := range []string{`userName eq "a@b.co"`, `id eq "1" and externalId eq "2"`, `title co "x"`, `(`, `members[value eq "1"]`} {
		f.Add(s)
	}
	h := scim.NewHandler(memory.NewSCIMStore(), scim.WithTeam(func(*http.Request) (string, bool) { return "t", true }))
	f.Fuzz(func(t *testing.T, filter string) {
		r := httptest.NewRequest("GET", "http://x"+scim.DefaultPrefix+"/Users", nil)
		r.URL.RawQuery = "filter=" + url.QueryEscape(filter)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK && w.Code != http.StatusBadRequest {
			t.Fatalf("status %d for %q: %s", w.Code, filter, w.Body)
		}
	})
}
