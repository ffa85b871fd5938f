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
