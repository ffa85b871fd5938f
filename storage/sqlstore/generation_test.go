package sqlstore_test

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/outage"
	"github.com/kmkit/kmkit/storage/sqlstore"
	"github.com/kmkit/kmkit/storage/storetest"
)

// TestGenerationReplaced opens two KMStores on one database, as two server processes
// would: after the second imports a definition that renames CUSTOMERS.SEGMENT (and its
// CSV column), the first's reads of SEGMENT fail with ErrGenerationReplaced, an outage,
// and its reads of other columns answer from the new table. An undefined column the
// imports did not cause (the host drops it by hand, km_imports unchanged) stays the
// database's error, not an outage.
func TestGenerationReplaced(t *testing.T) {
	for _, b := range []struct {
		name string
		dsn  func(testing.TB) string
	}{
		{"SQLite", func(t testing.TB) string { return "sqlite:" + t.TempDir() + "/kmkit.db" }},
		{"Postgres", func(t testing.TB) string { return postgresDSN(t) }},
	} {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			data, err := storetest.DemoData(40)
			if err != nil {
				t.Fatal(err)
			}
			renamed := fstest.MapFS{}
			for name, f := range data.(fstest.MapFS) {
				text := string(f.Data)
				switch {
				case strings.HasPrefix(name, "models/"):
					text = strings.ReplaceAll(text, "SEGMENT", "SEGMENT_CODE")
				case name == "data/customers.csv":
					header, rest, _ := strings.Cut(text, "\n")
					text = strings.Replace(header, "SEGMENT", "SEGMENT_CODE", 1) + "\n" + rest
				}
				renamed[name] = &fstest.MapFile{Data: []byte(text)}
			}
			b1 := open(t, dsn).KM()
			if err := b1.Import(t.Context(), data); err != nil {
				t.Fatal(err)
			}
			m, err := b1.Model(t.Context(), "o2c")
			if err != nil {
				t.Fatal(err)
			}
			read := func(fields ...string) error {
				p, err := km.NewPlan(m, &km.PlanRequest{Record: "CUSTOMERS", Fields: fields, PageSize: 5})
				if err != nil {
					t.Fatal(err)
				}
				_, err = b1.Query(t.Context(), p)
				return err
			}
			if err := read("CUSTOMER_ID", "SEGMENT"); err != nil {
				t.Fatal(err)
			}
			db2 := open(t, dsn)
			if err := db2.KM().Import(t.Context(), renamed); err != nil {
				t.Fatal(err)
			}
			err = read("CUSTOMER_ID", "SEGMENT")
			if !errors.Is(err, sqlstore.ErrGenerationReplaced) || !outage.Is(err) {
				t.Errorf("a read of the renamed column: %v, want ErrGenerationReplaced as an outage", err)
			}
			if err := read("CUSTOMER_ID", "COUNTRY"); err != nil {
				t.Errorf("a read of columns the rename kept: %v", err)
			}

			// The first definition again, and a column dropped by hand.
			if err := db2.KM().Import(t.Context(), data); err != nil {
				t.Fatal(err)
			}
			if err := read("CUSTOMER_ID", "SEGMENT"); err != nil {
				t.Fatalf("after the first definition came back: %v", err)
			}
			for _, stmt := range []string{
				`DROP INDEX IF EXISTS "` + sqlstore.IndexName("customers", []string{"SEGMENT"}) + `"`, // SQLite drops no indexed column
				`ALTER TABLE customers DROP COLUMN "SEGMENT"`,
			} {
				if _, err := db2.SQL().ExecContext(t.Context(), stmt); err != nil {
					t.Fatal(err)
				}
			}
			err = read("CUSTOMER_ID", "SEGMENT")
			if err == nil || errors.Is(err, sqlstore.ErrGenerationReplaced) || outage.Is(err) {
				t.Errorf("a column dropped by hand: %v, want the database's error, not an outage", err)
			}
		})
	}
}
