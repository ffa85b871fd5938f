package scimhttp

import "testing"

func TestRouteTemplate(t *testing.T) {
	h := NewHandler(nil)
	const p = BasePath
	tests := map[string]string{
		p + "/Users":                 p + "/Users",
		p + "/Users/":                p + "/Users",
		p + "/Users/8f1c":            p + "/Users/{id}",
		p + "/Users/.search":         p + "/Users/.search",
		p + "/Groups/8f1c":           p + "/Groups/{id}",
		p + "/Groups":                p + "/Groups",
		p + "/ServiceProviderConfig": p + "/ServiceProviderConfig",
		p + "/Bulk":                  p + "/Bulk",
		p + "/Schemas":               p + "/Schemas",
		p + "/Schemas/urn:x":         p + "/Schemas/{id}",
		p + "/ResourceTypes/User":    p + "/ResourceTypes/{id}",
		p + "/Users/a/b":             "",
		p + "/Bulk/x":                "",
		p + "/Nothing":               "",
		p + "X/Users":                "",
		"/elsewhere":                 "",
	}
	for path, want := range tests {
		if got := h.RouteTemplate(path); got != want {
			t.Errorf("RouteTemplate(%q) = %q, want %q", path, got, want)
		}
	}
	if got := NewHandler(nil, WithPrefix("/scim/")).RouteTemplate("/scim/Users/1"); got != "/scim/Users/{id}" {
		t.Errorf("with a prefix: %q", got)
	}
}
