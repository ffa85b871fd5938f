package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/internal/jsonenc"
	"github.com/kmkit/kmkit/internal/kmspec"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// Resource URI templates: {km} is a knowledge model id.
const (
	// OpenAPIURITemplate is the generated OpenAPI document of a KM (the KM API's spec endpoint, without curation), as JSON.
	OpenAPIURITemplate = "kmkit://knowledge-models/{km}/openapi.json"
	// SchemaURITemplate is the description of a KM (describe_knowledge_model's answer), as
	// JSON.
	SchemaURITemplate = "kmkit://knowledge-models/{km}/schema.json"
	// RecordURITemplate is the description of one record of a KM (its fields and the
	// relationships it takes part in), as JSON.
	RecordURITemplate = "kmkit://knowledge-models/{km}/records/{record}/schema.json"
	// PromptFilterLanguage is the prompt explaining filterExpr with examples from a KM.
	PromptFilterLanguage = "filter_language"
)

// RecordURI returns the URI of the resource of record rec of KM id.
func RecordURI(id, rec string) string {
	return "kmkit://knowledge-models/" + url.PathEscape(id) + "/records/" + url.PathEscape(rec) + "/schema.json"
}

// RecordDescription is the content of a record resource: the record and the relationships
// it takes part in.
type RecordDescription struct {
	KM            string             `json:"km"`
	Record        RecordInfo         `json:"record"`
	Relationships []RelationshipInfo `json:"relationships"`
}

// OpenAPIURI returns the URI of the OpenAPI resource of KM id.
func OpenAPIURI(id string) string {
	return "kmkit://knowledge-models/" + url.PathEscape(id) + "/openapi.json"
}

// SchemaURI returns the URI of the schema resource of KM id.
func SchemaURI(id string) string {
	return "kmkit://knowledge-models/" + url.PathEscape(id) + "/schema.json"
}

