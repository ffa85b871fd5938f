package demodata

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/query"
)

var update = flag.Bool("update", false, "rewrite data/*.csv from the generator")

// TestEmbeddedCSVMatchesGenerator keeps data/*.csv equal to WriteCSV(DefaultOrders); run
// "go test -run TestEmbeddedCSV -update" after changing the generator.
func TestEmbeddedCSVMatchesGenerator(t *testing.T) {
	bufs := map[string]*bytes.Buffer{}
	err := WriteCSV(DefaultOrders, func(source string) (io.Writer, error) {
		b := new(bytes.Buffer)
		bufs[source] = b
		return b, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range Sources {
		name := filepath.Join("data", s.Name+".csv")
		if *update {
			if err := os.WriteFile(name, bufs[s.Name].Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := FS.ReadFile("data/" + s.Name + ".csv")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, bufs[s.Name].Bytes()) {
			t.Errorf("%s differs from the generator's output; run go test -update", name)
		}
	}
}

func TestGenerateIsDeterministicAndTyped(t *testing.T) {
	run := func() map[string][][]query.Value {
		out := map[string][][]query.Value{}
		err := Generate(200, func(source string, row []query.Value) error {
			out[source] = append(out[source], append([]query.Value(nil), row...))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b := run(), run()
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("two runs differ (-first +second):\n%s", diff)
	}
	for _, s := range Sources {
		rows := a[s.Name]
		if len(rows) == 0 {
			t.Errorf("%s: no rows", s.Name)
		}
		for i, row := range rows {
			if len(row) != len(s.Columns) {
				t.Fatalf("%s row %d: %d values, want %d", s.Name, i, len(row), len(s.Columns))
			}
			for j, v := range row {
				if v.Type != s.Types[j] {
					t.Fatalf("%s row %d column %s: type %v, want %v", s.Name, i, s.Columns[j], v.Type, s.Types[j])
				}
			}
		}
	}
	if got := len(a["orders"]); got != 200 {
		t.Errorf("orders: %d rows, want 200", got)
	}
	if err := Generate(0, func(string, []query.Value) error { return nil }); err == nil {
		t.Error("Generate(0) succeeded, want an error")
	}
}

// TestStoreSizes checks both ways of building the demo store: the embedded CSV files and
// generated tables hold the same rows for DefaultOrders.
func TestStoreSizes(t *testing.T) {
	tables, err := Tables(DefaultOrders)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range Sources {
		data, err := FS.ReadFile("data/" + s.Name + ".csv")
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Count(data, []byte("\n")) - 1
		if got := tables[s.Name].Rows(); got != lines {
			t.Errorf("%s: %d generated rows, %d in the CSV file", s.Name, got, lines)
		}
	}
}
