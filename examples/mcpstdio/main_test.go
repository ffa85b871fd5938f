package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/mcp"
)

// TestServeOverPipes runs the program's server on a pair of pipes, as a desktop host runs
// it on stdin and stdout, and finds a customer by a misspelt name.
func TestServeOverPipes(t *testing.T) {
	store, err := open("../../km/testdata/shop", 0)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, store, "", 100, slog.New(slog.NewTextHandler(io.Discard, nil)), &sdk.IOTransport{Reader: inR, Writer: outW})
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolFindValues,
		Arguments: map[string]any{"km": "shop-base", "record": "CUSTOMERS", "field": "NAME", "term": "muller"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out mcp.FindResult
	if err := json.Unmarshal(b, &out); err != nil || len(out.Values) == 0 || out.Values[0] != "Müller GmbH" {
		t.Errorf("values %s", b)
	}
	cs.Close()
	cancel()
	<-done
}
