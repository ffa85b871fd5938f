package kmkit_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kmkit/kmkit/internal/demodata"
	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/odata"
)

// Every KPI of the demo through OData's $apply answers what the KM API's /data answers
// for the same dimensions and filters (issue 30), on memory, SQLite and, with
// KMKIT_POSTGRES_DSN, PostgreSQL: the same groups, values and order.
func TestApplyKPIsEqualKMAPI(t *testing.T) {
	backends := []struct {
		name string
		open func(t *testing.T) km.Store
	}{
		{"memory", func(t *testing.T) km.Store {
			s, err := demostore.Store(0)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"sqlite", func(t *testing.T) km.Store {
			return openSQL(t, "sqlite:"+filepath.Join(t.TempDir(), "kmkit.db"), demodata.FS)
		}},
	}
	if os.Getenv("KMKIT_POSTGRES_DSN") != "" {
		backends = append(backends, struct {
			name string
			open func(t *testing.T) km.Store
		}{"postgres", func(t *testing.T) km.Store { return openSQL(t, postgresSchema(t), demodata.FS) }})
	}
	// Each question: the entity set, the grouping properties as $apply names them and
	// as /data names them, and a filter.
	questions := []struct {
		set           string
		groupby, data []string
		filter        string
	}{
		{"ORDERS_entries", nil, nil, ""},
		{"ORDERS_entries", []string{"CUSTOMERS.COUNTRY"}, []string{"CUSTOMERS.COUNTRY"}, ""},
		{"ORDERS_entries", []string{"CUSTOMERS/COUNTRY"}, []string{"CUSTOMERS.COUNTRY"}, ""},
		{"ORDERS_entries", []string{"STATUS", "CURRENCY"}, []string{"ORDERS.STATUS", "ORDERS.CURRENCY"}, "ORDERS.NET_VALUE ge 1000"},
		{"CUSTOMERS_entries", []string{"COUNTRY"}, []string{"CUSTOMERS.COUNTRY"}, "CUSTOMERS.COUNTRY ne 'DE'"},
		{"ORDER_ITEMS_entries", []string{"MATERIALS.MATERIAL_GROUP"}, []string{"MATERIALS.MATERIAL_GROUP"}, ""},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			store := b.open(t)
			svc := km.NewService(store)
			kmAPI := kmhttp.NewHandler(nil, kmhttp.WithService(svc))
			od := odata.NewHandler(nil, odata.WithService(svc))
			models, err := svc.Models(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range models {
				// Ad-hoc aggregates on ORDERS_entries equal the KPIs defined alike.
				for kpi, agg := range map[string]string{"TOTAL_NET": "NET_VALUE with sum as TOTAL_NET", "AVG_NET": "NET_VALUE with average as AVG_NET",
					"ORDER_COUNT": "$count as ORDER_COUNT"} {
					for _, q := range questions[:4] {
						t.Run(m.ID+" "+agg+" by "+strings.Join(q.groupby, ",")+" "+q.filter, func(t *testing.T) {
							v := url.Values{"kpis": {kpi}, "pageSize": {"1000"}}
							if len(q.data) > 0 {
								v.Set("fields", strings.Join(q.data, ","))
							}
							if q.filter != "" {
								v.Set("filterExpr", q.filter)
							}
							want := kmData(t, kmAPI, kmhttp.BasePath+"/knowledge-models/"+m.ID+"/data?"+v.Encode())
							apply := "aggregate(" + agg + ")"
							if len(q.groupby) > 0 {
								apply = "groupby((" + strings.Join(q.groupby, ",") + ")," + apply + ")"
							}
							if q.filter != "" {
								apply = "filter(" + q.filter + ")/" + apply
							}
							got := applyRows(t, od, odata.BasePath+"/"+m.ID+".svc/ORDERS_entries?$apply="+url.QueryEscape(apply), q.groupby, q.data)
							if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" || len(want) == 0 {
								t.Errorf("/data (-) and $apply (+) differ (%d groups):\n%s", len(want), diff)
							}
						})
					}
				}
				for _, k := range m.KPIs {
					for _, q := range questions {
						if m.Record(strings.TrimSuffix(q.set, "_entries")) == nil {
							continue
						}
						name := m.ID + " " + k.ID + " by " + strings.Join(q.groupby, ",") + " " + q.set + " " + q.filter
						t.Run(name, func(t *testing.T) {
							v := url.Values{"kpis": {k.ID}, "pageSize": {"1000"}}
							if len(q.data) > 0 {
								v.Set("fields", strings.Join(q.data, ","))
							}
							if q.filter != "" {
								v.Set("filterExpr", q.filter)
							}
							want := kmData(t, kmAPI, kmhttp.BasePath+"/knowledge-models/"+m.ID+"/data?"+v.Encode())
							apply := "aggregate(" + k.ID + ")"
							if len(q.groupby) > 0 {
								apply = "groupby((" + strings.Join(q.groupby, ",") + ")," + apply + ")"
							}
							if q.filter != "" {
								apply = "filter(" + q.filter + ")/" + apply
							}
							got := applyRows(t, od, odata.BasePath+"/"+m.ID+".svc/"+q.set+"?$apply="+url.QueryEscape(apply), q.groupby, q.data)
							if len(want) == 0 {
								t.Fatalf("/data answers no group: the case proves nothing")
							}
							if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
								t.Errorf("/data (-) and $apply (+) differ:\n%s", diff)
							}
						})
					}
				}
			}
		})
	}
}

// kmData returns the rows of a KM-level /data answer.
func kmData(t *testing.T, h http.Handler, target string) []map[string]any {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	if w.Code != 200 {
		t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
	}
	var page struct {
		Content struct{ Data []map[string]any }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil {
		t.Fatal(err)
	}
	return page.Content.Data
}

// applyRows returns the groups of a $apply answer, each with its grouping properties
// renamed to the /data names (a navigation path's nested object flattened).
func applyRows(t *testing.T, h http.Handler, target string, groupby, data []string) []map[string]any {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	if w.Code != 200 {
		t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
	}
	var coll struct{ Value []map[string]any }
	if err := json.Unmarshal(w.Body.Bytes(), &coll); err != nil {
		t.Fatal(err)
	}
	for _, row := range coll.Value {
		for i, g := range groupby {
			nav, field, ok := strings.Cut(g, "/")
			if ok {
				row[data[i]] = row[nav].(map[string]any)[field]
				delete(row, nav)
				continue
			}
			v := row[g]
			delete(row, g)
			row[data[i]] = v
		}
	}
	return coll.Value
}
