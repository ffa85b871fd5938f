package sqlstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmkit/kmkit/internal/kmparams"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// rowChecksKM is issue 29's PLANTS, ORDERS and LINES, LINES reaching PLANTS directly
// (their delivery plant) and through ORDERS, with the region indexed as a host would.
const rowChecksKM = `id: rc
name: Row checks
records:
  - {id: PLANTS, name: Plants, source: rc_plants, key: PLANT_ID, indexes: [[REGION]], fields: [{id: PLANT_ID, name: Plant, type: string}, {id: REGION, name: Region, type: string}]}
  - {id: ORDERS, name: Orders, source: rc_orders, key: ORDER_ID, fields: [{id: ORDER_ID, name: Order, type: string}, {id: PLANT_ID, name: Plant, type: string}]}
  - {id: LINES, name: Lines, source: rc_lines, key: LINE_ID, fields: [{id: LINE_ID, name: Line, type: string}, {id: ORDER_ID, name: Order, type: string}, {id: DELIVERY_PLANT_ID, name: Delivery plant, type: string}]}
relationships:
  - {from: ORDERS.PLANT_ID, to: PLANTS.PLANT_ID}
  - {from: LINES.ORDER_ID, to: ORDERS.ORDER_ID}
  - {from: LINES.DELIVERY_PLANT_ID, to: PLANTS.PLANT_ID}
`

// rowChecksData returns the KM above with 200 plants in 20 regions, 20,000 orders and
// 60,000 lines.
func rowChecksData() fstest.MapFS {
	rng := rand.New(rand.NewPCG(29, 1))
	var plants, orders, lines strings.Builder
	plants.WriteString("PLANT_ID,REGION\n")
	for i := range 200 {
		fmt.Fprintf(&plants, "P%03d,R%02d\n", i, i%20)
	}
	orders.WriteString("ORDER_ID,PLANT_ID\n")
	for i := range 20000 {
		fmt.Fprintf(&orders, "O%05d,P%03d\n", i, rng.IntN(200))
	}
	lines.WriteString("LINE_ID,ORDER_ID,DELIVERY_PLANT_ID\n")
	for i := range 60000 {
		fmt.Fprintf(&lines, "L%05d,O%05d,P%03d\n", i, rng.IntN(20000), rng.IntN(200))
	}
	return fstest.MapFS{
		"models/rc.yaml":     {Data: []byte(rowChecksKM)},
		"data/rc_plants.csv": {Data: []byte(plants.String())},
		"data/rc_orders.csv": {Data: []byte(orders.String())},
		"data/rc_lines.csv":  {Data: []byte(lines.String())},
	}
}

// rowChecksStatement translates a page of lines with their order under a filter on the
// plant's region, sorted by line: a plan that tests each line's order against the filter.
func rowChecksStatement(t *testing.T, db *DB) *statement {
	t.Helper()
	ctx := context.Background()
	s := db.KM()
	if err := s.Import(ctx, rowChecksData()); err != nil {
		t.Fatal(err)
	}
	m, err := s.Model(ctx, "rc")
	if err != nil {
		t.Fatal(err)
	}
	e, err := query.ParseAndBind("PLANTS.REGION eq 'R03'", m.FilterSchema(""))
	if err != nil {
		t.Fatal(err)
	}
	sort, err := kmparams.ParseSort("+LINES.LINE_ID")
	if err != nil {
		t.Fatal(err)
	}
	p, err := km.NewPlan(m, &km.PlanRequest{Fields: []string{"LINES.LINE_ID", "ORDERS.ORDER_ID", "ORDERS.PLANT_ID"}, PageSize: 50, Sort: sort, Filters: []query.Expr{e}})
	if err != nil {
		t.Fatal(err)
	}
	if p.RowChecks == nil {
		t.Fatal("the plan tests no parent")
	}
	tables := s.generationTables()
	st, err := translate(db.d, p, tables, nil, s.sourceColumns(ctx, tables.of("rc_lines")), false)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRowChecksPlanShapes checks with EXPLAIN that the test of a listed row's parent
// against the filter (a condition of the LEFT JOIN) leaves both databases their indexes:
// PostgreSQL with sequential scans disabled reads no table by one and needs no sort for
// the page; SQLite scans no table and searches the orders and the plants of the test
// through indexes (it may sort the page: it reads the lines through the filter's index,
// as it does without the test).
func TestRowChecksPlanShapes(t *testing.T) {
	ctx := context.Background()
	t.Run("Postgres", func(t *testing.T) {
		dsn := os.Getenv("KMKIT_POSTGRES_DSN")
		if dsn == "" {
			t.Skip("KMKIT_POSTGRES_DSN is not set")
		}
		db := openSchema(t, dsn)
		st := rowChecksStatement(t, db)
		conn, err := db.sql.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, q := range []string{"ANALYZE", "SET enable_seqscan = off"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		plan := explain(t, conn, st.page, st.pageArgs)
		t.Logf("%s\n%s", st.page, plan)
		if strings.Contains(plan, "Seq Scan") || fullSort.MatchString(plan) {
			t.Errorf("a table is read by a sequential scan, or the page sorted:\n%s\n%s", st.page, plan)
		}
	})
	t.Run("SQLite", func(t *testing.T) {
		db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "rc.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		st := rowChecksStatement(t, db)
		if _, err := db.sql.ExecContext(ctx, "ANALYZE"); err != nil {
			t.Fatal(err)
		}
		plan := sqlitePlan(t, db, st)
		t.Logf("%s\n%s", st.page, plan)
		for _, w := range []string{"SEARCH r1 USING INDEX", "SEARCH s1 USING INDEX"} {
			if !strings.Contains(plan, w) {
				t.Errorf("the plan has no %s:\n%s\n%s", w, st.page, plan)
			}
		}
		if strings.Contains(plan, "SCAN ") {
			t.Errorf("a table is scanned:\n%s\n%s", st.page, plan)
		}
	})
}
