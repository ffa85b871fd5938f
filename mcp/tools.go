package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/internal/inputcheck"
	"github.com/kmkit/kmkit/internal/jsonenc"
	"github.com/kmkit/kmkit/internal/kmjson"
	"github.com/kmkit/kmkit/internal/kmparams"
	"github.com/kmkit/kmkit/internal/plancache"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// Tool names.
const (
	ToolListModels    = "list_knowledge_models"
	ToolDescribeModel = "describe_knowledge_model"
	ToolQuery         = "query"
	ToolSummarize     = "summarize_record"
	ToolFindValues    = "find_field_values"
)

// ModelItem is one KM of list_knowledge_models.
type ModelItem struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	ExtendedKMID string `json:"extendedKMId,omitempty"`
	Published    string `json:"published,omitempty" jsonschema:"latest publication time (RFC 3339)"`
}

// ModelList is the output of list_knowledge_models.
type ModelList struct {
	Models []ModelItem `json:"models"`
}

// ModelRef names a KM.
type ModelRef struct {
	KM string `json:"km" jsonschema:"the knowledge model id (from list_knowledge_models)"`
}

// FieldInfo describes one field of a record.
type FieldInfo struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Type        string `json:"type" jsonschema:"string, integer, float, boolean, date, datetime, timestamp or time"`
	Format      string `json:"format,omitempty"`
	Unit        string `json:"unit,omitempty"`
}

// RecordInfo describes one record.
type RecordInfo struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Key         string      `json:"key,omitempty" jsonschema:"the id of the record's key field"`
	Fields      []FieldInfo `json:"fields"`
}

// ParameterInfo describes a KPI parameter.
type ParameterInfo struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Default string `json:"default"`
}

// KPIInfo describes one KPI.
type KPIInfo struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Expression  string          `json:"expression" jsonschema:"the KPI expression; ${param} are its parameters"`
	Type        string          `json:"type"`
	Format      string          `json:"format,omitempty"`
	Unit        string          `json:"unit,omitempty"`
	Direction   string          `json:"direction,omitempty"`
	Parameters  []ParameterInfo `json:"parameters"`
}

// FilterInfo describes a predefined filter.
type FilterInfo struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Expression  string `json:"expression"`
}

// RelationshipInfo is a many-to-one relationship: each row of From refers to at most one
// row of To.
type RelationshipInfo struct {
	From string `json:"from" jsonschema:"RECORD.FIELD of the referring record"`
	To   string `json:"to" jsonschema:"RECORD.FIELD of the referred record's key"`
}

// ModelDescription is the output of describe_knowledge_model.
type ModelDescription struct {
	ID            string             `json:"id"`
	Name          string             `json:"name"`
	ExtendedKMID  string             `json:"extendedKMId,omitempty"`
	Records       []RecordInfo       `json:"records"`
	KPIs          []KPIInfo          `json:"kpis"`
	Filters       []FilterInfo       `json:"filters"`
	Relationships []RelationshipInfo `json:"relationships"`
}

// SearchArgs is the fuzzy search of a query.
type SearchArgs struct {
	Term   string   `json:"term" jsonschema:"the text to search for"`
	Fields []string `json:"fields,omitempty" jsonschema:"string or time fields to search (default: the selected ones)"`
	// Precision is nil when the call names none (the default); 0 is refused, as the input
	// schema's minimum says.
	Precision *int `json:"precision,omitempty" jsonschema:"match precision from 1 to 100 (default 80)"`
}

