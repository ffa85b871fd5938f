package kmhttp_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kmkit/kmkit/internal/nodetools"
)

// The generated specs must also pass @apidevtools/swagger-parser (npm), the validator many
// OpenAPI tools build on. The package lives in swaggerparser/ (npm ci there). Without it
// the test skips, unless KMKIT_SPEC_TOOLS names that directory: .ci/run sets it after
// installing the package, and then a missing tool fails the test.

// swaggerParserDir returns the directory holding validate.js and its node_modules.
func swaggerParserDir(t *testing.T) string {
	t.Helper()
	return nodetools.Dir(t, "KMKIT_SPEC_TOOLS", "swaggerparser", []string{"@apidevtools/swagger-parser"})
}

func TestSpecPassesSwaggerParser(t *testing.T) {
	tools := swaggerParserDir(t)
	tmp := t.TempDir()
	var files []string
	save := func(h http.Handler, kmID, rawQuery, ext string) {
		w := getSpec(t, h, kmID, rawQuery, "")
		if w.Code != 200 {
			t.Fatalf("spec %s?%s: status %d: %s", kmID, rawQuery, w.Code, w.Body)
		}
		name := filepath.Join(tmp, kmID+"-"+strings.NewReplacer("=", "-", "&", "-").Replace(rawQuery)+"."+ext)
		if err := os.WriteFile(name, w.Body.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	demo := demoHandler(t)
	for _, curated := range []string{"false", "true"} {
		save(shop(t), "shop", "curated="+curated, "json")
		save(shop(t), "shop", "curated="+curated+"&format=yml", "yaml")
		save(demo, "o2c", "curated="+curated, "json")
		save(demo, "o2c", "curated="+curated+"&format=yml", "yaml")
	}
	save(demo, "o2c-base", "", "json")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(tools, "validate.js")}, files...)...)
	cmd.Dir = tools
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("swagger-parser: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "ok "); n != len(files) {
		t.Fatalf("swagger-parser validated %d of %d files:\n%s", n, len(files), out)
	}
	t.Logf("%s", out)

	// Control: a document with a dangling $ref and a path without responses fails.
	bad := filepath.Join(tmp, "bad.json")
	doc := `{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Nope"}}}}}}}}}`
	if err := os.WriteFile(bad, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = exec.CommandContext(ctx, "node", filepath.Join(tools, "validate.js"), bad)
	cmd.Dir = tools
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "invalid ") {
		t.Fatalf("swagger-parser accepted a dangling $ref (err %v):\n%s", err, out)
	}
}
