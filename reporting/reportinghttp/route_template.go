package reportinghttp

// RouteTemplate returns path when the handler serves it (ElementsPath or FacetsPath), else
// "". Metrics and logs label requests with it.
func RouteTemplate(path string) string {
	if path == ElementsPath || path == FacetsPath {
		return path
	}
	return ""
}
