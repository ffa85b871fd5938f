package sqlstore_test

import (
	"context"
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/outage"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/sqlstore"
	"github.com/kmkit/kmkit/storage/storetest"
)

// TestGenerationReplaced opens two KMStores on one database, as two server processes
// would: after the second imports a definition that renames CUSTOMERS.SEGMENT (and its
// CSV column), the first's reads fail with ErrGenerationReplaced, an outage, those of
// SEGMENT and those of other columns alike (the store's definitions and what it knows of
// the tables are of the replaced generation), until the first definition is imported
// again. An undefined column the imports did not cause (the host drops it by hand,
// km_imports unchanged) stays the database's error, not an outage.
func TestGenerationReplaced(t *testing.T) {
	for _, b := range databases {
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
			if err := read("CUSTOMER_ID", "COUNTRY"); !errors.Is(err, sqlstore.ErrGenerationReplaced) || !outage.Is(err) {
				t.Errorf("a read of columns the rename kept: %v, want ErrGenerationReplaced as an outage", err)
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

// twoDataSets returns the demo data set and its reference, a second data set of other
// rows, and a KMStore on dsn that imported the first, with its KM.
func twoDataSets(t *testing.T, dsn string) (first, second fs.FS, ref *storetest.Reference, reader *sqlstore.KMStore, m *km.KnowledgeModel) {
	t.Helper()
	first, ref = demoReference(t)
	second, err := storetest.DemoData(45)
	if err != nil {
		t.Fatal(err)
	}
	reader = open(t, dsn).KM()
	if err := reader.Import(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	if m, err = reader.Model(t.Context(), "o2c"); err != nil {
		t.Fatal(err)
	}
	return first, second, ref, reader, m
}

// TestGenerationSnapshot reads through one KMStore (a server process) while another
// imports a second data set and the first one again, over and over: every read answers
// the store's own generation, exactly (its page and its count from the same tables, as
// the reference evaluator computes them on the first data set), or ErrGenerationReplaced
// as an outage while the tables hold the other one; never rows of the other data set,
// never a page of one and a count of the other, never another error.
func TestGenerationSnapshot(t *testing.T) {
	for _, b := range databases {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			first, second, ref, reader, m := twoDataSets(t, dsn)
			type read struct {
				plan *km.Plan
				want [][]any
				rows int // before paging
			}
			var reads []read
			for _, r := range []struct {
				ref  storetest.RefRequest
				plan km.PlanRequest
			}{
				{storetest.RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID", "NET_VALUE"}, Sort: "-NET_VALUE"},
					km.PlanRequest{Record: "ORDERS", Fields: []string{"ORDER_ID", "NET_VALUE"}, Sort: []query.SortTerm{{Field: "NET_VALUE", Desc: true}}}},
				{storetest.RefRequest{Fields: []string{"CUSTOMERS.COUNTRY"}, KPIs: []string{"TOTAL_NET"}, Sort: "CUSTOMERS.COUNTRY"},
					km.PlanRequest{Fields: []string{"CUSTOMERS.COUNTRY"}, KPIs: []string{"TOTAL_NET"}, Sort: []query.SortTerm{{Field: "CUSTOMERS.COUNTRY"}}}},
			} {
				want, err := ref.Eval(r.ref)
				if err != nil {
					t.Fatal(err)
				}
				r.plan.PageSize, r.plan.Count = 3, true
				p, err := km.NewPlan(m, &r.plan)
				if err != nil {
					t.Fatal(err)
				}
				reads = append(reads, read{plan: p, want: want.Rows[:min(3, len(want.Rows))], rows: len(want.Rows)})
			}

			other := open(t, dsn)
			var (
				done     atomic.Bool
				answered atomic.Int64
				refused  atomic.Int64
				wg       sync.WaitGroup
			)
			for i := range 3 {
				wg.Go(func() {
					for n := i; !done.Load(); n++ {
						r := reads[n%len(reads)]
						res, err := reader.Query(t.Context(), r.plan)
						if err != nil {
							if !errors.Is(err, sqlstore.ErrGenerationReplaced) || !outage.Is(err) {
								t.Errorf("a read: %v, want its answer or ErrGenerationReplaced as an outage", err)
							}
							refused.Add(1)
							continue
						}
						answered.Add(1)
						got := make([][]any, len(res.Rows))
						for i, row := range res.Rows {
							for _, v := range row {
								got[i] = append(got[i], v.Format())
							}
						}
						if res.Count != r.rows || !reflect.DeepEqual(got, r.want) {
							t.Errorf("a read answered count %d and %v, want the store's generation: count %d and %v", res.Count, got, r.rows, r.want)
						}
					}
				})
			}
			for range 6 {
				for _, data := range []fs.FS{second, first} {
					if err := other.KM().Import(t.Context(), data); err != nil {
						t.Error(err)
					}
				}
			}
			done.Store(true)
			wg.Wait()
			t.Logf("reads answered: %d; refused while the other generation was imported: %d", answered.Load(), refused.Load())
			if answered.Load() == 0 || refused.Load() == 0 {
				t.Errorf("%d reads answered, %d refused: want both", answered.Load(), refused.Load())
			}
		})
	}
}

// pageRace is a store of the first demo data set on PostgreSQL with a page of ORDERS
// and its count planned, the reference's rows of that page, and the second data set,
// which another process imports during a read.
type pageRace struct {
	dsn           string
	first, second fs.FS
	reader        *sqlstore.KMStore
	plan          *km.Plan
	want          [][]any
}

func newPageRace(t *testing.T) pageRace {
	t.Helper()
	dsn := postgresDSN(t)
	first, second, ref, reader, m := twoDataSets(t, dsn)
	p, err := km.NewPlan(m, &km.PlanRequest{Record: "ORDERS", Fields: []string{"ORDER_ID", "NET_VALUE"}, PageSize: 3, Count: true,
		Sort: []query.SortTerm{{Field: "NET_VALUE", Desc: true}}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := ref.Eval(storetest.RefRequest{Record: "ORDERS", Fields: []string{"ORDER_ID", "NET_VALUE"}, Sort: "-NET_VALUE"})
	if err != nil {
		t.Fatal(err)
	}
	return pageRace{dsn: dsn, first: first, second: second, reader: reader, plan: p, want: want.Rows}
}

// readFirst reads the page through the store and checks that it answers the first data
// set's rows and count, as the reference evaluator computes them.
func (f pageRace) readFirst(t *testing.T) {
	t.Helper()
	res, err := f.reader.Query(t.Context(), f.plan)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]any
	for _, row := range res.Rows {
		got = append(got, []any{row[0].Format(), row[1].Format()})
	}
	if res.Count != len(f.want) || !reflect.DeepEqual(got, f.want[:3]) {
		t.Errorf("count %d and %v, want the first data set's: count %d and %v", res.Count, got, len(f.want), f.want[:3])
	}
}

// TestGenerationOvertaken: on PostgreSQL another store imports the second data set just
// before a read's statements and the first one again just after them, so that the
// digests before and after the read are the store's but the statements read the other
// data set: the read notices (the versions of the km_imports rows changed) and runs
// again, answering the reference's rows of the first data set.
func TestGenerationOvertaken(t *testing.T) {
	f := newPageRace(t)
	first, second, reader, p := f.first, f.second, f.reader, f.plan
	if _, err := reader.Query(t.Context(), p); err != nil { // the tokens are known
		t.Fatal(err)
	}
	other := open(t, f.dsn)
	once := true
	sqlstore.SetConsistentReadHook(t, func(after bool) {
		if !once {
			return
		}
		data := second
		if after {
			data, once = first, false
		}
		if err := other.KM().Import(context.Background(), data); err != nil {
			t.Error(err)
		}
	})
	f.readFirst(t)
}

func TestGenerationCarried(t *testing.T) {
	f := newPageRace(t)
	second, reader, p := f.second, f.reader, f.plan
	other := open(t, f.dsn)
	once := true
	sqlstore.SetConsistentReadHook(t, func(after bool) {
		if after && once {
			once = false
			if err := other.KM().Import(context.Background(), second); err != nil {
				t.Error(err)
			}
		}
	})
	f.readFirst(t)
	if _, err := reader.Query(t.Context(), p); !errors.Is(err, sqlstore.ErrGenerationReplaced) || !outage.Is(err) {
		t.Errorf("the read after the import: %v, want ErrGenerationReplaced as an outage", err)
	}
}
