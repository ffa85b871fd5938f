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

// TestImportErrors checks that a failed Import names the file and the line, and leaves
// the store as it was.
func TestImportErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"missing csv", map[string]string{"data/a.csv": "ID,B_ID\n1,x\n"}, "memory: the data of source b: open data/b.csv: file does not exist"},
		{"bad cell", map[string]string{"data/a.csv": "ID,B_ID\n1,x\none,y\n", "data/b.csv": "ID,NAME\nx,X\n"},
			`data/a.csv: line 3, column 1 (ID): "one" is not an integer`},
		{"bad model", map[string]string{"models/m.yaml": "id: m\n"}, "models/m.yaml:1: a KM needs at least one record"},
		{"relationship target twice", map[string]string{"data/a.csv": "ID,B_ID\n1,x\n2,x\n", "data/b.csv": "ID,NAME\nx,X\ny,Y\n,Z\n,W\nx,X2\n"},
			`memory: KM m: the data of source b: relationship A.B_ID -> B.ID: B.ID holds "x" in more than one row; the target of a relationship must be unique`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New().KM()
			err := s.Import(ctx, kmTestFS(tt.files))
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error %v, want %s", err, tt.want)
			}
			if ms, err := s.Models(ctx); err != nil || len(ms) != 0 {
				t.Errorf("after a failed Import the store holds %d models (%v), want none", len(ms), err)
			}
		})
	}
	two := fstest.MapFS{
		"models/m.yaml": {Data: []byte(kmTestModel)},
		"models/n.yaml": {Data: []byte("id: n\nrecords:\n  - {id: A, source: a, fields: [{id: ID, type: string}]}\n")},
	}
	if err := New().KM().Import(ctx, two); err == nil || err.Error() != "memory: source a: field ID is integer in one record and string in another (KM n, record A)" {
		t.Errorf("conflicting sources: %v", err)
	}
}

