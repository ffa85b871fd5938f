package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/mcp"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/query"
)

// toolSchema returns the named tool's input (or output) schema as tools/list gives it.
func toolSchema(t *testing.T, cs *sdk.ClientSession, tool string, output bool) map[string]any {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name != tool {
			continue
		}
		s := tl.InputSchema
		if output {
			s = tl.OutputSchema
		}
		b, _ := json.Marshal(s)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	t.Fatalf("no tool %s", tool)
	return nil
}

// prop walks a JSON Schema through properties (a name) and items ("[]").
func prop(s map[string]any, path ...string) map[string]any {
	for _, p := range path {
		if p == "[]" {
			s, _ = s["items"].(map[string]any)
		} else {
			props, _ := s["properties"].(map[string]any)
			s, _ = props[p].(map[string]any)
		}
	}
	return s
}

// TestFilterExprExamplesAreValid is item 3 of issue 31: the query tool's filterExpr
// description gave the example RECORD.FIELD = 'value', which the language refuses. The
// examples tools/list gives now are parsed by the real parser, and, with the placeholder
// names put for a KM's, the query tool accepts them.
func TestFilterExprExamplesAreValid(t *testing.T) {
	if _, err := query.Parse("RECORD.FIELD = 'value'"); err == nil {
		t.Fatal("the parser accepts '=': the check below proves nothing")
	}
	f := newFixture(t)
	for _, tool := range []string{mcp.ToolQuery, mcp.ToolSummarize} {
		desc, _ := prop(toolSchema(t, f.cs, tool, false), "filterExpr")["description"].(string)
		_, list, ok := strings.Cut(desc, "Examples: ")
		if !ok {
			t.Fatalf("%s: filterExpr description %q gives no examples", tool, desc)
		}
		examples := strings.Split(list, "; ")
		if !slices.Equal(examples, mcp.FilterExprExamples) {
			t.Errorf("%s: examples %q, want %q", tool, examples, mcp.FilterExprExamples)
		}
		for _, e := range examples {
			if _, err := query.Parse(e); err != nil {
				t.Errorf("%s: example %q: %v", tool, e, err)
			}
		}
	}
	// The examples with shop-base's names: the query tool answers each.
	names := strings.NewReplacer("RECORD.FIELD", "ORDERS.STATUS", "RECORD.AMOUNT", "ORDERS.NET", "RECORD.COUNTRY", "CUSTOMERS.COUNTRY",
		"RECORD.NAME", "CUSTOMERS.NAME", "RECORD.CREATED_AT", "ORDERS.CREATED", "RECORD.DUE_DATE", "ORDERS.DAY",
		"RECORD.CLOSED_AT", "ORDERS.CREATED", "RECORD.STATUS", "ORDERS.STATUS")
	for _, e := range mcp.FilterExprExamples {
		res := f.call(t, mcp.ToolQuery, map[string]any{"km": "shop-base", "fields": []string{"ORDERS.ID"}, "filterExpr": []string{names.Replace(e)}})
		if res.IsError {
			t.Errorf("example %q as %q: %s", e, names.Replace(e), text(res))
		}
	}
}