func (s *Handler) addResources(srv *sdk.Server, p *principal.Principal) {
	srv.AddResourceTemplate(&sdk.ResourceTemplate{Name: "record", URITemplate: RecordURITemplate, MIMEType: "application/json",
		Description: "One record of a knowledge model: its fields with their types and the relationships it takes part in."},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return s.readRecord(scope(ctx, p), req.Params.URI)
		})
	// resources/list names the concrete resources of every KM the caller sees (the
	// templates alone leave hosts that list resources with nothing to show).
	// resources/read of a URI with a control character is "resource not found" here,
	// before the SDK answers it with an error it cannot write (and drops the answer); and
	// "resource not found" takes the code of the request's protocol version (versionCode).
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			switch method {
			case "resources/list":
				if lr, ok := req.(*sdk.ListResourcesRequest); ok && lr.Params != nil && lr.Params.Cursor != "" {
					// The list is one page and hands out no cursor: the pagination
					// utility says an invalid cursor is Invalid params.
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor: resources/list answers in one page and gives no cursor"}
				}
				return s.listResources(scope(ctx, p))
			case "resources/read":
				if rr, ok := req.(*sdk.ReadResourceRequest); ok && rr.Params != nil && strings.ContainsFunc(rr.Params.URI, unicode.IsControl) {
					return nil, versionCode(req, notFound(rr.Params.URI))
				}
				res, err := next(ctx, method, req)
				return res, versionCode(req, err)
			}
			return next(ctx, method, req)
		}
	})
	srv.AddResourceTemplate(&sdk.ResourceTemplate{Name: "openapi", URITemplate: OpenAPIURITemplate, MIMEType: "application/json",
		Description: "The generated OpenAPI 3 document of a knowledge model's query endpoints."},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return s.readResource(scope(ctx, p), req.Params.URI, "/openapi.json", func(m *km.KnowledgeModel) ([]byte, error) {
				return json.Marshal(kmspec.Spec(m, s.opts.specServer, false))
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

// listResources answers resources/list: the schema and the OpenAPI document of each KM
// the caller sees, and each of its records. All in one page. The list is the caller's
// (team scope), so its cacheScope is private; the SDK, which fills in "public" for the
// lists it answers, does not see this one.
func (s *Handler) listResources(ctx context.Context) (*sdk.ListResourcesResult, error) {
	ms, err := s.svc.Models(ctx)
	if err != nil {
		return nil, s.requestError(ctx, "resources/list", err)
	}
	slices.SortFunc(ms, func(a, b *km.KnowledgeModel) int { return strings.Compare(a.ID, b.ID) })
	out := &sdk.ListResourcesResult{Resources: []*sdk.Resource{}, Cacheable: sdk.Cacheable{CacheScope: "private"}}
	for _, m := range ms {
		out.Resources = append(out.Resources,
			&sdk.Resource{URI: SchemaURI(m.ID), Name: m.ID + " schema", Title: m.Name + ": records, fields, KPIs, filters", MIMEType: "application/json",
				Description: "Records, fields (with types), KPIs, predefined filters and relationships of knowledge model " + m.ID + "."},
			&sdk.Resource{URI: OpenAPIURI(m.ID), Name: m.ID + " openapi", Title: m.Name + ": OpenAPI document", MIMEType: "application/json",
				Description: "The OpenAPI 3 document of the query endpoints of knowledge model " + m.ID + "."})
		for _, r := range m.Records {
			out.Resources = append(out.Resources, &sdk.Resource{URI: RecordURI(m.ID, r.ID), Name: m.ID + " " + r.ID,
				Title: m.Name + ": " + r.Name, MIMEType: "application/json", Description: r.Description})
		}
	}
	return out, nil
}

// readRecord answers the resource of a record; an unknown KM or record is "resource not
// found".
func (s *Handler) readRecord(ctx context.Context, uri string) (*sdk.ReadResourceResult, error) {
	rest, ok := strings.CutPrefix(uri, "kmkit://knowledge-models/")
	rest, ok2 := strings.CutSuffix(rest, "/schema.json")
	escKM, escRec, ok3 := strings.Cut(rest, "/records/")
	if !ok || !ok2 || !ok3 || strings.Contains(escKM, "/") || strings.Contains(escRec, "/") {
		return nil, notFound(uri)
	}
	id, err1 := url.PathUnescape(escKM)
	recID, err2 := url.PathUnescape(escRec)
	if err1 != nil || err2 != nil {
		return nil, notFound(uri)
	}
	m, err := s.svc.Model(ctx, id)
	if _, client := km.AsProblem(err); client {
		return nil, notFound(uri)
	}
	if err != nil {
		return nil, s.requestError(ctx, "resources/read", err)
	}
	d := Describe(m)
	for _, r := range d.Records {
		if r.ID != recID {
			continue
		}
		out := RecordDescription{KM: m.ID, Record: r, Relationships: []RelationshipInfo{}}
		for i, rel := range m.Relationships {
			if rel.From.Record == recID || rel.To.Record == recID {
				out.Relationships = append(out.Relationships, d.Relationships[i])
			}
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
	}
	return nil, notFound(uri)
}

// readResource answers a resource of the KM its URI names; an unknown KM is "resource not
// found".
func (s *Handler) readResource(ctx context.Context, uri, suffix string, render func(*km.KnowledgeModel) ([]byte, error)) (*sdk.ReadResourceResult, error) {
	rest, ok := strings.CutPrefix(uri, "kmkit://knowledge-models/")
	esc, ok2 := strings.CutSuffix(rest, suffix)
	if !ok || !ok2 || strings.Contains(esc, "/") {
		return nil, notFound(uri)
	}
	id, err := url.PathUnescape(esc)
	if err != nil {
		return nil, notFound(uri)
	}
	m, err := s.svc.Model(ctx, id)
	if _, client := km.AsProblem(err); client {
		return nil, notFound(uri)
	}
	if err != nil {
		return nil, s.requestError(ctx, "resources/read", err)
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
		Arguments: []*sdk.PromptArgument{
			{Name: "km", Description: "the knowledge model id", Required: true},
			{Name: "record", Description: "a record id: examples from this record only"},
			{Name: "field", Description: "a field id of the record: examples for this field only"},
		}},
		func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			ctx = scope(ctx, p)
			if req.Params.Arguments["km"] == "" {
				// The SDK does not check required prompt arguments.
				return nil, s.requestError(ctx, "prompts/get", invalid(problem.CodeParameterMissing, "km is required: a knowledge model id (list_knowledge_models)"))
			}
			m, err := s.svc.Model(ctx, req.Params.Arguments["km"])
			if err != nil {
				return nil, s.requestError(ctx, "prompts/get", err)
			}
			text, err := s.filterGuide(ctx, m, req.Params.Arguments["record"], req.Params.Arguments["field"])
			if err != nil {
				return nil, s.requestError(ctx, "prompts/get", err)
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

// filterGuide writes the filter language with examples from m's records' fields (only
// record's and field's when named) and a row of each record's data.
func (s *Handler) filterGuide(ctx context.Context, m *km.KnowledgeModel, record, field string) (string, error) {
	var b strings.Builder
	b.WriteString(filterGrammar)
	fmt.Fprintf(&b, "\nExamples from knowledge model %s:\n", m.ID)
	n := 0
	found := record == ""
	for _, rec := range m.Records {
		if n >= 6 {
			break
		}
		if record != "" && rec.ID != record {
			continue
		}
		found = true
		res, err := s.svc.Query(ctx, m.ID, &km.Request{Record: rec.ID, AllFields: true, PageSize: 1})
		if err != nil {
			return "", err
		}
		if len(res.Rows) == 0 {
			continue
		}
		for i, f := range rec.Fields {
			if res.Rows[0][i].Null || n >= 6 || field != "" && f.ID != field {
				continue
			}
			v, err := plain(res.Rows[0][i])
			if err != nil {
				return "", err
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
	if !found {
		return "", problem.New(http.StatusNotFound, km.CodeRecordNotFound, "knowledge model "+m.ID+" has no record "+strconv.Quote(record))
	}
	return b.String(), nil
}

// plain returns v as the answers write it, decoded: a string, a json.Number or a bool.
func plain(v query.Value) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(jsonenc.AppendJSON(nil, v)))
	dec.UseNumber()
	var out any
	err := dec.Decode(&out)
	return out, err
}

// codeResourceNotFound is the code of "resource not found" of the protocol versions
// 2024-11-05 to 2025-11-25 (their resources page, Error Handling); from 2026-07-28 on it
// is Invalid params (-32602, SEP-2164), the SDK's code for every version.
const codeResourceNotFound = -32002

// versionCode returns err, or, when it is the SDK's "resource not found" and req came
// in a protocol version before 2026-07-28, the same error with the code that version
// specifies. A request of the sessionless draft (2026-07-28) has no initialize
// parameters.
func versionCode(req sdk.Request, err error) error {
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || we.Message != "Resource not found" {
		return err
	}
	ss, _ := req.GetSession().(*sdk.ServerSession)
	if ss == nil {
		return err
	}
	if ip := ss.InitializeParams(); ip == nil || ip.ProtocolVersion >= "2026-07-28" {
		return err
	}
	return &jsonrpc.Error{Code: codeResourceNotFound, Message: we.Message, Data: we.Data}
}

// notFound is the "resource not found" error of uri. The SDK writes the URI into the
// error's data, and drops the answer when the URI holds a control character: such a
// URI is written quoted, its control characters escaped.
func notFound(uri string) error {
	if strings.ContainsFunc(uri, unicode.IsControl) {
		uri = strconv.QuoteToASCII(uri)
	}
	return sdk.ResourceNotFoundError(uri)
}
