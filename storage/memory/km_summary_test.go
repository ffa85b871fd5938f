package memory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/stats"
)

// summaryFields are the fields of the generated record R: every field type, with and
// without nulls, few distinct values (ties for top) and many.
var summaryFields = []struct {
	id string
	t  query.Type
}{
	{"I", query.TypeInteger}, {"IN", query.TypeInteger}, {"F", query.TypeFloat}, {"FN", query.TypeFloat},
	{"S", query.TypeString}, {"SN", query.TypeString}, {"B", query.TypeBoolean}, {"D", query.TypeDate},
	{"DT", query.TypeDateTime}, {"TS", query.TypeTimestamp}, {"T", query.TypeTime}, {"BIG", query.TypeFloat},
}

// summaryStore returns a store with KM "g" holding record R of n generated rows.
func summaryStore(t testing.TB, n int) (*KMStore, *km.KnowledgeModel) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	names := make([]string, len(summaryFields))
	cols := make([]column.Column, len(summaryFields))
	rec := &km.Record{ID: "R", Source: "r"}
	for j, f := range summaryFields {
		b := column.NewBuilder(f.t)
		nullable := f.id[len(f.id)-1] == 'N' || f.t == query.TypeBoolean || f.t == query.TypeDate || f.t == query.TypeTime
		for i := range n {
			if nullable && rng.IntN(5) == 0 {
				b.AppendNull()
				continue
			}
			switch f.t {
			case query.TypeInteger:
				b.AppendInt(int64(rng.IntN(200)) - 100)
			case query.TypeFloat:
				if f.id == "BIG" {
					b.AppendFloat(rng.NormFloat64() * 1e15)
				} else {
					b.AppendFloat(math.Round(rng.NormFloat64()*1000) / 8)
				}
			case query.TypeString:
				b.AppendString(fmt.Sprintf("v%d", rng.IntN(7+i%3)))
			case query.TypeBoolean:
				b.AppendBool(rng.IntN(2) == 0)
			case query.TypeDate:
				b.AppendInt(int64(19000 + rng.IntN(30)))
			case query.TypeDateTime, query.TypeTimestamp:
				b.AppendInt(1_700_000_000_000_000 + int64(rng.IntN(50))*1_500_000)
			case query.TypeTime:
				b.AppendInt(int64(rng.IntN(24*4)) * 15 * 60_000_000)
			}
		}
		names[j], cols[j] = f.id, b.Build()
		rec.Fields = append(rec.Fields, &km.Field{ID: f.id, Name: f.id, Type: f.t})
	}
	tbl, err := column.NewTable(names, cols)
	if err != nil {
		t.Fatal(err)
	}
	m := &km.KnowledgeModel{ID: "g", Name: "Generated", Records: []*km.Record{rec}}
	if err := m.Compile(); err != nil {
		t.Fatal(err)
	}
	s := New().KM()
	s.PutTable("r", tbl)
	if err := s.PutModel(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return s, m
}

// summaryQuery is a record-level summary request of every generated field with filter,
// paged as the summary endpoint plans it (page 0 of size 1: a summary reads every row).
func summaryQuery(t testing.TB, filter string) *km.PlanRequest {
	t.Helper()
	q := &km.PlanRequest{Record: "R", PageSize: 1}
	for _, f := range summaryFields {
		q.Fields = append(q.Fields, f.id)
	}
	if filter != "" {
		e, err := query.ParseAndBind(filter, generatedSchema{})
		if err != nil {
			t.Fatal(err)
		}
		q.Filters = []query.Expr{e}
	}
	return q
}

// generatedSchema types the fields of the generated record for filters.
type generatedSchema struct{}

func (generatedSchema) FieldType(name string) (query.Type, bool) {
	for _, f := range summaryFields {
		if f.id == name {
			return f.t, true
		}
	}
	return query.TypeInvalid, false
}

// numbersEqual compares statistics bit for bit, NaN equal to NaN.
var numbersEqual = cmp.Comparer(func(a, b stats.Number) bool {
	return math.Float64bits(float64(a)) == math.Float64bits(float64(b)) || !a.Valid() && !b.Valid()
})

