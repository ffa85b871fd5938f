package scimhttp

import "strings"

// RouteTemplate returns the template of the endpoint the handler serves path by, such as
// BasePath+"/Users/{id}", or "" when no endpoint has the path. Metrics and logs label
// requests with it: a fixed set of values, never a resource id.
func (h *Handler) RouteTemplate(path string) string {
	rest, ok := strings.CutPrefix(path, h.prefix)
	if !ok || (rest != "" && rest[0] != '/') {
		return ""
	}
	rest = strings.TrimSuffix(strings.TrimPrefix(rest, "/"), "/")
	first, second, sub := strings.Cut(rest, "/")
	switch first {
	case "Users", "Groups":
		switch {
		case !sub:
			return h.prefix + "/" + first
		case second == ".search":
			return h.prefix + "/" + first + "/.search"
		case !strings.Contains(second, "/"):
			return h.prefix + "/" + first + "/{id}"
		}
	case "ServiceProviderConfig", "Bulk":
		if !sub {
			return h.prefix + "/" + first
		}
	case "Schemas", "ResourceTypes":
		switch {
		case !sub:
			return h.prefix + "/" + first
		case !strings.Contains(second, "/"):
			return h.prefix + "/" + first + "/{id}"
		}
	}
	return ""
}
