package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/storetest"
)

// explainOrders is the size of the demo the EXPLAIN test loads: enough rows for the
// statistics to matter, few enough to import in a second or two.
const explainOrders = 3000

// TestPostgresPlanShapes checks with EXPLAIN that the statements a plan becomes leave
// PostgreSQL an index where one fits (the import creates one per column, with the row
// column after it): sequential scans are disabled for the session, so a "Seq Scan" in the
// plan means that the statement's shape rules every index out for that table, and a
// "Sort" above an ordered index means that the ORDER BY does not match it.
func TestPostgresPlanShapes(t *testing.T) {
	dsn := os.Getenv("KMKIT_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("KMKIT_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	db := openSchema(t, dsn)
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
	cases := []struct {
		name    string
		record  string
		fields  []string
		filters []string
		sort    string
		// want are texts the plan must contain; none of noSeq's tables may be read by a
		// sequential scan, and noSort forbids a Sort node.
		want     []string
		noSort   bool
		distinct bool
	}{
		{name: "sorted page", record: "ORDERS", fields: []string{"ORDER_ID", "NET_VALUE"}, sort: "+NET_VALUE",
			want: []string{`Index Scan using "orders_NET_VALUE"`, "Limit"}, noSort: true},
		{name: "filtered sorted page", record: "ORDERS", fields: []string{"ORDER_ID", "STATUS", "NET_VALUE"},
			filters: []string{"STATUS eq 'OPEN'"}, sort: "+NET_VALUE", want: []string{"Index", "Limit"}},
		{name: "filtered page in row order", record: "ORDERS", fields: []string{"ORDER_ID", "STATUS"},
			filters: []string{"STATUS eq 'OPEN'"}, want: []string{"Index", "Limit"}, noSort: true},
		{name: "distinct sorted page", record: "ORDERS", fields: []string{"CUSTOMER_ID", "STATUS"}, sort: "+CUSTOMER_ID,+STATUS",
			distinct: true, want: []string{`"orders_CUSTOMER_ID"`}},
		{name: "filter propagated up", record: "ORDER_ITEMS", fields: []string{"ITEM_ID", "QUANTITY"},
			filters: []string{"ORDERS.CUSTOMER_ID eq 'C00007'"}, want: []string{`"orders_CUSTOMER_ID"`, `"order_items_ORDER_ID"`}},
		{name: "filter propagated down", record: "ORDERS", fields: []string{"ORDER_ID", "STATUS"},
			filters: []string{"ACTIVITIES.ACTIVITY eq 'Change Price'"}, want: []string{`"activities_ACTIVITY"`, "Semi Join"}},
		{name: "filter propagated through a parent", record: "ACTIVITIES", fields: []string{"ACTIVITY_ID"},
			filters: []string{"ORDER_ITEMS.MATERIAL_ID eq 'M0003'"}, want: []string{`"order_items_MATERIAL_ID"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &km.PlanRequest{Record: c.record, Request: query.Request{Fields: c.fields, PageSize: 50, Distinct: c.distinct}}
			for _, f := range c.filters {
				e, err := query.ParseAndBind(f, m.FilterSchema(c.record))
				if err != nil {
					t.Fatal(err)
				}
				r.Filters = append(r.Filters, e)
			}
			if c.sort != "" {
				if r.Sort, err = query.ParseSort(c.sort); err != nil {
					t.Fatal(err)
				}
			}
			p, err := km.NewPlan(m, r)
			if err != nil {
				t.Fatal(err)
			}
			st, err := translatePlan(db.d, p, nil)
			if err != nil {
				t.Fatal(err)
			}
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
			if c.noSort && strings.Contains(plan, "Sort") {
				t.Errorf("the rows are sorted, not read in index order:\n%s\n%s", st.page, plan)
			}
		})
	}
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
	return b.String()
}

// openSchema opens the PostgreSQL server of dsn in a fresh schema, dropped at the end.
func openSchema(t *testing.T, dsn string) *DB {
	t.Helper()
	ctx := context.Background()
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	schema := fmt.Sprintf("kmkit_explain_%d", os.Getpid())
	if _, err := admin.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE; CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if admin, err := sql.Open("pgx", dsn); err == nil {
			admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			admin.Close()
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	v := u.Query()
	v.Set("search_path", schema)
	u.RawQuery = v.Encode()
	db, err := Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
