package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/mcp"
)

// FuzzQueryTool sends arbitrary filter, sort, field and search text through the query
// tool: every answer is rows or a client error (4xx problem), never an internal error.
func FuzzQueryTool(f *testing.F) {
	for _, s := range [][4]string{
		{"NET gt 50", "-NET", "ID", ""},
		{"STATUS eq 'PAID' and not LATE eq 0", "DAY", "STATUS", "paid"},
		{"contains(STATUS, 'A') or NET in (1, 2.5)", "+ID,-NET", "NET", "x"},
		{"(((", "", "", ""},
		{"CUSTOMERS.COUNTRY eq DE", "CREATED", "ID,CUST", "ö"},
		{"DAY ge 2025-02-01 and CREATED lt 2025-03-01T00:00:00Z", "-", "EXPRESS", "\x00"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	st := loadStore(f)
	cs := connect(f, mcp.NewHandler(st).MCPServer(nil))
	f.Fuzz(func(t *testing.T, filter, sort, field, term string) {
		args := map[string]any{"km": "shop-base", "record": "ORDERS", "filterExpr": []string{filter}, "sort": []string{sort}, "fields": []string{field}}
		if term != "" {
			args["search"] = map[string]any{"term": term}
		}
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ToolQuery, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			return
		}
		var p struct {
			Status    int
			ErrorCode string
		}
		txt := res.Content[0].(*sdk.TextContent).Text
		if json.Unmarshal([]byte(txt), &p) != nil {
			return // an argument the SDK's schema validation refused
		}
		if p.Status < 400 || p.Status > 499 {
			t.Fatalf("%q %q %q %q: %s", filter, sort, field, term, txt)
		}
	})
}
