package sqlstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gopkg.in/yaml.v3"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/memory"
	"github.com/kmkit/kmkit/storage/sqlstore"
	"github.com/kmkit/kmkit/storage/storetest"
)

// CitusEnv names the variable holding the URL of a Citus coordinator (with workers) for
// the Citus suites. Without it they skip; with it, an unreachable server fails them.
const CitusEnv = "KMKIT_CITUS_DSN"

// openCitus returns a DB in a fresh schema of the coordinator named by CitusEnv.
func openCitus(t testing.TB) *sqlstore.DB {
	t.Helper()
	return open(t, schemaDSN(t, CitusEnv, citusSkip))
}

// citusSkip is the message of the Citus tests that skip.
const citusSkip = CitusEnv + " is not set: the Citus suites need a Citus coordinator with workers (see DEVELOPERS.md)"

// suiteDistribution is how the Citus suites distribute the records of the suites' KMs
// (KM id, record id: a distribution field, or "reference"): the facts hash-distributed
// on the key domain that joins them, the dimensions as reference tables. Records not
// listed stay coordinator-local tables, which Citus joins with the others too.
var suiteDistribution = map[string]map[string]string{
	"suite":   {"CUSTOMERS": "reference", "ORDERS": "ID", "ITEMS": "ORDER_ID"},
	"answers": {"CUSTOMERS": "reference", "ORDERS": "ORDER_ID"},
	"joins": {"PLANTS": "reference", "COMPANIES": "reference", "VENDORS": "reference",
		"ORDERS": "ORDER_ID", "LINES": "reference", "PURCHASE_ORDERS": "reference", "PO_LINES": "reference", "INVOICES": "reference"},
	"p2p": {"PURCHASE_ORDERS": "PO_ID", "PO_LINES": "PO_ID", "GOODS_RECEIPTS": "reference"},
}

// distribute returns fsys with the declarations of suiteDistribution added to the records
// of its models/*.yaml; the other files are unchanged.
func distribute(t testing.TB, fsys fs.FS) fs.FS { return distributeAs(t, fsys, suiteDistribution) }

