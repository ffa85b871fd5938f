package sqlstore_test

import (
	"errors"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

const uniqueHostModel = `id: hosted
records:
  - id: C
    source: uh_c
    fields: [{id: ID, type: string}, {id: P_ID, type: integer}]
  - id: P
    source: uh_p
    key: ID
    fields: [{id: ID, type: integer}, {id: NAME, type: string}]
relationships:
  - {from: C.P_ID, to: P.ID}
`

// TestPutModelChecksTargets registers a KM with PutModel over tables no import checked (a
// host's, here loaded with LoadTable): a relationship target holding a value twice is
// refused, naming the relationship and the value; nulls twice in it, and values repeated
// in fields that are no target, are not.
func TestPutModelChecksTargets(t *testing.T) {
	models, err := km.Load(fstest.MapFS{"models/hosted.yaml": {Data: []byte(uniqueHostModel)}})
	if err != nil {
		t.Fatal(err)
	}
	m := models[0]
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) {
			db := open(t, b.dsn(t))
			load := func(table, digest string, cols []sqlstore.ColumnDef, rows ...[]any) {
				t.Helper()
				if err := db.LoadTable(t.Context(), table, cols, &sqlstore.SliceRows{Rows: rows}, nil, digest); err != nil {
					t.Fatal(err)
				}
			}
			load("uh_c", "1", []sqlstore.ColumnDef{{Name: "ID", Type: query.TypeString}, {Name: "P_ID", Type: query.TypeInteger}},
				[]any{"c1", int64(2)}, []any{"c2", int64(2)}, []any{"c3", nil})
			parents := []sqlstore.ColumnDef{{Name: "ID", Type: query.TypeInteger}, {Name: "NAME", Type: query.TypeString}}
			load("uh_p", "1", parents, []any{int64(1), "x"}, []any{int64(2), "x"}, []any{int64(2), "y"}, []any{nil, "z"})
			s := db.KM()
			err := s.PutModel(t.Context(), m)
			const want = `sqlstore: KM hosted: source "uh_p": relationship C.P_ID -> P.ID: P.ID holds 2 in more than one row; the target of a relationship must be unique`
			if !errors.Is(err, km.ErrDuplicateTarget) || err.Error() != want {
				t.Fatalf("PutModel over a target holding 2 twice: %v, want %s", err, want)
			}
			if _, err := s.Model(t.Context(), "hosted"); !errors.Is(err, km.ErrModelNotFound) {
				t.Errorf("the refused KM is found: %v", err)
			}
			load("uh_p", "2", parents, []any{int64(1), "x"}, []any{int64(2), "x"}, []any{nil, "y"}, []any{nil, "z"})
			if err := s.PutModel(t.Context(), m); err != nil {
				t.Errorf("PutModel over a unique target with nulls: %v", err)
			}
		})
	}
}
