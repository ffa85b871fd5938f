package demostore

import (
	"encoding/csv"
	"encoding/json"
	"io/fs"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/internal/demodata"
	"github.com/kmkit/kmkit/km/kmhttp"
)

// TestTotalNetIsTheNearestDouble checks the README's example: the FR TOTAL_NET of the
// embedded demo is 5173310.32, the double nearest to the sum of the FR orders' net values
// as the CSV files write them (exact rational arithmetic, math/big), where plain addition
// gave 5173310.319999997 (issue 29 item 6).
func TestTotalNetIsTheNearestDouble(t *testing.T) {
	read := func(name string) [][]string {
		b, err := fs.ReadFile(demodata.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows[1:]
	}
	country := map[string]string{}
	for _, r := range read("data/customers.csv") {
		country[r[0]] = r[2]
	}
	exact := new(big.Rat)
	for _, r := range read("data/orders.csv") {
		if country[r[1]] != "FR" || r[5] == "" {
			continue
		}
		x, ok := new(big.Rat).SetString(r[5])
		if !ok {
			t.Fatalf("net value %q", r[5])
		}
		exact.Add(exact, x)
	}
	want, _ := exact.Float64()
	if want != 5173310.32 {
		t.Fatalf("the exact FR total rounds to %v; the README shows 5173310.32", want)
	}
	s, err := Store(0)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	target := kmhttp.BasePath + "/knowledge-models/o2c/query?fields=CUSTOMERS.COUNTRY&kpis=TOTAL_NET&filterExpr=CUSTOMERS.COUNTRY%20eq%20'FR'"
	kmhttp.NewHandler(s).ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	d := json.NewDecoder(strings.NewReader(w.Body.String()))
	d.UseNumber()
	var p struct{ Content []map[string]any }
	if err := d.Decode(&p); err != nil || w.Code != http.StatusOK || len(p.Content) != 1 {
		t.Fatalf("GET %s: %d %v %s", target, w.Code, err, w.Body)
	}
	n, _ := p.Content[0]["TOTAL_NET"].(json.Number)
	if got, err := strconv.ParseFloat(string(n), 64); err != nil || got != want || string(n) != "5173310.32" {
		t.Errorf("FR TOTAL_NET = %s, want 5173310.32", n)
	}
}
