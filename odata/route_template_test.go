package odata

import "testing"

func TestRouteTemplate(t *testing.T) {
	const base = "/intelligence/api/odata"
	tests := map[string]string{
		base + "/o2c.svc":                                  base + "/{km_id}.svc/",
		base + "/o2c.svc/":                                 base + "/{km_id}.svc/",
		base + "/o2c.svc/$metadata":                        base + "/{km_id}.svc/$metadata",
		base + "/o2c.svc/ORDERS_entries":                   base + "/{km_id}.svc/{entity_set}",
		base + "/o2c.svc/ORDERS_entries/$count":            base + "/{km_id}.svc/{entity_set}/$count",
		base + "/o2c.svc/ORDERS_entries('SO-1')":           base + "/{km_id}.svc/{entity_set}({key})",
		base + "/o2c.svc/$batch":                           base + "/{km_id}.svc/$batch",
		base + "/o2c.svc/ORDERS_entries('SO-1')/CUSTOMERS": base + "/{km_id}.svc/{entity_set}({key})/{navigation}",
		base + "/o2c.svc/ORDERS_entries('SO-1')/A/B":       "",
		base + "/o2c.svc/nothing":                          "",
		base + "/o2c":                                      "",
		base + "/":                                         "",
	}
	for path, want := range tests {
		if got := RouteTemplate(path); got != want {
			t.Errorf("RouteTemplate(%q) = %q, want %q", path, got, want)
		}
	}
}
