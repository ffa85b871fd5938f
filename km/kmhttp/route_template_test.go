package kmhttp

import "testing"

func TestRouteTemplate(t *testing.T) {
	const kms = "/intelligence/api/knowledge-models"
	tests := map[string]string{
		kms:                                   kms,
		kms + "/":                             kms,
		kms + "/o2c":                          kms + "/{km_id}",
		kms + "/o2c/filters":                  kms + "/{km_id}/filters",
		kms + "/o2c/records":                  kms + "/{km_id}/records",
		kms + "/o2c/kpis":                     kms + "/{km_id}/kpis",
		kms + "/o2c/data":                     kms + "/{km_id}/data",
		kms + "/o2c/query":                    kms + "/{km_id}/query",
		kms + "/o2c/spec":                     kms + "/{km_id}/spec",
		kms + "/o2c/records/ORDERS":           kms + "/{km_id}/records/{record_id}",
		kms + "/o2c/records/ORDERS/data":      kms + "/{km_id}/records/{record_id}/data",
		kms + "/o2c/records/ORDERS/query":     kms + "/{km_id}/records/{record_id}/query",
		kms + "/o2c/records/ORDERS/summary":   kms + "/{km_id}/records/{record_id}/summary",
		kms + "/o2c/records/ORDERS/other":     "",
		kms + "/o2c/nothing":                  "",
		kms + "//records":                     "",
		"/intelligence/api/other":             "",
		"/intelligence/api/knowledge-modelsX": "",
	}
	for path, want := range tests {
		if got := RouteTemplate(path); got != want {
			t.Errorf("RouteTemplate(%q) = %q, want %q", path, got, want)
		}
	}
	// Every endpoint has a template.
	for ep := epModels; ep <= epSpec; ep++ {
		if routeTemplates[ep] == "" {
			t.Errorf("endpoint %d has no template", ep)
		}
	}
}
