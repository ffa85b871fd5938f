package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/internal/pgschema"

	"github.com/kmkit/kmkit/internal/kmparams"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/storetest"
)

// explainOrders is the size of the demo the EXPLAIN test loads: enough rows for the
// statistics to matter, few enough to import in a second or two.
const explainOrders = 3000

// TestPostgresPlanShapes checks with EXPLAIN that the statements a plan becomes leave
// PostgreSQL an index where one fits (the demo declares its indexes, each with the row
// column after it, and the import adds the keys and relationship fields): sequential
// scans are disabled for the session, so a "Seq Scan" in the plan means that the
// statement's shape rules every index out for that table, and a "Sort" above an ordered
// index means that the ORDER BY does not match it.
func TestPostgresPlanShapes(t *testing.T) {
	dsn := os.Getenv("KMKIT_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("KMKIT_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	db := openSchema(t, dsn)
	m := loadDemo(t, db)
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
	for _, c := range planCases {
		t.Run(c.name, func(t *testing.T) {
			st := c.statement(t, db, m)
			plan := explain(t, conn, st.page, st.pageArgs)
			t.Logf("%s\n%s", st.page, plan)
			for _, w := range c.want {
				if !strings.Contains(plan, w) {
					t.Errorf("the plan has no %s:\n%s\n%s", w, st.page, plan)
				}
			}
			if strings.Contains(plan, "Seq Scan") {
				t.Errorf("a table is read by a sequential scan:\n%s\n%s", st.page, plan)
			}
			if c.noSort && fullSort.MatchString(plan) {
				t.Errorf("the rows are sorted, not read in index order:\n%s\n%s", st.page, plan)
			}
			if c.noSort && !c.ties && strings.Contains(plan, "Incremental Sort") {
				t.Errorf("the index order is not the statement's:\n%s\n%s", st.page, plan)
			}
		})
	}
}

// planCase is a request whose statement shape the EXPLAIN tests check.
type planCase struct {
	name    string
	record  string
	fields  []string
	filters []string
	// where are unbound filter trees the filter language cannot write (OData's lambdas
	// as query.Quantified), bound like filters.
	where []query.Expr
	sort  string
	// want are texts the plan must contain; none of noSeq's tables may be read by a
	// sequential scan, and noSort forbids a Sort node: the rows come in the index's order.
	want   []string
	noSort bool
	// ties: the index is read backwards, so its order is the statement's but for the
	// order of equal values, which a sort of each run of them restores (PostgreSQL's
	// Incremental Sort, SQLite's temporary B-tree for the right part of the ORDER BY).
	ties     bool
	distinct bool
	// sqlite are texts SQLite's EXPLAIN QUERY PLAN must contain.
	sqlite []string
}

// generationSuffix matches the suffix of a generation table's name (generationTable),
// which the expectations of the tests leave out.
var generationSuffix = regexp.MustCompile(`@[0-9a-f]{12}`)

// importedTables returns the current generation tables of the sources imported into db.
func importedTables(t *testing.T, db *DB) tableNames {
	t.Helper()
	rows, err := db.sql.QueryContext(context.Background(), `SELECT source, table_name FROM km_imports WHERE table_name <> ''`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := tableNames{}
	for rows.Next() {
		var src, table string
		if err := rows.Scan(&src, &table); err != nil {
			t.Fatal(err)
		}
		out[src] = table
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// fullSort matches a Sort node of an EXPLAIN (not an Incremental Sort).
var fullSort = regexp.MustCompile(`(?m)^\s*(->\s*)?Sort\s+\(`)

// planCases are the statements whose shape the EXPLAIN tests check.
var planCases = []planCase{
	{name: "sorted page", record: "ORDERS", fields: []string{"ORDER_ID", "NET_VALUE"}, sort: "+NET_VALUE",
		want: []string{`Index Scan using "orders_NET_VALUE"`, "Limit"}, noSort: true,
		sqlite: []string{"SCAN r0 USING INDEX orders_NET_VALUE"}},
	// NET_VALUE holds no null, so the import declares it NOT NULL and SQLite's ascending
	// index serves the API's nulls-last order.
	{name: "filtered sorted page", record: "ORDERS", fields: []string{"ORDER_ID", "STATUS", "NET_VALUE"},
		filters: []string{"STATUS eq 'OPEN'"}, sort: "+NET_VALUE", want: []string{`Index Scan using "orders_STATUS_NET_VALUE"`, "Limit"},
		noSort: true, sqlite: []string{"SEARCH r0 USING INDEX orders_STATUS_NET_VALUE (STATUS=?)"}},
	// bench/sqlcompare's query 4: sorted descending, then ascending on the key, on the
	// database as kmkit imported it. The demo's ITEM_ID ascends in row order, which the
	// import records, so the statement sorts the ties by RowColumn: the demo's
	// [MATERIAL_ID, -ITEM_VALUE] (with RowColumn after it) holds the page's order, read
	// without sorting the run of each value.
	{name: "filtered page sorted both ways", record: "ORDER_ITEMS", fields: []string{"ITEM_ID", "MATERIAL_ID", "ITEM_VALUE"},
		filters: []string{"MATERIAL_ID eq 'M-00003'"}, sort: "-ITEM_VALUE,+ITEM_ID",
		want:   []string{`Index Scan using "order_items_MATERIAL_ID_-ITEM_VALUE"`, "Limit"},
		noSort: true, sqlite: []string{"SEARCH r0 USING INDEX order_items_MATERIAL_ID_-ITEM_VALUE (MATERIAL_ID=?)"}},
	// The ascending index read backwards: NET_VALUE holds no null, so the statement sorts
	// it plain DESC, and the ties are put back in row order run by run.
	{name: "filtered page sorted descending", record: "ORDERS", fields: []string{"ORDER_ID", "STATUS", "NET_VALUE"},
		filters: []string{"STATUS eq 'OPEN'"}, sort: "-NET_VALUE",
		want:   []string{`Index Scan Backward using "orders_STATUS_NET_VALUE"`, "Incremental Sort", `Presorted Key: "NET_VALUE"`, "Limit"},
		noSort: true, ties: true, sqlite: []string{"SEARCH r0 USING INDEX orders_STATUS_NET_VALUE (STATUS=?)"}},
	{name: "sorted page descending", record: "ORDERS", fields: []string{"ORDER_ID", "NET_VALUE"}, sort: "-NET_VALUE",
		want: []string{`Index Scan Backward using "orders_NET_VALUE"`, "Incremental Sort", "Limit"}, noSort: true, ties: true,
		sqlite: []string{"SCAN r0 USING INDEX orders_NET_VALUE"}},
	// The demo declares [MATERIAL_ID, -ITEM_VALUE]: a material's items, largest first, ties
	// in row order, straight from the index.
	{name: "filtered page on a declared descending column", record: "ORDER_ITEMS", fields: []string{"ITEM_ID", "MATERIAL_ID", "ITEM_VALUE"},
		filters: []string{"MATERIAL_ID eq 'M0003'"}, sort: "-ITEM_VALUE",
		want: []string{`Index Scan using "order_items_MATERIAL_ID_-ITEM_VALUE"`, "Limit"}, noSort: true,
		sqlite: []string{"SEARCH r0 USING INDEX order_items_MATERIAL_ID_-ITEM_VALUE (MATERIAL_ID=?)"}},
	// The demo declares [-ORDER_DATE]: newest first in index order, oldest first backwards.
	{name: "declared descending index", record: "ORDERS", fields: []string{"ORDER_ID", "ORDER_DATE"}, sort: "-ORDER_DATE",
		want: []string{`Index Scan using "orders_-ORDER_DATE"`, "Limit"}, noSort: true, sqlite: []string{"SCAN r0 USING INDEX orders_-ORDER_DATE"}},
	{name: "declared descending index read backwards", record: "ORDERS", fields: []string{"ORDER_ID", "ORDER_DATE"}, sort: "+ORDER_DATE",
		want: []string{`Index Scan Backward using "orders_-ORDER_DATE"`, "Incremental Sort", "Limit"}, noSort: true, ties: true,
		sqlite: []string{"SCAN r0 USING INDEX orders_-ORDER_DATE"}},
	{name: "filtered page in row order", record: "ORDERS", fields: []string{"ORDER_ID", "STATUS"},
		filters: []string{"STATUS eq 'OPEN'"}, want: []string{"Index", "Limit"}, noSort: true,
		sqlite: []string{"SEARCH r0 USING INDEX orders_STATUS"}},
	{name: "distinct sorted page", record: "ORDERS", fields: []string{"CUSTOMER_ID", "STATUS"}, sort: "+CUSTOMER_ID,+STATUS",
		distinct: true, want: []string{`"orders_CUSTOMER_ID_STATUS"`}, noSort: true, sqlite: []string{"INDEX orders_CUSTOMER_ID_STATUS"}},
	{name: "filter propagated up", record: "ORDER_ITEMS", fields: []string{"ITEM_ID", "QUANTITY"},
		filters: []string{"ORDERS.CUSTOMER_ID eq 'C00007'"}, want: []string{`"orders_CUSTOMER_ID_STATUS`, `"order_items_ORDER_ID"`},
		sqlite: []string{"SEARCH s1 USING INDEX orders_CUSTOMER_ID", "SEARCH r0 USING INDEX order_items_ORDER_ID"}},
	{name: "filter propagated down", record: "ORDERS", fields: []string{"ORDER_ID", "STATUS"},
		filters: []string{"ACTIVITIES.ACTIVITY eq 'Change Price'"}, want: []string{`"activities_`, "Semi Join"},
		sqlite: []string{"SEARCH s1 USING INDEX activities_ORDER_ID"}},
	{name: "filter propagated through a parent", record: "ACTIVITIES", fields: []string{"ACTIVITY_ID"},
		filters: []string{"ORDER_ITEMS.MATERIAL_ID eq 'M0003'"}, want: []string{`"order_items_MATERIAL_ID_-ITEM_VALUE"`},
		sqlite: []string{"SEARCH s2 USING INDEX order_items_MATERIAL_ID_-ITEM_VALUE (MATERIAL_ID=?)", "SEARCH r0 USING INDEX activities_ORDER_ID"}},
	{name: "in list", record: "ORDERS", fields: []string{"ORDER_ID", "STATUS"},
		filters: []string{"STATUS in ('OPEN', 'PAID')"}, want: []string{"Index", "= ANY"},
		sqlite: []string{"SEARCH r0 USING INDEX orders_STATUS"}},
	{name: "long in list", record: "ORDER_ITEMS", fields: []string{"ITEM_ID"},
		filters: []string{longIn("ORDER_ID", 500)}, want: []string{"Index", "= ANY"},
		sqlite: []string{"SEARCH r0 USING INDEX order_items_ORDER_ID"}},
	{name: "or chain of equalities", record: "ORDERS", fields: []string{"ORDER_ID", "STATUS"},
		filters: []string{"STATUS eq 'OPEN' or STATUS eq 'PAID' or STATUS eq 'X'"}, want: []string{"Index", "= ANY"},
		sqlite: []string{"SEARCH r0 USING INDEX orders_STATUS"}},
	// OData's all: a correlated NOT EXISTS over the children, an anti-join probing the
	// relationship's index; any under or: the children probed per order row.
	{name: "all over the children", record: "ORDERS", fields: []string{"ORDER_ID"},
		where: []query.Expr{&query.Quantified{All: true, Parent: "ORDERS", Record: "ACTIVITIES",
			Body: &query.Compare{Field: query.FieldRef{Name: "ACTIVITIES.ACTIVITY"}, Op: query.Ne, Value: query.Literal{At: 1, Kind: query.LitString, Raw: "Change Price"}}}},
		want: []string{"Anti Join", `"activities_ORDER_ID"`}, sqlite: []string{"SEARCH s1 USING INDEX activities_ORDER_ID (ORDER_ID=?)"}},
	{name: "any under or", record: "ORDERS", fields: []string{"ORDER_ID"},
		where: []query.Expr{&query.Logical{Op: query.Or,
			L: &query.Compare{Field: query.FieldRef{Name: "STATUS"}, Op: query.Eq, Value: query.Literal{At: 1, Kind: query.LitString, Raw: "OPEN"}},
			R: &query.Quantified{Parent: "ORDERS", Record: "ORDER_ITEMS",
				Body: &query.Compare{Field: query.FieldRef{Name: "ORDER_ITEMS.QUANTITY"}, Op: query.Gt, Value: query.Literal{At: 1, Kind: query.LitInteger, Raw: "8", Value: query.Int(8)}}}}},
		want: []string{`"order_items_ORDER_ID"`}, sqlite: []string{"SEARCH s1 USING INDEX order_items_ORDER_ID (ORDER_ID=?)"}},
}

// longIn is "field in (...)" of n order ids, few of which exist (so that the rows they
// select are few).
func longIn(field string, n int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("'SO-%07d'", i*1000+1)
	}
	return field + " in (" + strings.Join(ids, ", ") + ")"
}

// statement compiles the case against m and translates it for db.
func (c planCase) statement(t *testing.T, db *DB, m *km.KnowledgeModel) *statement {
	t.Helper()
	r := &km.PlanRequest{Record: c.record, Fields: c.fields, PageSize: 50, Distinct: c.distinct}
	for _, f := range c.filters {
		e, err := query.ParseAndBind(f, m.FilterSchema(c.record))
		if err != nil {
			t.Fatal(err)
		}
		r.Filters = append(r.Filters, e)
	}
	for _, w := range c.where {
		e, err := query.Bind(w, m.FilterSchema(c.record))
		if err != nil {
			t.Fatal(err)
		}
		r.Filters = append(r.Filters, e)
	}
	return statementOf(t, db, m, r, c.sort)
}

// statementOf compiles r, sorted by sort (the KM API's syntax; "" for none), against m and
// translates it for db as KMStore.Query does.
func statementOf(t *testing.T, db *DB, m *km.KnowledgeModel, r *km.PlanRequest, sort string) *statement {
	t.Helper()
	var err error
	if sort != "" {
		if r.Sort, err = kmparams.ParseSort(sort); err != nil {
			t.Fatal(err)
		}
	}
	p, err := km.NewPlan(m, r)
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.KM().statement(context.Background(), p, importedTables(t, db), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestSQLitePlanShapes checks with EXPLAIN QUERY PLAN that SQLite reads the same
// statements through indexes: every table a case filters is searched through an index
// (SEARCH ... USING INDEX), and the sorted pages need no temporary B-tree for ORDER BY.
func TestSQLitePlanShapes(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "explain.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := loadDemo(t, db)
	if _, err := db.sql.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	for _, c := range planCases {
		t.Run(c.name, func(t *testing.T) {
			st := c.statement(t, db, m)
			plan := sqlitePlan(t, db, st)
			t.Logf("%s\n%s", st.page, plan)
			for _, w := range c.sqlite {
				if !strings.Contains(plan, w) {
					t.Errorf("the plan has no %s:\n%s\n%s", w, st.page, plan)
				}
			}
			if c.noSort && strings.Contains(plan, "TEMP B-TREE FOR ORDER BY") {
				t.Errorf("the rows are sorted, not read in index order:\n%s\n%s", st.page, plan)
			}
			if c.noSort && !c.ties && strings.Contains(plan, "TEMP B-TREE FOR RIGHT PART OF ORDER BY") {
				t.Errorf("the index order is not the statement's:\n%s\n%s", st.page, plan)
			}
		})
	}
}

// loadDemo imports the demo with explainOrders orders into db and returns its KM o2c.
func loadDemo(t *testing.T, db *DB) *km.KnowledgeModel {
	t.Helper()
	ctx := context.Background()
	s := db.KM()
	data, err := storetest.DemoData(explainOrders)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Import(ctx, data); err != nil {
		t.Fatal(err)
	}
	m, err := s.Model(ctx, "o2c")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func explain(t *testing.T, conn *sql.Conn, stmt string, args []any) string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), "EXPLAIN "+stmt, args...)
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return generationSuffix.ReplaceAllString(b.String(), "")
}

// openSchema opens the PostgreSQL server of dsn in a fresh schema, dropped at the end.
func openSchema(t testing.TB, dsn string) *DB {
	t.Helper()
	ctx := context.Background()
	u := pgschema.ForTest(t, dsn, "kmkit_explain")
	db, err := Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sqlitePlan returns the detail lines of SQLite's EXPLAIN QUERY PLAN of st's page.
func sqlitePlan(t *testing.T, db *DB, st *statement) string {
	t.Helper()
	rows, err := db.sql.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+st.page, st.pageArgs...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		b.WriteString(detail + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return generationSuffix.ReplaceAllString(b.String(), "")
}

// TestSQLiteFirstSeenStatements checks the statements of a distinct without sort keys on
// SQLite (planner.firstSeen) and their plans: the count dedups in a temporary B-tree
// over a scan of the table, even where an index holds one of the columns (whose
// order SQLite would otherwise read, looking each row's other column up in the table),
// and the page groups the first rows of a scan in row order.
func TestSQLiteFirstSeenStatements(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "explain.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := loadDemo(t, db)
	if _, err := db.sql.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	r := &km.PlanRequest{Record: "ORDERS", Fields: []string{"STATUS", "CURRENCY"}, Distinct: true, Page: 2, PageSize: 50, Count: true}
	st := statementOf(t, db, m, r, "")
	if st.firstSeen == nil {
		t.Fatalf("no first-rows page for %s", st.page)
	}
	const (
		wantCount = `SELECT count(*) FROM (SELECT DISTINCT +r0."STATUS", +r0."CURRENCY" FROM "orders" r0 WHERE 1 = 1) q`
		wantPage  = `SELECT c0, c1, count(*) OVER () AS found FROM (SELECT c0, c1, min(r) AS r FROM (` +
			`SELECT r0."STATUS" AS c0, r0."CURRENCY" AS c1, r0."kmkit_row" AS r FROM "orders" r0 WHERE 1 = 1 ORDER BY r0."kmkit_row" LIMIT 4096` +
			`) q GROUP BY c0, c1) q ORDER BY r LIMIT 50 OFFSET 100`
	)
	if got := generationSuffix.ReplaceAllString(st.count, ""); got != wantCount {
		t.Errorf("count:\n got %s\nwant %s", got, wantCount)
	}
	if got := generationSuffix.ReplaceAllString(st.firstSeen(4096), ""); got != wantPage {
		t.Errorf("page:\n got %s\nwant %s", got, wantPage)
	}
	count := sqlitePlan(t, db, &statement{page: st.count, pageArgs: st.countArgs})
	if !strings.Contains(count, "SCAN r0\n") || !strings.Contains(count, "USE TEMP B-TREE FOR DISTINCT") {
		t.Errorf("the count does not scan the table into a temporary B-tree:\n%s", count)
	}
	page := sqlitePlan(t, db, &statement{page: st.firstSeen(4096), pageArgs: st.pageArgs})
	if !strings.Contains(page, "SCAN r0\n") || strings.Contains(page, "INDEX") {
		t.Errorf("the first rows are not read in row order:\n%s", page)
	}
}