// TestSchemasStateLimits is item 4 of issue 31 (the 500-row cap was learned only from an
// error): the maximum pageSize and find limit are in the input schemas.
func TestSchemasStateLimits(t *testing.T) {
	for _, maxRows := range []int{mcp.DefaultMaxRows, 20} {
		f := newFixture(t, mcp.WithMaxRows(maxRows))
		q := toolSchema(t, f.cs, mcp.ToolQuery, false)
		if got := prop(q, "pageSize"); got["maximum"] != float64(maxRows) || got["minimum"] != float64(1) {
			t.Errorf("MaxRows %d: query pageSize schema %v", maxRows, got)
		}
		if got := prop(q, "search", "precision"); got["maximum"] != float64(100) || got["minimum"] != float64(1) {
			t.Errorf("query search.precision schema %v", got)
		}
		if got := prop(q, "page"); got["minimum"] != float64(0) || got["maximum"] != float64(math.MaxInt32) {
			t.Errorf("query page schema %v", got)
		}
		if got := prop(toolSchema(t, f.cs, mcp.ToolFindValues, false), "page"); got["minimum"] != float64(0) || got["maximum"] != float64(math.MaxInt32) {
			t.Errorf("find_field_values page schema %v", got)
		}
		// The largest page stated is answered (with no rows), the next one refused.
		var last mcp.QueryResult
		f.ok(t, mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS", "page": math.MaxInt32}, &last)
		if len(last.Rows) != 0 || last.Page != math.MaxInt32 {
			t.Errorf("page %d: %+v", math.MaxInt32, last)
		}
		if p := f.problemOf(t, mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS", "page": math.MaxInt32 + 1}); p["errorCode"] != "GENERAL_CONSTRAINT_VIOLATION" {
			t.Errorf("page %d: %v", math.MaxInt32+1, p)
		}
		if got := prop(toolSchema(t, f.cs, mcp.ToolFindValues, false), "limit"); got["maximum"] != float64(maxRows) {
			t.Errorf("MaxRows %d: find_field_values limit schema %v", maxRows, got)
		}
		if got := prop(toolSchema(t, f.cs, mcp.ToolSummarize, false), "sampleSize"); got["maximum"] != float64(km.DefaultMaxSampleSize) {
			t.Errorf("summarize_record sampleSize schema %v", got)
		}
	}
}

// TestSchemasStateTheServiceLimits: when the Service's page and sample caps are below
// WithMaxRows, the input schemas and the query tool's description state the Service's,
// and the tools keep them: the largest stated value is answered, one above refused. The
// schemas stated WithMaxRows (and no sampleSize maximum) while the Service refused
// pageSize, limit and sampleSize above its own caps.
func TestSchemasStateTheServiceLimits(t *testing.T) {
	svc := km.NewService(loadStore(t), km.WithMaxPageSize(3), km.WithMaxSampleSize(2))
	f := &fixture{cs: connect(t, mcp.NewHandler(nil, mcp.WithService(svc), mcp.WithMaxRows(20)).MCPServer(nil))}
	q := toolSchema(t, f.cs, mcp.ToolQuery, false)
	if got := prop(q, "pageSize"); got["maximum"] != float64(3) || !strings.Contains(got["description"].(string), "1 to 3 ") {
		t.Errorf("query pageSize schema %v, want the maximum 3", got)
	}
	if got := prop(toolSchema(t, f.cs, mcp.ToolFindValues, false), "limit"); got["maximum"] != float64(3) ||
		!strings.Contains(got["description"].(string), "1 to 3 (default 3)") {
		t.Errorf("find_field_values limit schema %v, want the maximum and default 3", got)
	}
	if got := prop(toolSchema(t, f.cs, mcp.ToolSummarize, false), "sampleSize"); got["maximum"] != float64(2) || got["minimum"] != float64(1) {
		t.Errorf("summarize_record sampleSize schema %v, want 1 to 2", got)
	}
	tools, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name == mcp.ToolQuery && !strings.Contains(tool.Description, "At most 3 rows per call") {
			t.Errorf("query description %q, want the maximum 3", tool.Description)
		}
	}
	for _, c := range []struct {
		tool    string
		args    map[string]any
		refused bool
	}{
		{mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS", "pageSize": 3}, false},
		{mcp.ToolQuery, map[string]any{"km": "shop-base", "record": "ORDERS", "pageSize": 4}, true},
		{mcp.ToolFindValues, map[string]any{"km": "shop-base", "record": "CUSTOMERS", "field": "NAME", "term": "a", "limit": 3}, false},
		{mcp.ToolFindValues, map[string]any{"km": "shop-base", "record": "CUSTOMERS", "field": "NAME", "term": "a", "limit": 4}, true},
		{mcp.ToolSummarize, map[string]any{"km": "shop-base", "record": "ORDERS", "sampleSize": 2}, false},
		{mcp.ToolSummarize, map[string]any{"km": "shop-base", "record": "ORDERS", "sampleSize": 3}, true},
	} {
		if res := f.call(t, c.tool, c.args); res.IsError != c.refused {
			t.Errorf("%s %v: isError %v, want %v: %s", c.tool, c.args, res.IsError, c.refused, text(res))
		}
	}
	// find_field_values without limit answers at most the stated maximum.
	var out mcp.FindResult
	f.ok(t, mcp.ToolFindValues, map[string]any{"km": "shop-base", "record": "CUSTOMERS", "field": "NAME", "term": "e", "precision": 1}, &out)
	if len(out.Values) > 3 || (out.Next != nil && out.Next.Limit != 3) {
		t.Errorf("find_field_values without limit: %+v, want at most 3 values", out)
	}
}

// TestFieldTypesListed is item 4 of issue 31 (the output schema's list of field types left
// out datetime): describe_knowledge_model's output schema enumerates every type a field has.
func TestFieldTypesListed(t *testing.T) {
	want := []any{"string", "integer", "float", "boolean", "date", "datetime", "timestamp", "time"}
	for i, name := range mcp.FieldTypes() {
		if want[i] != name {
			t.Fatalf("FieldTypes() = %q", mcp.FieldTypes())
		}
	}
	f := newFixture(t)
	typ := prop(toolSchema(t, f.cs, mcp.ToolDescribeModel, true), "records", "[]", "fields", "[]", "type")
	if got, _ := typ["enum"].([]any); !slices.Equal(got, want) {
		t.Errorf("field type enum %v, want %v", typ["enum"], want)
	}
	desc, _ := typ["description"].(string)
	for _, w := range want {
		if !strings.Contains(desc, w.(string)) {
			t.Errorf("field type description %q lacks %s", desc, w)
		}
	}
	// And the description answers with one of them for a datetime field.
	var d mcp.ModelDescription
	f.ok(t, mcp.ToolDescribeModel, map[string]any{"km": "shop-base"}, &d)
	for _, r := range d.Records {
		for _, fi := range r.Fields {
			if !slices.Contains(want, any(fi.Type)) {
				t.Errorf("%s.%s: type %q not in the schema's enum", r.ID, fi.ID, fi.Type)
			}
		}
	}
}

// TestResourcesList is item 4 of issue 31 (resources/list was empty): every KM the caller
// sees has its schema, OpenAPI and record resources listed, and each listed one reads.
func TestResourcesList(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	res, err := f.cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
		if r.Name == "" || r.MIMEType != "application/json" {
			t.Errorf("resource %+v", r)
		}
		got, err := f.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: r.URI})
		if err != nil || len(got.Contents) != 1 || !json.Valid([]byte(got.Contents[0].Text)) {
			t.Errorf("read %s: %v", r.URI, err)
		}
	}
	for _, want := range []string{mcp.SchemaURI("shop-base"), mcp.OpenAPIURI("shop-base"), mcp.SchemaURI("shop"),
		mcp.RecordURI("shop-base", "ORDERS"), mcp.RecordURI("shop", "CUSTOMERS")} {
		if !slices.Contains(uris, want) {
			t.Errorf("resources/list lacks %s: %q", want, uris)
		}
	}
	rec, err := f.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcp.RecordURI("shop-base", "ORDERS")})
	if err != nil {
		t.Fatal(err)
	}
	var d mcp.RecordDescription
	if err := json.Unmarshal([]byte(rec.Contents[0].Text), &d); err != nil || d.Record.ID != "ORDERS" || len(d.Relationships) == 0 {
		t.Errorf("record resource: %s", rec.Contents[0].Text)
	}
	if _, err := f.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcp.RecordURI("shop-base", "NOPE")}); err == nil {
		t.Error("an unknown record was read")
	}
}

