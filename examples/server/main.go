// Command server runs the kmkit reference server (package internal/server; installed as
// cmd/kmkit): every API on :8080 with the embedded demo and a printed development key.
//
//	go run ./examples/server
package main

import (
	"os"

	"github.com/kmkit/kmkit/internal/server"
)

func main() { os.Exit(server.Main("server")) }
