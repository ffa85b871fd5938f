package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/kmkit/kmkit/auth/idptest"
	"github.com/kmkit/kmkit/mcp"
)

// TestMCPSignInWithOAuth: the official Go SDK's MCP client, given only the endpoint and an
// OAuth client id, signs in by itself: its first call gets a 401 whose Bearer challenge
// names the protected resource metadata, which names the test IdP; the client reads the
// IdP's discovery document, runs the authorization code flow with PKCE asking for a token
// for the MCP resource (RFC 8707), and calls the tools with it. The server accepts only
// tokens whose audience is its MCP endpoint, so the sign-in went through the metadata.
func TestMCPSignInWithOAuth(t *testing.T) {
	idp := idptest.New(t)
	idp.UserClaims = map[string]any{"org": map[string]any{"id": "acme"}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	keys := filepath.Join(t.TempDir(), "keys.yaml")
	data := fmt.Sprintf(`jwt:
  issuers:
    - issuer: %s
      audience: %s
      claims: {team: org.id, permissions: [scp]}
      scopes: {kmkit.agent: [km, mcp]}
`, idp.URL(), base+mcp.BasePath)
	if err := os.WriteFile(keys, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newTestApp(t, config{keysFile: keys, db: "memory:", burst: -1, concurrency: -1})
	t.Cleanup(func() { a.close() })
	srv := httptest.NewUnstartedServer(a.handler)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var authorizeURL *url.URL
	handler, err := sdkauth.NewAuthorizationCodeHandler(&sdkauth.AuthorizationCodeHandlerConfig{
		PreregisteredClient: &oauthex.ClientCredentials{ClientID: "agent-host"},
		RedirectURL:         "http://127.0.0.1:1/callback",
		// The user's browser: the IdP signs the user in at once and redirects back.
		AuthorizationCodeFetcher: func(ctx context.Context, args *sdkauth.AuthorizationArgs) (*sdkauth.AuthorizationResult, error) {
			authorizeURL, _ = url.Parse(args.URL)
			resp, err := noRedirect.Get(args.URL)
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil || resp.StatusCode != http.StatusFound {
				return nil, fmt.Errorf("authorize: %d %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			return &sdkauth.AuthorizationResult{Code: loc.Query().Get("code"), State: loc.Query().Get("state")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + mcp.BasePath, OAuthHandler: handler, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect with OAuth: %v", err)
	}
	defer cs.Close()
	if authorizeURL == nil {
		t.Fatal("the client never went to the IdP")
	}
	q := authorizeURL.Query()
	if authorizeURL.Scheme+"://"+authorizeURL.Host != idp.URL() || q.Get("resource") != base+mcp.BasePath || q.Get("scope") != "kmkit.agent" {
		t.Errorf("authorization request %s: want the IdP, resource %s and scope kmkit.agent", authorizeURL, base+mcp.BasePath)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolQuery, Arguments: map[string]any{
		"km": "o2c", "record": "ORDERS", "fields": []string{"ORDER_ID"}, "sort": []string{"ORDER_ID"}, "pageSize": 2}})
	if err != nil || res.IsError {
		t.Fatalf("query with the token: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out struct{ Rows []map[string]any }
	if err := json.Unmarshal(b, &out); err != nil || len(out.Rows) != 2 {
		t.Errorf("rows %s", b)
	}
	// A token for another audience (the IdP's default) is refused by the same endpoint.
	tok := idp.Token(t, "RS256", idp.Claims("x", map[string]any{"org": map[string]any{"id": "acme"}, "scp": "kmkit.agent"}))
	if status, _, body := call(t, "POST", base+mcp.BasePath, tok, mcpInitialize); status != 401 {
		t.Errorf("a token for another audience: %d %s", status, body)
	}
}
