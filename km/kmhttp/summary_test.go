package kmhttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/stats"
	"github.com/kmkit/kmkit/storage/memory"
)

const ordersSummary = api + "/shop/records/ORDERS/summary"

// Headers of the ORDERS fields the summary tests select.
const (
	hNET     = `{"id":"NET","name":"Net value","type":"float","format":",.2f","unit":"EUR","aggregation":false,"filterable":true,"sortable":true}`
	hLATE    = `{"id":"LATE","name":"Days late","type":"integer","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}`
	hSTATUS  = `{"id":"STATUS","name":"Status","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}`
	hEXPRESS = `{"id":"EXPRESS","name":"Express","type":"boolean","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}`
	hDAY     = `{"id":"DAY","name":"Order day","type":"date","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}`
	hCREATED = `{"id":"CREATED","name":"Created","type":"datetime","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}`
)

// The expected statistics are pandas 1.5.3's describe(include='all') of
// testdata/shop/data/orders.csv (read with pandas.read_csv), whole and filtered.
func TestSummary(t *testing.T) {
	mem := memory.New().KM()
	err := mem.Import(context.Background(), os.DirFS("../testdata/shop"))
	if err != nil {
		t.Fatal(err)
	}
	// The memory store computes the statistics itself (km.Summarizer); hiding that
	// method makes the handler describe the rows Query returns. Both must answer alike.
	handlers := map[string]http.Handler{
		"native":   kmhttp.NewHandler(mem, kmhttp.WithMaxPageSize(100), kmhttp.WithMaxSampleSize(100)),
		"fallback": kmhttp.NewHandler(struct{ km.Store }{mem}, kmhttp.WithMaxPageSize(100), kmhttp.WithMaxSampleSize(100)),
	}
	tests := []struct {
		name   string
		target string
		status int
		want   string
	}{{
		name:   "all rows, sample of two",
		target: ordersSummary + "?fields=NET,LATE,STATUS,EXPRESS&sampleSize=2",
		status: 200,
		want: `{"content":{"headers":[` + hNET + `,` + hLATE + `,` + hSTATUS + `,` + hEXPRESS + `],"data":[
			{"NET":100.5,"LATE":null,"STATUS":"OPEN","EXPRESS":false},
			{"NET":250,"LATE":2,"STATUS":"PAID","EXPRESS":true}]},
		"shape":[8,4],
		"summary":{
			"NET":{"count":8,"mean":371.3425,"std":464.056384220403,"min":0,"25_percentile":70.0625,"50_percentile":175.25,"75_percentile":474.9975,"max":1200},
			"LATE":{"count":5,"mean":1.4,"std":2.3021728866442674,"min":-1,"25_percentile":0,"50_percentile":1,"75_percentile":2,"max":5},
			"STATUS":{"count":8,"unique":4,"top":"PAID","freq":"3"},
			"EXPRESS":{"count":7,"unique":2,"top":"false","freq":"5"}}}`,
	}, {
		name:   "filterExpr changes the statistics",
		target: ordersSummary + "?fields=NET,LATE,STATUS,EXPRESS&sampleSize=1&filterExpr=" + url.QueryEscape("STATUS eq 'PAID'"),
		status: 200,
		want: `{"content":{"headers":[` + hNET + `,` + hLATE + `,` + hSTATUS + `,` + hEXPRESS + `],"data":[
			{"NET":250,"LATE":2,"STATUS":"PAID","EXPRESS":true}]},
		"shape":[3,4],
		"summary":{
			"NET":{"count":3,"mean":443.33,"std":489.517892114272,"min":80,"25_percentile":165,"50_percentile":250,"75_percentile":624.995,"max":999.99},
			"LATE":{"count":3,"mean":0.3333333333333333,"std":1.5275252316519468,"min":-1,"25_percentile":-0.5,"50_percentile":0,"75_percentile":1,"max":2},
			"STATUS":{"count":3,"unique":1,"top":"PAID","freq":"3"},
			"EXPRESS":{"count":3,"unique":2,"top":"false","freq":"2"}}}`,
	}, {
		name:   "a predefined filter gives the same statistics",
		target: ordersSummary + "?fields=LATE&sampleSize=1&filters=PAID",
		status: 200,
		want: `{"content":{"headers":[` + hLATE + `],"data":[{"LATE":2}]},"shape":[3,1],
		"summary":{"LATE":{"count":3,"mean":0.3333333333333333,"std":1.5275252316519468,"min":-1,"25_percentile":-0.5,"50_percentile":0,"75_percentile":1,"max":2}}}`,
	}, {
		name:   "another filter, ties for top go to the first in row order",
		target: ordersSummary + "?fields=NET,LATE,STATUS,EXPRESS&sampleSize=1&filterExpr=NET%20gt%20100",
		status: 200,
		want: `{"content":{"headers":[` + hNET + `,` + hLATE + `,` + hSTATUS + `,` + hEXPRESS + `],"data":[
			{"NET":100.5,"LATE":null,"STATUS":"OPEN","EXPRESS":false}]},
		"shape":[5,4],
		"summary":{
			"NET":{"count":5,"mean":570.098,"std":494.34846062266644,"min":100.5,"25_percentile":250,"50_percentile":300,"75_percentile":999.99,"max":1200},
			"LATE":{"count":3,"mean":0.6666666666666666,"std":1.5275252316519465,"min":-1,"25_percentile":0,"50_percentile":1,"75_percentile":1.5,"max":2},
			"STATUS":{"count":5,"unique":3,"top":"OPEN","freq":"2"},
			"EXPRESS":{"count":4,"unique":2,"top":"false","freq":"3"}}}`,
	}, {
		name:   "no row passes: counts 0, the rest null",
		target: ordersSummary + "?fields=NET,STATUS&filterExpr=NET%20gt%201e9",
		status: 200,
		want: `{"content":{"headers":[` + hNET + `,` + hSTATUS + `],"data":[]},"shape":[0,2],
		"summary":{"NET":{"count":0,"mean":null,"std":null,"min":null,"25_percentile":null,"50_percentile":null,"75_percentile":null,"max":null},
			"STATUS":{"count":0,"unique":0,"top":null,"freq":null}}}`,
	}, {
		name:   "dates and datetimes: top as the data endpoints show them",
		target: ordersSummary + "?fields=DAY,CREATED&sampleSize=1&filterExpr=ID%20eq%20'O3'",
		status: 200,
		want: `{"content":{"headers":[` + hDAY + `,` + hCREATED + `],"data":[{"DAY":"2025-02-11","CREATED":"2025-02-11T12:00:00Z"}]},"shape":[1,2],
		"summary":{"DAY":{"count":1,"unique":1,"top":"2025-02-11","freq":"1"},"CREATED":{"count":1,"unique":1,"top":"2025-02-11T12:00:00Z","freq":"1"}}}`,
	}, {
		name:   "excludeFields removes fields from the sample and the statistics",
		target: ordersSummary + "?excludeFields=ID,CUST,DAY&excludeFields=CREATED,STATUS,EXPRESS&sampleSize=1",
		status: 200,
		want: `{"content":{"headers":[` + hNET + `,` + hLATE + `],"data":[{"NET":100.5,"LATE":null}]},"shape":[8,2],
		"summary":{
			"NET":{"count":8,"mean":371.3425,"std":464.056384220403,"min":0,"25_percentile":70.0625,"50_percentile":175.25,"75_percentile":474.9975,"max":1200},
			"LATE":{"count":5,"mean":1.4,"std":2.3021728866442674,"min":-1,"25_percentile":0,"50_percentile":1,"75_percentile":2,"max":5}}}`,
	}, {
		name:   "excludeFields applies to the named fields",
		target: ordersSummary + "?fields=LATE,STATUS&excludeFields=STATUS&sampleSize=1",
		status: 200,
		want: `{"content":{"headers":[` + hLATE + `],"data":[{"LATE":null}]},"shape":[8,1],
		"summary":{"LATE":{"count":5,"mean":1.4,"std":2.3021728866442674,"min":-1,"25_percentile":0,"50_percentile":1,"75_percentile":2,"max":5}}}`,
	}, {
		name:   "sampleSize not an integer",
		target: ordersSummary + "?sampleSize=ten",
		status: 400,
		want:   problemJSON(400, "GENERAL_PARAMETER_MISSMATCH", `sampleSize: "ten" is not an integer`),
	}, {
		name:   "sampleSize below 1",
		target: ordersSummary + "?sampleSize=0",
		status: 400,
		want:   problemJSON(400, "GENERAL_CONSTRAINT_VIOLATION", "sampleSize: 0 is below the minimum sample size 1"),
	}, {
		name:   "sampleSize above the MaxSampleSize option",
		target: ordersSummary + "?sampleSize=101",
		status: 400,
		want:   problemJSON(400, "GENERAL_CONSTRAINT_VIOLATION", "sampleSize: 101 is above the maximum sample size 100 (the server's MaxSampleSize option)"),
	}, {
		name:   "sampleSize beyond int64",
		target: ordersSummary + "?sampleSize=99999999999999999999",
		status: 400,
		want:   problemJSON(400, "GENERAL_CONSTRAINT_VIOLATION", "sampleSize: 99999999999999999999 is out of range: want 1 to 100"),
	}, {
		name:   "unknown fields in fields and excludeFields",
		target: ordersSummary + "?fields=NET,NOPE&excludeFields=GONE",
		status: 400,
		want:   problemJSON(400, "KM_FIELD_NOTFOUND", "unknown fields: NOPE, GONE (record ORDERS)"),
	}, {
		name:   "every field excluded",
		target: ordersSummary + "?fields=NET&excludeFields=NET",
		status: 400,
		want:   problemJSON(400, "GENERAL_PARAMETER_ILLEGAL", "excludeFields leaves no field of record ORDERS to summarize"),
	}, {
		name:   "unknown predefined filter",
		target: ordersSummary + "?filters=PAID,NOPE",
		status: 400,
		want:   problemJSON(400, "KM_FILTER_NOTFOUND", "unknown filter: NOPE"),
	}, {
		// The orders of C1, the only customer in DE (customers.csv): O1, O2 and O8.
		name:   "a predefined filter over a parent record",
		target: ordersSummary + "?fields=ID&filters=GERMANY",
		status: 200,
		want: `{"content":{"headers":[{"id":"ID","name":"Order","type":"string","format":"","unit":"","aggregation":false,"filterable":true,"sortable":true}],
			"data":[{"ID":"O1"},{"ID":"O2"},{"ID":"O8"}]},"shape":[3,1],"summary":{"ID":{"count":3,"unique":3,"top":"O1","freq":"1"}}}`,
	}, {
		name:   "a filter expression of the wrong type",
		target: ordersSummary + "?filterExpr=" + url.QueryEscape("NET eq 'x'"),
		status: 400,
		want:   problemJSON(400, "FILTER_TYPE_MISMATCH", "filterExpr: position 8: NET is a float and cannot be compared with the text 'x'; write a number such as 4.2"),
	}, {
		name:   "unknown record",
		target: api + "/shop/records/NOPE/summary",
		status: 404,
		want:   problemJSON(404, "KM_RECORD_NOTFOUND", `knowledge model shop has no record "NOPE"`),
	}, {
		name:   "unknown knowledge model",
		target: api + "/nope/records/ORDERS/summary",
		status: 404,
		want:   problemJSON(404, "KM_MODEL_NOTFOUND", `no knowledge model "nope"`),
	}}
	for _, tt := range tests {
		for name, h := range handlers {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				w := call(h, "GET", tt.target, "")
				if w.Code != tt.status {
					t.Fatalf("status %d, want %d; body %s", w.Code, tt.status, w.Body)
				}
				wantType := "application/json"
				if tt.status != 200 {
					wantType = "application/problem+json"
				}
				if ct := w.Header().Get("Content-Type"); ct != wantType {
					t.Errorf("Content-Type %q, want %q", ct, wantType)
				}
				if tt.want == "" {
					return
				}
				if d := jsonDiff(t, tt.want, w.Body.String()); d != "" {
					t.Errorf("body (-want +got):\n%s", d)
				}
			})
		}
	}
}

