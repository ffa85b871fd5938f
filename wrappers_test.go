package kmkit_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/metrics"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/swap"
)

// optionalKMInterfaces are the optional interfaces of a km.Store, by name. The test below
// reads package km's source for every interface documented as "an optional interface of a
// Store", so that an interface added there without an entry here fails it.
var optionalKMInterfaces = map[string]reflect.Type{
	"Summarizer":  reflect.TypeFor[km.Summarizer](),
	"RowCounter":  reflect.TypeFor[km.RowCounter](),
	"MemorySizer": reflect.TypeFor[km.MemorySizer](),
}

// fullStore implements km.Store and every optional interface, recording which were called.
type fullStore struct{ called map[string]bool }

func (s *fullStore) Models(context.Context) ([]*km.KnowledgeModel, error) { return nil, nil }
func (s *fullStore) Model(context.Context, string) (*km.KnowledgeModel, error) {
	return nil, km.ErrModelNotFound
}
func (s *fullStore) Query(context.Context, *km.Plan) (*query.Result, error) { return nil, nil }
func (s *fullStore) Summarize(context.Context, *km.Plan) (*km.Summary, error) {
	s.called["Summarizer"] = true
	return &km.Summary{Rows: 7}, nil
}
func (s *fullStore) RowCount(context.Context, *km.KnowledgeModel, string) (int64, bool) {
	s.called["RowCounter"] = true
	return 42, true
}
func (s *fullStore) DistinctCounts(context.Context, *km.KnowledgeModel) func(string, string) (int64, bool) {
	s.called["MemorySizer"] = true
	return func(string, string) (int64, bool) { return 9, true }
}

// callOptional calls the one method of the optional interface name on s.
func callOptional(t *testing.T, name string, s km.Store) {
	t.Helper()
	ctx := context.Background()
	switch name {
	case "Summarizer":
		sum, err := s.(km.Summarizer).Summarize(ctx, &km.Plan{})
		if err != nil || sum.Rows != 7 {
			t.Errorf("Summarize = %+v, %v; want the wrapped store's answer (7 rows)", sum, err)
		}
	case "RowCounter":
		if n, ok := s.(km.RowCounter).RowCount(ctx, &km.KnowledgeModel{}, "R"); n != 42 || !ok {
			t.Errorf("RowCount = %d, %v; want the wrapped store's 42, true", n, ok)
		}
	case "MemorySizer":
		counts := s.(km.MemorySizer).DistinctCounts(ctx, &km.KnowledgeModel{})
		if counts == nil {
			t.Fatal("DistinctCounts = nil; want the wrapped store's counts")
		}
		if n, ok := counts("R", "F"); n != 9 || !ok {
			t.Errorf("DistinctCounts(R, F) = %d, %v; want the wrapped store's 9, true", n, ok)
		}
	default:
		t.Fatalf("no call written for optional interface %s", name)
	}
}

// TestStoreWrappersKeepOptionalInterfaces wraps a store implementing every optional
// interface of km.Store in each wrapper (and in both, as the reference server does) and
// checks that the wrapper implements each interface and that the call reaches the store.
// A wrapper that drops one silently changes what the handlers do: without RowCounter, the
// cost budget assumes km.AssumedRows rows for every record.
func TestStoreWrappersKeepOptionalInterfaces(t *testing.T) {
	declared := optionalInterfacesOfKM(t)
	for _, name := range declared {
		if _, ok := optionalKMInterfaces[name]; !ok {
			t.Errorf("km declares the optional interface %s, which this test does not know: add it to optionalKMInterfaces and callOptional", name)
		}
	}
	if len(declared) != len(optionalKMInterfaces) {
		t.Fatalf("km declares %v; the test knows %d interfaces", declared, len(optionalKMInterfaces))
	}
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	wrappers := map[string]func(km.Store) km.Store{
		"swap":         func(s km.Store) km.Store { return swap.NewKMStore(s) },
		"metrics":      func(s km.Store) km.Store { return m.KMStore("test", s) },
		"metrics+swap": func(s km.Store) km.Store { return m.KMStore("test", swap.NewKMStore(s)) },
	}
	for wname, wrap := range wrappers {
		for name, typ := range optionalKMInterfaces {
			inner := &fullStore{called: map[string]bool{}}
			w := wrap(inner)
			if !reflect.TypeOf(w).Implements(typ) {
				t.Errorf("%s: the wrapper does not implement km.%s", wname, name)
				continue
			}
			callOptional(t, name, w)
			if !inner.called[name] {
				t.Errorf("%s: km.%s did not reach the wrapped store", wname, name)
			}
		}
	}
}

// TestStoreWrappersOverABareStore checks that a wrapper over a store with none of the
// optional interfaces answers as km documents for such a store: no summary, no row
// count, and no memory sizes (so that a SQL store behind the wrappers is not held to the
// memory limit of in-memory stores).
func TestStoreWrappersOverABareStore(t *testing.T) {
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bare := struct{ km.Store }{&fullStore{called: map[string]bool{}}}
	for name, w := range map[string]km.Store{"swap": swap.NewKMStore(bare), "metrics": m.KMStore("test", bare)} {
		if _, err := w.(km.Summarizer).Summarize(ctx, &km.Plan{}); !errors.Is(err, km.ErrUnsupported) {
			t.Errorf("%s: Summarize = %v, want km.ErrUnsupported", name, err)
		}
		if n, ok := w.(km.RowCounter).RowCount(ctx, &km.KnowledgeModel{}, "R"); ok {
			t.Errorf("%s: RowCount = %d, true; want unknown", name, n)
		}
		if w.(km.MemorySizer).DistinctCounts(ctx, &km.KnowledgeModel{}) != nil {
			t.Errorf("%s: DistinctCounts is not nil over a store that does not run plans in memory", name)
		}
	}
}

// optionalInterfacesOfKM returns the names of the interfaces of package km whose doc
// comment says they are an optional interface of a Store.
func optionalInterfacesOfKM(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("km")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("km", e.Name()), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				ts := spec.(*ast.TypeSpec)
				if _, ok := ts.Type.(*ast.InterfaceType); !ok {
					continue
				}
				doc := g.Doc.Text() + ts.Doc.Text()
				if strings.Contains(doc, "optional interface of a Store") {
					names = append(names, ts.Name.Name)
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("found no optional interface in package km: the doc comments changed")
	}
	return names
}
