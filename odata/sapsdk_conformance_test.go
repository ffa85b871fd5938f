package odata

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/internal/demodata"
	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/internal/nodetools"
)

// SAP Cloud SDK for JavaScript (issue 16): its generator writes a typed client for the
// $metadata of the demo service o2c, and conformance/sapsdk.js calls the service through
// that client and the SDK's OData V4 runtime. The generated code is transpiled into a
// temporary directory, so nothing generated is committed. The expected answers are
// computed here in plain Go over the demo's orders.csv, not by the handler.

// sapSDK serves the demo KMs, generates the SDK client for o2c's $metadata and returns
// drive, which runs sapsdk.js with cases (see its header) and decodes its answer into out,
// and the $filter options and the method and path of the requests the service received.
func sapSDK(t *testing.T) (drive func(out any, cases ...string), filters func() []string, paths func() []string) {
	t.Helper()
	tools := nodetools.Dir(t, "KMKIT_ODATA_TOOLS", "conformance",
		[]string{"@sap-cloud-sdk/generator", "@sap-cloud-sdk/odata-v4", "typescript"})
	store, err := demostore.Store(0)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(store)
	var mu sync.Mutex
	var gotFilters, gotPaths []string
	mux := http.NewServeMux()
	mux.Handle(BasePath+"/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotPaths = append(gotPaths, r.Method+" "+r.URL.Path)
		if f := r.URL.Query().Get("$filter"); f != "" {
			gotFilters = append(gotFilters, f)
		}
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	root := srv.URL + BasePath + "/o2c.svc"

	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	fetch(t, root+"/$metadata", in, "o2c.edmx")
	// The generator's transpilation: JavaScript only (no declarations, no source maps),
	// without type checking, resolving the SDK's packages in the tools directory.
	tsconfig, err := json.Marshal(map[string]any{"compilerOptions": map[string]any{
		"target": "es2021", "module": "commonjs", "moduleResolution": "node", "noCheck": true,
		"skipLibCheck": true, "declaration": false, "sourceMap": false, "baseUrl": ".",
		"paths": map[string][]string{"*": {filepath.Join(tools, "node_modules", "*")}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tsconfig.json"), tsconfig, 0o644); err != nil {
		t.Fatal(err)
	}
	gen := filepath.Join(dir, "gen")
	sdkNode(t, tools, filepath.Join(tools, "node_modules", "@sap-cloud-sdk", "generator", "dist", "cli.js"),
		"--input", in, "--outputDir", gen, "--transpile", "--tsconfig", filepath.Join(dir, "tsconfig.json"))
	if _, err := os.Stat(filepath.Join(gen, "o2c", "index.js")); err != nil {
		t.Fatalf("the SAP Cloud SDK generator wrote no client: %v", err)
	}

	drive = func(out any, cases ...string) {
		t.Helper()
		b := sdkNode(t, tools, append([]string{"sapsdk.js", filepath.Join(gen, "o2c"), root}, cases...)...)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("sapsdk.js: %v in %s", err, b)
		}
	}
	snapshot := func(s *[]string) func() []string {
		return func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(*s)
		}
	}
	return drive, snapshot(&gotFilters), snapshot(&gotPaths)
}

// sdkNode runs node with args in dir, where the SDK's packages resolve also for code outside
// it (the generated client), and returns its standard output.
func sdkNode(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

// sdkDemoOrders reads the demo's orders.csv as sapsdk.js prints an order: NET_VALUE a
// number, EXPRESS a boolean, DAYS_LATE the decimal string, null for an empty cell.
func sdkDemoOrders(t *testing.T) []map[string]any {
	t.Helper()
	b, err := demodata.FS.ReadFile("data/orders.csv")
	if err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	for _, rec := range records[1:] {
		row := map[string]any{}
		for i, col := range records[0] {
			cell := rec[i]
			var v any = cell
			switch {
			case cell == "":
				v = nil
			case col == "NET_VALUE":
				f, err := strconv.ParseFloat(cell, 64)
				if err != nil {
					t.Fatal(err)
				}
				v = f
			case col == "EXPRESS":
				v = cell == "true"
			}
			row[col] = v
		}
		rows = append(rows, row)
	}
	return rows
}

// sdkOrderIDs returns the ORDER_ID of the orders keep accepts, in ascending order.
func sdkOrderIDs(rows []map[string]any, keep func(map[string]any) bool) []string {
	var ids []string
	for _, r := range rows {
		if keep(r) {
			ids = append(ids, r["ORDER_ID"].(string))
		}
	}
	slices.Sort(ids)
	return ids
}

func sdkNet(r map[string]any) float64 { f, _ := r["NET_VALUE"].(float64); return f }

// sdkLate returns DAYS_LATE and whether it is set.
func sdkLate(r map[string]any) (int, bool) {
	s, ok := r["DAYS_LATE"].(string)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// sdkCases runs sapsdk.js with the cases that are the keys of outs and decodes the answer
// of each into its value; a case whose request failed is an error.
func sdkCases(t *testing.T, drive func(any, ...string), outs map[string]any) {
	t.Helper()
	names := slices.Sorted(maps.Keys(outs))
	got := map[string]json.RawMessage{}
	drive(&got, names...)
	for _, n := range names {
		var failed struct{ Error *string }
		if json.Unmarshal(got[n], &failed) == nil && failed.Error != nil {
			t.Errorf("%s: the SDK's request failed: %s", n, *failed.Error)
			continue
		}
		if err := json.Unmarshal(got[n], outs[n]); err != nil {
			t.Errorf("%s: %v in %s", n, err, got[n])
		}
	}
}

// sdkIDs is a filter case's answer: the ids, or the SDK's error.
type sdkIDs struct {
	IDs   []string
	Error string
}

func (r *sdkIDs) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(b, []byte("{")) {
		var e struct{ Error string }
		if err := json.Unmarshal(b, &e); err != nil {
			return err
		}
		r.Error = e.Error
		return nil
	}
	return json.Unmarshal(b, &r.IDs)
}

// checkSDKFilters runs the filter cases with sapsdk.js and compares the ids with want, and
// the $filter the SDK sent for each with its expected text.
func checkSDKFilters(t *testing.T, drive func(any, ...string), filters func() []string, cases map[string]sdkFilterCase) {
	t.Helper()
	names := slices.Sorted(maps.Keys(cases))
	got := map[string]sdkIDs{}
	drive(&got, names...)
	sent := filters()
	for _, n := range names {
		c := cases[n]
		if !slices.Contains(sent, c.filter) {
			t.Errorf("%s: the SDK did not send $filter=%s; it sent %q", n, c.filter, sent)
		}
		g, ok := got[n]
		switch {
		case !ok:
			t.Errorf("%s: no answer", n)
		case g.Error != "":
			t.Errorf("%s ($filter=%s): the SDK's request failed: %s", n, c.filter, g.Error)
		case len(c.want) == 0:
			t.Errorf("%s: the expected answer is empty: choose a filter that selects orders", n)
		default:
			if d := cmp.Diff(c.want, g.IDs); d != "" {
				t.Errorf("%s ($filter=%s): ids (-want +got):\n%s", n, c.filter, d)
			}
		}
	}
}

type sdkFilterCase struct {
	filter string   // the $filter the SDK writes
	want   []string // the ids of the orders it selects
}

// The SDK pages through every order with top/skip, reads one by key (the named form
// ORDERS_entries(ORDER_ID='SO-0000002')), counts, and filters with the suffixed literals
// it writes for Edm.Double (D) and Edm.Int64 (L) and with its filter functions. (Edm.Decimal
// it writes without a suffix in OData V4, and the demo has no decimal field.)
func TestSAPCloudSDK(t *testing.T) {
	drive, filters, paths := sapSDK(t)
	orders := sdkDemoOrders(t)
	status := func(r map[string]any) string { s, _ := r["STATUS"].(string); return s }

	const pageSize = 150
	var page struct {
		Pages int
		Rows  []map[string]any
	}
	var key map[string]any
	var count any
	sdkCases(t, drive, map[string]any{fmt.Sprint("page:", pageSize): &page, "key:SO-0000002": &key, "count": &count})
	// Every order exactly once, whatever the order of the pages.
	byID := func(a, b map[string]any) int {
		return strings.Compare(fmt.Sprint(a["ORDER_ID"]), fmt.Sprint(b["ORDER_ID"]))
	}
	rows := slices.SortedFunc(slices.Values(page.Rows), byID)
	want := slices.SortedFunc(slices.Values(orders), byID)
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("SDK getAll paged by %d (-want +got):\n%s", pageSize, d)
	}
	if wantPages := len(orders)/pageSize + 1; page.Pages != wantPages {
		t.Errorf("SDK read %d pages of %d, want %d", page.Pages, pageSize, wantPages)
	}
	if i := slices.IndexFunc(orders, func(r map[string]any) bool { return r["ORDER_ID"] == "SO-0000002" }); i < 0 {
		t.Fatal("SO-0000002 is not in orders.csv")
	} else if d := cmp.Diff(orders[i], key); d != "" {
		t.Errorf("SDK getByKey (-want +got):\n%s", d)
	}
	paid := len(sdkOrderIDs(orders, func(r map[string]any) bool { return r["STATUS"] == "PAID" }))
	if count != float64(paid) {
		t.Errorf("SDK count of PAID orders: %v, want %d", count, paid)
	}
	for _, want := range []string{"GET " + BasePath + "/o2c.svc/ORDERS_entries(ORDER_ID='SO-0000002')", "GET " + BasePath + "/o2c.svc/ORDERS_entries/$count"} {
		if !slices.Contains(paths(), want) {
			t.Errorf("the SDK did not send %s; it sent %q", want, paths())
		}
	}

	checkSDKFilters(t, drive, filters, map[string]sdkFilterCase{
		"double": {"(NET_VALUE gt 50000D)", sdkOrderIDs(orders, func(r map[string]any) bool { return sdkNet(r) > 50000 })},
		"int64": {"(DAYS_LATE gt 5L)", sdkOrderIDs(orders, func(r map[string]any) bool {
			n, ok := sdkLate(r)
			return ok && n > 5
		})},
		"range": {"((NET_VALUE le 1500.25D and DAYS_LATE ge 0L))", sdkOrderIDs(orders, func(r map[string]any) bool {
			n, ok := sdkLate(r)
			return r["NET_VALUE"] != nil && sdkNet(r) <= 1500.25 && ok && n >= 0
		})},
		// The SDK's string and date filter functions: contains (which the SDK compares
		// with true), toLower and year.
		"contains": {"(contains(STATUS,'ED') eq true)", sdkOrderIDs(orders, func(r map[string]any) bool { return strings.Contains(status(r), "ED") })},
		"tolower":  {"(tolower(STATUS) eq 'open')", sdkOrderIDs(orders, func(r map[string]any) bool { return strings.ToLower(status(r)) == "open" })},
		"year": {"((year(ORDER_DATE) eq 2025 and NET_VALUE gt 60000D))", sdkOrderIDs(orders, func(r map[string]any) bool {
			d, _ := r["ORDER_DATE"].(string)
			return strings.HasPrefix(d, "2025-") && sdkNet(r) > 60000
		})},
	})
}
