// Package nodetools finds the npm tools that tests run as real consumers of kmkit's output
// (OData metadata validators and clients, an OpenAPI validator).
//
// The tools live in a directory with a package.json and a committed package-lock.json;
// `npm ci` there installs them. Without them a test skips, unless the environment variable
// that names the directory is set: .ci/run sets it after installing the tools, and then a
// missing tool fails the test instead of hiding it.
package nodetools

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Dir returns the absolute path of the tools directory: the value of env when set, else
// dir. It checks that each npm package of packages is installed there and each command of
// commands (besides node) is on PATH; when one is missing, it fails t if env is set and
// skips t otherwise.
func Dir(t testing.TB, env, dir string, packages []string, commands ...string) string {
	t.Helper()
	d, required := os.LookupEnv(env)
	if !required || d == "" {
		d, required = dir, false
	}
	abs, err := filepath.Abs(d)
	if err != nil {
		t.Fatal(err)
	}
	missing := func(what string, err error) {
		t.Helper()
		if required {
			t.Fatalf("%s=%s: %s: %v", env, d, what, err)
		}
		t.Skipf("%s not installed (npm ci in %s): %v", what, dir, err)
	}
	for _, pkg := range packages {
		if _, err := os.Stat(filepath.Join(abs, "node_modules", pkg, "package.json")); err != nil {
			missing("npm package "+pkg, err)
		}
	}
	for _, c := range append([]string{"node"}, commands...) {
		if _, err := exec.LookPath(c); err != nil {
			missing(c, err)
		}
	}
	return abs
}
