package sqlstore_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/odata"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/sqlstore"
	"github.com/kmkit/kmkit/storage/storetest"
)

// TestFloatOutOfRange: PostgreSQL refuses a float result beyond a double's range where the
// other backends compute infinity; the answer is a 400 naming the cause, never a 500.
// SQLite computes infinity like memory: 200.
func TestFloatOutOfRange(t *testing.T) {
	for _, c := range []struct {
		name   string
		open   func(testing.TB) *sqlstore.DB
		status int
	}{{"sqlite", openSQLite, http.StatusOK}, {"postgres", openPostgres, http.StatusBadRequest}} {
		t.Run(c.name, func(t *testing.T) {
			data, err := storetest.DemoData(5)
			if err != nil {
				t.Fatal(err)
			}
			s := c.open(t).KM()
			if err := s.Import(context.Background(), data); err != nil {
				t.Fatal(err)
			}
			h := odata.NewHandler(s)
			// In $filter, and in $orderby, whose refusal named the filter before.
			for _, q := range []string{"$filter=" + url.QueryEscape("NET_VALUE mul 1e308 mul 10 gt 0"), "$orderby=" + url.QueryEscape("NET_VALUE mul 1e308 mul 10 desc")} {
				target := odata.BasePath + "/o2c.svc/ORDERS_entries?" + q
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
				if w.Code != c.status {
					t.Fatalf("GET %s: %d %s, want %d", target, w.Code, w.Body, c.status)
				}
				if c.status == http.StatusBadRequest && !strings.Contains(w.Body.String(), `"detail":"the arithmetic of the filter or the sort gives a number beyond the range of a 64-bit float, which the database refuses"`) {
					t.Errorf("GET %s: body %s", target, w.Body)
				}
			}
		})
	}
}

// TestSumBeyondDoubleRange: KPI sums and averages whose total is beyond a double's range
// are +Inf on every backend (a sum of doubles overflows; the API writes it null, OData
// "INF"), never a refusal: PostgreSQL, whose sum of doubles refuses such a total, runs the
// statement again in numeric. The expected values follow from IEEE 754 and the data: three
// amounts of 1.5e308 or more overflow, the group holding one amount does not, and a
// filter's arithmetic beyond the range stays the 400 of TestFloatOutOfRange.
func TestSumBeyondDoubleRange(t *testing.T) {
	fsys := fstest.MapFS{
		"models/h.yaml": {Data: []byte(`id: h
name: Huge
records:
  - id: R
    name: R
    source: r
    fields:
      - {id: G, name: G, type: string}
      - {id: X, name: X, type: float}
kpis:
  - {id: S, name: S, expr: sum(R.X)}
  - {id: A, name: A, expr: avg(R.X)}
  - {id: H, name: H, expr: sum(R.X) / 2}
`)},
		"data/r.csv": {Data: []byte("G,X\na,1.5e308\na,1.5e308\nb,1.7e308\nb,-1\n")},
	}
	for name, open := range map[string]func(testing.TB) *sqlstore.DB{"sqlite": openSQLite, "postgres": openPostgres} {
		t.Run(name, func(t *testing.T) {
			s := open(t).KM()
			if err := s.Import(context.Background(), fsys); err != nil {
				t.Fatal(err)
			}
			svc := km.NewService(s)
			for _, c := range []struct {
				req  km.Request
				want [][]float64 // S, A, H of each group
			}{
				{km.Request{KPIs: []string{"S", "A", "H"}, PageSize: 10}, [][]float64{{math.Inf(1), math.Inf(1), math.Inf(1)}}},
				{km.Request{Fields: []string{"R.G"}, KPIs: []string{"S", "A", "H"}, Sort: []query.SortTerm{{Field: "R.G"}}, PageSize: 10},
					[][]float64{{math.Inf(1), math.Inf(1), math.Inf(1)}, {1.7e308 - 1, (1.7e308 - 1) / 2, (1.7e308 - 1) / 2}}},
			} {
				res, err := svc.Query(context.Background(), "h", &c.req)
				if err != nil {
					t.Fatalf("%+v: %v", c.req, err)
				}
				if len(res.Rows) != len(c.want) {
					t.Fatalf("%+v: %d rows, want %d", c.req, len(res.Rows), len(c.want))
				}
				for i, row := range res.Rows {
					kpis := row[len(c.req.Fields):]
					for j, w := range c.want[i] {
						if kpis[j].Float != w || kpis[j].Null {
							t.Errorf("%+v: row %d KPI %d = %+v, want %v", c.req, i, j, kpis[j], w)
						}
					}
				}
			}
		})
	}
}
