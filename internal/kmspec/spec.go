// Package kmspec generates the OpenAPI document of a Knowledge Model's query endpoints,
// which the KM API serves (km/kmhttp: the spec endpoint) and the MCP server offers as a
// resource, each from the one generator.
package kmspec

import (
	"strings"
	"time"

	"github.com/kmkit/kmkit/internal/kmparams"
	"github.com/kmkit/kmkit/km"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// BasePath is the path under which the KM API serves its endpoints, as the generated
// documents' paths name them.
const BasePath = "/intelligence/api"

// SpecVersion is the OpenAPI version of the documents the spec endpoint generates.
const SpecVersion = "3.0.3"

// SpecAudience is the x-audience of generated documents: the code the public description of
// the API gives for its external consumers.
const SpecAudience = "EX"

// Names of the security schemes of generated documents, as the public description names them.
const (
	SchemeBearer = "BearerAuth"
	SchemeAppKey = "ApiKeyAuth"
)

// Spec returns the OpenAPI 3.0.3 document of m: one path per record query endpoint (only
// curated records when curated is true, and then only the KPIs and filters that read a
// field of a curated record) and the KM query endpoint, their parameters with
// field, filter and KPI ids as enums, response schemas typed from the fields, the security
// schemes of the API, and server as the only server (the base URL the paths are relative
// to; none when empty).
func Spec(m *km.KnowledgeModel, server string, curated bool) *openapi3.T {
	b := specBuilder{m: m, curated: curated, doc: &openapi3.T{
		OpenAPI: SpecVersion,
		Info: &openapi3.Info{
			Title:       m.Name,
			Version:     specVersion(m.Published),
			Description: specDescription(m, curated),
			Extensions:  map[string]any{"x-audience": SpecAudience},
		},
		Paths: openapi3.NewPaths(),
		Security: openapi3.SecurityRequirements{
			{SchemeBearer: []string{}},
			{SchemeAppKey: []string{}},
		},
		Components: &openapi3.Components{
			Schemas:    openapi3.Schemas{},
			Parameters: openapi3.ParametersMap{},
			Responses:  openapi3.ResponseBodies{},
			SecuritySchemes: openapi3.SecuritySchemes{
				SchemeBearer: {Value: &openapi3.SecurityScheme{
					Type: "http", Scheme: "bearer", BearerFormat: "JWT",
					Description: "Authorization: Bearer <JWT>",
				}},
				SchemeAppKey: {Value: &openapi3.SecurityScheme{
					Type: "apiKey", In: "header", Name: "AppKey",
					Description: "An application key in the AppKey header (the API also takes Authorization: AppKey <key>)",
				}},
			},
		},
	}}
	if server != "" {
		b.doc.Servers = openapi3.Servers{{URL: server}}
	}
	b.addShared()
	var records []*km.Record
	for _, r := range m.Records {
		if !curated || r.Curated {
			records = append(records, r)
			b.addRecord(r)
		}
	}
	b.addModel(records)
	return b.doc
}

// specVersion is the document version: the KM's publication time, or "unpublished".
func specVersion(t time.Time) string {
	if t.IsZero() {
		return "unpublished"
	}
	return t.UTC().Format(time.RFC3339)
}

func specDescription(m *km.KnowledgeModel, curated bool) string {
	var b strings.Builder
	b.WriteString("Query endpoints of the knowledge model " + m.ID)
	if m.ExtendedKMID != "" {
		b.WriteString(", which extends " + m.ExtendedKMID)
	}
	if curated {
		b.WriteString(" (curated records only)")
	}
	b.WriteString(". Every record has a query endpoint returning its rows as objects; the knowledge model query endpoint joins records and computes KPIs.")
	return b.String()
}

// specBuilder fills a document.
type specBuilder struct {
	m       *km.KnowledgeModel
	doc     *openapi3.T
	curated bool // only curated records, and the KPIs and filters that read one
}

// touchesCurated reports whether a KPI or filter, whose field names walk lists, reads a
// field of a curated record, or reads no field at all (nothing ties it to an
// auto-generated record). A curated spec leaves out KPIs and filters defined only over
// auto-generated records: its paths could not name their fields.
func touchesCurated(m *km.KnowledgeModel, walk func(add func(string))) bool {
	named, curated := false, false
	walk(func(name string) {
		if r, _ := m.Field(name); r != nil {
			named = true
			curated = curated || r.Curated
		}
	})
	return curated || !named
}

// listsFilter reports whether the spec lists filter f: always, but in a curated spec only
// when it reads a field of a curated record (a filter over auto-generated records only,
// as the demo's PRICE_CHANGES over ACTIVITIES, reaches curated records through the
// relationships, but a curated client could not name what it filters on).
func (b *specBuilder) listsFilter(f *km.Filter) bool {
	return !b.curated || touchesCurated(b.m, func(add func(string)) { km.ExprFields(f.Bound(), add) })
}

// Component schema names: a record's rows and pages are "RECORD.Row" and "RECORD.Page";
// the KM's use a name no record id can take (record ids hold no '-'), and the shared
// schemas have no dot.
const (
	kmRowSchema  = "knowledge-model.Row"
	kmPageSchema = "knowledge-model.Page"
)

const (
	refSchemas    = "#/components/schemas/"
	refParameters = "#/components/parameters/"
	refResponses  = "#/components/responses/"
)

// addShared adds the components every path uses: the problem and authentication error
// bodies, their responses, and the paging, filter, option and search parameters.
func (b *specBuilder) addShared() {
	c := b.doc.Components
	str := func(desc string) *openapi3.SchemaRef {
		s := openapi3.NewStringSchema()
		s.Description = desc
		return s.NewRef()
	}
	c.Schemas["Problem"] = (&openapi3.Schema{
		Type:        &openapi3.Types{openapi3.TypeObject},
		Description: "A problem body (RFC 9457).",
		Required:    []string{"title", "status", "detail", "errorCode", "type"},
		Properties: openapi3.Schemas{
			"title":     str("the status text"),
			"status":    openapi3.NewInt32Schema().NewRef(),
			"detail":    str("what was wrong"),
			"errorCode": str("a stable identifier of the error"),
			"type":      str("a URI identifying the problem type"),
		},
	}).NewRef()
	c.Schemas["AuthError"] = (&openapi3.Schema{
		Type:        &openapi3.Types{openapi3.TypeObject},
		Description: "The body of a 401 answer.",
		Required:    []string{"error"},
		Properties:  openapi3.Schemas{"error": str("why the credentials were refused")},
	}).NewRef()
	problemResponse := func(desc string) *openapi3.ResponseRef {
		return &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription(desc).
			WithContent(openapi3.NewContentWithSchemaRef(&openapi3.SchemaRef{Ref: refSchemas + "Problem"}, []string{problem.ContentType}))}
	}
	c.Responses["BadRequest"] = problemResponse("Bad request: a parameter is missing, malformed or names something that does not exist.")
	c.Responses["Unauthorized"] = &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription("Missing or invalid credentials.").
		WithContent(openapi3.NewContentWithJSONSchemaRef(&openapi3.SchemaRef{Ref: refSchemas + "AuthError"}))}
	c.Responses["Forbidden"] = problemResponse("The credentials lack the permission.")
	c.Responses["NotFound"] = problemResponse("The knowledge model or record does not exist.")
	c.Responses["TooManyRequests"] = problemResponse("The request limit of the window is used up.")
	c.Responses["InternalError"] = problemResponse("Internal error; the detail holds a support id.")

	intParam := func(name, desc string, minimum, def float64, maximum *float64) *openapi3.ParameterRef {
		s := openapi3.NewInt32Schema()
		s.Min, s.Max, s.Default = &minimum, maximum, def
		return &openapi3.ParameterRef{Value: openapi3.NewQueryParameter(name).WithDescription(desc).WithSchema(s)}
	}
	hundred := 100.0
	c.Parameters["page"] = intParam("page", "Page number, the first page is 0.", 0, 0, nil)
	c.Parameters["pageSize"] = intParam("pageSize", "Rows per page.", 1, kmparams.DefaultPageSize, nil)
	c.Parameters["searchPrecision"] = intParam("searchPrecision", "Fuzzy search precision, 100 for an exact (case-insensitive) occurrence.", 1, km.DefaultSearchPrecision, &hundred)
	c.Parameters["searchTerm"] = &openapi3.ParameterRef{Value: openapi3.NewQueryParameter("searchTerm").
		WithDescription("Fuzzy search term: rows whose searched fields match it at the precision.").WithSchema(openapi3.NewStringSchema())}
	explode := true
	filterExpr := openapi3.NewQueryParameter("filterExpr").
		WithDescription("Filter expressions (OData syntax: eq ne gt ge lt le in, and or not, contains startswith endswith), ANDed; repeat the parameter or join expressions with commas.").
		WithSchema(openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema()))
	filterExpr.Style, filterExpr.Explode = openapi3.SerializationForm, &explode
	c.Parameters["filterExpr"] = &openapi3.ParameterRef{Value: filterExpr}
	c.Parameters["options"] = &openapi3.ParameterRef{Value: listParam("options", "distinct removes duplicate rows.", []string{"distinct"})}
}

