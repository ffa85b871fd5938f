package mcp

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kmkit/kmkit/query"
)

// FilterExprExamples are the filterExpr examples the tools' input schemas give: each is an
// expression of the filter language (query.Parse accepts it), over placeholder names an
// agent replaces with a KM's RECORD.FIELD names.
var FilterExprExamples = []string{
	"RECORD.FIELD eq 'value'",
	"RECORD.AMOUNT ge 1000 and RECORD.COUNTRY in ('DE', 'FR')",
	"contains(RECORD.NAME, 'GmbH') or startswith(RECORD.NAME, 'AB')",
	"RECORD.CREATED_AT ge 2025-01-01T00:00:00Z and RECORD.DUE_DATE lt 2025-07-01",
	"RECORD.CLOSED_AT is null",
	"not RECORD.STATUS eq 'DONE'",
}

// FieldTypes are the field types describe_knowledge_model reports, every type a KM field
// can have.
func FieldTypes() []string {
	var names []string
	for t := query.TypeString; t <= query.TypeTime; t++ {
		names = append(names, t.String())
	}
	return names
}

// filterExprDescription is the description of a filterExpr argument.
func filterExprDescription() string {
	var b strings.Builder
	b.WriteString("filter expressions, ANDed; the operators are eq ne gt ge lt le, in (...), is [not] null, and, or, not, ")
	b.WriteString("contains/startswith/endswith(field, 'text'); text in single quotes; there is no '=' (see the filter_language prompt). Examples: ")
	for i, e := range FilterExprExamples {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e)
	}
	return b.String()
}

// schemaFor returns the JSON Schema of T, as the SDK would infer it, with the changes of
// patch applied: limits and examples that depend on the handler's options.
func schemaFor[T any](patch func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %T: %v", *new(T), err))
	}
	if patch != nil {
		patch(s.Properties)
	}
	return s
}

func bounds(s *jsonschema.Schema, lo, hi int) {
	l, h := float64(lo), float64(hi)
	s.Minimum, s.Maximum = &l, &h
}

// precisionNote completes the description of a search precision.
const precisionNote = "match precision from 1 to 100 (default 80): 100 only exact (case-insensitive) occurrences, lower admits typos"

// mustJSON returns the JSON of a schema built by this package (which always marshals).
func mustJSON(s *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("mcp: a schema does not marshal: %v", err))
	}
	return b
}

// queryInputSchema is the input schema of query: the maximum pageSize is maxRows.
func queryInputSchema(maxRows int) *jsonschema.Schema {
	return schemaFor[QueryArgs](func(p map[string]*jsonschema.Schema) {
		p["filterExpr"].Description = filterExprDescription()
		p["filterExpr"].Examples = []any{FilterExprExamples[:2]}
		bounds(p["pageSize"], 1, maxRows)
		p["pageSize"].Description = "rows per page, 1 to " + strconv.Itoa(maxRows) + " (default " + strconv.Itoa(min(DefaultPageSize, maxRows)) + ")"
		bounds(p["page"], 0, math.MaxInt32) // query.CheckPaging's range
		bounds(p["search"].Properties["precision"], 1, 100)
		p["search"].Properties["precision"].Description = precisionNote
	})
}

// summaryInputSchema is the input schema of summarize_record.
func (s *Handler) summaryInputSchema() *jsonschema.Schema {
	return schemaFor[SummaryArgs](func(p map[string]*jsonschema.Schema) {
		p["filterExpr"].Description = filterExprDescription()
		bounds(p["sampleSize"], 1, s.svc.MaxSampleSize())
		p["sampleSize"].Description = "sample rows returned with the statistics, 1 to " + strconv.Itoa(s.svc.MaxSampleSize()) +
			" (default " + strconv.Itoa(s.svc.DefaultSampleSize()) + ")"
	})
}

// findInputSchema is the input schema of find_field_values: at most maxRows values.
func (s *Handler) findInputSchema() *jsonschema.Schema {
	return schemaFor[FindArgs](func(p map[string]*jsonschema.Schema) {
		bounds(p["limit"], 1, s.opts.maxRows)
		p["limit"].Description = "most values returned, 1 to " + strconv.Itoa(s.opts.maxRows) + " (default " + strconv.Itoa(min(DefaultFindLimit, s.opts.maxRows)) + ")"
		bounds(p["precision"], 1, 100)
		p["precision"].Description = precisionNote
		bounds(p["page"], 0, math.MaxInt32) // query.CheckPaging's range
	})
}

// describeOutputSchema is the output schema of describe_knowledge_model, with the field
// and KPI types enumerated.
func describeOutputSchema() *jsonschema.Schema {
	return schemaFor[ModelDescription](func(p map[string]*jsonschema.Schema) {
		types := []any{}
		for _, t := range FieldTypes() {
			types = append(types, t)
		}
		p["records"].Items.Properties["fields"].Items.Properties["type"].Enum = types
		p["kpis"].Items.Properties["type"].Enum = types
	})
}