// TestSummarizeEqualsDescribeResult: the native statistics are exactly those the handler
// computes from the rows Query returns, for every field type, with and without filters.
func TestSummarizeEqualsDescribeResult(t *testing.T) {
	s, m := summaryStore(t, 20_000)
	ctx := context.Background()
	for _, filter := range []string{
		"", "I gt 0", "IN eq null", "S in ('v1', 'v2') and B eq false", "F lt -500 or FN ge 100", "I gt 1000",
		"DT ge 2023-11-14T22:13:40Z", "D eq 2022-01-05", "SN ne 'v3'", "T is not null and I le -90",
	} {
		t.Run(filter, func(t *testing.T) {
			q := summaryQuery(t, filter)
			got, err := summarizeRequest(ctx, s, m, q)
			if err != nil {
				t.Fatal(err)
			}
			all := *q
			all.PageSize = math.MaxInt32
			res, err := runRequest(ctx, s, m, &all)
			if err != nil {
				t.Fatal(err)
			}
			want := &km.Summary{Rows: len(res.Rows), Fields: km.DescribeResult(res)}
			if d := cmp.Diff(want, got, numbersEqual); d != "" {
				t.Errorf("Summarize (-DescribeResult +native):\n%s", d)
			}
			if filter == "" && got.Rows != 20_000 {
				t.Errorf("rows %d, want 20000", got.Rows)
			}
		})
	}
}

func TestSummarizeLeavesOtherQueriesToTheHandler(t *testing.T) {
	s, m := summaryStore(t, 10)
	ctx := context.Background()
	for name, r := range map[string]*km.PlanRequest{
		"KM level": {Fields: []string{"R.I"}, PageSize: 1},
		"search":   {Record: "R", Fields: []string{"S"}, Search: &km.SearchRequest{Term: "v", Fields: []string{"S"}}, PageSize: 1},
		"distinct": {Record: "R", Fields: []string{"S"}, Distinct: true, PageSize: 1},
	} {
		p, err := km.NewPlan(m, r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := s.Summarize(ctx, p); !errors.Is(err, km.ErrUnsupported) {
			t.Errorf("%s: error %v, want km.ErrUnsupported", name, err)
		}
	}
	if _, err := summarizeRequest(ctx, s, m, &km.PlanRequest{Record: "R", Fields: []string{"NOPE"}, PageSize: 1}); err == nil {
		t.Error("unknown field: no error")
	}
	if _, err := summarizeRequest(ctx, s, m, &km.PlanRequest{Record: "NOPE", Fields: []string{"I"}, PageSize: 1}); err == nil {
		t.Error("unknown record: no error")
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := summarizeRequest(canceled, s, m, summaryQuery(t, "")); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: error %v", err)
	}
}

// TestSummarizeConcurrently runs summaries while the table is replaced; with -race it
// checks that Summarize reads the store safely.
func TestSummarizeConcurrently(t *testing.T) {
	s, m := summaryStore(t, 2_000)
	other, _ := summaryStore(t, 1_000)
	replacement := other.tables["r"]
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				sum, err := summarizeRequest(context.Background(), s, m, summaryQuery(t, "I gt 0"))
				if err != nil {
					t.Error(err)
					return
				}
				if sum.Rows == 0 || len(sum.Fields) != len(summaryFields) {
					t.Errorf("goroutine %d: %d rows, %d fields", i, sum.Rows, len(sum.Fields))
				}
			}
		}()
	}
	s.PutTable("r", replacement)
	wg.Wait()
}

// BenchmarkSummary compares the native summary with the handler's fallback (Query of every
// row, then km.DescribeResult) on the same 200,000 generated rows of twelve fields.
func BenchmarkSummary(b *testing.B) {
	s, m := summaryStore(b, 200_000)
	ctx := context.Background()
	for _, filter := range []string{"", "I gt 0"} {
		q := summaryQuery(b, filter)
		b.Run("native/filter="+filter, func(b *testing.B) {
			for b.Loop() {
				if _, err := summarizeRequest(ctx, s, m, q); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/200_000, "ns/row")
		})
		b.Run("fallback/filter="+filter, func(b *testing.B) {
			all := *q
			all.PageSize = math.MaxInt32
			for b.Loop() {
				res, err := runRequest(ctx, s, m, &all)
				if err != nil {
					b.Fatal(err)
				}
				_ = km.DescribeResult(res)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/200_000, "ns/row")
		})
	}
}