// listParam is a comma-separated list parameter whose items are one of values (any
// string when values is empty).
func listParam(name, desc string, values []string) *openapi3.Parameter {
	item := openapi3.NewStringSchema()
	for _, v := range values {
		item.Enum = append(item.Enum, v)
	}
	explode := false
	p := openapi3.NewQueryParameter(name).WithDescription(desc).WithSchema(openapi3.NewArraySchema().WithItems(item))
	p.Style, p.Explode = openapi3.SerializationForm, &explode
	return p
}

// queryPath is the path of the query endpoint of m, or of its record rec.
func queryPath(m *km.KnowledgeModel, rec *km.Record) string {
	p := BasePath + "/knowledge-models/" + m.ID
	if rec != nil {
		p += "/records/" + rec.ID
	}
	return p + "/query"
}

// operation returns a GET operation with the shared parameters and responses and a 200
// answer of the page schema named page.
func (b *specBuilder) operation(id, summary, desc, page string, params ...*openapi3.Parameter) *openapi3.Operation {
	op := openapi3.NewOperation()
	op.OperationID, op.Summary, op.Description = id, summary, desc
	for _, p := range params {
		op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: p})
	}
	for _, name := range []string{"filterExpr", "options", "page", "pageSize", "searchTerm", "searchPrecision"} {
		op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Ref: refParameters + name})
	}
	op.Responses = openapi3.NewResponses(
		openapi3.WithStatus(200, &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription("A page of rows.").
			WithJSONSchemaRef(&openapi3.SchemaRef{Ref: refSchemas + page})}),
		openapi3.WithStatus(400, &openapi3.ResponseRef{Ref: refResponses + "BadRequest"}),
		openapi3.WithStatus(401, &openapi3.ResponseRef{Ref: refResponses + "Unauthorized"}),
		openapi3.WithStatus(403, &openapi3.ResponseRef{Ref: refResponses + "Forbidden"}),
		openapi3.WithStatus(404, &openapi3.ResponseRef{Ref: refResponses + "NotFound"}),
		openapi3.WithStatus(429, &openapi3.ResponseRef{Ref: refResponses + "TooManyRequests"}),
		openapi3.WithStatus(500, &openapi3.ResponseRef{Ref: refResponses + "InternalError"}),
	)
	return op
}

