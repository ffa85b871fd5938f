package storetest

import (
	"context"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/principal"
)

// TeamsData is a data directory of three KMs over one table: open (no teams), scoped
// (teams acme and globex) and scoped-ext (extends scoped and lists no teams, so it has
// scoped's).
func TeamsData() fstest.MapFS {
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
// keeps the definition's teams, and through the request layer (km.Service) a caller sees
// only the KMs of its team; any other KM is refused exactly like a KM that does not
// exist. (The root package's TestTeamsOverHTTP checks the same through the KM API and
// OData.)
func runTeams(t *testing.T, newStore func(t *testing.T, data fs.FS) km.Store) {
	s := newStore(t, TeamsData())
	ctx := context.Background()
	m, err := s.Model(ctx, "scoped-ext")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"acme", "globex"}, m.Teams); diff != "" {
		t.Errorf("teams of scoped-ext, inherited from scoped (-want +got):\n%s", diff)
	}
	svc := km.NewService(s)
	as := func(team string) context.Context {
		return principal.NewContext(ctx, &principal.Principal{Name: "k-" + team, Team: team, Permissions: []principal.Permission{principal.PermKM, principal.PermOData}})
	}
	listed := func(t *testing.T, ctx context.Context) []string {
		t.Helper()
		ms, err := svc.Models(ctx)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		var ids []string
		for _, m := range ms {
			ids = append(ids, m.ID)
		}
		return ids
	}
	// asks are the questions a surface asks about a KM: the KM, rows at KM level and at
	// record level. Each returns the error.
	asks := []struct {
		name string
		ask  func(ctx context.Context, id string) error
	}{
		{"model", func(ctx context.Context, id string) error { _, err := svc.Model(ctx, id); return err }},
		{"KM-level query", func(ctx context.Context, id string) error {
			_, err := svc.Query(ctx, id, &km.Request{Fields: []string{"T.ID"}, PageSize: 10})
			return err
		}},
		{"record query", func(ctx context.Context, id string) error {
			_, err := svc.Query(ctx, id, &km.Request{Record: "T", Fields: []string{"ID"}, PageSize: 10})
			return err
		}},
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
				sees := slices.Contains(tc.want, id)
				for _, a := range asks {
					err := a.ask(tc.ctx, id)
					if sees {
						if err != nil {
							t.Errorf("%s of %s: %v, want an answer", a.name, id, err)
						}
						continue
					}
					// The refusal of a KM that does not exist, with its id in place of "absent".
					absent := a.ask(tc.ctx, "absent")
					ap, ok := km.AsProblem(absent)
					if !ok || ap.Status != 404 || ap.ErrorCode != km.CodeModelNotFound {
						t.Fatalf("%s of a missing KM: %v, want 404 %s", a.name, absent, km.CodeModelNotFound)
					}
					p, ok := km.AsProblem(err)
					if !ok || p.Status != ap.Status || p.ErrorCode != ap.ErrorCode || p.Detail != strings.ReplaceAll(ap.Detail, `"absent"`, strconv.Quote(id)) {
						t.Errorf("%s of %s: %v\nwant the refusal of a missing KM: %v", a.name, id, err, absent)
					}
				}
			}
		})
	}
}
