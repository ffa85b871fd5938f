package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/km/kmhttp"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/query"
)

// Resource URI templates: {km} is a knowledge model id.
const (
	// OpenAPIURITemplate is the generated OpenAPI document of a KM (kmhttp.Spec), as JSON.
	OpenAPIURITemplate = "kmkit://knowledge-models/{km}/openapi.json"
	// SchemaURITemplate is the description of a KM (describe_knowledge_model's answer), as
	// JSON.
	SchemaURITemplate = "kmkit://knowledge-models/{km}/schema.json"
	// PromptFilterLanguage is the prompt explaining filterExpr with examples from a KM.
	PromptFilterLanguage = "filter_language"
)

// OpenAPIURI returns the URI of the OpenAPI resource of KM id.
func OpenAPIURI(id string) string {
	return "kmkit://knowledge-models/" + url.PathEscape(id) + "/openapi.json"
}

// SchemaURI returns the URI of the schema resource of KM id.
func SchemaURI(id string) string {
	return "kmkit://knowledge-models/" + url.PathEscape(id) + "/schema.json"
}

func (s *Handler) addResources(srv *sdk.Server, p *principal.Principal) {
	srv.AddResourceTemplate(&sdk.ResourceTemplate{Name: "openapi", URITemplate: OpenAPIURITemplate, MIMEType: "application/json",
		Description: "The generated OpenAPI 3 document of a knowledge model's query endpoints."},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return s.readResource(scope(ctx, p), req.Params.URI, "/openapi.json", func(m *km.KnowledgeModel) ([]byte, error) {
				return json.Marshal(kmhttp.Spec(m, s.opts.specServer, false))
			})
		})
	srv.AddResourceTemplate(&sdk.ResourceTemplate{Name: "schema", URITemplate: SchemaURITemplate, MIMEType: "application/json",
		Description: "A knowledge model's records, fields, KPIs, filters and relationships."},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return s.readResource(scope(ctx, p), req.Params.URI, "/schema.json", func(m *km.KnowledgeModel) ([]byte, error) {
				return json.Marshal(Describe(m))
			})
		})
}

// readResource answers a resource of the KM its URI names; an unknown KM is "resource not
// found".
func (s *Handler) readResource(ctx context.Context, uri, suffix string, render func(*km.KnowledgeModel) ([]byte, error)) (*sdk.ReadResourceResult, error) {
	rest, ok := strings.CutPrefix(uri, "kmkit://knowledge-models/")
	esc, ok2 := strings.CutSuffix(rest, suffix)
	if !ok || !ok2 || strings.Contains(esc, "/") {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	id, err := url.PathUnescape(esc)
	if err != nil {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	m, err := s.kmh.Model(ctx, id)
	if _, client := kmhttp.ProblemOf(err); client {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, s.toolError(ctx, "resources/read", err)
	}
	b, err := render(m)
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

func (s *Handler) addPrompts(srv *sdk.Server, p *principal.Principal) {
	srv.AddPrompt(&sdk.Prompt{Name: PromptFilterLanguage,
		Description: "How to write filterExpr for the query tool, with examples from a knowledge model's fields and data.",
		Arguments:   []*sdk.PromptArgument{{Name: "km", Description: "the knowledge model id", Required: true}}},
		func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			ctx = scope(ctx, p)
			m, err := s.kmh.Model(ctx, req.Params.Arguments["km"])
			if err != nil {
				return nil, s.toolError(ctx, "prompts/get", err)
			}
			text, err := s.filterGuide(ctx, m)
			if err != nil {
				return nil, s.toolError(ctx, "prompts/get", err)
			}
			return &sdk.GetPromptResult{Description: "The filter language of knowledge model " + m.ID,
				Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: text}}}}, nil
		})
}

const filterGrammar = `filterExpr entries are ANDed. Each is an expression of this language (keywords lower case):

  expr       = and { "or" and }       and = unary { "and" unary }      unary = "not" unary | primary
  primary    = "(" expr ")" | FUNC "(" field "," value ")" | field op value | field "in" "(" values ")" | field "is" ["not"] "null"
  FUNC       = contains | startswith | endswith   (string fields)
  op         = eq | ne | gt | ge | lt | le
  value      = 'text' (a quote doubled inside) | 12 | 4.5 | true | false | null | 2025-03-01 | 2025-03-01T10:00:00Z | 10:30:00

Fields: on a record query name them bare (FIELD) or as RECORD.FIELD of any record; on a KM query always RECORD.FIELD.
Text values must match the stored value exactly: use find_field_values first to turn what the user typed into the stored value.
`

// filterGuide writes the filter language with examples from m's first record's fields and
// a row of its data.
func (s *Handler) filterGuide(ctx context.Context, m *km.KnowledgeModel) (string, error) {
	var b strings.Builder
	b.WriteString(filterGrammar)
	fmt.Fprintf(&b, "\nExamples from knowledge model %s:\n", m.ID)
	n := 0
	for _, rec := range m.Records {
		if n >= 6 {
			break
		}
		res, err := s.query(ctx, m.ID, rec.ID, url.Values{"pageSize": {"1"}})
		if err != nil {
			return "", err
		}
		if len(res.Rows) == 0 {
			continue
		}
		row := res.Rows[0]
		for _, f := range rec.Fields {
			v, ok := row[f.ID]
			if !ok || v == nil || n >= 6 {
				continue
			}
			name := rec.ID + "." + f.ID
			switch f.Type {
			case query.TypeString:
				text := fmt.Sprint(v)
				lit := "'" + strings.ReplaceAll(text, "'", "''") + "'"
				fmt.Fprintf(&b, "  %s eq %s\n", name, lit)
				if r := []rune(text); len(r) > 2 {
					fmt.Fprintf(&b, "  startswith(%s, '%s')\n", name, strings.ReplaceAll(string(r[:2]), "'", "''"))
				}
				fmt.Fprintf(&b, "  %s in (%s, 'other') or %s is null\n", name, lit, name)
				n += 3
			case query.TypeInteger, query.TypeFloat:
				fmt.Fprintf(&b, "  %s ge %v and not %s eq 0\n", name, v, name)
				n++
			case query.TypeDate, query.TypeDateTime, query.TypeTimestamp, query.TypeTime:
				fmt.Fprintf(&b, "  %s lt %v\n", name, v)
				n++
			case query.TypeBoolean:
				fmt.Fprintf(&b, "  %s eq %v\n", name, v)
				n++
			}
		}
	}
	return b.String(), nil
}
