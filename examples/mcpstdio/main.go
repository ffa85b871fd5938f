// Command mcpstdio serves the MCP tools over the Knowledge Models (package mcp) on stdin
// and stdout, for desktop agent hosts that start their MCP servers as programs (Claude
// Desktop, IDEs). It serves the KMs of a data directory (models/*.yaml and data/*.csv, as
// the reference server's -data), or the demo KMs of the reference server when none is given.
//
//	go build -o kmkit-mcp ./examples/mcpstdio
//
// and in the host's configuration (Claude Desktop's claude_desktop_config.json):
//
//	{"mcpServers": {"kmkit": {"command": "/path/to/kmkit-mcp", "args": ["-data", "/path/to/data"]}}}
//
// Logs go to stderr; stdout carries only the protocol.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/mcp"
	"github.com/kmkit/kmkit/principal"
	"github.com/kmkit/kmkit/storage/memory"
)

func main() {
	data := flag.String("data", "", "a data directory (models/*.yaml, data/*.csv); default: the generated demo KM")
	rows := flag.Int("demo-rows", 0, "orders of the generated demo KM (0: the embedded demo data)")
	team := flag.String("team", "", "serve the KMs of this team only (default: every KM)")
	maxRows := flag.Int("max-rows", mcp.DefaultMaxRows, "most rows one tool answer may ask for")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	store, err := open(*data, *rows)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpstdio:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := serve(ctx, store, *team, *maxRows, logger, &sdk.StdioTransport{}); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "mcpstdio:", err)
		os.Exit(1)
	}
}

// open loads the data directory, or the demo KMs (n generated orders; 0: the embedded data).
func open(dir string, n int) (km.Store, error) {
	if dir != "" {
		s := memory.New().KM()
		if err := s.Import(context.Background(), os.DirFS(dir)); err != nil {
			return nil, err
		}
		return s, nil
	}
	return demostore.Store(n)
}

// serve runs the MCP server over store on transport t until the client disconnects or ctx
// ends; with team set the calls run as a principal of that team.
func serve(ctx context.Context, store km.Store, team string, maxRows int, logger *slog.Logger, t sdk.Transport) error {
	var p *principal.Principal
	if team != "" {
		p = &principal.Principal{Name: "stdio", Team: team, Permissions: []principal.Permission{principal.PermMCP}}
	}
	srv := mcp.NewHandler(store, mcp.WithMaxRows(maxRows), mcp.WithLogger(logger)).MCPServer(p)
	return srv.Run(ctx, t)
}
