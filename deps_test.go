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
	for _, pkg := range []string{"./scim", "./reporting", "./km", "./odata", "./mcp", "./principal", "./storage/memory", "./metrics"} {
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

// TestSCIMAndReportingDomainsLinkNoHTTP checks the split of the SCIM and reporting APIs
// into their domain and an HTTP adapter (scim/scimhttp, reporting/reportinghttp): a
// backend or a program that only stores users, groups or elements imports the domain
// packages and links no net/http, no JWT and no OpenAPI code. The adapters link no auth.
func TestSCIMAndReportingDomainsLinkNoHTTP(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	domain := []string{"net/http", "github.com/golang-jwt", "github.com/getkin/kin-openapi"}
	adapter := []string{"github.com/kmkit/kmkit/auth", "github.com/golang-jwt"}
	for pkg, forbidden := range map[string][]string{
		"./scim":                    domain,
		"./reporting":               domain,
		"./scim/scimhttp":           adapter,
		"./reporting/reportinghttp": adapter,
	} {
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
