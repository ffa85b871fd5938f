package kmkit_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAPIsDoNotDependOnAuth checks that the API packages read the caller from package
// principal and link neither the auth middleware nor JWT: a host serving only SCIM or
// the reporting API, behind its own authentication, builds without them, and so does a
// program using the memory backend or the metrics.
func TestAPIsDoNotDependOnAuth(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	forbidden := []string{"github.com/kmkit/kmkit/auth", "github.com/golang-jwt/jwt"}
	for _, pkg := range []string{"./scim", "./scim/scimhttp", "./reporting", "./reporting/reportinghttp", "./km", "./km/kmhttp", "./odata", "./mcp", "./principal", "./storage/memory", "./metrics"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 {
			t.Fatalf("go list -deps %s listed nothing", pkg)
		}
		for _, dep := range deps {
			for _, f := range forbidden {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}

// httpFree lists the domain and backend packages that must link no HTTP server code, no
// OpenAPI and no JWT: a program using a Store and a backend builds without them
// (database/sql and database/sql/driver split the same way). The leaf packages a backend
// imports (outage, problem, principal) are among them.
var httpFree = []string{"./km", "./km/exec", "./query/...", "./scim", "./scim/scimtest", "./reporting", "./stats", "./problem", "./principal",
	"./outage", "./storage/memory", "./storage/sqlstore"}

// forbiddenInDomain are the packages (and their sub-packages) httpFree must not link: the
// HTTP server, OpenAPI, JWT, and web/..., the HTTP pieces the API handlers share.
var forbiddenInDomain = []string{"net/http", "github.com/getkin/kin-openapi", "github.com/golang-jwt", "github.com/kmkit/kmkit/web"}

// TestDomainLinksNoHTTP checks the split of the APIs into domain packages and HTTP
// adapters (km and km/kmhttp, scim and scim/scimhttp, reporting and
// reporting/reportinghttp, query and internal/rawquery): the packages of httpFree reach
// none of forbiddenInDomain through their imports.
func TestDomainLinksNoHTTP(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	for _, pkg := range httpFree {
		checkNoHTTP(t, pkg)
	}
}

// checkNoHTTP walks the import graph of the packages pkg names (go list -deps) and reports
// every path to a forbidden package.
func checkNoHTTP(t *testing.T, pkg string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{if not .DepOnly}}root{{end}} | {{join .Imports \" \"}}", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	imports := map[string][]string{}
	var roots []string
	for line := range strings.Lines(string(out)) {
		head, deps, _ := strings.Cut(line, "|")
		name, root, _ := strings.Cut(strings.TrimSpace(head), " ")
		imports[name] = strings.Fields(deps)
		if root == "root" {
			roots = append(roots, name)
		}
	}
	if len(roots) == 0 {
		t.Fatalf("go list -deps %s listed no package", pkg)
	}
	forbidden := func(p string) bool {
		for _, f := range forbiddenInDomain {
			if p == f || strings.HasPrefix(p, f+"/") {
				return true
			}
		}
		return false
	}
	for _, root := range roots {
		// Breadth-first from root, remembering how each package was reached.
		from := map[string]string{root: ""}
		queue := []string{root}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if forbidden(p) {
				chain := p
				for q := from[p]; q != ""; q = from[q] {
					chain = q + " -> " + chain
				}
				t.Errorf("%s links %s: %s", root, p, chain)
				continue
			}
			for _, d := range imports[p] {
				if _, seen := from[d]; seen {
					continue
				}
				from[d] = p
				queue = append(queue, d)
			}
		}
	}
}

// surfacePackages are the packages that ask the request layer of the domain (km.Service) and
// must neither drive the KM API's handler nor reach a particular store (issue 27): a
// surface that links km/kmhttp builds another adapter's input or reads its output. The
// conformance suite (storage/storetest) asks the Service as they do, and a suite that
// linked the memory backend could take it for its oracle.
var surfacePackages = []string{"./mcp", "./odata", "./storage/storetest"}

// TestSurfacesAskTheDomain checks with go list -deps that the surfaces import neither
// km/kmhttp nor storage/memory.
func TestSurfacesAskTheDomain(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	for _, pkg := range surfacePackages {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == "github.com/kmkit/kmkit/km/kmhttp" || dep == "github.com/kmkit/kmkit/storage/memory" {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}
