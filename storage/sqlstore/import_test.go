package sqlstore_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/storage/sqlstore"
	"github.com/kmkit/kmkit/storage/storetest"
)

// testImport imports the suite's data from several stores at once, again unchanged, and
// again with a changed file, and checks what each import left: a store whose tables
// another store's import replaced reads its own until it imports too.
func testImport(t *testing.T, dsn string) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.CopyFS(dir, storetest.Data()); err != nil {
		t.Fatal(err)
	}
	count := func(s *sqlstore.KMStore, rec string) int {
		t.Helper()
		m, err := s.Model(ctx, "suite")
		if err != nil {
			t.Fatal(err)
		}
		p, err := km.NewPlan(m, &km.PlanRequest{Record: rec, PageSize: 1, Count: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Query(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return res.Count
	}
	var wg sync.WaitGroup
	stores := make([]*sqlstore.KMStore, 3)
	for i := range stores {
		stores[i] = open(t, dsn).KM()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := stores[i].Import(ctx, os.DirFS(dir)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	db := open(t, dsn)
	digest, err := db.Imported(ctx, "st_orders")
	if err != nil || digest == "" {
		t.Fatalf("Imported(st_orders) = %q, %v", digest, err)
	}
	for _, s := range stores {
		if n := count(s, "ORDERS"); n != 12 {
			t.Fatalf("%d orders after concurrent imports, want 12", n)
		}
	}
	// Unchanged: nothing is loaded; the digest stays.
	if err := stores[0].Import(ctx, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if again, _ := db.Imported(ctx, "st_orders"); again != digest {
		t.Errorf("digest changed on an unchanged import: %s -> %s", digest, again)
	}
	// A changed file replaces the table.
	f, err := os.OpenFile(filepath.Join(dir, "data", "st_orders.csv"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("O13,C1,2026-01-01,,,,NEW,1,1,true\n")
	f.Close()
	if err := stores[1].Import(ctx, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	// A store of the replaced generation reads its own until it imports too.
	if n := count(stores[2], "ORDERS"); n != 12 {
		t.Errorf("%d orders read by a store of the replaced generation, want its own 12", n)
	}
	if err := stores[2].Import(ctx, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if n := count(stores[2], "ORDERS"); n != 13 {
		t.Errorf("%d orders after the file grew, want 13", n)
	}
	// A broken file names itself and the line, and leaves the table as it was.
	if err := os.WriteFile(filepath.Join(dir, "data", "st_orders.csv"), []byte("ID,CUST,DAY,CREATED,STAMP,AT,STATUS,NET,LATE,EXPRESS\nO1,C1,notaday,,,,,,,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := stores[1].Import(ctx, os.DirFS(dir)); err == nil {
		t.Error("a broken CSV file imported without error")
	}
	if n := count(stores[2], "ORDERS"); n != 13 {
		t.Errorf("%d orders after a failed import, want 13", n)
	}
}

func TestImportSQLite(t *testing.T) {
	testImport(t, "sqlite:"+filepath.Join(t.TempDir(), "kmkit.db"))
}

func TestImportPostgres(t *testing.T) { testImport(t, postgresDSN(t)) }
