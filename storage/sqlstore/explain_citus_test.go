package sqlstore

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// citusCase is a request whose distributed plan TestCitusPlanShapes checks: what the
// workers send the coordinator from each multi-shard step of the plan, in order (see
// shardSteps): "page" (each shard's page, merged), "groups" (each shard's partial
// aggregates per group, combined), or "rows" (the rows that pass the shard's filter,
// unaggregated: the keys of a semi-join, or the input of an aggregate Citus does not
// split).
type citusCase struct {
	name     string
	record   string // "" at KM level
	fields   []string
	kpis     []string
	filters  []string
	where    []query.Expr // unbound trees filters cannot write (OData's lambdas)
	sort     string
	distinct bool
	steps    []string
}

// citusCases are the shapes of bench/sqlcompare's queries and of the semantics suite's
// filters across records, on the demo distributed as its definition declares (orders,
// items and activities by ORDER_ID; customers and materials reference).
var citusCases = []citusCase{
	{name: "filtered sorted page (sqlcompare 1)", record: "ORDERS", fields: []string{"ORDER_ID", "CUSTOMER_ID", "STATUS", "NET_VALUE"}, filters: []string{"STATUS eq 'OPEN'"}, sort: "-NET_VALUE", steps: []string{"page"}},
	{name: "distinct sorted page (sqlcompare 2)", record: "ORDERS", fields: []string{"CUSTOMER_ID", "STATUS"}, distinct: true, sort: "CUSTOMER_ID,STATUS", steps: []string{"page"}},
	{name: "KPIs by a dimension (sqlcompare 3a)", fields: []string{"CUSTOMERS.COUNTRY"}, kpis: []string{"ORDER_COUNT", "TOTAL_NET", "AVG_NET"}, sort: "CUSTOMERS.COUNTRY", steps: []string{"groups"}},
	{name: "count distinct by a dimension (sqlcompare 3b)", fields: []string{"CUSTOMERS.COUNTRY"}, kpis: []string{"ORDER_COUNT", "TOTAL_NET", "NET_PER_CUSTOMER"}, sort: "CUSTOMERS.COUNTRY", steps: []string{"groups"}},
	{name: "items page by material (sqlcompare 4)", record: "ORDER_ITEMS", fields: []string{"ITEM_ID", "ORDER_ID", "ITEM_VALUE"}, filters: []string{"MATERIAL_ID eq 'M-00007'"}, sort: "-ITEM_VALUE,ITEM_ID", steps: []string{"page"}},
	{name: "item KPI two steps up (sqlcompare 5)", fields: []string{"CUSTOMERS.COUNTRY"}, kpis: []string{"ITEM_QUANTITY"}, sort: "CUSTOMERS.COUNTRY", steps: []string{"groups"}},
	{name: "order KPI by material (a step down)", fields: []string{"MATERIALS.MATERIAL_GROUP"}, kpis: []string{"ORDER_COUNT", "TOTAL_NET"}, steps: []string{"groups"}},
	{name: "orders filtered by their items", record: "ORDERS", fields: []string{"ORDER_ID"}, filters: []string{"ORDER_ITEMS.QUANTITY gt 5"}, steps: []string{"page"}},
	{name: "orders filtered by their customer", record: "ORDERS", fields: []string{"ORDER_ID"}, filters: []string{"CUSTOMERS.COUNTRY eq 'FR'"}, steps: []string{"page"}},
	// A reference table filtered through a distributed one: the keys of the passing
	// orders are collected once, then the customers read.
	{name: "customers filtered by their orders", record: "CUSTOMERS", fields: []string{"CUSTOMER_ID"}, filters: []string{"ORDERS.STATUS eq 'OPEN'"}, steps: []string{"rows"}},
	{name: "KPI by a dimension filtered through the facts", fields: []string{"CUSTOMERS.COUNTRY"}, kpis: []string{"TOTAL_NET"}, filters: []string{"ORDERS.STATUS eq 'OPEN'"}, steps: []string{"rows", "groups"}},
	// percentile_cont is no aggregate Citus splits between workers and coordinator.
	// OData's any and all: an uncorrelated IN of the related rows' keys (no correlated
	// sub-query from a reference table into a distributed one). Citus 13.0 does not push
	// the negated IN of all down even over the co-located items of orders: it collects
	// the keys of the failing items once, then pages the orders; any over the orders of
	// customers collects the keys once, as the semi-join above does.
	{name: "orders whose every item passes (all)", record: "ORDERS", fields: []string{"ORDER_ID"},
		where: []query.Expr{&query.Quantified{All: true, Parent: "ORDERS", Record: "ORDER_ITEMS",
			Body: &query.Compare{Field: query.FieldRef{Name: "ORDER_ITEMS.QUANTITY"}, Op: query.Gt, Value: query.Literal{At: 1, Kind: query.LitInteger, Raw: "5", Value: query.Int(5)}}}},
		steps: []string{"rows", "page"}},
	{name: "customers with an open order or none (any under or)", record: "CUSTOMERS", fields: []string{"CUSTOMER_ID"},
		where: []query.Expr{&query.Logical{Op: query.Or,
			L: &query.Quantified{Parent: "CUSTOMERS", Record: "ORDERS",
				Body: &query.Compare{Field: query.FieldRef{Name: "ORDERS.STATUS"}, Op: query.Eq, Value: query.Literal{At: 1, Kind: query.LitString, Raw: "OPEN"}}},
			R: &query.Not{X: &query.Quantified{Parent: "CUSTOMERS", Record: "ORDERS"}}}},
		steps: []string{"rows", "rows"}},
	{name: "median", fields: []string{"CUSTOMERS.COUNTRY"}, kpis: []string{"MEDIAN_DAYS_LATE"}, steps: []string{"rows"}},
}

