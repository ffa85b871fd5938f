package auth_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/kmkit/kmkit/auth"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/problem"
)

// A host mounts each API behind the Guard's middleware with the API's policy: its
// permission and the writer of its error bodies.
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
	kmPolicy := auth.Policy{Permission: principal.PermKM, WriteError: kmhttp.WriteProblem}
	mux.Handle("/intelligence/api/", guard.Wrap(kmPolicy, models))

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

// The Guard knows no API's error shape: a policy's writer decides it. Here an API of the
// host's own answers in plain text, and takes keys in the x-api-key header.
func ExamplePolicy() {
	keys, err := auth.NewKeySet([]auth.Key{{Digest: auth.DigestOf("job-key"), Name: "job", Permissions: []principal.Permission{"jobs"}}})
	if err != nil {
		panic(err)
	}
	guard, err := auth.NewGuard(auth.Config{Authenticator: keys})
	if err != nil {
		panic(err)
	}
	policy := auth.Policy{
		Permission:  "jobs",
		Credentials: auth.APIKeyHeader,
		WriteError: func(w http.ResponseWriter, p *problem.Problem) {
			http.Error(w, p.ErrorCode+": "+p.Detail, p.Status)
		},
	}
	jobs := guard.Wrap(policy, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "jobs")
	}))
	for _, key := range []string{"job-key", "wrong"} {
		r := httptest.NewRequest(http.MethodGet, "/jobs", nil)
		r.Header.Set("x-api-key", key)
		w := httptest.NewRecorder()
		jobs.ServeHTTP(w, r)
		fmt.Print(w.Code, " ", w.Header().Get("WWW-Authenticate"), " ", w.Body.String())
	}
	// Output:
	// 200  jobs
	// 401 x-api-key realm="kmkit" ADMIN_AUTHENTICATION_ERROR: invalid application key
}
