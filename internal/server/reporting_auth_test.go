package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// TestReportingKeyBeforeTenant: the reporting API checks the key before x-tenant-id, so a
// wrong key is a 401 whether the tenant header is missing, malformed or right; a right key
// with a malformed tenant is the 400.
func TestReportingKeyBeforeTenant(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.yaml")
	data := "keys:\n  - key: \"all-key-0001\"\n    team: acme\n    tenant: 7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f\n    permissions: [reporting]\n"
	if err := os.WriteFile(keys, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newTestApp(t, config{keysFile: keys, db: "memory:"})
	defer a.close()
	const unauthorized = `{"title":"Unauthorized","status":401,"detail":"invalid application key","errorCode":"ADMIN_AUTHENTICATION_ERROR","type":"urn:kmkit:problem:ADMIN_AUTHENTICATION_ERROR"}`
	for _, tt := range []struct {
		name, key, tenant string
		status            int
		body              string
	}{
		{"wrong key, no tenant", "wrong-key", "", 401, unauthorized},
		{"wrong key, malformed tenant", "wrong-key", "acme", 401, unauthorized},
		{"wrong key, right tenant", "wrong-key", "7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f", 401, unauthorized},
		{"right key, no tenant", "all-key-0001", "", 400,
			`{"title":"Bad Request","status":400,"detail":"missing x-tenant-id header","errorCode":"GENERAL_PARAMETER_MISSING","type":"urn:kmkit:problem:GENERAL_PARAMETER_MISSING"}`},
	} {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/facets", nil)
		r.Header.Set("x-api-key", tt.key)
		if tt.tenant != "" {
			r.Header.Set("x-tenant-id", tt.tenant)
		}
		w := httptest.NewRecorder()
		a.handler.ServeHTTP(w, r)
		if w.Code != tt.status || w.Body.String() != tt.body {
			t.Errorf("%s: %d %s\nwant %d %s", tt.name, w.Code, w.Body, tt.status, tt.body)
		}
	}
}
