package kmkit_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/storage/memory"
	"github.com/kmkit/kmkit/storage/storetest"
)

// TestTeamsOverHTTP checks team scoping of KMs through the KM API and OData: a caller
// lists only the KMs of its team, and any other KM answers exactly like a KM that does
// not exist, on every endpoint that names a KM. (The conformance suite checks the same
// of km.Service on every backend.)
func TestTeamsOverHTTP(t *testing.T) {
	s := memory.New().KM()
	ctx := context.Background()
	if err := s.Import(ctx, storetest.TeamsData()); err != nil {
		t.Fatal(err)
	}
	kmh := kmhttp.NewHandler(s)
	odh := odata.NewHandler(s)
	as := func(team string) context.Context {
		return principal.NewContext(ctx, &principal.Principal{Name: "k-" + team, Team: team, Permissions: []principal.Permission{principal.PermKM, principal.PermOData}})
	}
	do := func(t *testing.T, ctx context.Context, h http.Handler, method, path, body string) (int, string) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req := httptest.NewRequestWithContext(ctx, method, path, rd)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	listed := func(t *testing.T, ctx context.Context) []string {
		t.Helper()
		code, body := do(t, ctx, kmh, http.MethodGet, kmhttp.BasePath+"/knowledge-models", "")
		if code != http.StatusOK {
			t.Fatalf("list: %d %s", code, body)
		}
		var page struct {
			Content []struct {
				ID string `json:"id"`
			} `json:"content"`
		}
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatalf("list: %v: %s", err, body)
		}
		var ids []string
		for _, c := range page.Content {
			ids = append(ids, c.ID)
		}
		return ids
	}
	all := []string{"open", "scoped", "scoped-ext"}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want []string
	}{
		{"member team", as("acme"), all},
		{"other member team", as("globex"), all},
		{"another team", as("beta"), []string{"open"}},
		{"principal without team", as(""), []string{"open"}},
		{"no principal", ctx, []string{"open"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, listed(t, tc.ctx)); diff != "" {
				t.Errorf("listed KMs (-want +got):\n%s", diff)
			}
			for _, id := range all {
				sees := false
				for _, w := range tc.want {
					sees = sees || w == id
				}
				for _, r := range []struct {
					h            http.Handler
					method, path string
					body         string
				}{
					{kmh, http.MethodGet, kmhttp.BasePath + "/knowledge-models/" + id, ""},
					{kmh, http.MethodGet, kmhttp.BasePath + "/knowledge-models/" + id + "/records", ""},
					{kmh, http.MethodPost, kmhttp.BasePath + "/knowledge-models/" + id + "/data", `{"projection":{"fields":"T.ID"}}`},
					{kmh, http.MethodGet, kmhttp.BasePath + "/knowledge-models/" + id + "/records/T/data?fields=ID&pageSize=10", ""},
					{odh, http.MethodGet, odata.BasePath + "/" + id + ".svc/", ""},
					{odh, http.MethodGet, odata.BasePath + "/" + id + ".svc/$metadata", ""},
				} {
					code, body := do(t, tc.ctx, r.h, r.method, r.path, r.body)
					if sees {
						if code != http.StatusOK {
							t.Errorf("%s %s: %d %s, want 200", r.method, r.path, code, body)
						}
						continue
					}
					// The answer for a KM that does not exist, with its id in place of "absent".
					absent := strings.Replace(r.path, "/"+id, "/absent", 1)
					wantCode, wantBody := do(t, tc.ctx, r.h, r.method, absent, r.body)
					wantBody = strings.ReplaceAll(wantBody, `\"absent\"`, `\"`+id+`\"`)
					if wantCode != http.StatusNotFound || !strings.Contains(wantBody, "MODEL_NOTFOUND") {
						t.Fatalf("%s %s: a missing KM answers %d %s, want 404 *_MODEL_NOTFOUND", r.method, absent, wantCode, wantBody)
					}
					if code != wantCode || body != wantBody {
						t.Errorf("%s %s: %d %s\nwant the answer for a missing KM: %d %s", r.method, r.path, code, body, wantCode, wantBody)
					}
				}
			}
		})
	}
}
