package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/kmkit/kmkit/auth/keysfile"
	"github.com/kmkit/kmkit/mcp"
)

// TestDeployFiles checks what can be checked of the container files without a docker
// engine (CI builds the image where one answers): the compose demo's keys file is valid
// and its key reaches every API through this server, the compose file runs two replicas
// on PostgreSQL behind the proxy, and the image runs as non-root with a health check.
func TestDeployFiles(t *testing.T) {
	keys, err := keysfile.Load("../../deploy/keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Authenticator(); err != nil {
		t.Fatal(err)
	}
	a := newTestApp(t, config{keysFile: "../../deploy/keys.yaml", burst: -1, concurrency: -1})
	for _, target := range []string{"/intelligence/api/knowledge-models", "/intelligence/api/odata/o2c.svc/", "/user-provisioning/scim/v2/Users", "/api/v1/facets", "/metrics"} {
		if w := request(a.handler, http.MethodGet, target, "change-me-kmkit-demo-key", nil); w.Code != 200 {
			t.Errorf("GET %s with the compose key: %d %s", target, w.Code, w.Body)
		}
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	r := httptest.NewRequest(http.MethodPost, mcp.BasePath, strings.NewReader(initialize))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "AppKey change-me-kmkit-demo-key")
	w := httptest.NewRecorder()
	a.handler.ServeHTTP(w, r)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"serverInfo"`) {
		t.Errorf("MCP initialize with the compose key: %d %s", w.Code, w.Body)
	}
	conf, err := os.ReadFile("../../deploy/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(conf), "location /mcp {") || !strings.Contains(string(conf), "proxy_buffering off;") {
		t.Error("nginx.conf does not pass /mcp through unbuffered (MCP answers may be server-sent events)")
	}

	data, err := os.ReadFile("../../deploy/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image       string                 `yaml:"image"`
			Deploy      struct{ Replicas int } `yaml:"deploy"`
			Environment map[string]string      `yaml:"environment"`
			Ports       []string               `yaml:"ports"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &compose); err != nil {
		t.Fatal(err)
	}
	km, pg, proxy := compose.Services["kmkit"], compose.Services["postgres"], compose.Services["proxy"]
	if km.Deploy.Replicas != 2 || !strings.HasPrefix(km.Environment["KMKIT_DB"], "postgres://") || km.Environment["KMKIT_KEYS"] == "" {
		t.Errorf("kmkit service: %+v", km)
	}
	if !strings.HasPrefix(pg.Image, "postgres:") || !strings.HasPrefix(proxy.Image, "nginx:") || len(proxy.Ports) != 1 {
		t.Errorf("postgres %+v, proxy %+v", pg, proxy)
	}
	if _, err := parseConfig(nil, func(k string) string { return km.Environment[k] }, io.Discard); err != nil {
		t.Errorf("the compose environment is not a valid configuration: %v", err)
	}

	dockerfile, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FROM gcr.io/distroless/static", "USER nonroot", "HEALTHCHECK", `"-healthcheck"`, "./cmd/kmkit", "CGO_ENABLED=0"} {
		if !strings.Contains(string(dockerfile), want) {
			t.Errorf("Dockerfile lacks %s", want)
		}
	}
}
