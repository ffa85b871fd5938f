package kmhttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/storage/memory"
	"github.com/kmkit/kmkit/storage/storetest"
)

// maxAnswer is a page size that holds every row of the small demo.
const maxAnswer = 5000

// TestEndpointsAgainstReference sends the requests of the conformance suite's semantics
// part (storetest.SemanticsCases, which the suite asks of km.Service on every backend)
// through the KM API's encodings (GET data, GET query, POST data and the summary), and
// compares the answers with the reference evaluator: the same refusals (400), columns and
// rows. The suite checks the stores; this checks that the API reads its parameters and
// writes its rows as the Service takes and gives them.
func TestEndpointsAgainstReference(t *testing.T) {
	fsys, err := storetest.DemoData(storetest.DemoOrders)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := storetest.LoadReference(fsys, "o2c")
	if err != nil {
		t.Fatal(err)
	}
	s := memory.New().KM()
	if err := s.Import(context.Background(), fsys); err != nil {
		t.Fatal(err)
	}
	h := kmhttp.NewHandler(s, kmhttp.WithMaxPageSize(maxAnswer))
	records, kmLevel := storetest.SemanticsCases(ref.KM)
	t.Run("Records", func(t *testing.T) {
		for _, req := range records {
			for _, kind := range []endpointKind{getData, getQuery, postData, getSumm} {
				if kind == getSumm && (req.Sort != "" || req.Distinct || req.Page != 0) {
					continue
				}
				checkAPI(t, h, ref, "o2c", req, kind)
			}
		}
	})
	t.Run("KnowledgeModel", func(t *testing.T) {
		for _, req := range kmLevel {
			for _, kind := range []endpointKind{getData, getQuery, postData} {
				checkAPI(t, h, ref, "o2c", req, kind)
			}
		}
	})
}

// number returns a JSON number as int64 when it is an integer, else as float64; other
// values as they are.
func number(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return v
	}
	return f
}

// endpointKind is one way of asking the API for rows.
type endpointKind string

const (
	getData  endpointKind = "GET data"
	getQuery endpointKind = "GET query"
	postData endpointKind = "POST data"
	getSumm  endpointKind = "GET summary"
)

// apiCall is one HTTP request derived from a RefRequest.
type apiCall struct {
	method, target, body string
}

func (c apiCall) String() string {
	if c.body != "" {
		return c.method + " " + c.target + " " + c.body
	}
	return c.method + " " + c.target
}

// toCall renders req as a request of the given kind against KM kmID.
func toCall(kmID string, req storetest.RefRequest, kind endpointKind) apiCall {
	base := kmhttp.BasePath + "/knowledge-models/" + url.PathEscape(kmID)
	if req.Record != "" {
		base += "/records/" + url.PathEscape(req.Record)
	}
	if kind == postData {
		pr := map[string]any{}
		if len(req.Fields) > 0 {
			pr["fields"] = strings.Join(req.Fields, ",")
		}
		if len(req.Filters)+len(req.FilterExprs) > 0 {
			f := map[string]any{}
			if len(req.Filters) > 0 {
				f["kmFilterNames"] = req.Filters
			}
			if len(req.FilterExprs) > 0 {
				f["filterExpr"] = req.FilterExprs
			}
			pr["filters"] = f
		}
		pr["pagination"] = map[string]int{"pageNumber": req.Page, "pageSize": pageSizeOf(req)}
		if req.Sort != "" {
			pr["sort"] = req.Sort
		}
		if req.Distinct {
			pr["options"] = []string{"distinct"}
		}
		if len(req.KPIs) > 0 {
			pr["kpis"] = req.KPIs
		}
		if len(req.KPIParams) > 0 {
			pr["kpiParameters"] = req.KPIParams
		}
		b, _ := json.Marshal(map[string]any{"projection": pr})
		return apiCall{method: http.MethodPost, target: base + "/data", body: string(b)}
	}
	v := url.Values{}
	if len(req.Fields) > 0 {
		v.Set("fields", strings.Join(req.Fields, ","))
	}
	if len(req.Filters) > 0 {
		v.Set("filters", strings.Join(req.Filters, ","))
	}
	for _, e := range req.FilterExprs {
		v.Add("filterExpr", e)
	}
	if kind == getSumm {
		v.Set("sampleSize", strconv.Itoa(pageSizeOf(req)))
		return apiCall{method: http.MethodGet, target: base + "/summary?" + v.Encode()}
	}
	if len(req.KPIs) > 0 {
		v.Set("kpis", strings.Join(req.KPIs, ","))
	}
	for k, ps := range req.KPIParams {
		for p, val := range ps {
			v.Add("kpiParam", k+"."+p+":"+val)
		}
	}
	if req.Sort != "" {
		v.Set("sort", req.Sort)
	}
	if req.Distinct {
		v.Set("options", "distinct")
	}
	v.Set("page", strconv.Itoa(req.Page))
	v.Set("pageSize", strconv.Itoa(pageSizeOf(req)))
	path := "/data"
	if kind == getQuery {
		path = "/query"
	}
	return apiCall{method: http.MethodGet, target: base + path + "?" + v.Encode()}
}