// QueryArgs is the input of query: the parameters of the KM API's query endpoint.
type QueryArgs struct {
	KM            string                       `json:"km" jsonschema:"the knowledge model id"`
	Record        string                       `json:"record,omitempty" jsonschema:"a record id to list its rows (fields named bare); omit to query the whole KM (fields named RECORD.FIELD, KPIs grouped by the fields)"`
	Fields        []string                     `json:"fields,omitempty" jsonschema:"the fields to return (record level: all by default)"`
	Filters       []string                     `json:"filters,omitempty" jsonschema:"ids of predefined filters to apply"`
	FilterExpr    []string                     `json:"filterExpr,omitempty" jsonschema:"filter expressions, ANDed (see the filter_language prompt), e.g. RECORD.FIELD eq 'value'"`
	KPIs          []string                     `json:"kpis,omitempty" jsonschema:"KPI ids (KM level only)"`
	KPIParameters map[string]map[string]string `json:"kpiParameters,omitempty" jsonschema:"KPI parameter values: KPI id -> parameter id -> value"`
	Sort          []string                     `json:"sort,omitempty" jsonschema:"sort keys: a returned field or KPI, prefixed - for descending"`
	Distinct      bool                         `json:"distinct,omitempty" jsonschema:"drop repeated rows"`
	Search        *SearchArgs                  `json:"search,omitempty"`
	Page          int                          `json:"page,omitempty" jsonschema:"page number from 0"`
	// PageSize is nil when the call names none (DefaultPageSize, or the largest page
	// allowed when that is smaller); 0 is refused, as by the KM API.
	PageSize *int `json:"pageSize,omitempty" jsonschema:"rows per page (default 50; the input schema states the maximum)"`
}

// QueryResult is the output of query: one page of rows.
type QueryResult struct {
	Page     int              `json:"page"`
	PageSize int              `json:"pageSize"`
	Sort     []string         `json:"sort"`
	Rows     []map[string]any `json:"rows" jsonschema:"the rows of the page, each an object keyed by field or KPI"`
	// Total is the number of rows (or groups) of the whole answer, before paging.
	Total int `json:"total" jsonschema:"the rows (or groups) of the whole answer, before paging"`
	// More says rows follow the ones returned; Next then names the call that returns them.
	More bool     `json:"more" jsonschema:"true when rows follow the ones returned: ask for next"`
	Next *PageRef `json:"next,omitempty" jsonschema:"the page and pageSize that return the rows following these"`
	// Truncated says the page was cut to keep the answer within the server's byte cap:
	// Next returns the rows it dropped, none is skipped.
	Truncated bool   `json:"truncated,omitempty"`
	Note      string `json:"note,omitempty"`
}

// PageRef names a page of a query: the page and pageSize arguments that return it.
type PageRef struct {
	Page     int `json:"page"`
	PageSize int `json:"pageSize"`
}

// SummaryArgs is the input of summarize_record.
type SummaryArgs struct {
	KM            string   `json:"km"`
	Record        string   `json:"record"`
	Fields        []string `json:"fields,omitempty" jsonschema:"fields to describe (default all)"`
	ExcludeFields []string `json:"excludeFields,omitempty"`
	Filters       []string `json:"filters,omitempty" jsonschema:"ids of predefined filters"`
	FilterExpr    []string `json:"filterExpr,omitempty" jsonschema:"filter expressions, ANDed (see the filter_language prompt), e.g. FIELD eq 'value'"`
	SampleSize    int      `json:"sampleSize,omitempty" jsonschema:"sample rows returned with the statistics (default 10)"`
}

// FindArgs is the input of find_field_values.
type FindArgs struct {
	KM        string `json:"km"`
	Record    string `json:"record"`
	Field     string `json:"field" jsonschema:"a string field of the record"`
	Term      string `json:"term" jsonschema:"what the user typed, e.g. munich"`
	Precision int    `json:"precision,omitempty" jsonschema:"match precision from 1 to 100 (default 80)"`
	Limit     int    `json:"limit,omitempty" jsonschema:"most values returned (default 10)"`
	// Page asks for the values after the first Page*Limit matches (from 0), as next says.
	Page int `json:"page,omitempty" jsonschema:"page of values from 0, each of limit values (ask for the one next names)"`
}