// TestCompletions is item 4 of issue 31: completion/complete for the km, record and field
// arguments of the prompt and the resource templates, scoped to the caller's KMs.
func TestCompletions(t *testing.T) {
	st := loadStore(t)
	base, err := st.Model(context.Background(), "shop-base")
	if err != nil {
		t.Fatal(err)
	}
	secret := *base
	secret.ID = "shop-secret"
	secret.Teams = []string{"blue"}
	if err := st.PutModel(context.Background(), &secret); err != nil {
		t.Fatal(err)
	}
	h := mcp.NewHandler(st)
	red := connect(t, h.MCPServer(&principal.Principal{Name: "red", Team: "red"}))
	blue := connect(t, h.MCPServer(&principal.Principal{Name: "blue", Team: "blue"}))
	if red.InitializeResult().Capabilities.Completions == nil {
		t.Fatal("the completions capability is not advertised")
	}
	prompt := &sdk.CompleteReference{Type: "ref/prompt", Name: mcp.PromptFilterLanguage}
	record := &sdk.CompleteReference{Type: "ref/resource", URI: mcp.RecordURITemplate}
	schema := &sdk.CompleteReference{Type: "ref/resource", URI: mcp.SchemaURITemplate}
	for _, c := range []struct {
		cs      *sdk.ClientSession
		ref     *sdk.CompleteReference
		arg     string
		value   string
		context map[string]string
		want    []string
	}{
		{red, prompt, "km", "SH", nil, []string{"shop", "shop-base"}},
		{blue, prompt, "km", "shop-", nil, []string{"shop-base", "shop-secret"}},
		{red, schema, "km", "", nil, []string{"shop", "shop-base"}},
		{red, record, "km", "shop-b", nil, []string{"shop-base"}},
		{red, record, "record", "or", map[string]string{"km": "shop-base"}, []string{"ORDERS"}},
		{red, prompt, "record", "", map[string]string{"km": "shop-base"}, []string{"CUSTOMERS", "ITEMS", "ORDERS"}},
		{red, prompt, "field", "c", map[string]string{"km": "shop-base", "record": "ORDERS"}, []string{"CREATED", "CUST"}},
		{red, prompt, "record", "", map[string]string{"km": "shop-secret"}, []string{}},
		{blue, prompt, "record", "i", map[string]string{"km": "shop-secret"}, []string{"ITEMS"}},
		{red, prompt, "record", "", nil, []string{}},
		{red, schema, "record", "", map[string]string{"km": "shop-base"}, []string{}},
	} {
		res, err := c.cs.Complete(context.Background(), &sdk.CompleteParams{Ref: c.ref,
			Argument: sdk.CompleteParamsArgument{Name: c.arg, Value: c.value}, Context: &sdk.CompleteContext{Arguments: c.context}})
		if err != nil {
			t.Errorf("%s %s %q: %v", c.ref.Type, c.arg, c.value, err)
			continue
		}
		if !slices.Equal(res.Completion.Values, c.want) || res.Completion.Total != len(c.want) {
			t.Errorf("%s %s %s %q %v: %q (total %d), want %q", c.ref.Type, c.ref.Name+c.ref.URI, c.arg, c.value, c.context, res.Completion.Values, res.Completion.Total, c.want)
		}
	}
}