func pageSizeOf(req storetest.RefRequest) int {
	if req.PageSize == 0 {
		return maxAnswer
	}
	return req.PageSize
}

// checkAPI sends req to h as kind and compares the answer with the reference: the same
// status class (200, or 400 where the reference refuses the request), the same columns
// and the same rows in the same order, floats within 1e-9 relative.
func checkAPI(t *testing.T, h http.Handler, ref *storetest.Reference, kmID string, req storetest.RefRequest, kind endpointKind) {
	t.Helper()
	call := toCall(kmID, req, kind)
	evalReq := req
	if kind == getSumm {
		evalReq.Sort, evalReq.Page, evalReq.Distinct = "", 0, false
		evalReq.PageSize = 0
	}
	want, werr := ref.Eval(evalReq)
	if werr != nil {
		if _, ok := werr.(*storetest.RefError); !ok {
			t.Fatalf("%s: the reference failed: %v", call, werr)
		}
	}
	var r *http.Request
	if call.body != "" {
		r = httptest.NewRequest(call.method, call.target, strings.NewReader(call.body))
		r.Header.Set("Content-Type", "application/json")
	} else {
		r = httptest.NewRequest(call.method, call.target, nil)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	body := w.Body.String()
	if werr != nil {
		if w.Code != http.StatusBadRequest {
			t.Errorf("%s\n  want 400 (%v)\n  got %d %s", call, werr, w.Code, short(body))
		}
		return
	}
	if w.Code != http.StatusOK {
		t.Errorf("%s\n  want 200 with %d rows\n  got %d %s", call, len(want.Rows), w.Code, short(body))
		return
	}
	got, total, err := decodeRows(body, kind, want.Columns)
	if err != nil {
		t.Errorf("%s: %v in %s", call, err, short(body))
		return
	}
	wantRows := want.Rows
	if kind == getSumm {
		if total != len(want.Rows) {
			t.Errorf("%s\n  shape: want %d rows, got %d", call, len(want.Rows), total)
		}
		wantRows = wantRows[:min(len(wantRows), pageSizeOf(req))]
	}
	if d := storetest.DiffRows(wantRows, got); d != "" {
		t.Errorf("%s\n  columns %v\n%s", call, want.Columns, d)
	}
}

func short(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}

// decodeRows reads the rows of an answer in the order of columns; total is the summary's
// row count (shape[0]).
func decodeRows(body string, kind endpointKind, columns []string) ([][]any, int, error) {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var objs []map[string]any
	total := -1
	switch kind {
	case getQuery:
		var v struct {
			Content []map[string]any `json:"content"`
		}
		if err := dec.Decode(&v); err != nil {
			return nil, 0, err
		}
		objs = v.Content
	default:
		var v struct {
			Content struct {
				Headers []struct {
					ID string `json:"id"`
				} `json:"headers"`
				Data []map[string]any `json:"data"`
			} `json:"content"`
			Shape []int `json:"shape"`
		}
		if err := dec.Decode(&v); err != nil {
			return nil, 0, err
		}
		var ids []string
		for _, hd := range v.Content.Headers {
			ids = append(ids, hd.ID)
		}
		if strings.Join(ids, ",") != strings.Join(columns, ",") {
			return nil, 0, fmt.Errorf("headers %v, want %v", ids, columns)
		}
		objs = v.Content.Data
		if len(v.Shape) > 0 {
			total = v.Shape[0]
		}
	}
	rows := make([][]any, len(objs))
	for i, o := range objs {
		if len(o) != len(columns) {
			return nil, 0, fmt.Errorf("row %d has %d members, want %d", i, len(o), len(columns))
		}
		rows[i] = make([]any, len(columns))
		for j, c := range columns {
			v, ok := o[c]
			if !ok {
				return nil, 0, fmt.Errorf("row %d has no member %s", i, c)
			}
			rows[i][j] = number(v)
		}
	}
	return rows, total, nil
}

// TestDidYouMeanAnswers: an unknown record, field, KPI, filter or KPI parameter id is
// answered with the closest ids (issue 29 item 5), status, code and detail, as
// km.Service words them (the conformance suite checks the Service on every backend).
func TestDidYouMeanAnswers(t *testing.T) {
	s := memory.New().KM()
	if err := s.Import(context.Background(), storetest.AnswersData()); err != nil {
		t.Fatal(err)
	}
	h := kmhttp.NewHandler(s)
	base := kmhttp.BasePath + "/knowledge-models/answers"
	for _, c := range []struct {
		target       string
		status       int
		code, detail string
	}{
		{"/records/ORDERS/data?fields=order_id", 400, "KM_FIELD_NOTFOUND",
			"unknown field: order_id (record ORDERS); did you mean ORDER_ID?"},
		{"/data?fields=order_id", 400, "KM_FIELD_NOTFOUND",
			"unknown field: order_id (knowledge model endpoints name fields RECORD.FIELD); did you mean ORDERS.ORDER_ID?"},
		{"/records/ORDERS/data?fields=ORDER_ID&filters=open_orders", 400, "KM_FILTER_NOTFOUND",
			"unknown filter: open_orders; did you mean OPEN_ORDERS?"},
		{"/data?kpis=TOTALNET", 400, "KM_FIELD_NOTFOUND",
			"unknown KPI: TOTALNET; did you mean TOTAL_NET?"},
		{"/data?kpis=TOTALNET,avg_net&fields=CUSTOMERS.COUNTRY", 400, "KM_FIELD_NOTFOUND",
			"unknown KPIs: TOTALNET, avg_net; did you mean TOTAL_NET for TOTALNET, AVG_NET for avg_net?"},
		{"/records/ORDERS/data?fields=ORDER_ID,CUSTOMER_NAME", 400, "KM_FIELD_NOTFOUND",
			"unknown field: CUSTOMER_NAME (record ORDERS); did you mean CUSTOMERS.CUSTOMER_NAME? (fields of other records are selected at knowledge model level, and filtered in filterExpr as RECORD.FIELD)"},
		{"/records/ORDERS/data?fields=ORDER_ID&filterExpr=CUSTOMER_NAME%20eq%20'Martin'", 400, "KM_FIELD_NOTFOUND",
			`filterExpr: position 1: unknown field "CUSTOMER_NAME"; did you mean CUSTOMERS.CUSTOMER_NAME?`},
		{"/data?fields=ORDERS.CUSTOMER_NAME", 400, "KM_FIELD_NOTFOUND",
			"unknown field: ORDERS.CUSTOMER_NAME (knowledge model endpoints name fields RECORD.FIELD); did you mean CUSTOMERS.CUSTOMER_NAME?"},
		{"/records/ORDERS/data?fields=ORDERS.STATUS", 400, "KM_FIELD_NOTFOUND",
			"unknown field: ORDERS.STATUS (record ORDERS); did you mean STATUS?"},
		{"/records/ORDERS/data?fields=ORDER_ID&searchTerm=x&searchField=STAUS", 400, "KM_FIELD_NOTFOUND",
			"unknown searchField STAUS (record ORDERS); did you mean STATUS?"},
		{"/records/ORDER/data?fields=ORDER_ID", 404, "KM_RECORD_NOTFOUND",
			`knowledge model answers has no record "ORDER"; did you mean ORDERS?`},
		{"/data?kpis=BIG_SHARE&kpiParam=BIG_SHARE.treshold:10", 400, "GENERAL_PARAMETER_ILLEGAL",
			`kpiParam of BIG_SHARE: KPI BIG_SHARE has no parameter "treshold"; did you mean threshold?`},
		{"/records/ORDERS/data?fields=ORDER_ID,STATUS&sort=-status", 400, "SORT_UNKNOWN_FIELD",
			`sort: "status" is not among the fields that can be sorted: ORDER_ID, STATUS; did you mean STATUS?`},
		{"/data?fields=CUSTOMERS.COUNTRY&kpis=TOTAL_NET&sort=-TOTALNET", 400, "SORT_UNKNOWN_FIELD",
			`sort: "TOTALNET" is not among the fields that can be sorted: CUSTOMERS.COUNTRY, TOTAL_NET; did you mean TOTAL_NET?`},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, base+c.target, nil))
		var p struct {
			Status    int    `json:"status"`
			ErrorCode string `json:"errorCode"`
			Detail    string `json:"detail"`
		}
		body := w.Body.String()
		if err := json.Unmarshal([]byte(body), &p); err != nil || w.Code != c.status || p.Status != c.status || p.ErrorCode != c.code || p.Detail != c.detail {
			t.Errorf("GET %s\n  want %d %s %q\n  got %d %s", c.target, c.status, c.code, c.detail, w.Code, body)
		}
	}
}