// FindResult is the output of find_field_values: stored values, best match first.
type FindResult struct {
	Values []any `json:"values"`
	// Total is the number of matching values of the field.
	Total int `json:"total" jsonschema:"how many stored values match, on every page together"`
	// More says matching values follow the ones returned; Next then names the call that
	// returns them.
	More bool      `json:"more" jsonschema:"true when matching values follow the ones returned: ask for next"`
	Next *FindNext `json:"next,omitempty" jsonschema:"the page and limit arguments that return the values following these"`
}

// FindNext names the find_field_values call that returns the values following an
// answer's: its page and limit arguments, the other arguments unchanged.
type FindNext struct {
	Page  int `json:"page"`
	Limit int `json:"limit"`
}

func (s *Handler) addTools(srv *sdk.Server, p *principal.Principal) {
	// Every tool reads the KMs of this server's store: read-only, and a closed world (the
	// annotation's default, true, says a tool may reach entities beyond the server).
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}
	sdk.AddTool(srv, &sdk.Tool{Name: ToolListModels, Annotations: readOnly,
		Description: "List the knowledge models visible to you."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, ModelList, error) {
			ms, err := s.svc.Models(scope(ctx, p))
			if err != nil {
				return nil, ModelList{}, s.toolError(ctx, ToolListModels, err)
			}
			out := ModelList{Models: []ModelItem{}}
			for _, m := range ms {
				it := ModelItem{ID: m.ID, Name: m.Name, ExtendedKMID: m.ExtendedKMID}
				if !m.Published.IsZero() {
					it.Published = m.Published.UTC().Format("2006-01-02T15:04:05Z07:00")
				}
				out.Models = append(out.Models, it)
			}
			slices.SortFunc(out.Models, func(a, b ModelItem) int { return strings.Compare(a.ID, b.ID) })
			return nil, out, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: ToolDescribeModel, Annotations: readOnly, OutputSchema: describeOutputSchema(),
		Description: "Describe a knowledge model: its records with their fields (types, descriptions), KPIs with parameters, predefined filters and relationships."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in ModelRef) (*sdk.CallToolResult, ModelDescription, error) {
			m, err := s.svc.Model(scope(ctx, p), in.KM)
			if err != nil {
				return nil, ModelDescription{}, s.toolError(ctx, ToolDescribeModel, err)
			}
			return nil, Describe(m), nil
		})
	// query is the hot path of an agent: its arguments are read and its page written
	// directly (kmjson), the rows in column order, without the generic tool's map per row
	// and its schema round trips; the input schema is sent as built once.
	srv.AddTool(&sdk.Tool{Name: ToolQuery, Annotations: readOnly, InputSchema: s.queryInput, OutputSchema: s.queryOutput,
		Description: "Query a record's rows or the knowledge model (fields across records, KPIs grouped by the fields): filters, filterExpr, KPIs with parameters, sort, paging, distinct and fuzzy search, as the KM API's query endpoint. " +
			"At most " + strconv.Itoa(s.opts.maxRows) + " rows per call (pageSize); ask for further pages with page, or as next says."},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			body, err := s.queryCall(scope(ctx, p), nil, req.Params.Arguments)
			if err != nil {
				err = s.toolError(ctx, ToolQuery, err)
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(body)}}, StructuredContent: json.RawMessage(body)}, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: ToolSummarize, Annotations: readOnly, InputSchema: s.summaryInputSchema(),
		Description: "Summarise a record's rows (optionally filtered): per field the count, nulls, distinct values and the statistics of its type, with a few sample rows, as the KM API's summary endpoint."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in SummaryArgs) (*sdk.CallToolResult, map[string]any, error) {
			out, err := s.summarize(scope(ctx, p), &in)
			if err != nil {
				return nil, nil, s.toolError(ctx, ToolSummarize, err)
			}
			return nil, out, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: ToolFindValues, Annotations: readOnly, InputSchema: s.findInputSchema(),
		Description: "Fuzzy-find the stored values of a string field that match what a user typed (\"munich\" finds \"München\"), best match first; use them in filterExpr. " +
			"more says whether further values match; next names the page and limit that return them."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in FindArgs) (*sdk.CallToolResult, FindResult, error) {
			out, err := s.find(scope(ctx, p), &in)
			if err != nil {
				return nil, FindResult{}, s.toolError(ctx, ToolFindValues, err)
			}
			return nil, *out, nil
		})
}