// TestImportIntoAStore imports a second directory into a store holding one: its KM and
// tables are added, a KM of the same id is replaced, and an import that fails, or whose
// tables no longer fit a KM the store keeps, changes nothing.
func TestImportIntoAStore(t *testing.T) {
	ctx := context.Background()
	s := New().KM()
	first := kmTestFS(map[string]string{"data/a.csv": "ID,B_ID\n1,x\n2,y\n", "data/b.csv": "ID,NAME\nx,X\ny,Y\n"})
	if err := s.Import(ctx, first); err != nil {
		t.Fatal(err)
	}
	rows := func(model, record string) int {
		t.Helper()
		m, err := s.Model(ctx, model)
		if err != nil {
			t.Fatal(err)
		}
		p, err := km.NewPlan(m, &km.PlanRequest{Record: record, PageSize: 1, Count: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Query(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return res.Count
	}
	second := fstest.MapFS{
		"models/n.yaml": {Data: []byte("id: n\nrecords:\n  - {id: C, source: c, fields: [{id: ID, type: string}]}\n")},
		"data/c.csv":    {Data: []byte("ID\np\nq\nr\n")},
	}
	if err := s.Import(ctx, second); err != nil {
		t.Fatal(err)
	}
	if got := [2]int{rows("m", "A"), rows("n", "C")}; got != [2]int{2, 3} {
		t.Errorf("rows of m.A and n.C after a second import = %v, want [2 3]", got)
	}
	// A failing import (a bad cell) leaves both KMs and their tables as they were.
	bad := kmTestFS(map[string]string{"data/a.csv": "ID,B_ID\n1,x\n2,y\n3,z\n", "data/b.csv": "ID,NAME\nx,X\nnot,a,row\n"})
	if err := s.Import(ctx, bad); err == nil {
		t.Fatal("an import of a malformed CSV file succeeded")
	}
	// A table replaced under a KM it no longer fits (n's source c, now without ID) fails too.
	clash := fstest.MapFS{
		"models/o.yaml": {Data: []byte("id: o\nrecords:\n  - {id: C, source: c, fields: [{id: V, type: integer}]}\n")},
		"data/c.csv":    {Data: []byte("V\n1\n")},
	}
	if err := s.Import(ctx, clash); err == nil || err.Error() != `memory: KM n: record C: table "c" has no column ID` {
		t.Errorf("an import breaking KM n: %v", err)
	}
	if got := [3]int{rows("m", "A"), rows("m", "B"), rows("n", "C")}; got != [3]int{2, 2, 3} {
		t.Errorf("rows of m.A, m.B and n.C after failed imports = %v, want [2 2 3]", got)
	}
	if _, err := s.Model(ctx, "o"); !errors.Is(err, km.ErrModelNotFound) {
		t.Errorf("the KM of a failed import is found: %v", err)
	}
	// Importing m again with more rows replaces its tables.
	if err := s.Import(ctx, kmTestFS(map[string]string{"data/a.csv": "ID,B_ID\n1,x\n2,y\n3,x\n", "data/b.csv": "ID,NAME\nx,X\ny,Y\n"})); err != nil {
		t.Fatal(err)
	}
	if got := rows("m", "A"); got != 3 {
		t.Errorf("rows of m.A after a re-import = %d, want 3", got)
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
	s := New().KM()
	if err := s.PutModel(context.Background(), m); err == nil || err.Error() != `memory: KM m: record A: no table for source "a"` {
		t.Errorf("no table: %v", err)
	}
	s.PutTable("a", a)
	s.PutTable("b", a)
	if err := s.PutModel(context.Background(), m); err == nil || err.Error() != `memory: KM m: record B: column ID of table "b" is integer, the field is string` {
		t.Errorf("wrong type: %v", err)
	}
	one := column.NewBuilder(query.TypeString)
	one.AppendString("x")
	b, err := column.NewTable([]string{"ID"}, []column.Column{one.Build()})
	if err != nil {
		t.Fatal(err)
	}
	s.PutTable("b", b)
	if err := s.PutModel(context.Background(), m); err == nil || err.Error() != `memory: KM m: record B: table "b" has no column NAME` {
		t.Errorf("missing column: %v", err)
	}
	two := column.NewBuilder(query.TypeString)
	two.AppendString("x")
	two.AppendString("x")
	b, err = column.NewTable([]string{"ID", "NAME"}, []column.Column{two.Build(), two.Build()})
	if err != nil {
		t.Fatal(err)
	}
	s.PutTable("b", b)
	if err := s.PutModel(context.Background(), m); !errors.Is(err, km.ErrDuplicateTarget) ||
		err.Error() != `memory: KM m: the data of source b: relationship A.B_ID -> B.ID: B.ID holds "x" in more than one row; the target of a relationship must be unique` {
		t.Errorf("a relationship target holding x twice: %v", err)
	}
	if _, err := s.Model(context.Background(), "m"); !errors.Is(err, km.ErrModelNotFound) {
		t.Errorf("a model that failed to load is found: %v", err)
	}
}

// TestDuplicateTargetAtQueryTime puts a table whose relationship target holds a value twice
// under a KM already in the store (PutTable cannot refuse it): a query joining through the
// relationship fails with the 409 an API answers, naming the relationship and the value,
// and a query of the record alone still answers.
func TestDuplicateTargetAtQueryTime(t *testing.T) {
	ctx := context.Background()
	s := New().KM()
	if err := s.Import(ctx, kmTestFS(map[string]string{"data/a.csv": "ID,B_ID\n1,x\n2,y\n", "data/b.csv": "ID,NAME\nx,X\ny,Y\n"})); err != nil {
		t.Fatal(err)
	}
	ids, names := column.NewBuilder(query.TypeString), column.NewBuilder(query.TypeString)
	for _, row := range [][2]string{{"x", "X"}, {"y", "Y"}, {"y", "Y2"}} {
		ids.AppendString(row[0])
		names.AppendString(row[1])
	}
	b, err := column.NewTable([]string{"ID", "NAME"}, []column.Column{ids.Build(), names.Build()})
	if err != nil {
		t.Fatal(err)
	}
	s.PutTable("b", b)
	m, err := s.Model(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Warm(); err != nil {
		t.Fatalf("Warm leaves the errors of the relationships to the queries: %v", err)
	}
	_, err = runRequest(ctx, s, m, &km.PlanRequest{Fields: []string{"A.ID", "B.NAME"}, PageSize: 10})
	const want = `relationship A.B_ID -> B.ID: B.ID holds "y" in more than one row; the target of a relationship must be unique`
	if !errors.Is(err, km.ErrDuplicateTarget) || !strings.Contains(err.Error(), want) {
		t.Fatalf("a query joining through the duplicated target: %v, want %s", err, want)
	}
	p, client := km.AsProblem(err)
	if !client || p.Status != 409 || p.ErrorCode != "GENERAL_CONSTRAINT_VIOLATION" || !strings.Contains(p.Detail, want) {
		t.Errorf("the API answers %+v (client error %v), want 409 GENERAL_CONSTRAINT_VIOLATION saying %s", p, client, want)
	}
	res, err := runRequest(ctx, s, m, &km.PlanRequest{Record: "B", PageSize: 10, Count: true})
	if err != nil || res.Count != 3 {
		t.Errorf("record B alone: %v, %v; want its 3 rows", res, err)
	}
}

// TestKMStoreConcurrent queries one store from many goroutines, at record and KM level
// (building the cached join frame), while tables are replaced.
func TestKMStoreConcurrent(t *testing.T) {
	s := New().KM()
	err := s.Import(context.Background(), kmTestFS(map[string]string{
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
	kmQuery := func() *km.PlanRequest {
		return &km.PlanRequest{Fields: []string{"B.NAME"},
			KPIs: []string{"N"}, Sort: []query.SortTerm{{Field: "B.NAME"}}, Page: 0, PageSize: 10}
	}
	want := [][]query.Value{{query.String("Xavier"), query.Int(2)}, {query.String("Yvonne"), query.Int(1)}, {query.Null(query.TypeString), query.Int(1)}}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 16 {
		wg.Go(func() {
			for range 50 {
				res, err := runRequest(ctx, s, m, kmQuery())
				if err != nil {
					errs <- err
					return
				}
				if diff := cmp.Diff(want, res.Rows); diff != "" {
					errs <- fmt.Errorf("KM query (-want +got):\n%s", diff)
					return
				}
				res, err = runRequest(ctx, s, m, &km.PlanRequest{Record: "A", Fields: []string{"ID"}, Count: true, Page: 0, PageSize: 1})
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
	if _, err := runRequest(canceled, s, m, kmQuery()); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled query: %v", err)
	}
}

// The store loads the KM package's shop fixture: every model and source.
func TestImportShop(t *testing.T) {
	s := New().KM()
	err := s.Import(context.Background(), os.DirFS("../../km/testdata/shop"))
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

// runRequest compiles r against m with km.NewPlan, as the handlers do, and runs the plan on s.
func runRequest(ctx context.Context, s *KMStore, m *km.KnowledgeModel, r *km.PlanRequest) (*query.Result, error) {
	p, err := km.NewPlan(m, r)
	if err != nil {
		return nil, err
	}
	return s.Query(ctx, p)
}

// summarizeRequest compiles r against m with km.NewPlan and summarizes the plan's rows with s.
func summarizeRequest(ctx context.Context, s *KMStore, m *km.KnowledgeModel, r *km.PlanRequest) (*km.Summary, error) {
	p, err := km.NewPlan(m, r)
	if err != nil {
		return nil, err
	}
	return s.Summarize(ctx, p)
}
