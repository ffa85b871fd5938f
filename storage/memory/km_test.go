package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

const kmTestModel = `id: m
records:
  - id: A
    source: a
    fields: [{id: ID, type: integer}, {id: B_ID, type: string}]
  - id: B
    source: b
    fields: [{id: ID, type: string}, {id: NAME, type: string}]
relationships:
  - {from: A.B_ID, to: B.ID}
kpis:
  - {id: N, expr: count(), record: A}
`

func kmTestFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{"models/m.yaml": {Data: []byte(kmTestModel)}}
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

func TestLoadKMStoreErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"missing csv", map[string]string{"data/a.csv": "ID,B_ID\n1,x\n"}, "memory: the data of source b: open data/b.csv: file does not exist"},
		{"bad cell", map[string]string{"data/a.csv": "ID,B_ID\n1,x\none,y\n", "data/b.csv": "ID,NAME\nx,X\n"},
			`data/a.csv: line 3, column 1 (ID): "one" is not an integer`},
		{"bad model", map[string]string{"models/m.yaml": "id: m\n"}, "models/m.yaml:1: a KM needs at least one record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadKMStore(kmTestFS(tt.files))
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error %v, want %s", err, tt.want)
			}
		})
	}
	two := fstest.MapFS{
		"models/m.yaml": {Data: []byte(kmTestModel)},
		"models/n.yaml": {Data: []byte("id: n\nrecords:\n  - {id: A, source: a, fields: [{id: ID, type: string}]}\n")},
	}
	if _, err := LoadKMStore(two); err == nil || err.Error() != "memory: source a: field ID is integer in one record and string in another (KM n, record A)" {
		t.Errorf("conflicting sources: %v", err)
	}
}

func TestPutModelChecksTables(t *testing.T) {
	models, err := km.Load(kmTestFS(nil))
	if err != nil {
		t.Fatal(err)
	}
	m := models[0]
	ints, strs := column.NewBuilder(query.TypeInteger), column.NewBuilder(query.TypeString)
	ints.AppendInt(1)
	strs.AppendString("x")
	a, err := column.NewTable([]string{"ID", "B_ID"}, []column.Column{ints.Build(), strs.Build()})
	if err != nil {
		t.Fatal(err)
	}
	s := NewKMStore()
	if err := s.PutModel(m); err == nil || err.Error() != `memory: KM m: record A: no table for source "a"` {
		t.Errorf("no table: %v", err)
	}
	s.PutTable("a", a)
	s.PutTable("b", a)
	if err := s.PutModel(m); err == nil || err.Error() != `memory: KM m: record B: column ID of table "b" is integer, the field is string` {
		t.Errorf("wrong type: %v", err)
	}
	one := column.NewBuilder(query.TypeString)
	one.AppendString("x")
	b, err := column.NewTable([]string{"ID"}, []column.Column{one.Build()})
	if err != nil {
		t.Fatal(err)
	}
	s.PutTable("b", b)
	if err := s.PutModel(m); err == nil || err.Error() != `memory: KM m: record B: table "b" has no column NAME` {
		t.Errorf("missing column: %v", err)
	}
	if _, err := s.Model(context.Background(), "m"); !errors.Is(err, km.ErrModelNotFound) {
		t.Errorf("a model that failed to load is found: %v", err)
	}
}

// TestKMStoreConcurrent queries one store from many goroutines, at record and KM level
// (building the cached join frame), while tables are replaced.
func TestKMStoreConcurrent(t *testing.T) {
	s, err := LoadKMStore(kmTestFS(map[string]string{
		"data/a.csv": "ID,B_ID\n1,x\n2,y\n3,x\n4,\n",
		"data/b.csv": "ID,NAME\nx,Xavier\ny,Yvonne\n",
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, err := s.Model(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := m.Plan([]string{"A", "B"})
	if err != nil {
		t.Fatal(err)
	}
	kmQuery := func() *km.Query {
		return &km.Query{Join: plan, Request: query.Request{Fields: []string{"B.NAME"},
			KPIs: []query.NamedMetric{{ID: "N", Metric: m.KPI("N").Metric()}}, Sort: []query.SortTerm{{Field: "B.NAME"}}, Page: 0, PageSize: 10}}
	}
	want := [][]query.Value{{query.String("Xavier"), query.Int(2)}, {query.String("Yvonne"), query.Int(1)}, {query.Null(query.TypeString), query.Int(1)}}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 16 {
		wg.Go(func() {
			for range 50 {
				res, err := legacyQuery(ctx, s, m, kmQuery())
				if err != nil {
					errs <- err
					return
				}
				if diff := cmp.Diff(want, res.Rows); diff != "" {
					errs <- fmt.Errorf("KM query (-want +got):\n%s", diff)
					return
				}
				res, err = legacyQuery(ctx, s, m, &km.Query{Record: "A", Request: query.Request{Fields: []string{"ID"}, Count: true, Page: 0, PageSize: 1}})
				if err != nil || res.Count != 4 {
					errs <- fmt.Errorf("record query: %v %+v", err, res)
					return
				}
			}
		})
		if i%4 == 0 {
			wg.Go(func() {
				b, _ := column.LoadCSV(strings.NewReader("ID,NAME\nx,Xavier\ny,Yvonne\n"), column.Schema{"ID": query.TypeString, "NAME": query.TypeString})
				s.PutTable("b", b)
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, err := s.Model(ctx, "zz"); !errors.Is(err, km.ErrModelNotFound) {
		t.Errorf("unknown model: %v", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := legacyQuery(canceled, s, m, kmQuery()); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled query: %v", err)
	}
}

// The store loads the KM package's shop fixture: every model and source.
func TestLoadKMStoreShop(t *testing.T) {
	s, err := LoadKMStore(os.DirFS("../../km/testdata/shop"))
	if err != nil {
		t.Fatal(err)
	}
	models, _ := s.Models(context.Background())
	var ids []string
	for _, m := range models {
		ids = append(ids, m.ID)
	}
	if diff := cmp.Diff([]string{"shop", "shop-base"}, ids); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}