// distributeAs is distribute with the declarations of dist (as suiteDistribution).
func distributeAs(t testing.TB, fsys fs.FS, dist map[string]map[string]string) fs.FS {
	t.Helper()
	out := fstest.MapFS{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		if path.Dir(name) == "models" && strings.HasSuffix(name, ".yaml") {
			if data, err = declareDistribution(data, dist); err != nil {
				return err
			}
		}
		out[name] = &fstest.MapFile{Data: data}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// declareDistribution adds the declarations of dist to the records of one KM definition.
func declareDistribution(def []byte, dist map[string]map[string]string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(def, &doc); err != nil {
		return nil, err
	}
	root := doc.Content[0]
	value := func(m *yaml.Node, key string) *yaml.Node {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return m.Content[i+1]
			}
		}
		return nil
	}
	id, recs := value(root, "id"), value(root, "records")
	if id == nil || recs == nil {
		return def, nil
	}
	scalar := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }
	for _, r := range recs.Content {
		rid := value(r, "id")
		if rid == nil {
			continue
		}
		switch d := dist[id.Value][rid.Value]; d {
		case "":
		case "reference":
			r.Content = append(r.Content, scalar("reference"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
		default:
			r.Content = append(r.Content, scalar("distribution"), scalar(d))
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// citusKM is a KMStore whose Import adds suiteDistribution's declarations to the data
// directory's KMs.
type citusKM struct {
	*sqlstore.KMStore
	t testing.TB
}

func (s citusKM) Import(ctx context.Context, fsys fs.FS) error {
	return s.KMStore.Import(ctx, distribute(s.t, fsys))
}

// TestCitus runs every suite on the Citus cluster named by CitusEnv, the suites' facts
// distributed and their dimensions reference tables (suiteDistribution), the other tables
// coordinator-local.
func TestCitus(t *testing.T) {
	if os.Getenv(CitusEnv) == "" {
		t.Skip(citusSkip)
	}
	b := backend(openCitus)
	b.KM = storetest.ImportKM(func(t *testing.T) citusKM { return citusKM{openCitus(t).KM(), t} })
	storetest.Run(t, b)
}

// placement is one table's row of Citus's pg_dist_partition: its method ('h' hash
// distributed, 'n' reference), distribution column and co-location group.
type placement struct {
	method, column string
	colocation     int
}

// TestCitusPlacement checks what the import of declared records creates on Citus:
// distributed tables co-located on their key domain, without a primary key and with an
// index on the row number, in the group of the schema's anchor for their key type (not
// in the default group of the database, which holds other tables); reference tables with
// their primary key; the bookkeeping, SCIM and limit tables coordinator-local (not in
// Citus's metadata).
func TestCitusPlacement(t *testing.T) {
	generationSuffix := regexp.MustCompile(`@[0-9a-f]{12}$`)
	db := openCitus(t)
	ctx := context.Background()
	if has, err := db.HasCitus(ctx); err != nil || !has {
		t.Fatalf("HasCitus = %v, %v on %s", has, err, CitusEnv)
	}
	if err := db.KM().Import(ctx, distribute(t, storetest.Data())); err != nil {
		t.Fatal(err)
	}
	got := map[string]placement{}
	rows, err := db.SQL().QueryContext(ctx, `SELECT c.relname, p.partmethod, COALESCE(column_to_column_name(p.logicalrelid, p.partkey), ''), p.colocationid
		FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
		WHERE c.relnamespace = current_schema()::regnamespace`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var p placement
		if err := rows.Scan(&name, &p.method, &p.column, &p.colocation); err != nil {
			t.Fatal(err)
		}
		got[generationSuffix.ReplaceAllString(name, "")] = p
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	orders, items, customers := got["st_orders"], got["st_items"], got["st_customers"]
	if orders.method != "h" || orders.column != "ID" || items.method != "h" || items.column != "ORDER_ID" {
		t.Errorf("st_orders %+v, st_items %+v: want hash-distributed by ID and ORDER_ID", orders, items)
	}
	if orders.colocation != items.colocation {
		t.Errorf("st_orders in co-location group %d, st_items in %d: want one", orders.colocation, items.colocation)
	}
	if anchor := got[`km_colocation_text_collate_c`]; anchor.method != "h" || anchor.colocation != orders.colocation {
		t.Errorf("co-location anchor %+v, st_orders %+v: want the tables in the anchor's group", anchor, orders)
	}
	if customers.method != "n" {
		t.Errorf("st_customers %+v: want a reference table", customers)
	}
	for name := range got {
		if !strings.HasPrefix(name, "st_") && !strings.HasPrefix(name, "km_colocation_") {
			t.Errorf("table %s is in Citus's metadata: want the bookkeeping, SCIM and limit tables coordinator-local", name)
		}
	}
	for table, wantKey := range map[string]bool{"st_orders": false, "st_items": false, "st_customers": true} {
		var keys int
		if err := db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM pg_constraint WHERE conrelid = to_regclass($1) AND contype = 'p'`, `"`+sqlstore.GenerationOf(t, db, table)+`"`).Scan(&keys); err != nil {
			t.Fatal(err)
		}
		if (keys == 1) != wantKey {
			t.Errorf("%s has %d primary keys, want one: %v", table, keys, wantKey)
		}
		var rowIndexes int
		if err := db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
			WHERE i.indrelid = to_regclass($1) AND i.indnatts = 1 AND a.attname = $2`, `"`+sqlstore.GenerationOf(t, db, table)+`"`, sqlstore.RowColumn).Scan(&rowIndexes); err != nil {
			t.Fatal(err)
		}
		if rowIndexes != 1 {
			t.Errorf("%s has %d indexes on %s alone, want 1", table, rowIndexes, sqlstore.RowColumn)
		}
	}
}

// TestCitusReimport imports the suite's data again with ORDERS declared a reference
// table instead of distributed: the changed source gets a new generation table, a
// reference table, in the import's transaction; the unchanged ones are kept.
func TestCitusReimport(t *testing.T) {
	db := openCitus(t)
	ctx := context.Background()
	if err := db.KM().Import(ctx, distribute(t, storetest.Data())); err != nil {
		t.Fatal(err)
	}
	oid := `SELECT to_regclass($1)::oid::bigint`
	var itemsBefore int64
	if err := db.SQL().QueryRowContext(ctx, oid, `"`+sqlstore.GenerationOf(t, db, "st_items")+`"`).Scan(&itemsBefore); err != nil {
		t.Fatal(err)
	}
	dist := map[string]map[string]string{"suite": {"CUSTOMERS": "reference", "ORDERS": "reference", "ITEMS": "ORDER_ID"}}
	s := db.KM()
	if err := s.Import(ctx, distributeAs(t, storetest.Data(), dist)); err != nil {
		t.Fatal(err)
	}
	var method string
	if err := db.SQL().QueryRowContext(ctx, `SELECT partmethod FROM pg_dist_partition WHERE logicalrelid = to_regclass($1)`, `"`+sqlstore.GenerationOf(t, db, "st_orders")+`"`).Scan(&method); err != nil {
		t.Fatal(err)
	}
	if method != "n" {
		t.Errorf("st_orders is %q after the import that declares it reference, want n", method)
	}
	var itemsAfter, orders int64
	if err := db.SQL().QueryRowContext(ctx, oid, `"`+sqlstore.GenerationOf(t, db, "st_items")+`"`).Scan(&itemsAfter); err != nil {
		t.Fatal(err)
	}
	if err := db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM st_orders`).Scan(&orders); err != nil {
		t.Fatal(err)
	}
	if itemsAfter != itemsBefore {
		t.Errorf("st_items was loaded again, its declaration unchanged")
	}
	if orders == 0 {
		t.Errorf("st_orders is empty after the reimport")
	}
}

// TestPostgresIgnoresDistribution imports KMs that declare a distribution into PostgreSQL
// without citus: the tables are created as without the declarations, the row number
// the primary key.
func TestPostgresIgnoresDistribution(t *testing.T) {
	db := openPostgres(t)
	ctx := context.Background()
	if has, err := db.HasCitus(ctx); err != nil || has {
		t.Fatalf("HasCitus = %v, %v on %s, want false", has, err, PostgresEnv)
	}
	if err := db.KM().Import(ctx, distribute(t, storetest.Data())); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"st_orders", "st_items", "st_customers"} {
		var keys int
		if err := db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM pg_constraint WHERE conrelid = to_regclass($1) AND contype = 'p'`, `"`+sqlstore.GenerationOf(t, db, table)+`"`).Scan(&keys); err != nil {
			t.Fatal(err)
		}
		if keys != 1 {
			t.Errorf("%s has %d primary keys, want 1", table, keys)
		}
	}
}

// TestCitusDistributionWithoutValue imports a record distributed by a field that is empty
// in some rows: Citus distributes no row without a value, and the import says which field.
func TestCitusDistributionWithoutValue(t *testing.T) {
	db := openCitus(t)
	fsys := distributeAs(t, storetest.JoinsData(), map[string]map[string]string{"joins": {"ORDERS": "ORDER_ID", "LINES": "ORDER_ID"}})
	err := db.KM().Import(context.Background(), fsys)
	want := "data/lines.csv: the distribution field ORDER_ID has empty values"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Import: %v, want an error containing %q", err, want)
	}
}

// TestCitusFiltersAcrossShards checks, against the reference evaluator, requests of the
// procure-to-pay KM whose filters read a record through a reference table between two
// distributed ones (purchase orders and their lines distributed by PO_ID, goods receipts
// a reference table pointing to the lines): the condition on a line reached from its
// goods receipt is read from the line the statement joined already, not from a second
// join of the lines on LINE_ID, which Citus cannot plan between two distributed tables.
func TestCitusFiltersAcrossShards(t *testing.T) {
	db := openCitus(t)
	ctx := context.Background()
	fsys := distribute(t, storetest.P2PData(60))
	s := db.KM()
	if err := s.Import(ctx, fsys); err != nil {
		t.Fatal(err)
	}
	ref, err := storetest.LoadReference(fsys, "p2p")
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Model(ctx, "p2p")
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []storetest.RefRequest{
		{Fields: []string{"PURCHASE_ORDERS.STATUS"}, FilterExprs: []string{"GOODS_RECEIPTS.QUALITY_OK eq false or PO_LINES.AMOUNT gt 10"}},
		{Record: "PURCHASE_ORDERS", Fields: []string{"PO_ID"}, FilterExprs: []string{"GOODS_RECEIPTS.QUALITY_OK eq false or PO_LINES.AMOUNT gt 10"}},
		{Record: "GOODS_RECEIPTS", Fields: []string{"GR_ID"}, FilterExprs: []string{"PURCHASE_ORDERS.STATUS eq 'OPEN' or QUALITY_OK eq false"}},
		{Fields: []string{"GOODS_RECEIPTS.QUALITY_OK", "PURCHASE_ORDERS.STATUS"}, Distinct: true, FilterExprs: []string{"PO_LINES.AMOUNT gt 10 or PURCHASE_ORDERS.STATUS eq 'OPEN'"}},
		{Fields: []string{"PO_LINES.LINE_ID", "GOODS_RECEIPTS.GR_ID"}, FilterExprs: []string{"GOODS_RECEIPTS.QUALITY_OK eq true and PURCHASE_ORDERS.STATUS ne 'OPEN'"}},
	} {
		req.PageSize = 5000
		want, err := ref.Eval(req)
		if err != nil {
			t.Fatalf("%+v: reference: %v", req, err)
		}
		r := &km.PlanRequest{Record: req.Record, Fields: req.Fields, PageSize: req.PageSize, Distinct: req.Distinct}
		for _, f := range req.FilterExprs {
			e, err := query.ParseAndBind(f, m.FilterSchema(req.Record))
			if err != nil {
				t.Fatal(err)
			}
			r.Filters = append(r.Filters, e)
		}
		p, err := km.NewPlan(m, r)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Query(ctx, p)
		if err != nil {
			t.Errorf("%+v: %v", req, err)
			continue
		}
		got := formatted(res.Rows)
		if len(want.Rows) == 0 {
			t.Errorf("%+v: the reference has no rows: the request tests nothing", req)
		}
		if diff := cmp.Diff(want.Rows, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%+v (-reference +Citus):\n%s", req, diff)
		}
	}
}

// TestCitusDemo runs the requests of issue 32's report on the demo (distributed as its
// definition declares) on Citus and on the memory backend, and wants the same status and
// body from both: every record with every predefined filter, every KPI by five
// dimensions with and without a filter, each record's summary and a distinct page. The
// report had 27 of 151 such requests answer 500 on Citus.
func TestCitusDemo(t *testing.T) {
	db := openCitus(t)
	ctx := context.Background()
	fsys, err := storetest.DemoData(2000)
	if err != nil {
		t.Fatal(err)
	}
	cs := db.KM()
	if err := cs.Import(ctx, fsys); err != nil {
		t.Fatal(err)
	}
	ms := memory.New().KM()
	if err := ms.Import(ctx, fsys); err != nil {
		t.Fatal(err)
	}
	m, err := ms.Model(ctx, "o2c")
	if err != nil {
		t.Fatal(err)
	}
	records := []string{"CUSTOMERS", "MATERIALS", "ORDERS", "ORDER_ITEMS", "ACTIVITIES"}
	dims := []string{"CUSTOMERS.COUNTRY", "CUSTOMERS.SEGMENT", "MATERIALS.MATERIAL_GROUP", "ORDERS.STATUS", "ACTIVITIES.ACTIVITY"}
	var paths []string
	for _, r := range records {
		for _, f := range m.Filters {
			paths = append(paths, "/records/"+r+"/data?pageSize=100&filters="+f.ID)
		}
		rec := m.Record(r)
		paths = append(paths, "/records/"+r+"/summary",
			"/records/"+r+"/data?options=distinct&pageSize=100&fields="+rec.Fields[1].ID+","+rec.Fields[2].ID)
	}
	for i, k := range m.KPIs {
		for j, d := range dims {
			f := m.Filters[(i+j)%len(m.Filters)] // each filter with each dimension and KPI in turn
			paths = append(paths, "/data?pageSize=100&fields="+d+"&kpis="+k.ID,
				"/data?pageSize=100&fields="+d+"&kpis="+k.ID+"&filters="+f.ID)
		}
	}
	ch, mh := kmhttp.NewHandler(cs), kmhttp.NewHandler(ms)
	get := func(h http.Handler, path string) (int, any) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, kmhttp.BasePath+"/knowledge-models/o2c"+path, nil))
		var v any
		if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		if obj, ok := v.(map[string]any); ok && w.Code != http.StatusOK {
			delete(obj, "detail") // a 500's support id
		}
		return w.Code, v
	}
	ok := 0
	for _, path := range paths {
		cc, cb := get(ch, path)
		mc, mb := get(mh, path)
		if cc != mc {
			t.Errorf("GET %s: Citus %d, memory %d: %v", path, cc, mc, cb)
			continue
		}
		if diff := cmp.Diff(mb, cb, cmpopts.EquateApprox(1e-9, 0)); diff != "" {
			t.Errorf("GET %s (-memory +Citus):\n%s", path, diff)
			continue
		}
		if cc == http.StatusOK {
			ok++
		}
	}
	t.Logf("%d requests, %d answered 200 by both, the same body", len(paths), ok)
}