// TestSummaryDefaults: without parameters every field is summarised and the sample holds
// DefaultSampleSize rows (all eight here); sampleSize=1 holds one.
func TestSummaryDefaults(t *testing.T) {
	h := shop(t)
	for _, tt := range []struct {
		query     string
		rows      int
		summaries []string
	}{
		{"", 8, []string{"ID", "CUST", "DAY", "CREATED", "STATUS", "NET", "LATE", "EXPRESS"}},
		{"?sampleSize=1", 1, []string{"ID", "CUST", "DAY", "CREATED", "STATUS", "NET", "LATE", "EXPRESS"}},
		{"?sampleSize=3&fields=CUST,CUST,ID", 3, []string{"CUST", "ID"}},
	} {
		w := call(h, "GET", ordersSummary+tt.query, "")
		if w.Code != 200 {
			t.Fatalf("%s: status %d: %s", tt.query, w.Code, w.Body)
		}
		var got struct {
			Content struct {
				Headers []struct{ ID string }
				Data    []map[string]any
			}
			Shape   []int
			Summary map[string]map[string]any
		}
		decodeStrict(t, w.Body.Bytes(), &got)
		var headers, keys []string
		for _, hd := range got.Content.Headers {
			headers = append(headers, hd.ID)
		}
		for _, id := range tt.summaries {
			if _, ok := got.Summary[id]; ok {
				keys = append(keys, id)
			}
		}
		if d := cmp.Diff(tt.summaries, headers); d != "" {
			t.Errorf("%s: headers (-want +got):\n%s", tt.query, d)
		}
		if d := cmp.Diff(tt.summaries, keys); d != "" || len(got.Summary) != len(tt.summaries) {
			t.Errorf("%s: summary keys %v, want %v", tt.query, got.Summary, tt.summaries)
		}
		if len(got.Content.Data) != tt.rows {
			t.Errorf("%s: %d sample rows, want %d", tt.query, len(got.Content.Data), tt.rows)
		}
		if d := cmp.Diff([]int{8, len(tt.summaries)}, got.Shape); d != "" {
			t.Errorf("%s: shape (-want +got):\n%s", tt.query, d)
		}
	}
}