// addRecord adds the record's query endpoint and its row and page schemas.
func (b *specBuilder) addRecord(r *km.Record) {
	row := &openapi3.Schema{
		Type:                 &openapi3.Types{openapi3.TypeObject},
		Title:                r.Name,
		Description:          recordDescription(r),
		Properties:           openapi3.Schemas{},
		AdditionalProperties: openapi3.AdditionalProperties{Has: new(false)},
	}
	var ids, strs []string
	for _, f := range r.Fields {
		row.Properties[f.ID] = fieldSchema(f).NewRef()
		ids = append(ids, f.ID)
		if f.Type.Searchable() {
			strs = append(strs, f.ID)
		}
	}
	rowName, pageName := r.ID+".Row", r.ID+".Page"
	b.doc.Components.Schemas[rowName] = row.NewRef()
	b.doc.Components.Schemas[pageName] = pageSchema(rowName, "Rows of record "+r.ID+".").NewRef()
	var filters []string
	for _, f := range b.m.Filters {
		if b.m.FilterApplies(f, r.ID) && b.listsFilter(f) {
			filters = append(filters, f.ID)
		}
	}
	params := []*openapi3.Parameter{
		listParam("fields", "Fields to return; all fields of the record when omitted.", ids),
		listParam("filters", "Predefined filters of the knowledge model that apply to this record.", filters),
		sortParam(ids),
		listParam("searchField", "String fields to search; the selected string fields when omitted.", strs),
	}
	if len(filters) == 0 {
		params[1].Description = "Predefined filters of the knowledge model (none reaches this record through relationships)."
	}
	op := b.operation("query_"+r.ID, "Rows of "+nameOr(r.Name, r.ID),
		"Rows of record "+r.ID+" as objects mapping field ids to values. "+r.Description, pageName, params...)
	b.doc.Paths.Set(queryPath(b.m, r), &openapi3.PathItem{Get: op})
}

