package kmhttp

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSortKeys pins the members each schema list sorts by: its item's string members,
// by the names the answer shows, in the order error messages list them.
func TestSortKeys(t *testing.T) {
	got := map[string][]string{
		"models":  modelSort.names,
		"filters": filterSort.names,
		"records": recordSort.names,
		"fields":  fieldSort.names,
		"kpis":    kpiSort.names,
	}
	want := map[string][]string{
		"models":  {"id", "name", "published"},
		"filters": {"id", "name", "description"},
		"records": {"id", "name", "description", "shortDisplayName", "internalNote"},
		"fields":  {"id", "name", "description", "shortDisplayName", "internalNote", "type", "format", "unit"},
		"kpis":    {"id", "name", "description", "format", "unit", "direction", "target"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sort keys (-want +got):\n%s", diff)
	}
	items := []kpiItem{{ID: "b", Unit: "EUR"}, {ID: "A", Unit: "usd"}, {ID: "c", Unit: "eur"}}
	if s, err := sortItems(items, []string{"-unit"}, kpiSort); err != nil || s != "-unit" {
		t.Fatalf("sortItems: %q, %v", s, err)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	if diff := cmp.Diff([]string{"A", "b", "c"}, ids); diff != "" {
		t.Errorf("sorted by -unit, case-insensitively, ties in order (-want +got):\n%s", diff)
	}
}
