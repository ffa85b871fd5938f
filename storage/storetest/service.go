package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kmkit/kmkit/internal/kmparams"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// maxAnswer is the page size that holds every row of the suites' small data.
const maxAnswer = 5000

// newService returns the request layer over s as the surfaces use it, with pages large
// enough for every row of the suites' data.
func newService(s km.Store) *km.Service {
	return km.NewService(s, km.WithMaxPageSize(maxAnswer))
}

// suiteNow is the instant OData's $filter and $orderby are bound at (now() in them).
var suiteNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// serviceRequest renders req as the portable request a surface hands the Service: the
// KM API's parameters, OData's filterid, $filter (bound against the record's filter
// schema, as OData binds it) and $orderby (value expressions as sort terms).
func serviceRequest(m *km.KnowledgeModel, req RefRequest) (*km.Request, error) {
	r := &km.Request{
		Record: req.Record, Fields: req.Fields, KPIs: req.KPIs, KPIParams: req.KPIParams,
		Filters: req.Filters, Distinct: req.Distinct,
		Page: req.Page, PageSize: pageSizeOf(req), Count: true, AllFields: true,
	}
	// A filterExpr value of the KM API may hold several expressions joined by top-level
	// commas (the Power Platform connector sends them so); the API hands the Service one
	// expression each.
	for _, v := range req.FilterExprs {
		r.FilterExprs = append(r.FilterExprs, kmparams.SplitTopLevel(v)...)
	}
	if req.Search != nil {
		r.Search = &km.SearchRequest{Term: req.Search.Term, Fields: req.Search.Fields, Precision: req.Search.Precision}
	}
	if req.Sort != "" {
		keys, err := kmparams.ParseSort(req.Sort)
		if err != nil {
			return nil, err
		}
		r.Sort = keys
	}
	if req.RowKey != "" {
		// The reference names the row key req.RowKey, a surface's name for it (OData's
		// generated key); the request names it km.RowField.
		rowKey := func(name string) string {
			if name == req.RowKey {
				return km.RowField
			}
			return name
		}
		r.RowKey = true
		r.Fields = make([]string, len(req.Fields))
		for i, f := range req.Fields {
			r.Fields[i] = rowKey(f)
		}
		for i := range r.Sort {
			r.Sort[i].Field = rowKey(r.Sort[i].Field)
		}
		for _, text := range r.FilterExprs {
			e, err := query.ParseAndBind(text, rowKeySchema{Schema: m.RowKeySchema(req.Record), key: req.RowKey})
			if err != nil {
				return nil, err
			}
			e, err = query.MapFields(e, func(f query.FieldRef) (query.FieldRef, error) {
				f.Name = rowKey(f.Name)
				return f, nil
			})
			if err != nil {
				return nil, err
			}
			r.Where = append(r.Where, e)
		}
		r.FilterExprs = nil
	}
	if req.ODataFilter != "" {
		e, err := query.Parse(req.ODataFilter, query.WithParam("$filter"), query.ODataSyntax())
		if err != nil {
			return nil, err
		}
		if e, err = query.BindAt(e, m.FilterSchema(req.Record), suiteNow); err != nil {
			return nil, err
		}
		r.Where = append(r.Where, e)
	}
	if req.ODataOrderBy != "" {
		for _, item := range kmparams.SplitTopLevel(req.ODataOrderBy) {
			words := strings.Fields(item)
			k := query.SortTerm{}
			switch strings.ToLower(words[len(words)-1]) {
			case "desc":
				k.Desc = true
				words = words[:len(words)-1]
			case "asc":
				words = words[:len(words)-1]
			}
			e, err := query.ParseScalar(strings.Join(words, " "), query.WithParam("$orderby"))
			if err != nil {
				return nil, err
			}
			if f, ok := e.(*query.FieldOperand); ok {
				k.Field = f.Field.Name
			} else {
				if e, err = query.BindScalar(e, m.FilterSchema(req.Record), suiteNow); err != nil {
					return nil, err
				}
				k.Field, k.Expr = query.FormatScalar(e), e
			}
			r.Sort = append(r.Sort, k)
		}
	}
	return r, nil
}

// rowKeySchema resolves key, the reference's name of the row key, as an integer field.
type rowKeySchema struct {
	query.Schema
	key string
}

// FieldType implements query.Schema.
func (s rowKeySchema) FieldType(name string) (query.Type, bool) {
	if name == s.key {
		return query.TypeInteger, true
	}
	return s.Schema.FieldType(name)
}

// describe renders req for messages.
func describe(kmID string, req RefRequest) string {
	if req.Search != nil {
		return fmt.Sprintf("%s %+v search %+v", kmID, req, *req.Search)
	}
	return fmt.Sprintf("%s %+v", kmID, req)
}

// ask sends req to svc on KM kmID as a surface would.
func ask(ctx context.Context, svc *km.Service, kmID string, req RefRequest) (*km.Result, error) {
	m, err := svc.Model(ctx, kmID)
	if err != nil {
		return nil, err
	}
	r, err := serviceRequest(m, req)
	if err != nil {
		return nil, err
	}
	p, err := svc.Prepare(m, r)
	if err != nil {
		return nil, err
	}
	res, err := svc.Run(ctx, p)
	if err != nil {
		return nil, err
	}
	return &km.Result{Prepared: p, Result: res}, nil
}