// Describe returns the description of m that describe_knowledge_model answers.
func Describe(m *km.KnowledgeModel) ModelDescription {
	d := ModelDescription{ID: m.ID, Name: m.Name, ExtendedKMID: m.ExtendedKMID,
		Records: []RecordInfo{}, KPIs: []KPIInfo{}, Filters: []FilterInfo{}, Relationships: []RelationshipInfo{}}
	for _, r := range m.Records {
		ri := RecordInfo{ID: r.ID, Name: r.Name, Description: r.Description, Key: r.Key, Fields: []FieldInfo{}}
		for _, f := range r.Fields {
			ri.Fields = append(ri.Fields, FieldInfo{ID: f.ID, Name: f.Name, Description: f.Description, Type: f.Type.String(), Format: f.Format, Unit: f.Unit})
		}
		d.Records = append(d.Records, ri)
	}
	for _, k := range m.KPIs {
		ki := KPIInfo{ID: k.ID, Name: k.Name, Description: k.Description, Expression: k.Expr, Type: k.Type.String(),
			Format: k.Format, Unit: k.Unit, Direction: k.Direction, Parameters: []ParameterInfo{}}
		for _, pa := range k.Parameters {
			ki.Parameters = append(ki.Parameters, ParameterInfo{ID: pa.ID, Name: pa.Name, Default: pa.Value})
		}
		d.KPIs = append(d.KPIs, ki)
	}
	for _, f := range m.Filters {
		d.Filters = append(d.Filters, FilterInfo{ID: f.ID, Name: f.Name, Description: f.Description, Expression: f.Expr})
	}
	for _, rel := range m.Relationships {
		d.Relationships = append(d.Relationships, RelationshipInfo{From: rel.From.String(), To: rel.To.String()})
	}
	return d
}

// request reads a query call into the portable request of the domain. Comma lists and
// filterExpr entries joined by top-level commas are read as the KM API reads its query
// string, so the same text asks the same question on both.
func request(in *QueryArgs) (*km.Request, error) {
	r := &km.Request{Record: in.Record, Fields: kmparams.ParseList(in.Fields), AllFields: true,
		KPIs: kmparams.ParseList(in.KPIs), KPIParams: in.KPIParameters, Filters: kmparams.ParseList(in.Filters),
		Distinct: in.Distinct, Page: in.Page, PageSize: DefaultPageSize, Count: true}
	if in.PageSize != nil {
		r.PageSize = *in.PageSize
	}
	for _, e := range in.FilterExpr {
		r.FilterExprs = append(r.FilterExprs, kmparams.SplitTopLevel(e)...)
	}
	if len(in.Sort) > 0 {
		keys, err := kmparams.ParseSort(strings.Join(in.Sort, ","))
		if err != nil {
			return nil, err
		}
		r.Sort = keys
	}
	if sa := in.Search; sa != nil {
		r.Search = &km.SearchRequest{Term: sa.Term, Fields: kmparams.ParseList(sa.Fields), Precision: -1} // -1: the default
		if sa.Precision != nil {
			// 1 to 100, as the input schema says and as the KM API's searchPrecision
			// parameter is checked (0 would match every value).
			if err := query.CheckPrecisionParam("search.precision", *sa.Precision, 1); err != nil {
				return nil, err
			}
			r.Search.Precision = *sa.Precision
		}
	}
	return r, nil
}