// TestCitusPlanShapes checks with EXPLAIN that every case's statement is one Citus plans
// on the cluster named by KMKIT_CITUS_DSN, distributed as the case says, and logs each
// plan (BENCHMARKS.md's table of distributed plans comes from this log).
func TestCitusPlanShapes(t *testing.T) {
	dsn := os.Getenv("KMKIT_CITUS_DSN")
	if dsn == "" {
		t.Skip("KMKIT_CITUS_DSN is not set: the Citus suites need a Citus coordinator with workers (see DEVELOPERS.md)")
	}
	ctx := context.Background()
	db := openSchema(t, dsn)
	m := loadDemo(t, db)
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, c := range citusCases {
		t.Run(c.name, func(t *testing.T) {
			st := c.statement(t, db, m)
			plan := explain(t, conn, st.page, st.pageArgs)
			t.Logf("%s\n%s", st.page, plan)
			if !strings.Contains(plan, "Custom Scan (Citus") {
				t.Fatalf("not a distributed plan:\n%s", plan)
			}
			if got := shardSteps(plan); !slices.Equal(got, c.steps) {
				t.Errorf("the workers send %v, want %v:\n%s\n%s", got, c.steps, st.page, plan)
			}
		})
	}
}

// statement compiles the case against m and translates it for db.
func (c citusCase) statement(t *testing.T, db *DB, m *km.KnowledgeModel) *statement {
	t.Helper()
	r := &km.PlanRequest{Record: c.record, Fields: c.fields, PageSize: 50, Distinct: c.distinct}
	schema := m.FilterSchema(c.record)
	for _, f := range c.filters {
		e, err := query.ParseAndBind(f, schema)
		if err != nil {
			t.Fatal(err)
		}
		r.Filters = append(r.Filters, e)
	}
	for _, w := range c.where {
		e, err := query.Bind(w, schema)
		if err != nil {
			t.Fatal(err)
		}
		r.Filters = append(r.Filters, e)
	}
	for _, id := range c.kpis {
		k := m.KPI(id)
		if k == nil {
			t.Fatalf("no KPI %s", id)
		}
		r.KPIs = append(r.KPIs, k.ID)
	}
	return statementOf(t, db, m, r, c.sort)
}

// taskCount matches the line of a Citus EXPLAIN that says on how many shards a step runs.
var taskCount = regexp.MustCompile(`(?m)^\s*Task Count: (\d+)$`)

// shardSteps returns what each multi-shard step of a Citus EXPLAIN sends the coordinator,
// in the plan's order (see citusCase): its worker plan (the text up to the next step)
// limited, aggregated, or neither. Steps on one shard (a reference table, the
// coordinator's final step over collected results) are left out.
func shardSteps(plan string) []string {
	var out []string
	locs := taskCount.FindAllStringSubmatchIndex(plan, -1)
	for i, loc := range locs {
		if n, _ := strconv.Atoi(plan[loc[2]:loc[3]]); n < 2 {
			continue
		}
		end := len(plan)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		if j := strings.Index(plan[loc[1]:end], "Distributed Subplan"); j >= 0 {
			end = loc[1] + j
		}
		worker := plan[loc[1]:end]
		switch {
		case strings.Contains(worker, "Limit"):
			out = append(out, "page")
		case strings.Contains(worker, "Aggregate"):
			out = append(out, "groups")
		default:
			out = append(out, "rows")
		}
	}
	return out
}
