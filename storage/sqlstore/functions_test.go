package sqlstore_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/odata"
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
			target := odata.BasePath + "/o2c.svc/ORDERS_entries?$filter=" + url.QueryEscape("NET_VALUE mul 1e308 mul 10 gt 0")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
			if w.Code != c.status {
				t.Fatalf("GET %s: %d %s, want %d", target, w.Code, w.Body, c.status)
			}
			if c.status == http.StatusBadRequest && !strings.Contains(w.Body.String(), `"detail":"the filter's arithmetic gives a number beyond the range of a 64-bit float, which the database refuses"`) {
				t.Errorf("GET %s: body %s", target, w.Body)
			}
		})
	}
}