// queryCall answers a query call: it reads the arguments (unknown ones and wrong types
// refused as the input schema says), checks the page against WithMaxRows as the KM API
// checks its maximum, asks the Service and appends the page to dst. The plan of a call
// whose arguments were planned before for the same KM value is taken from the handler's
// plan cache, as the KM API takes a repeated GET's.
func (s *Handler) queryCall(ctx context.Context, dst []byte, args json.RawMessage) ([]byte, error) {
	q, ok := s.plans.Get(string(args))
	if ok {
		// Kept for the KM the caller sees now? (A changed KM is a new value.)
		m, err := s.svc.Model(ctx, q.km)
		ok = err == nil && m == q.m
	}
	if !ok {
		var err error
		if q, err = s.planQuery(ctx, args); err != nil {
			return nil, err
		}
	}
	res, err := s.svc.Run(ctx, q.prep)
	if err != nil {
		return nil, err
	}
	return s.appendPage(dst, q.keys, &km.Result{Prepared: q.prep, Result: res})
}

// queryPlan is a query call's checked plan, with the keys of its rows' members quoted.
type queryPlan struct {
	km   string
	m    *km.KnowledgeModel
	prep *km.Prepared
	keys [][]byte
}

// planQuery reads and checks a query call's arguments and plans it, keeping the plan
// for the same arguments when it does not depend on the moment it is made (no now(), no
// KPI parameters: plancache).
func (s *Handler) planQuery(ctx context.Context, args json.RawMessage) (*queryPlan, error) {
	// Text no store can hold is refused first, as the KM API's door refuses it before it
	// reads a parameter: a question with a NUL and a bad page is refused for the NUL on
	// both.
	if e := inputcheck.Body(args); e != nil {
		return nil, invalid(problem.CodeParameterIllegal, strings.Replace(e.Error(), "request body", "arguments", 1))
	}
	var in QueryArgs
	if len(args) > 0 {
		// An integer may be written 2.0 (JSON Schema's "integer"): read it as 2.
		dec := json.NewDecoder(bytes.NewReader(integerArguments(args)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			// A value of the wrong JSON type (pageSize 1.5 or "ten") is a mismatch, as a
			// query string's pageSize=1.5 is on the KM API.
			code := problem.CodeParameterIllegal
			if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
				code = problem.CodeParameterMismatch
			}
			return nil, invalid(code, "arguments: "+strings.TrimPrefix(err.Error(), "json: "))
		}
		if err := checkArgNames(args); err != nil {
			return nil, err
		}
	}
	if in.KM == "" {
		return nil, invalid(problem.CodeParameterMissing, "km is required: a knowledge model id (list_knowledge_models)")
	}
	if in.PageSize == nil {
		// The default page, or the largest one allowed when that is smaller (as the KM
		// API's default is the Service's cap when that is below 50).
		size := min(DefaultPageSize, s.opts.maxRows) // maxRows is within the Service's cap
		in.PageSize = &size
	}
	m, err := s.svc.Model(ctx, in.KM)
	if err != nil {
		return nil, err
	}
	if err := query.CheckPaging(in.Page, *in.PageSize, s.opts.maxRows); err != nil {
		// The KM API refuses an unknown record (its path) before it reads the page: so
		// does query.
		if _, rerr := km.LookupRecord(m, in.Record); rerr != nil {
			return nil, rerr
		}
		return nil, err
	}
	r, err := request(&in)
	if err != nil {
		return nil, err
	}
	prep, err := s.svc.Prepare(m, r)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(prep.Plan.Columns))
	for i, c := range prep.Plan.Columns {
		names[i] = c.Name
	}
	q := &queryPlan{km: in.KM, m: m, prep: prep, keys: kmjson.QuoteKeys(names)}
	if len(in.KPIParameters) == 0 && !plancache.MentionsNow(string(args)) {
		s.plans.Put(string(args), q)
	}
	return q, nil
}

// queryArgNames and searchArgNames are the names of query's arguments and of its search
// argument's members, as the input schema spells them.
var queryArgNames, searchArgNames = jsonNames[QueryArgs](), jsonNames[SearchArgs]()

