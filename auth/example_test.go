package auth_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/kmkit/kmkit/auth"
	"github.com/kmkit/kmkit/principal"
)

// A host mounts each API behind the Guard's middleware for its family.
func ExampleGuard() {
	keys, err := auth.NewKeySet([]auth.Key{{
		Digest:      auth.DigestOf("my-secret-key"),
		Name:        "reporting-job",
		Team:        "acme",
		Permissions: []principal.Permission{principal.PermKM},
	}})
	if err != nil {
		panic(err)
	}
	guard, err := auth.NewGuard(auth.Config{
		Authenticator: auth.Schemes{auth.SchemeAppKey: keys, auth.SchemeAPIKey: keys},
		Limits:        auth.Limits{PerWindow: 1000},
	})
	if err != nil {
		panic(err)
	}
	models := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := principal.FromContext(r.Context())
		fmt.Fprintf(w, "models of team %s", p.Team)
	})
	mux := http.NewServeMux()
	mux.Handle("/intelligence/api/", guard.KM(models))

	for _, authz := range []string{"AppKey my-secret-key", "AppKey wrong", ""} {
		r := httptest.NewRequest(http.MethodGet, "/intelligence/api/knowledge-models", nil)
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		fmt.Println(w.Code, w.Header().Get("X-RateLimit-Remaining"), w.Body.String())
	}
	// Output:
	// 200 999 models of team acme
	// 401  {"error":"invalid application key"}
	// 401  {"error":"missing credentials: send the Authorization header with the AppKey or Bearer scheme, or the AppKey header"}
}

// Hosts that authenticate requests themselves put their principal in the context and
// answer failures in the shape each API's clients expect.
func ExampleFamily_WriteError() {
	w := httptest.NewRecorder()
	auth.FamilySCIM.WriteError(w, http.StatusUnauthorized, "session expired")
	fmt.Println(w.Code, w.Header().Get("Content-Type"))
	fmt.Println(w.Body.String())
	// Output:
	// 401 application/scim+json
	// {"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"401","detail":"session expired"}
}
