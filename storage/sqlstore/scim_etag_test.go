package sqlstore_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/scim/scimhttp"
	"github.com/kmkit/kmkit/scim/scimtest"
)

// TestSCIMUserETagsFollowGroups checks, over HTTP on both databases, that a user's ETag is
// the version of the representation it goes with, groups included (RFC 7644 section
// 3.14): a membership change changes it, If-None-Match answers 304 only for the current
// representation, the ETag equals meta.version also when the membership changes between
// the read of the user and the read of its groups, and If-Match on the user refuses a
// version from before a membership change.
func TestSCIMUserETagsFollowGroups(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			st := open(t, db.dsn(t)).SCIM()
			racing := &scimtest.RacingStore{Store: st}
			h := scimhttp.NewHandler(racing)
			p := &principal.Principal{Name: "idp", Team: "acme", Permissions: []principal.Permission{principal.PermSCIM}}
			type answer struct {
				code int
				etag string
				body map[string]any
			}
			do := func(method, path, body string, header ...string) answer {
				t.Helper()
				r := httptest.NewRequest(method, "http://idm.example"+scimhttp.BasePath+path, strings.NewReader(body))
				r.Header.Set("Content-Type", "application/scim+json")
				for i := 0; i+1 < len(header); i += 2 {
					r.Header.Set(header[i], header[i+1])
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r.WithContext(principal.NewContext(r.Context(), p)))
				a := answer{code: w.Code, etag: w.Header().Get("ETag")}
				if w.Body.Len() > 0 {
					if err := json.Unmarshal(w.Body.Bytes(), &a.body); err != nil {
						t.Fatalf("%s %s: %v %s", method, path, err, w.Body)
					}
				}
				return a
			}
			id := do("POST", "/Users", userBody("jane@example.com")).body["id"].(string)
			// user checks a 200 answer of the user: its ETag is its meta.version and the
			// stored version, and its groups are want.
			user := func(step string, a answer, want ...string) string {
				t.Helper()
				meta, _ := a.body["meta"].(map[string]any)
				u, err := st.GetUser(t.Context(), "acme", id)
				if err != nil {
					t.Fatal(err)
				}
				if a.code != http.StatusOK || a.etag != meta["version"] || a.etag != fmt.Sprintf(`W/"%d"`, u.Version) {
					t.Errorf("%s: status %d, ETag %q, meta.version %v, stored version %d", step, a.code, a.etag, meta["version"], u.Version)
				}
				got := []string{}
				list, _ := a.body["groups"].([]any)
				for _, g := range list {
					got = append(got, g.(map[string]any)["value"].(string))
				}
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("%s: groups %v, want %v", step, got, want)
				}
				return a.etag
			}
			gid := do("POST", "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"G",
				"members":[{"value":"`+id+`"}]}`).body["id"].(string)
			inG := user("GET a member", do("GET", "/Users/"+id, ""), gid)
			if a := do("GET", "/Users/"+id, "", "If-None-Match", inG); a.code != http.StatusNotModified || a.etag != inG {
				t.Errorf("GET with the current ETag: %d %q", a.code, a.etag)
			}

			do("PATCH", "/Groups/"+gid, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
				"Operations":[{"op":"remove","path":"members","value":[{"value":"`+id+`"}]}]}`)
			left := user("GET after leaving, with the ETag of before", do("GET", "/Users/"+id, "", "If-None-Match", inG))
			if left == inG {
				t.Errorf("leaving the group left the ETag %s", left)
			}
			if a := do("PUT", "/Users/"+id, userBody("jane@example.com"), "If-Match", inG); a.code != http.StatusPreconditionFailed {
				t.Errorf("PUT with the ETag of before leaving: %d, want 412", a.code)
			}

			// The user joins the group again between the read of the user and the read
			// of its groups.
			racing.Slip = func() {
				if _, err := st.ReplaceGroup(t.Context(), "acme", scim.Group{ID: gid, DisplayName: "G", Members: []scim.Member{{Value: id}}}, 0); err != nil {
					t.Fatal(err)
				}
			}
			again := user("GET while joining", do("GET", "/Users/"+id, "", "If-None-Match", left), gid)
			if a := do("PATCH", "/Users/"+id, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
				"Operations":[{"op":"replace","path":"title","value":"T"}]}`, "If-Match", left); a.code != http.StatusPreconditionFailed {
				t.Errorf("PATCH with the ETag of before joining: %d, want 412", a.code)
			}
			user("PATCH with the current ETag", do("PATCH", "/Users/"+id, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
				"Operations":[{"op":"replace","path":"title","value":"T"}]}`, "If-Match", again), gid)
		})
	}
}
