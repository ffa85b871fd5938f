package mcp

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/principal"
)

// maxCompletions is the most values one completion/complete answer carries, as the MCP
// specification caps it.
const maxCompletions = 100

// completionRefs are the prompts and resource templates whose arguments complete: each
// names the arguments it has.
var completionRefs = map[sdk.CompleteReference][]string{
	{Type: "ref/prompt", Name: PromptFilterLanguage}: {"km", "record", "field"},
	{Type: "ref/resource", URI: OpenAPIURITemplate}:  {"km"},
	{Type: "ref/resource", URI: SchemaURITemplate}:   {"km"},
	{Type: "ref/resource", URI: RecordURITemplate}:   {"km", "record"},
}

// completer returns the completion/complete handler of a server whose calls run as p:
// the km argument completes to the ids of the KMs the caller sees, record to the record ids
// of the KM already chosen (the request's context arguments), field to the field ids of
// the chosen record. Values start with what the client typed (case-insensitive), sorted.
// A prompt it does not know is Invalid params; any other argument has no values.
func (s *Handler) completer(p *principal.Principal) func(context.Context, *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	return func(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
		ctx = scope(ctx, p)
		params := req.Params
		out := &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{}}}
		if params == nil || params.Ref == nil {
			return out, nil
		}
		args, known := completionRefs[sdk.CompleteReference{Type: params.Ref.Type, Name: params.Ref.Name, URI: params.Ref.URI}]
		if !known && params.Ref.Type == "ref/prompt" {
			// The completion utility's error handling: an invalid prompt name is Invalid
			// params.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown prompt " + strconv.Quote(params.Ref.Name)}
		}
		if !slices.Contains(args, params.Argument.Name) {
			return out, nil
		}
		var chosen map[string]string
		if params.Context != nil {
			chosen = params.Context.Arguments
		}
		var candidates []string
		switch params.Argument.Name {
		case "km":
			ms, err := s.svc.Models(ctx)
			if err != nil {
				return nil, s.requestError(ctx, "completion/complete", err)
			}
			for _, m := range ms {
				candidates = append(candidates, m.ID)
			}
		case "record", "field":
			m, err := s.svc.Model(ctx, chosen["km"])
			if err != nil {
				return out, nil // no KM chosen yet, or one the caller does not see: nothing to offer
			}
			candidates = recordOrFieldIDs(m, params.Argument.Name, chosen["record"])
		}
		prefix := strings.ToLower(params.Argument.Value)
		for _, c := range candidates {
			if strings.HasPrefix(strings.ToLower(c), prefix) {
				out.Completion.Values = append(out.Completion.Values, c)
			}
		}
		slices.Sort(out.Completion.Values)
		out.Completion.Values = slices.Compact(out.Completion.Values)
		out.Completion.Total = len(out.Completion.Values)
		if len(out.Completion.Values) > maxCompletions {
			out.Completion.Values = out.Completion.Values[:maxCompletions]
			out.Completion.HasMore = true
		}
		return out, nil
	}
}

// recordOrFieldIDs returns the record ids of m, or the field ids of its record rec.
func recordOrFieldIDs(m *km.KnowledgeModel, what, rec string) []string {
	var ids []string
	for _, r := range m.Records {
		switch {
		case what == "record":
			ids = append(ids, r.ID)
		case r.ID == rec:
			for _, f := range r.Fields {
				ids = append(ids, f.ID)
			}
		}
	}
	return ids
}
