package storetest

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/principal"
)

// teamsData is a data directory of three KMs over one table: open (no teams), scoped
// (teams acme and globex) and scoped-ext (extends scoped and lists no teams, so it has
// scoped's).
func teamsData() fstest.MapFS {
	return fstest.MapFS{
		"models/open.yaml": {Data: []byte(`id: open
records:
  - id: T
    source: st_teams
    fields:
      - {id: ID, type: string}
      - {id: N, type: integer}
`)},
		"models/scoped.yaml": {Data: []byte(`id: scoped
teams: [acme, globex]
records:
  - id: T
    source: st_teams
    fields:
      - {id: ID, type: string}
      - {id: N, type: integer}
`)},
		"models/scoped-ext.yaml": {Data: []byte(`id: scoped-ext
extends: scoped
`)},
		"data/st_teams.csv": {Data: []byte("ID,N\na,1\nb,2\n")},
	}
}

// runTeams checks team scoping of KMs (km.KnowledgeModel.Teams) on a store: the store
// keeps the definition's teams, and through the KM API and OData a caller sees only the
// KMs of its team; any other KM answers exactly like a KM that does not exist.
func runTeams(t *testing.T, newStore func(t *testing.T, data fs.FS) km.Store) {
	s := newStore(t, teamsData())
	ctx := context.Background()
	m, err := s.Model(ctx, "scoped-ext")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"acme", "globex"}, m.Teams); diff != "" {
		t.Errorf("teams of scoped-ext, inherited from scoped (-want +got):\n%s", diff)
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