// TestFilterLanguagePromptForAField: the prompt's record and field arguments narrow its
// examples; an unknown record is the KM API's KM_RECORD_NOTFOUND.
func TestFilterLanguagePromptForAField(t *testing.T) {
	f := newFixture(t)
	res, err := f.cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: mcp.PromptFilterLanguage,
		Arguments: map[string]string{"km": "shop-base", "record": "ORDERS", "field": "STATUS"}})
	if err != nil {
		t.Fatal(err)
	}
	_, examples, _ := strings.Cut(res.Messages[0].Content.(*sdk.TextContent).Text, "Examples from knowledge model shop-base:\n")
	lines := strings.Split(strings.TrimSpace(examples), "\n")
	for _, l := range lines {
		if !strings.Contains(l, "ORDERS.STATUS") || strings.Contains(l, "CUSTOMERS.") {
			t.Errorf("example %q is not about ORDERS.STATUS", l)
		}
		if _, err := query.Parse(strings.TrimSpace(l)); err != nil {
			t.Errorf("example %q: %v", l, err)
		}
	}
	if len(lines) < 2 {
		t.Errorf("examples %q", lines)
	}
	_, err = f.cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: mcp.PromptFilterLanguage,
		Arguments: map[string]string{"km": "shop-base", "record": "NOPE"}})
	if err == nil || !strings.Contains(err.Error(), "KM_RECORD_NOTFOUND") {
		t.Errorf("unknown record: %v", err)
	}
}

// TestToolAnnotations: every tool says it only reads, and that it reads this server's
// KMs, not an open world (openWorldHint defaults to true, which the tools did not
// contradict).
func TestToolAnnotations(t *testing.T) {
	f := newFixture(t)
	tools, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 5 {
		t.Fatalf("%d tools", len(tools.Tools))
	}
	for _, tool := range tools.Tools {
		if a := tool.Annotations; a == nil || !a.ReadOnlyHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: annotations %+v, want readOnlyHint true and openWorldHint false", tool.Name, a)
		}
	}
}

// TestCapabilitiesPromiseNoListChanges: the server never sends a list_changed
// notification (its tools, prompts and templates are fixed; over stateless HTTP there is
// no stream), so initialize does not advertise listChanged, which the SDK's default did;
// it advertises the features it serves.
func TestCapabilitiesPromiseNoListChanges(t *testing.T) {
	caps := newFixture(t).cs.InitializeResult().Capabilities
	//lint:ignore SA1019 logging is deprecated from the draft 2026-07-28 on, live in the versions served before it
	if caps.Tools == nil || caps.Prompts == nil || caps.Resources == nil || caps.Completions == nil || caps.Logging == nil {
		t.Fatalf("capabilities %+v: want tools, prompts, resources, completions and logging", caps)
	}
	if caps.Tools.ListChanged || caps.Prompts.ListChanged || caps.Resources.ListChanged || caps.Resources.Subscribe {
		t.Errorf("capabilities tools %+v, prompts %+v, resources %+v: want no listChanged nor subscribe", *caps.Tools, *caps.Prompts, *caps.Resources)
	}
}

// TestCompletionOfAnUnknownPrompt: completion/complete for a prompt the server does not
// have is Invalid params (-32602), as the completion utility's error handling says of an
// invalid prompt name; it answered no values. A known prompt's argument without values
// still answers an empty completion.
func TestCompletionOfAnUnknownPrompt(t *testing.T) {
	f := newFixture(t)
	_, err := f.cs.Complete(context.Background(), &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "nope"},
		Argument: sdk.CompleteParamsArgument{Name: "km", Value: "s"}})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || wire.Message != `unknown prompt "nope"` {
		t.Errorf("unknown prompt: %v, want -32602 unknown prompt \"nope\"", err)
	}
	res, err := f.cs.Complete(context.Background(), &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: mcp.PromptFilterLanguage},
		Argument: sdk.CompleteParamsArgument{Name: "colour", Value: ""}})
	if err != nil || len(res.Completion.Values) != 0 {
		t.Errorf("argument without values: %v %v", res, err)
	}
}
