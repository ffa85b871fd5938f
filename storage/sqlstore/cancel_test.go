package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/sqlstore"
	"github.com/kmkit/kmkit/storage/storetest"
)

// heavyYAML is a KM over heavyView: a view of a billion generated rows (a recursive CTE,
// which both databases run row by row), so that a filter no row passes runs for minutes.
const heavyYAML = `id: heavy
name: Heavy
published: 2026-01-15T10:00:00Z
records:
  - id: NUMBERS
    name: Numbers
    source: heavy_numbers
    key: N
    fields:
      - {id: N, name: N, type: integer}
`

const heavyView = `CREATE VIEW heavy_numbers AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000)
SELECT x AS kmkit_row, x AS "N" FROM c`

// heavyStore returns the KM store of db with the heavy KM.
func heavyStore(t *testing.T, db *sqlstore.DB) (*sqlstore.KMStore, *km.KnowledgeModel) {
	t.Helper()
	ctx := context.Background()
	if _, err := db.SQL().ExecContext(ctx, heavyView); err != nil {
		t.Fatal(err)
	}
	ms, err := km.Load(fstest.MapFS{"models/heavy.yaml": {Data: []byte(heavyYAML)}})
	if err != nil || len(ms) != 1 {
		t.Fatalf("%d models, %v", len(ms), err)
	}
	s := db.KM()
	if err := s.PutModel(ctx, ms[0]); err != nil {
		t.Fatal(err)
	}
	return s, ms[0]
}