// refusal returns the status and code a surface answers err with, or 0 and "" for an error
// that is not the client's.
func refusal(err error) (int, string) {
	if p, ok := km.AsProblem(err); ok {
		return p.Status, p.ErrorCode
	}
	return 0, ""
}

// checkService asks svc for req and compares the answer with the reference: a refusal
// (400) where the reference refuses the request, else the same columns and the same rows
// in the same order, floats within 1e-9 relative. It returns the answer when it agrees.
func checkService(t *testing.T, svc *km.Service, ref *Reference, kmID string, req RefRequest) *km.Result {
	t.Helper()
	want, werr := ref.Eval(req)
	if werr != nil {
		if _, ok := werr.(*RefError); !ok {
			t.Fatalf("%s: the reference failed: %v", describe(kmID, req), werr)
		}
	}
	res, err := ask(context.Background(), svc, kmID, req)
	if werr != nil {
		if status, _ := refusal(err); status != 400 {
			t.Errorf("%s\n  want a 400 refusal (%v)\n  got %v", describe(kmID, req), werr, err)
		}
		return nil
	}
	if err != nil {
		t.Errorf("%s\n  want %d rows\n  got %v", describe(kmID, req), len(want.Rows), err)
		return nil
	}
	cols := columnNames(res.Columns)
	for i, c := range cols {
		if req.RowKey != "" && c == km.RowField {
			cols[i] = req.RowKey
		}
	}
	if strings.Join(cols, ",") != strings.Join(want.Columns, ",") {
		t.Errorf("%s\n  columns %v, want %v", describe(kmID, req), cols, want.Columns)
		return nil
	}
	if d := DiffRows(want.Rows, cells(res.Rows)); d != "" {
		t.Errorf("%s\n  columns %v\n%s", describe(kmID, req), want.Columns, d)
	}
	return res
}

// checkSummary asks svc for the summary of req's record, fields and filters and compares
// its row count and sample with the reference's rows.
func checkSummary(t *testing.T, svc *km.Service, ref *Reference, kmID string, req RefRequest) {
	t.Helper()
	evalReq := req
	evalReq.Sort, evalReq.Page, evalReq.Distinct, evalReq.PageSize = "", 0, false, 0
	want, werr := ref.Eval(evalReq)
	if werr != nil {
		if _, ok := werr.(*RefError); !ok {
			t.Fatalf("summary of %s: the reference failed: %v", describe(kmID, req), werr)
		}
	}
	ctx := context.Background()
	m, err := svc.Model(ctx, kmID)
	if err != nil {
		t.Fatal(err)
	}
	r, err := serviceRequest(m, req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := svc.Summarize(ctx, m, &km.SummaryRequest{Record: r.Record, Fields: r.Fields,
		Filters: r.Filters, FilterExprs: r.FilterExprs, SampleSize: pageSizeOf(req)})
	if werr != nil {
		if status, _ := refusal(err); status != 400 {
			t.Errorf("summary of %s\n  want a 400 refusal (%v)\n  got %v", describe(kmID, req), werr, err)
		}
		return
	}
	if err != nil {
		t.Errorf("summary of %s\n  want %d rows\n  got %v", describe(kmID, req), len(want.Rows), err)
		return
	}
	if got.Summary.Rows != len(want.Rows) {
		t.Errorf("summary of %s\n  want %d rows, got %d", describe(kmID, req), len(want.Rows), got.Summary.Rows)
	}
	if cols := columnNames(got.Sample.Columns); strings.Join(cols, ",") != strings.Join(want.Columns, ",") {
		t.Errorf("summary of %s\n  sample columns %v, want %v", describe(kmID, req), cols, want.Columns)
		return
	}
	wantRows := want.Rows[:min(len(want.Rows), pageSizeOf(req))]
	if d := DiffRows(wantRows, cells(got.Sample.Rows)); d != "" {
		t.Errorf("summary of %s\n  columns %v\n%s", describe(kmID, req), want.Columns, d)
	}
}

// columnNames returns the names of a result's columns.
func columnNames(cols []query.ColumnHeader) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// cells renders typed rows as the reference writes its cells (query.Value.Format).
func cells(rows [][]query.Value) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = make([]any, len(r))
		for j, v := range r {
			out[i][j] = v.Format()
		}
	}
	return out
}

// askRequest sends r, a request as a surface builds it, to svc on KM kmID.
func askRequest(svc *km.Service, kmID string, r km.Request) (*km.Result, error) {
	if r.PageSize == 0 {
		r.PageSize = maxAnswer
	}
	return svc.Query(context.Background(), kmID, &r)
}

// refused reports whether err is the refusal a surface answers with status and code.
func refused(err error, status int, code string) bool {
	s, c := refusal(err)
	return s == status && c == code
}
