package kmhttp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

const kmOpenAPI = "../../../shared/reference/km-openapi-v1.32.0.yaml"

// contractServer is the server URL the relaxed document routes under.
const contractServer = "http://kmkit.test"

// loadContract reads the public OpenAPI document of the KM API and relaxes, in memory, the
// flaws reference/README.md lists: page DTOs that combine allOf with additionalProperties
// false (a strict validator rejects page, pageSize, total and sort), the Paths schema that
// forbids every path, the numeric example of ODataServiceResultPage.$Version, and the
// ApiKeyAuth scheme (authentication is the auth package's business, not checked here).
// Examples are not validated: several write booleans as strings.
func loadContract(t *testing.T) (*openapi3.T, routers.Router) {
	t.Helper()
	data, err := os.ReadFile(kmOpenAPI)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("reference file absent:", kmOpenAPI)
	}
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		t.Fatal(err)
	}
	for name, ref := range doc.Components.Schemas {
		s := ref.Value
		if s == nil {
			continue
		}
		if len(s.AllOf) > 0 && s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
			s.AdditionalProperties = openapi3.AdditionalProperties{}
		}
		if name == "Paths" {
			s.AdditionalProperties = openapi3.AdditionalProperties{}
			s.Properties = nil
			s.PatternProperties = nil
		}
		if name == "ODataServiceResultPage" {
			if v := s.Properties["$Version"]; v != nil && v.Value != nil {
				v.Value.Example = nil
			}
		}
	}
	doc.Security = nil
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			op.Security = nil
		}
	}
	doc.Servers = openapi3.Servers{{URL: contractServer}}
	// The document's examples write booleans as strings; examples are not the contract.
	router, err := legacy.NewRouter(doc, openapi3.DisableExamplesValidation())
	if err != nil {
		t.Fatal(err)
	}
	return doc, router
}

func TestContract(t *testing.T) {
	_, router := loadContract(t)
	h := shop(t)
	type req struct {
		method, path, body string
		status             int
	}
	reqs := []req{
		{"GET", api + "?page=0&pageSize=1&sort=-name", "", 200},
		{"GET", api + "/shop", "", 200},
		{"GET", api + "/shop-base", "", 200},
		{"GET", api + "/nope", "", 404},
		{"GET", api + "/shop/filters?sort=id", "", 200},
		{"GET", api + "/shop/records?pageSize=2", "", 200},
		{"GET", api + "/shop/records?sort=bogus", "", 400},
		{"GET", api + "/shop/records/ORDERS?sort=id", "", 200},
		{"GET", api + "/shop/records/NOPE", "", 404},
		{"GET", api + "/shop/kpis", "", 200},
		{"GET", kmData("fields=CUSTOMERS.COUNTRY,ORDERS.DAY,ORDERS.CREATED,ORDERS.EXPRESS&kpis=NET,ORDERS_N,LATE_SHARE&sort=-NET"), "", 200},
		{"GET", kmData("fields=ORDERS.NOPE"), "", 400},
		{"POST", api + "/shop/data", `{"projection":{"fields":"CUSTOMERS.COUNTRY","kpis":["NET"],"sort":"-NET","pagination":{"pageNumber":0,"pageSize":10}}}`, 200},
		{"POST", api + "/shop/data", `{}`, 400},
		{"GET", rec("ORDERS", "fields=ID,NET,DAY,CREATED,LATE,EXPRESS&filterExpr="+esc("NET gt 1")+"&sort=-NET"), "", 200},
		{"GET", rec("ORDERS", "fields=ID&sort=NET"), "", 400},
		{"POST", api + "/shop/records/ORDERS/data", `{"projection":{"fields":"ID,STATUS","filters":{"kmFilterNames":["PAID"],"filterExpr":["NET gt 1"]},"options":["distinct"],"search":{"term":"O","precision":50}}}`, 200},
		{"POST", api + "/shop/records/ORDERS/data", `{"projection":{"sort":"ID"}}`, 400},
		{"GET", api + "/shop/records/CUSTOMERS/query?searchTerm=muller", "", 200},
		{"GET", api + "/shop/records/CUSTOMERS/query?sort=ID,-ID", "", 400},
		{"GET", api + "/shop/query?fields=ORDERS.STATUS&kpis=ORDERS_N", "", 200},
		{"GET", api + "/shop/query", "", 400},
	}
	covered := map[string]bool{}
	for _, rq := range reqs {
		var body io.Reader
		if rq.body != "" {
			body = strings.NewReader(rq.body)
		}
		r := httptest.NewRequest(rq.method, contractServer+rq.path, body)
		if rq.body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != rq.status {
			t.Errorf("%s %s: status %d, want %d: %s", rq.method, rq.path, w.Code, rq.status, w.Body)
			continue
		}
		// Route a fresh copy of the request: the handler has consumed the body.
		vr := httptest.NewRequest(rq.method, contractServer+rq.path, strings.NewReader(rq.body))
		route, params, err := router.FindRoute(vr)
		if err != nil {
			t.Errorf("%s %s: no route in the document: %v", rq.method, rq.path, err)
			continue
		}
		covered[route.Operation.OperationID] = true
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: vr, PathParams: params, Route: route},
			Status:                 w.Code,
			Header:                 w.Header(),
			Body:                   io.NopCloser(bytes.NewReader(w.Body.Bytes())),
			Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
		}
		if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
			t.Errorf("%s %s: the %d response does not match the document: %v\n%s", rq.method, rq.path, w.Code, err, w.Body)
		}
	}
	// The relaxed document still rejects a wrong body, so the checks above can fail.
	vr := httptest.NewRequest("GET", contractServer+api, nil)
	route, params, err := router.FindRoute(vr)
	if err != nil {
		t.Fatal(err)
	}
	bad := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: vr, PathParams: params, Route: route},
		Status:                 200,
		Header:                 http.Header{"Content-Type": {"application/json"}},
		Body:                   io.NopCloser(strings.NewReader(`{"page":"zero","content":[{"id":1}]}`)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), bad); err == nil {
		t.Error("a page with a string page number and a numeric id passed validation")
	}
	// Every operation of this package's endpoints is exercised; spec, summary and OData are
	// other packages' work.
	for _, op := range []string{"getKnowledgeModel", "getKnowledgeModelDetails", "getFilters", "getRecords", "getRecordDetails",
		"getKnowledgeModelDataResult", "getKnowledgeModelQueryResultByUsingQueryInBody", "getRecordDataResult",
		"getRecordDataResultByUsingQueryInBody", "getRecordQueryResult", "getKpis", "getKnowledgeModelQueryResult"} {
		if !covered[op] {
			t.Errorf("operation %s not exercised", op)
		}
	}
}