// heavyPlan is a page of the numbers below 0: none, after reading every row.
func heavyPlan(t *testing.T, m *km.KnowledgeModel) *km.Plan {
	t.Helper()
	e, err := query.ParseAndBind("N lt 0", m.FilterSchema("NUMBERS"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := km.NewPlan(m, &km.PlanRequest{Record: "NUMBERS", Fields: []string{"N"}, PageSize: 10, Count: true, Filters: []query.Expr{e}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// activeHeavy counts the statements on heavy_numbers that PostgreSQL is running.
func activeHeavy(t *testing.T, db *sqlstore.DB) int {
	t.Helper()
	var n int
	err := db.SQL().QueryRowContext(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND state = 'active' AND query LIKE '%heavy_numbers%' AND pid <> pg_backend_pid()`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCancelHeavyQuery cancels a query that would run for minutes: the store's call
// returns context.Canceled within about 100 ms of the cancel, the pool serves the next
// statement, and (PostgreSQL) the server runs the statement no longer.
func TestCancelHeavyQuery(t *testing.T) {
	for _, b := range []struct {
		name string
		open func(testing.TB) *sqlstore.DB
	}{{"SQLite", openSQLite}, {"Postgres", openPostgres}} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s, m := heavyStore(t, db)
			ctx, cancel := context.WithCancel(context.Background())
			type answer struct {
				err error
				at  time.Time
			}
			done := make(chan answer, 1)
			go func() {
				_, err := s.Query(ctx, heavyPlan(t, m))
				done <- answer{err, time.Now()}
			}()
			time.Sleep(700 * time.Millisecond)
			if b.name == "Postgres" && activeHeavy(t, db) != 1 {
				t.Errorf("the server does not run the statement")
			}
			select {
			case a := <-done:
				t.Fatalf("the query ended before the cancel: %v", a.err)
			default:
			}
			canceled := time.Now()
			cancel()
			var a answer
			select {
			case a = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the query runs on 10 s after the cancel")
			}
			if d := a.at.Sub(canceled); d > 150*time.Millisecond {
				t.Errorf("the query returned %v after the cancel, want about 100 ms at most", d)
			}
			if !errors.Is(a.err, context.Canceled) {
				t.Errorf("error %v, want context.Canceled", a.err)
			}
			var one int
			qctx, qcancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer qcancel()
			if err := db.SQL().QueryRowContext(qctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Errorf("the pool after the cancel: %d, %v", one, err)
			}
			if b.name == "Postgres" {
				deadline := time.Now().Add(time.Second)
				for activeHeavy(t, db) > 0 {
					if time.Now().After(deadline) {
						t.Fatal("the server still runs the statement 1 s after the cancel")
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
}

// TestQueryTimeLimitSQL checks kmhttp.WithQueryTimeout on SQL: the heavy query and
// summary are stopped at the limit and answered with 503 saying so.
func TestQueryTimeLimitSQL(t *testing.T) {
	for _, b := range []struct {
		name string
		open func(testing.TB) *sqlstore.DB
	}{{"SQLite", openSQLite}, {"Postgres", openPostgres}} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s, _ := heavyStore(t, db)
			h := kmhttp.NewHandler(s, kmhttp.WithQueryTimeout(300*time.Millisecond))
			base := kmhttp.BasePath + "/knowledge-models/heavy/records/NUMBERS/"
			filter := "?fields=N&filterExpr=" + url.QueryEscape("N lt 0")
			for _, target := range []string{base + "query" + filter, base + "summary" + filter} {
				w := httptest.NewRecorder()
				start := time.Now()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
				// The heavy statement runs for many seconds; an answer within twice the
				// limit was stopped by it (a loaded machine delays the answer past 1.5x).
				if d := time.Since(start); d > 2*300*time.Millisecond {
					t.Errorf("%s: answered after %v, want about the limit of 300ms", target, d)
				}
				want := `"status":503,"detail":"the query ran longer than the time limit of 300ms and was stopped; narrow it (fewer filters, fields, KPIs or rows)","errorCode":"` + problem.CodeUnavailable + `"`
				if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), want) {
					t.Errorf("%s: %d %s, want 503 with %s", target, w.Code, w.Body, want)
				}
			}
			if b.name == "Postgres" {
				deadline := time.Now().Add(time.Second)
				for activeHeavy(t, db) > 0 {
					if time.Now().After(deadline) {
						t.Fatal("the server still runs the statement 1 s after the limit")
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
}

// TestQueryCostRowCounts checks the cost budget on SQL with the stores' row counts (the
// counts recorded at import): the demo's orders, counted here from its CSV file, times 5
// predicates plus 1 selected field.
func TestQueryCostRowCounts(t *testing.T) {
	fsys, err := storetest.DemoData(40)
	if err != nil {
		t.Fatal(err)
	}
	data, err := fs.ReadFile(fsys, "data/orders.csv")
	if err != nil {
		t.Fatal(err)
	}
	orders := int64(strings.Count(strings.TrimSpace(string(data)), "\n")) // lines less the header
	five := url.QueryEscape("NET_VALUE gt 1 or NET_VALUE gt 2 or DAYS_LATE eq 3 or STATUS eq 'X' or EXPRESS eq true")
	data5 := kmhttp.BasePath + "/knowledge-models/o2c/records/ORDERS/query?fields=ORDER_ID&filterExpr=" + five
	summary := kmhttp.BasePath + "/knowledge-models/o2c/records/ORDERS/summary?fields=ORDER_ID&filterExpr=" + five
	cost := orders*5 + orders
	for _, b := range []struct {
		name string
		open func(testing.TB) *sqlstore.DB
	}{{"SQLite", openSQLite}, {"Postgres", openPostgres}} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := db.KM()
			ctx := context.Background()
			if err := s.Import(ctx, fsys); err != nil {
				t.Fatal(err)
			}
			// The count is read once and reused: a changed import record shows only after
			// PutModel (or 30 s).
			m, _ := s.Model(ctx, "o2c")
			if n, ok := s.RowCount(ctx, m, "ORDERS"); !ok || n != orders {
				t.Fatalf("RowCount(ORDERS) = %d, %v; want %d", n, ok, orders)
			}
			q := "UPDATE km_generations SET rows_loaded = 7 WHERE source = 'orders'"
			if _, err := db.SQL().ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
			if n, _ := s.RowCount(ctx, m, "ORDERS"); n != orders {
				t.Errorf("RowCount(ORDERS) after the import record changed = %d, want the cached %d", n, orders)
			}
			if err := s.PutModel(ctx, m); err != nil {
				t.Fatal(err)
			}
			if n, _ := s.RowCount(ctx, m, "ORDERS"); n != 7 {
				t.Errorf("RowCount(ORDERS) after PutModel = %d, want 7 (read again)", n)
			}
			if _, err := db.SQL().ExecContext(ctx, strings.Replace(q, "= 7", fmt.Sprint("= ", orders), 1)); err != nil {
				t.Fatal(err)
			}
			if err := s.PutModel(ctx, m); err != nil {
				t.Fatal(err)
			}
			for _, target := range []string{data5, summary} {
				w := httptest.NewRecorder()
				kmhttp.NewHandler(s, kmhttp.WithMaxQueryCost(cost)).ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
				if w.Code != http.StatusOK {
					t.Errorf("%s at the budget: %d %s", target, w.Code, w.Body)
				}
				w = httptest.NewRecorder()
				kmhttp.NewHandler(s, kmhttp.WithMaxQueryCost(cost-1)).ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
				want := fmt.Sprintf("the query is estimated at %d row operations, beyond the budget of %d: the filters are too large: 5 predicates over %d rows", cost, cost-1, orders)
				if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), want) {
					t.Errorf("%s beyond the budget: %d %s, want 400 with %q", target, w.Code, w.Body, want)
				}
			}
		})
	}
}