// jsonNames returns the JSON names of the fields of the struct T.
func jsonNames[T any]() []string {
	t := reflect.TypeFor[T]()
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
}

// checkArgNames refuses, as the input schema does (additionalProperties false), an
// argument of a query call, or a member of its search, whose name is not spelled exactly
// as the schema names it, and a search without its required term: encoding/json reads names case-insensitively, so without this
// "KM" would be read as km, and {"km":"a","KM":"b"} as km "b". args decoded into
// QueryArgs, so it is an object or null and search an object or null.
func checkArgNames(args json.RawMessage) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(args, &top); err != nil {
		return invalid(problem.CodeParameterIllegal, "arguments: "+strings.TrimPrefix(err.Error(), "json: "))
	}
	unknown := func(obj map[string]json.RawMessage, names []string, prefix string) error {
		var bad []string
		for k := range obj {
			if !slices.Contains(names, k) {
				bad = append(bad, k)
			}
		}
		if len(bad) == 0 {
			return nil
		}
		slices.Sort(bad)
		return invalid(problem.CodeParameterIllegal, "arguments: unknown field "+strconv.Quote(prefix+bad[0]))
	}
	if err := unknown(top, queryArgNames, ""); err != nil {
		return err
	}
	var search map[string]json.RawMessage
	if raw := top["search"]; len(raw) > 0 {
		if err := json.Unmarshal(raw, &search); err != nil {
			return invalid(problem.CodeParameterIllegal, "arguments: search: "+strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	if err := unknown(search, searchArgNames, "search."); err != nil {
		return err
	}
	if _, ok := search["term"]; search != nil && !ok {
		// The schema requires term in a search; without one the call was run unsearched.
		return invalid(problem.CodeParameterMissing, "search.term is required: the text to search for (or leave search out)")
	}
	return nil
}

// appendPage appends a result to b as the query tool answers it (QueryResult), the rows'
// members in column order. Rows that would take the answer beyond the byte cap are cut
// at a whole divisor d of the page size, so that page (page*pageSize+d)/d of size d
// starts exactly at the first row cut: no row is skipped.
func (s *Handler) appendPage(b []byte, keys [][]byte, res *km.Result) ([]byte, error) {
	p := res.Plan
	b = append(b, `{"page":`...)
	b = strconv.AppendInt(b, int64(p.Page), 10)
	b = append(b, `,"pageSize":`...)
	b = strconv.AppendInt(b, int64(p.PageSize), 10)
	b = append(b, `,"sort":[`...)
	for i, k := range res.Sort {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendStringNoHTMLEscape(b, k)
	}
	b = append(b, `],"rows":[`...)
	rowsStart := len(b)
	ends := make([]int, 0, len(res.Rows)) // where each row's JSON ends in b
	for _, row := range res.Rows {
		start := len(b)
		if start > rowsStart {
			b = append(b, ',')
		}
		b = kmjson.AppendRow(b, keys, row)
		if len(b)-rowsStart+2 > s.opts.maxBytes { // the rows as a JSON array
			b = b[:start]
			break
		}
		ends = append(ends, len(b))
	}
	kept := len(ends)
	var next *PageRef
	note := ""
	if kept < len(res.Rows) {
		d := kept
		for d > 0 && p.PageSize%d != 0 {
			d--
		}
		if d == 0 {
			return nil, invalid(problem.CodeConstraint, "one row of the answer is above the server's cap of "+strconv.Itoa(s.opts.maxBytes)+
				" bytes: ask for fewer fields")
		}
		b = b[:ends[d-1]]
		next = &PageRef{Page: (p.Page*p.PageSize + d) / d, PageSize: d}
		note = strconv.Itoa(len(res.Rows)-d) + " rows of the page were left out to keep the answer within " +
			strconv.Itoa(s.opts.maxBytes) + " bytes; the rows that follow these are page " + strconv.Itoa(next.Page) +
			" with pageSize " + strconv.Itoa(next.PageSize) + " (or ask for fewer fields)"
	} else if res.More() {
		next = &PageRef{Page: p.Page + 1, PageSize: p.PageSize}
	}
	b = append(b, `],"total":`...)
	b = strconv.AppendInt(b, int64(res.Count), 10)
	b = append(b, `,"more":`...)
	b = strconv.AppendBool(b, next != nil)
	if next != nil {
		b = append(b, `,"next":{"page":`...)
		b = strconv.AppendInt(b, int64(next.Page), 10)
		b = append(b, `,"pageSize":`...)
		b = strconv.AppendInt(b, int64(next.PageSize), 10)
		b = append(b, '}')
	}
	if note != "" {
		b = append(b, `,"truncated":true,"note":`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, note)
	}
	return append(b, '}'), nil
}

// decodeObject decodes a JSON object keeping numbers as they were written.
func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var row map[string]any
	err := dec.Decode(&row)
	return row, err
}

// summarize answers summarize_record through the Service.
func (s *Handler) summarize(ctx context.Context, in *SummaryArgs) (map[string]any, error) {
	if in.Record == "" {
		return nil, invalid(problem.CodeParameterMissing, "record is required")
	}
	m, err := s.svc.Model(ctx, in.KM)
	if err != nil {
		return nil, err
	}
	q := &km.SummaryRequest{Record: in.Record, Fields: kmparams.ParseList(in.Fields), ExcludeFields: kmparams.ParseList(in.ExcludeFields),
		Filters: kmparams.ParseList(in.Filters), SampleSize: in.SampleSize}
	for _, e := range in.FilterExpr {
		q.FilterExprs = append(q.FilterExprs, kmparams.SplitTopLevel(e)...)
	}
	res, err := s.svc.Summarize(ctx, m, q)
	if err != nil {
		return nil, err
	}
	body, err := kmjson.Summary(res)
	if err != nil {
		return nil, err
	}
	if len(body) > s.opts.maxBytes {
		return nil, invalid(problem.CodeConstraint, "the summary is "+strconv.Itoa(len(body))+" bytes, above the server's cap of "+
			strconv.Itoa(s.opts.maxBytes)+": ask for fewer fields or a smaller sampleSize")
	}
	return decodeObject(body)
}

// find answers find_field_values: the distinct values of the field that the fuzzy search
// matches, best first, a page of limit of them, with how many match and whether more
// follow.
func (s *Handler) find(ctx context.Context, in *FindArgs) (*FindResult, error) {
	var missing []string
	for _, a := range []struct{ name, value string }{{"record", in.Record}, {"field", in.Field}, {"term", in.Term}} {
		if a.value == "" {
			missing = append(missing, a.name)
		}
	}
	if len(missing) > 0 {
		return nil, invalid(problem.CodeParameterMissing, strings.Join(missing, ", ")+": required and not empty (record, field and term)")
	}
	limit := min(DefaultFindLimit, s.opts.maxRows)
	if in.Limit != 0 {
		limit = in.Limit
	}
	r := &km.Request{Record: in.Record, Fields: []string{in.Field}, Distinct: true, Page: in.Page, PageSize: limit, Count: true,
		Search: &km.SearchRequest{Term: in.Term, Fields: []string{in.Field}, Precision: in.Precision}}
	if in.Precision == 0 {
		// No precision: the default. (An explicit 0 never gets here: the input schema's
		// minimum is 1, and the SDK checks the arguments against it.)
		r.Search.Precision = -1
	}
	res, err := s.svc.Query(ctx, in.KM, r)
	if err != nil {
		return nil, err
	}
	out := &FindResult{Values: make([]any, 0, len(res.Rows)), Total: res.Count, More: res.More()}
	for _, row := range res.Rows {
		out.Values = append(out.Values, json.RawMessage(jsonenc.AppendJSON(nil, row[0])))
	}
	if out.More {
		out.Next = &FindNext{Page: in.Page + 1, Limit: limit}
	}
	return out, nil
}
