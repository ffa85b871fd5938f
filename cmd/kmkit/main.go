// Command kmkit is the kmkit reference server: the Knowledge Model API with its OData
// service, SCIM 2.0 provisioning and the reporting API on one port, from an embedded demo,
// a data directory, SQLite or PostgreSQL. Install it with
//
//	go install github.com/kmkit/kmkit/cmd/kmkit@latest
//
// and run kmkit -help for its flags (package internal/server documents them), or
// kmkit -version for the build.
package main

import (
	"os"

	"github.com/kmkit/kmkit/internal/server"
)

func main() { os.Exit(server.Main("kmkit")) }