// addModel adds the KM query endpoint over the given records and the KM's KPIs.
func (b *specBuilder) addModel(records []*km.Record) {
	row := &openapi3.Schema{
		Type:                 &openapi3.Types{openapi3.TypeObject},
		Title:                b.m.Name,
		Description:          "A row of the knowledge model: selected fields named RECORD.FIELD, and KPIs by id.",
		Properties:           openapi3.Schemas{},
		AdditionalProperties: openapi3.AdditionalProperties{Has: new(false)},
	}
	var fields, strs, sortable []string
	for _, r := range records {
		for _, f := range r.Fields {
			name := r.ID + "." + f.ID
			row.Properties[name] = fieldSchema(f).NewRef()
			fields = append(fields, name)
			if f.Type.Searchable() {
				strs = append(strs, name)
			}
		}
	}
	sortable = append(sortable, fields...)
	var kpis []string
	for _, k := range b.m.KPIs {
		if b.curated && !touchesCurated(b.m, func(add func(string)) { km.MetricFields(k.Metric(), add) }) {
			continue
		}
		row.Properties[k.ID] = kpiSchema(k).NewRef()
		kpis = append(kpis, k.ID)
		sortable = append(sortable, k.ID)
	}
	var filters []string
	for _, f := range b.m.Filters {
		if !b.listsFilter(f) {
			continue
		}
		filters = append(filters, f.ID)
	}
	b.doc.Components.Schemas[kmRowSchema] = row.NewRef()
	b.doc.Components.Schemas[kmPageSchema] = pageSchema(kmRowSchema, "Rows of the knowledge model.").NewRef()
	params := []*openapi3.Parameter{
		listParam("fields", "Fields to return, named RECORD.FIELD; with KPIs, the KPIs are computed per distinct combination of them. At least one field or KPI is required.", fields),
		listParam("kpis", "KPIs to compute.", kpis),
		listParam("filters", "Predefined filters of the knowledge model.", filters),
		sortParam(sortable),
		listParam("searchField", "String fields to search (RECORD.FIELD); the selected string fields when omitted.", strs),
	}
	op := b.operation("query_"+b.m.ID, "Rows of "+nameOr(b.m.Name, b.m.ID),
		"Fields of related records joined through the knowledge model's relationships, and KPIs.", kmPageSchema, params...)
	b.doc.Paths.Set(queryPath(b.m, nil), &openapi3.PathItem{Get: op})
}

func nameOr(name, id string) string {
	if name == "" {
		return id
	}
	return name
}

// sortParam is the sort parameter over the given fields.
func sortParam(fields []string) *openapi3.Parameter {
	p := openapi3.NewQueryParameter("sort").WithSchema(openapi3.NewStringSchema())
	p.Description = "Comma-separated sort fields, each with an optional + (ascending, the default) or - (descending) prefix; nulls sort last."
	if len(fields) > 0 {
		p.Description += " Fields: " + strings.Join(fields, ", ") + "."
	}
	return p
}

// pageSchema is the schema of a result page of the query endpoints whose rows are row.
func pageSchema(row, desc string) *openapi3.Schema {
	int32s := openapi3.NewInt32Schema().NewRef()
	return &openapi3.Schema{
		Type:        &openapi3.Types{openapi3.TypeObject},
		Description: desc,
		Required:    []string{"page", "pageSize", "total", "sort", "content"},
		Properties: openapi3.Schemas{
			"page":     int32s,
			"pageSize": int32s,
			"total":    {Value: &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeInteger}, Format: "int32", Description: "rows in this page"}},
			"sort":     openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema()).NewRef(),
			"content":  {Value: &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: &openapi3.SchemaRef{Ref: refSchemas + row}}},
		},
	}
}

func recordDescription(r *km.Record) string {
	d := r.Description
	if !r.Curated {
		d = strings.TrimSpace(d + " (auto-generated record)")
	}
	return d
}

// fieldSchema types a field's values as the data endpoints write them; every value may
// be null.
func fieldSchema(f *km.Field) *openapi3.Schema {
	return valueSchema(f.Type, f.Name, f.Description, f.Unit, f.Format)
}

// kpiSchema types a KPI's values; the description ends with the KPI's expression.
func kpiSchema(k *km.KPI) *openapi3.Schema {
	s := valueSchema(k.Type, k.Name, k.Description, k.Unit, k.Format)
	s.Description = strings.TrimSpace(s.Description + " KPI: " + k.Expr)
	return s
}

// valueSchema types the nullable values of a field or KPI, naming its unit (also as
// x-unit) and display format in the description.
func valueSchema(t query.Type, title, desc, unit, format string) *openapi3.Schema {
	s := typeSchema(t)
	s.Title, s.Nullable = title, true
	if unit != "" {
		desc = strings.TrimSpace(desc + " Unit: " + unit + ".")
		s.Extensions = map[string]any{"x-unit": unit}
	}
	if format != "" {
		desc = strings.TrimSpace(desc + " Display format: " + format + ".")
	}
	s.Description = desc
	return s
}

// typeSchema is the JSON schema of values of type t in data rows.
func typeSchema(t query.Type) *openapi3.Schema {
	switch t {
	case query.TypeInteger:
		return openapi3.NewInt64Schema()
	case query.TypeFloat:
		return &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeNumber}, Format: "double"}
	case query.TypeBoolean:
		return openapi3.NewBoolSchema()
	case query.TypeDate:
		return &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, Format: "date"}
	case query.TypeDateTime, query.TypeTimestamp:
		return openapi3.NewDateTimeSchema()
	case query.TypeTime:
		return &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, Pattern: `^[0-2][0-9]:[0-5][0-9]:[0-5][0-9](\.[0-9]{1,6})?$`}
	}
	return openapi3.NewStringSchema()
}
