package reportinghttp

import "testing"

func TestRouteTemplate(t *testing.T) {
	tests := map[string]string{
		"/api/v1/elements": "/api/v1/elements", "/api/v1/facets": "/api/v1/facets",
		"/api/v1/elements/x": "", "/api/v1/": "",
	}
	for path, want := range tests {
		if got := RouteTemplate(path); got != want {
			t.Errorf("RouteTemplate(%q) = %q, want %q", path, got, want)
		}
	}
}
