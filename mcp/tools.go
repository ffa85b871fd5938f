package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/problem"
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
	Term      string   `json:"term" jsonschema:"the text to search for"`
	Fields    []string `json:"fields,omitempty" jsonschema:"string or time fields to search (default: the selected ones)"`
	Precision int      `json:"precision,omitempty" jsonschema:"match precision from 1 to 100 (default 80)"`
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
	PageSize      int                          `json:"pageSize,omitempty" jsonschema:"rows per page (default 50; the input schema states the maximum)"`
}

// QueryResult is the output of query and find_field_values: one page of rows.
type QueryResult struct {
	Page     int              `json:"page"`
	PageSize int              `json:"pageSize"`
	Sort     []string         `json:"sort"`
	Rows     []map[string]any `json:"rows" jsonschema:"the rows of the page, each an object keyed by field or KPI"`
	// Truncated says rows were dropped from the end of the page to keep the answer within
	// the server's byte cap.
	Truncated bool   `json:"truncated,omitempty"`
	Note      string `json:"note,omitempty"`
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
}

// FindResult is the output of find_field_values: stored values, best match first.
type FindResult struct {
	Values []any `json:"values"`
}

func (s *Handler) addTools(srv *sdk.Server, p *principal.Principal) {
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true}
	sdk.AddTool(srv, &sdk.Tool{Name: ToolListModels, Annotations: readOnly,
		Description: "List the knowledge models visible to you."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, ModelList, error) {
			ms, err := s.kmh.Models(scope(ctx, p))
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
			m, err := s.kmh.Model(scope(ctx, p), in.KM)
			if err != nil {
				return nil, ModelDescription{}, s.toolError(ctx, ToolDescribeModel, err)
			}
			return nil, Describe(m), nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: ToolQuery, Annotations: readOnly, InputSchema: s.queryInputSchema(),
		Description: "Query a record's rows or the knowledge model (fields across records, KPIs grouped by the fields): filters, filterExpr, KPIs with parameters, sort, paging, distinct and fuzzy search, as the KM API's query endpoint. " +
			"At most " + strconv.Itoa(s.opts.maxRows) + " rows per call (pageSize); ask for further pages with page."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in QueryArgs) (*sdk.CallToolResult, QueryResult, error) {
			out, err := s.query(scope(ctx, p), in.KM, in.Record, queryParams(&in))
			if err != nil {
				return nil, QueryResult{}, s.toolError(ctx, ToolQuery, err)
			}
			return nil, *out, nil
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
		Description: "Fuzzy-find the stored values of a string field that match what a user typed (\"munich\" finds \"München\"), best match first; use them in filterExpr."},
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

// queryParams renders a query call as the query string of the KM API's query endpoint.
func queryParams(in *QueryArgs) url.Values {
	v := url.Values{}
	if len(in.Fields) > 0 {
		v.Set("fields", strings.Join(in.Fields, ","))
	}
	for _, f := range in.Filters {
		v.Add("filters", f)
	}
	for _, e := range in.FilterExpr {
		v.Add("filterExpr", e)
	}
	if len(in.KPIs) > 0 {
		v.Set("kpis", strings.Join(in.KPIs, ","))
	}
	for kpi, ps := range in.KPIParameters {
		for param, val := range ps {
			v.Add("kpiParam", kpi+"."+param+":"+val)
		}
	}
	if len(in.Sort) > 0 {
		v.Set("sort", strings.Join(in.Sort, ","))
	}
	if in.Distinct {
		v.Set("options", "distinct")
	}
	if sa := in.Search; sa != nil {
		v.Set("searchTerm", sa.Term)
		if len(sa.Fields) > 0 {
			v.Set("searchField", strings.Join(sa.Fields, ","))
		}
		if sa.Precision != 0 {
			v.Set("searchPrecision", strconv.Itoa(sa.Precision))
		}
	}
	v.Set("page", strconv.Itoa(in.Page))
	size := in.PageSize
	if size == 0 {
		size = DefaultPageSize
	}
	v.Set("pageSize", strconv.Itoa(size))
	return v
}

// queryPage is the body of the KM API's query endpoint.
type queryPage struct {
	Page     int               `json:"page"`
	PageSize int               `json:"pageSize"`
	Sort     []string          `json:"sort"`
	Content  []json.RawMessage `json:"content"`
}

// query runs a query through the KM API and caps the rows to WithMaxBytes.
func (s *Handler) query(ctx context.Context, kmID, record string, params url.Values) (*QueryResult, error) {
	m, err := s.kmh.Model(ctx, kmID)
	if err != nil {
		return nil, err
	}
	body, err := s.kmh.QueryJSON(ctx, m, record, params)
	if err != nil {
		return nil, err
	}
	var pg queryPage
	if err := json.Unmarshal(body, &pg); err != nil {
		return nil, err
	}
	out := &QueryResult{Page: pg.Page, PageSize: pg.PageSize, Sort: pg.Sort, Rows: make([]map[string]any, 0, len(pg.Content))}
	if out.Sort == nil {
		out.Sort = []string{}
	}
	size := 0
	for i, raw := range pg.Content {
		if size+len(raw)+1 > s.opts.maxBytes {
			out.Truncated = true
			out.Note = strconv.Itoa(len(pg.Content)-i) + " rows of the page were dropped to keep the answer within " +
				strconv.Itoa(s.opts.maxBytes) + " bytes; ask for fewer fields or a smaller pageSize"
			break
		}
		size += len(raw) + 1
		row, err := decodeObject(raw)
		if err != nil {
			return nil, err
		}
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}

// decodeObject decodes a JSON object keeping numbers as they were written.
func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var row map[string]any
	err := dec.Decode(&row)
	return row, err
}

// summarize answers summarize_record through the KM API's summary.
func (s *Handler) summarize(ctx context.Context, in *SummaryArgs) (map[string]any, error) {
	m, err := s.kmh.Model(ctx, in.KM)
	if err != nil {
		return nil, err
	}
	v := url.Values{}
	if len(in.Fields) > 0 {
		v.Set("fields", strings.Join(in.Fields, ","))
	}
	if len(in.ExcludeFields) > 0 {
		v.Set("excludeFields", strings.Join(in.ExcludeFields, ","))
	}
	for _, f := range in.Filters {
		v.Add("filters", f)
	}
	for _, e := range in.FilterExpr {
		v.Add("filterExpr", e)
	}
	if in.SampleSize != 0 {
		v.Set("sampleSize", strconv.Itoa(in.SampleSize))
	}
	if in.Record == "" {
		return nil, &ToolError{Status: http.StatusBadRequest, ErrorCode: problem.CodeParameterMissing, Detail: "record is required"}
	}
	body, err := s.kmh.SummaryJSON(ctx, m, in.Record, v)
	if err != nil {
		return nil, err
	}
	if len(body) > s.opts.maxBytes {
		return nil, &ToolError{Status: http.StatusBadRequest, ErrorCode: problem.CodeConstraint,
			Detail: "the summary is " + strconv.Itoa(len(body)) + " bytes, above the server's cap of " + strconv.Itoa(s.opts.maxBytes) + ": ask for fewer fields or a smaller sampleSize"}
	}
	return decodeObject(body)
}

// find answers find_field_values: the distinct values of the field that the KM API's fuzzy
// search matches, best first.
func (s *Handler) find(ctx context.Context, in *FindArgs) (*FindResult, error) {
	if in.Record == "" || in.Field == "" || in.Term == "" {
		return nil, &ToolError{Status: http.StatusBadRequest, ErrorCode: problem.CodeParameterMissing, Detail: "record, field and term are required"}
	}
	limit := in.Limit
	if limit == 0 {
		limit = DefaultFindLimit
	}
	q := &QueryArgs{Fields: []string{in.Field}, Distinct: true, PageSize: limit,
		Search: &SearchArgs{Term: in.Term, Fields: []string{in.Field}, Precision: in.Precision}}
	res, err := s.query(ctx, in.KM, in.Record, queryParams(q))
	if err != nil {
		return nil, err
	}
	out := &FindResult{Values: []any{}}
	for _, row := range res.Rows {
		out.Values = append(out.Values, row[in.Field])
	}
	return out, nil
}
