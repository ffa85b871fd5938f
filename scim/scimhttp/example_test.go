package scimhttp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kmkit/kmkit/auth"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/scim/scimhttp"
	"github.com/kmkit/kmkit/storage/memory"
)

// The SCIM handler is mounted behind the auth middleware, which answers refused
// credentials (401) and missing permissions (403) with SCIM Error bodies too.
func ExampleNewHandler() {
	keys, err := auth.NewKeySet([]auth.Key{
		{Digest: auth.DigestOf("okta-key"), Name: "okta", Team: "acme", Permissions: []principal.Permission{principal.PermSCIM}},
		{Digest: auth.DigestOf("km-key"), Name: "reports", Team: "acme", Permissions: []principal.Permission{principal.PermKM}},
	})
	if err != nil {
		panic(err)
	}
	guard, err := auth.NewGuard(auth.Config{Authenticator: auth.Schemes{auth.SchemeAppKey: keys}})
	if err != nil {
		panic(err)
	}
	store := memory.New().SCIM()
	store.SetSeatLimit("acme", 100)
	mux := http.NewServeMux()
	mux.Handle(scimhttp.BasePath+"/", guard.Wrap(auth.Policy{Permission: principal.PermSCIM, WriteError: scimhttp.WriteProblem}, scimhttp.NewHandler(store)))

	send := func(key, method, path, body string) {
		r := httptest.NewRequest(method, "https://idm.example.com"+scimhttp.BasePath+path, strings.NewReader(body))
		r.Header.Set("Authorization", "AppKey "+key)
		r.Header.Set("Content-Type", "application/scim+json")
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		var res struct {
			Schemas  []string `json:"schemas"`
			Status   string   `json:"status"`
			UserName string   `json:"userName"`
		}
		_ = json.Unmarshal(w.Body.Bytes(), &res)
		fmt.Println(w.Code, w.Header().Get("Content-Type"), res.Schemas, strings.TrimSpace(res.Status+" "+res.UserName))
	}
	send("okta-key", "POST", "/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"jane@example.com"}`)
	send("wrong-key", "GET", "/Users", "")
	send("km-key", "GET", "/Users", "")
	// Output:
	// 201 application/scim+json [urn:ietf:params:scim:schemas:core:2.0:User urn:celonis:params:scim:schemas:extension:2.0:User] jane@example.com
	// 401 application/scim+json [urn:ietf:params:scim:api:messages:2.0:Error] 401
	// 403 application/scim+json [urn:ietf:params:scim:api:messages:2.0:Error] 403
}
