package kmhttp_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/auth"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/principal"
)

const connectorSwagger = "../../../shared/reference/powerplatform-connector-swagger.json"

// connectorRequest is one request as the Power Platform connector sends it: GET only,
// basePath /intelligence, arrays in csv form (filterExpr as ONE comma-joined value), and
// the Authorization header with the prefix the user typed.
type connectorRequest struct {
	operation string
	path      string // after the base path
	query     []string
	status    int
	want      string
}

var connectorKey = "connector-key-0123456789"

func connectorRequests() []connectorRequest {
	return []connectorRequest{
		{operation: "getKnowledgeModel", path: "/api/knowledge-models", query: []string{"page=0", "pageSize=50", "sort=%2Bid"}, status: 200,
			want: `{"page":0,"pageSize":50,"total":2,"sort":"+id","content":[{"id":"shop","name":"Shop"},{"id":"shop-base","name":"Shop (base)","published":"2026-01-15T10:00:00Z"}]}`},
		{operation: "getKnowledgeModelDetails", path: "/api/knowledge-models/shop", status: 200,
			want: `{"id":"shop","name":"Shop","extendedKMId":"shop-base"}`},
		{operation: "getFilters", path: "/api/knowledge-models/shop/filters", query: []string{"page=0", "pageSize=2", "sort=-id"}, status: 200,
			want: `{"page":0,"pageSize":2,"total":2,"sort":"-id","content":[{"id":"SHIPPED","name":"Shipped","description":"Ship events"},{"id":"PAID","name":"Paid","description":""}]}`},
		{operation: "getRecords", path: "/api/knowledge-models/shop/records", query: []string{"page=1", "pageSize=3", "sort=id"}, status: 200,
			want: `{"page":1,"pageSize":3,"total":1,"sort":"+id","content":[{"id":"ORDERS","name":"Orders","description":"Sales orders","shortDisplayName":"Ord","internalNote":""}]}`},
		{operation: "getRecordDetails", path: "/api/knowledge-models/shop/records/EVENTS", status: 200,
			want: `{"id":"EVENTS","name":"Events","description":"Process events","shortDisplayName":"","internalNote":"","fields":[
				{"id":"ORDER_ID","name":"Order","description":"","shortDisplayName":"","internalNote":"","type":"string","format":"","unit":""},
				{"id":"ACTIVITY","name":"Activity","description":"","shortDisplayName":"","internalNote":"","type":"string","format":"","unit":""},
				{"id":"AT","name":"At","description":"","shortDisplayName":"","internalNote":"","type":"datetime","format":"","unit":""}]}`},
		{operation: "getRecordDataResult", path: "/api/knowledge-models/shop/records/ORDERS/data",
			query: []string{"filters=LATE%2CPAID", "fields=ID%2CSTATUS%2CNET", "page=0", "pageSize=50", "sort=-NET%2CID",
				"filterExpr=" + esc("NET gt 50,STATUS ne 'OPEN',CREATED lt 2025-12-31T00:00:00+01:00")}, status: 200,
			want: `{"page":0,"pageSize":50,"total":1,"sort":["-NET","+ID"],"content":{"headers":[` + hOrderID + `,` + hStatus + `,` + hNet + `],
				"data":[{"ID":"O2","STATUS":"PAID","NET":250}]}}`},
		{operation: "getRecordDataResult", path: "/api/knowledge-models/shop/records/ORDERS/data",
			query: []string{"fields=ID,STATUS", "filterExpr=STATUS%20eq%20'PAID',NET%20lt%20100"}, status: 200,
			want: `{"page":0,"pageSize":50,"total":1,"sort":[],"content":{"headers":[` + hOrderID + `,` + hStatus + `],"data":[{"ID":"O3","STATUS":"PAID"}]}}`},
		{operation: "getTriggers", path: "/api/knowledge-models/shop/triggers", query: []string{"page=0", "pageSize=50"}, status: 404,
			want: problemJSON(404, "GENERAL_NOTFOUND_PATH", "no endpoint at /intelligence/api/knowledge-models/shop/triggers")},
	}
}

// outOfScope are connector operations of APIs kmkit does not serve (triggers and
// subscriptions); they answer 404 GENERAL_NOTFOUND_PATH.
var outOfScope = []string{"createSubscription", "getSubscriptions", "unsubscribe", "updateSubscription",
	"nextPageFromRemainingData", "pauseSubscription", "resumeSubscription", "resumeSubscriptionNoHistory"}

func TestPowerPlatformConnectorReplay(t *testing.T) {
	keys, err := auth.NewKeySet([]auth.Key{{Digest: auth.DigestOf(connectorKey), Name: "connector", Team: "t", Permissions: []principal.Permission{principal.PermKM}}})
	if err != nil {
		t.Fatal(err)
	}
	guard, err := auth.NewGuard(auth.Config{Authenticator: auth.Schemes{auth.SchemeAppKey: keys}})
	if err != nil {
		t.Fatal(err)
	}
	h := guard.Wrap(auth.Policy{Permission: principal.PermKM, WriteError: kmhttp.WriteProblem}, shop(t))
	for _, cr := range connectorRequests() {
		target := "/intelligence" + cr.path
		if len(cr.query) > 0 {
			target += "?" + strings.Join(cr.query, "&")
		}
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.Header.Set("Authorization", "AppKey "+connectorKey)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != cr.status {
			t.Errorf("%s %s: status %d, want %d: %s", cr.operation, target, w.Code, cr.status, w.Body)
			continue
		}
		if diff := jsonDiff(t, cr.want, w.Body.String()); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", cr.operation, target, diff)
		}
	}
}

// TestConnectorOperationsCovered checks the replay against the connector's definition:
// every operation is replayed or out of scope, and the replayed query parameters are the
// ones the connector declares.
func TestConnectorOperationsCovered(t *testing.T) {
	data, err := os.ReadFile(connectorSwagger)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("reference file absent:", connectorSwagger)
	}
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		BasePath string `json:"basePath"`
		Paths    map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Parameters  []struct {
				Name, In, CollectionFormat string
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.BasePath != "/intelligence" {
		t.Fatalf("basePath %q", doc.BasePath)
	}
	replayed := map[string][]string{}
	for _, cr := range connectorRequests() {
		for _, q := range cr.query {
			name, _, _ := strings.Cut(q, "=")
			replayed[cr.operation] = append(replayed[cr.operation], name)
		}
		if _, ok := replayed[cr.operation]; !ok {
			replayed[cr.operation] = nil
		}
	}
	var missing []string
	for _, ops := range doc.Paths {
		for method, op := range ops {
			if slices.Contains(outOfScope, op.OperationID) {
				continue
			}
			names, ok := replayed[op.OperationID]
			if !ok {
				missing = append(missing, op.OperationID)
				continue
			}
			if method != "get" {
				t.Errorf("%s: method %s, the replay sends GET", op.OperationID, method)
			}
			for _, n := range names {
				if !slices.ContainsFunc(op.Parameters, func(p struct{ Name, In, CollectionFormat string }) bool {
					return p.Name == n && p.In == "query"
				}) {
					t.Errorf("%s: the replay sends %s, which the connector does not declare", op.OperationID, n)
				}
			}
			for _, p := range op.Parameters {
				if p.Name == "filterExpr" && p.CollectionFormat != "csv" {
					t.Errorf("%s: filterExpr is %q, the replay assumes csv", op.OperationID, p.CollectionFormat)
				}
			}
		}
	}
	sort.Strings(missing)
	if diff := cmp.Diff([]string(nil), missing); diff != "" {
		t.Errorf("connector operations not replayed (-want +got):\n%s", diff)
	}
}