func TestSummaryMethodNotAllowed(t *testing.T) {
	w := call(shop(t), "POST", ordersSummary, `{}`)
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
		t.Fatalf("status %d, Allow %q; want 405 and GET, HEAD", w.Code, w.Header().Get("Allow"))
	}
}

// summarizingStore is a km.Store with a Summarizer that answers from fixed statistics,
// or with an error, and counts its calls.
type summarizingStore struct {
	km.Store
	sum   *km.Summary
	err   error
	calls atomic.Int32
	got   *km.Plan
}

func (s *summarizingStore) Summarize(_ context.Context, q *km.Plan) (*km.Summary, error) {
	s.calls.Add(1)
	s.got = q
	return s.sum, s.err
}

// truncatingStore returns at most one row of any query, as a store capping page sizes
// would, and reports the full count.
type truncatingStore struct{ km.Store }

func (s *truncatingStore) Query(ctx context.Context, p *km.Plan) (*query.Result, error) {
	res, err := s.Store.Query(ctx, p)
	if err == nil && len(res.Rows) > 1 {
		res.Count, res.Rows = len(res.Rows), res.Rows[:1]
	}
	return res, err
}

func TestSummaryUsesTheStoreSummarizer(t *testing.T) {
	mem := memory.New().KM()
	err := mem.Import(context.Background(), os.DirFS("../testdata/shop"))
	if err != nil {
		t.Fatal(err)
	}
	native := km.Summary{Rows: 42, Fields: []km.FieldSummary{
		{Numeric: &stats.Numeric{Count: 42, Mean: 1, Std: 2, Min: 3, P25: 4, P50: 5, P75: 6, Max: 7}},
		{Categorical: &stats.Categorical{Count: 42, Unique: 1, Top: "PAID", Freq: 42}},
	}}
	target := ordersSummary + "?fields=LATE,STATUS&sampleSize=1&filterExpr=" + url.QueryEscape("STATUS eq 'PAID'")

	t.Run("native statistics, sample from Query", func(t *testing.T) {
		s := &summarizingStore{Store: mem, sum: &native}
		w := call(kmhttp.NewHandler(s), "GET", target, "")
		want := `{"content":{"headers":[` + hLATE + `,` + hSTATUS + `],"data":[{"LATE":2,"STATUS":"PAID"}]},"shape":[42,2],
			"summary":{"LATE":{"count":42,"mean":1,"std":2,"min":3,"25_percentile":4,"50_percentile":5,"75_percentile":6,"max":7},
			"STATUS":{"count":42,"unique":1,"top":"PAID","freq":"42"}}}`
		if w.Code != 200 {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		if d := jsonDiff(t, want, w.Body.String()); d != "" {
			t.Errorf("body (-want +got):\n%s", d)
		}
		if s.calls.Load() != 1 {
			t.Fatalf("Summarize called %d times, want 1", s.calls.Load())
		}
		q := s.got
		if q.Record != "ORDERS" || q.Grain != "ORDERS" || len(q.Filter) == 0 || len(q.KPIs) != 0 || q.Search != nil || len(q.Sort) != 0 {
			t.Errorf("plan given to Summarize: %+v", q)
		}
		if d := cmp.Diff([]string{"LATE", "STATUS"}, []string{q.Columns[0].Name, q.Columns[1].Name}); d != "" {
			t.Errorf("fields (-want +got):\n%s", d)
		}
	})
	t.Run("ErrUnsupported falls back to describing the rows", func(t *testing.T) {
		s := &summarizingStore{Store: mem, err: errors.Join(errors.New("sqlstore: no percentiles"), km.ErrUnsupported)}
		w := call(kmhttp.NewHandler(s), "GET", target, "")
		want := `{"content":{"headers":[` + hLATE + `,` + hSTATUS + `],"data":[{"LATE":2,"STATUS":"PAID"}]},"shape":[3,2],
			"summary":{"LATE":{"count":3,"mean":0.3333333333333333,"std":1.5275252316519468,"min":-1,"25_percentile":-0.5,"50_percentile":0,"75_percentile":1,"max":2},
			"STATUS":{"count":3,"unique":1,"top":"PAID","freq":"3"}}}`
		if d := jsonDiff(t, want, w.Body.String()); w.Code != 200 || d != "" {
			t.Errorf("status %d, body (-want +got):\n%s", w.Code, d)
		}
	})
	t.Run("a store error is a 500 with a support id", func(t *testing.T) {
		s := &summarizingStore{Store: mem, err: errors.New("disk on fire")}
		w := call(kmhttp.NewHandler(s, kmhttp.WithLogger(discardLogger())), "GET", target, "")
		if w.Code != 500 || !strings.Contains(w.Body.String(), `"errorCode":"ADMIN_FATAL_ERROR"`) || !strings.Contains(w.Body.String(), "support id") {
			t.Errorf("status %d, body %s", w.Code, w.Body)
		}
	})
	t.Run("a store error of the client is its 4xx", func(t *testing.T) {
		s := &summarizingStore{Store: mem, err: &query.Error{Code: "FILTER_SYNTAX_ERROR", Pos: query.NoPos, Msg: "too deep for this database"}}
		w := call(kmhttp.NewHandler(s), "GET", target, "")
		if d := jsonDiff(t, problemJSON(400, "FILTER_SYNTAX_ERROR", "too deep for this database"), w.Body.String()); w.Code != 400 || d != "" {
			t.Errorf("status %d, body (-want +got):\n%s", w.Code, d)
		}
	})
	t.Run("no statistics and no error is a 500", func(t *testing.T) {
		s := &summarizingStore{Store: mem}
		w := call(kmhttp.NewHandler(s, kmhttp.WithLogger(discardLogger())), "GET", target, "")
		if w.Code != 500 {
			t.Errorf("status %d, body %s", w.Code, w.Body)
		}
	})
	t.Run("a store that truncates the whole result is a 500", func(t *testing.T) {
		s := &truncatingStore{Store: mem}
		w := call(kmhttp.NewHandler(s, kmhttp.WithLogger(discardLogger())), "GET", target, "")
		if w.Code != 500 {
			t.Errorf("status %d, body %s", w.Code, w.Body)
		}
	})
	t.Run("statistics of the wrong number of fields are a 500", func(t *testing.T) {
		s := &summarizingStore{Store: mem, sum: &km.Summary{Rows: 1, Fields: native.Fields[:1]}}
		w := call(kmhttp.NewHandler(s, kmhttp.WithLogger(discardLogger())), "GET", target, "")
		if w.Code != 500 {
			t.Errorf("status %d, body %s", w.Code, w.Body)
		}
	})
}

// TestDescribeResult: every column type gets the statistics of its stats function, top
// formatted as the data endpoints write values.
func TestDescribeResult(t *testing.T) {
	res := &query.Result{
		Columns: []query.Column{
			{Name: "I", Type: query.TypeInteger}, {Name: "F", Type: query.TypeFloat},
			{Name: "S", Type: query.TypeString}, {Name: "B", Type: query.TypeBoolean},
			{Name: "D", Type: query.TypeDate}, {Name: "T", Type: query.TypeDateTime},
			{Name: "TS", Type: query.TypeTimestamp}, {Name: "H", Type: query.TypeTime},
		},
		Rows: [][]query.Value{
			{query.Int(1), query.Float(0.5), query.String("a"), query.Bool(true), {Type: query.TypeDate, Int: 1}, {Type: query.TypeDateTime, Int: 1_500_000}, {Type: query.TypeTimestamp, Int: 0}, {Type: query.TypeTime, Int: 3_600_000_000}},
			{query.Null(query.TypeInteger), query.Float(1.5), query.String("b"), query.Bool(false), {Type: query.TypeDate, Int: 1}, {Type: query.TypeDateTime, Int: 1_500_000}, {Type: query.TypeTimestamp, Int: 0}, {Type: query.TypeTime, Int: 3_600_500_000}},
			{query.Int(3), query.Null(query.TypeFloat), query.String("b"), query.Bool(false), query.Null(query.TypeDate), query.Null(query.TypeDateTime), query.Null(query.TypeTimestamp), {Type: query.TypeTime, Int: 3_600_500_000}},
		},
	}
	nulls := func(ns ...bool) stats.Nulls { return func(i int) bool { return ns[i] } }
	num := func(n stats.Numeric) km.FieldSummary { return km.FieldSummary{Numeric: &n} }
	cat := func(c stats.Categorical) km.FieldSummary { return km.FieldSummary{Categorical: &c} }
	want := []km.FieldSummary{
		num(stats.DescribeInt([]int64{1, 0, 3}, nulls(false, true, false))),
		num(stats.DescribeFloat([]float64{0.5, 1.5, 0}, nulls(false, false, true))),
		cat(stats.Categorical{Count: 3, Unique: 2, Top: "b", Freq: 2}),
		cat(stats.Categorical{Count: 3, Unique: 2, Top: "false", Freq: 2}),
		cat(stats.Categorical{Count: 2, Unique: 1, Top: "1970-01-02", Freq: 2}),
		cat(stats.Categorical{Count: 2, Unique: 1, Top: "1970-01-01T00:00:01.5Z", Freq: 2}),
		cat(stats.Categorical{Count: 2, Unique: 1, Top: "1970-01-01T00:00:00Z", Freq: 2}),
		cat(stats.Categorical{Count: 3, Unique: 2, Top: "01:00:00.5", Freq: 2}),
	}
	got := km.DescribeResult(res)
	if d := cmp.Diff(want, got, cmp.Comparer(func(a, b stats.Number) bool {
		return a == b || !a.Valid() && !b.Valid()
	})); d != "" {
		t.Errorf("DescribeResult (-want +got):\n%s", d)
	}
	if got[0].Numeric.Mean != 2 || got[1].Numeric.Mean != 1 {
		t.Errorf("means %v, %v; want 2 and 1", got[0].Numeric.Mean, got[1].Numeric.Mean)
	}
}

func TestFieldSummaryMarshalJSONEmpty(t *testing.T) {
	if _, err := (km.FieldSummary{}).MarshalJSON(); err == nil {
		t.Fatal("MarshalJSON of an empty FieldSummary: no error")
	}
}

// decodeStrict decodes a JSON body into v, failing the test on error.
func decodeStrict(t *testing.T, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
}

// discardLogger drops the internal-error logs that tests provoke.
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
