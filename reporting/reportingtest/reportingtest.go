// Package reportingtest is the conformance suite of reporting.Store implementations: every
// backend runs the same tests, so that the handler behaves alike over each of them.
//
// A backend's test calls Run with a function that returns a new, empty store:
//
//	func TestConformance(t *testing.T) {
//		reportingtest.Run(t, func(t *testing.T) reportingtest.Store { return mybackend.New(t) })
//	}
package reportingtest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kmkit/kmkit/reporting"
)

// Store is a reporting.Store that tests can fill.
type Store interface {
	reporting.Store
	// PutTenant replaces the elements of tenant, or returns the reporting.Validate error
	// of elements and changes nothing.
	PutTenant(tenant string, elements []reporting.Element) error
}

// The tenants the suite uses, in canonical lower-case form as the handler passes them.
const (
	TenantA = "7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f"
	TenantB = "c0ffee00-1234-4abc-8def-0123456789ab"
)

// Run runs every test of the suite as a subtest of t, each on a store from newStore.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name string
		f    func(*testing.T, Store)
	}{
		{"Order", testOrder},
		{"Elements", testElements},
		{"Facets", testFacets},
		{"Tenants", testTenants},
		{"Replace", testReplace},
		{"Invalid", testInvalid},
		{"Nested", testNested},
		{"Concurrent", testConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.f(t, newStore(t)) })
	}
}

// element returns an element with the given identity members and a name in two languages.
func element(facet string, ordering, n int) reporting.Element {
	return reporting.Element{
		Identity: reporting.Identity{
			FacetName: facet,
			Ordering:  ordering,
			ID:        fmt.Sprintf("00000000-0000-4000-8000-%012d", n),
		},
		Attributes: reporting.Attributes{"name": {"en": fmt.Sprintf("%s %d", facet, n), "de": fmt.Sprintf("%s %d (de)", facet, n)}},
	}
}

func put(t *testing.T, s Store, tenant string, elements ...reporting.Element) {
	t.Helper()
	if err := s.PutTenant(tenant, elements); err != nil {
		t.Fatalf("PutTenant(%s): %v", tenant, err)
	}
}

// equateEmpty lets a store return nil or an empty slice for an empty page.
var equateEmpty = cmpopts.EquateEmpty()

func wantElements(t *testing.T, s Store, tenant string, q reporting.ElementQuery, total int, want ...reporting.Element) {
	t.Helper()
	got, gotTotal, err := s.Elements(context.Background(), tenant, q)
	if err != nil {
		t.Fatalf("Elements(%s, %+v): %v", tenant, q, err)
	}
	if gotTotal != total {
		t.Errorf("Elements(%s, %+v): total %d, want %d", tenant, q, gotTotal, total)
	}
	if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
		t.Errorf("Elements(%s, %+v) (-want +got):\n%s", tenant, q, diff)
	}
}

func wantFacets(t *testing.T, s Store, tenant string, skip, take, total int, want ...string) {
	t.Helper()
	got, gotTotal, err := s.Facets(context.Background(), tenant, skip, take)
	if err != nil {
		t.Fatalf("Facets(%s, %d, %d): %v", tenant, skip, take, err)
	}
	if gotTotal != total {
		t.Errorf("Facets(%s, %d, %d): total %d, want %d", tenant, skip, take, gotTotal, total)
	}
	var facets []reporting.Facet
	for _, name := range want {
		facets = append(facets, reporting.Facet{Name: name})
	}
	if diff := cmp.Diff(facets, got, equateEmpty); diff != "" {
		t.Errorf("Facets(%s, %d, %d) (-want +got):\n%s", tenant, skip, take, diff)
	}
}

// testOrder puts elements out of order and expects them by facetName, ordering, id,
// variantId and versionId, byte by byte.
func testOrder(t *testing.T, s Store) {
	p0, p1, p1b := element("Processes", 0, 3), element("Processes", 1, 1), element("Processes", 1, 2)
	p1v, p1w := p1, p1
	p1v.VariantID = "00000000-0000-4000-8000-000000000009"
	p1w.VariantID, p1w.VersionID = p1v.VariantID, "00000000-0000-4000-8000-000000000001"
	neg, upper, lower := element("Processes", -5, 7), element("Roles", 0, 4), element("roles", 0, 5)
	spaced := element("IT Systems", 3, 6)
	put(t, s, TenantA, lower, p1w, upper, p1, spaced, p1b, p0, neg, p1v)
	wantElements(t, s, TenantA, reporting.ElementQuery{Take: 100}, 9, spaced, neg, p0, p1, p1v, p1w, p1b, upper, lower)
}

func testElements(t *testing.T, s Store) {
	p := []reporting.Element{element("Processes", 0, 1), element("Processes", 1, 2), element("Processes", 2, 3), element("Processes", 3, 4)}
	r := element("Roles", 0, 5)
	put(t, s, TenantA, append([]reporting.Element{r}, p...)...)
	tests := []struct {
		q     reporting.ElementQuery
		total int
		want  []reporting.Element
	}{
		{reporting.ElementQuery{Take: 100}, 5, append(p[:4:4], r)},
		{reporting.ElementQuery{Skip: 3, Take: 1}, 5, p[3:4]},
		{reporting.ElementQuery{FacetName: "Processes", Take: 100}, 4, p},
		{reporting.ElementQuery{FacetName: "Processes", Skip: 1, Take: 2}, 4, p[1:3]},
		{reporting.ElementQuery{FacetName: "Processes", Skip: 3, Take: 2}, 4, p[3:]},
		{reporting.ElementQuery{FacetName: "Processes", Skip: 4, Take: 2}, 4, nil},
		{reporting.ElementQuery{FacetName: "Processes", Skip: 1 << 62, Take: 100}, 4, nil},
		{reporting.ElementQuery{FacetName: "Processes", Take: 1 << 62}, 4, p},
		{reporting.ElementQuery{FacetName: "Processes", Take: 0}, 4, nil},
		{reporting.ElementQuery{FacetName: "processes", Take: 100}, 0, nil},
		{reporting.ElementQuery{FacetName: "Process", Take: 100}, 0, nil},
		{reporting.ElementQuery{FacetName: "Roles", Take: 100}, 1, []reporting.Element{r}},
	}
	for _, tt := range tests {
		wantElements(t, s, TenantA, tt.q, tt.total, tt.want...)
	}
}

func testFacets(t *testing.T, s Store) {
	put(t, s, TenantA, element("Roles", 0, 1), element("IT Systems", 0, 2), element("Roles", 1, 3),
		element("Documents", 0, 4), element("documents", 0, 5), element("Processes", 0, 6))
	wantFacets(t, s, TenantA, 0, 100, 5, "Documents", "IT Systems", "Processes", "Roles", "documents")
	wantFacets(t, s, TenantA, 1, 2, 5, "IT Systems", "Processes")
	wantFacets(t, s, TenantA, 4, 2, 5, "documents")
	wantFacets(t, s, TenantA, 5, 2, 5)
	wantFacets(t, s, TenantA, 0, 0, 5)
	wantFacets(t, s, TenantA, 1<<62, 1<<62, 5)
}

// testTenants checks that tenants never see each other's elements or facets, and that a
// tenant without data has none.
func testTenants(t *testing.T, s Store) {
	a, b := element("Roles", 0, 1), element("Documents", 0, 2)
	put(t, s, TenantA, a)
	put(t, s, TenantB, b)
	wantElements(t, s, TenantA, reporting.ElementQuery{Take: 100}, 1, a)
	wantElements(t, s, TenantB, reporting.ElementQuery{Take: 100}, 1, b)
	wantElements(t, s, TenantA, reporting.ElementQuery{FacetName: "Documents", Take: 100}, 0)
	wantFacets(t, s, TenantA, 0, 100, 1, "Roles")
	wantFacets(t, s, TenantB, 0, 100, 1, "Documents")
	const nobody = "00000000-0000-0000-0000-000000000000"
	wantElements(t, s, nobody, reporting.ElementQuery{Take: 100}, 0)
	wantFacets(t, s, nobody, 0, 100, 0)
}

// testReplace checks that PutTenant replaces a tenant's data as a whole, and that an empty
// list leaves the tenant without elements.
func testReplace(t *testing.T, s Store) {
	put(t, s, TenantA, element("Roles", 0, 1), element("Roles", 1, 2))
	put(t, s, TenantB, element("Documents", 0, 3))
	next := element("Processes", 0, 4)
	put(t, s, TenantA, next)
	wantElements(t, s, TenantA, reporting.ElementQuery{Take: 100}, 1, next)
	wantFacets(t, s, TenantA, 0, 100, 1, "Processes")
	put(t, s, TenantA)
	wantElements(t, s, TenantA, reporting.ElementQuery{Take: 100}, 0)
	wantFacets(t, s, TenantA, 0, 100, 0)
	wantElements(t, s, TenantB, reporting.ElementQuery{Take: 100}, 1, element("Documents", 0, 3))
}

// testInvalid checks that a list Validate refuses changes nothing.
func testInvalid(t *testing.T, s Store) {
	a := element("Roles", 0, 1)
	put(t, s, TenantA, a)
	bad := element("Roles", 1, 2)
	bad.VersionID = "v2"
	err := s.PutTenant(TenantA, []reporting.Element{element("Roles", 2, 3), bad})
	want := reporting.Validate([]reporting.Element{element("Roles", 2, 3), bad})
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Fatalf("PutTenant of an invalid list: %v, want %v", err, want)
	}
	wantElements(t, s, TenantA, reporting.ElementQuery{Take: 100}, 1, a)
}

// testNested checks that an element with every collection, nested variants with their own
// versions, content of elements and strings, and relations comes back unchanged.
func testNested(t *testing.T, s Store) {
	ref := func(n int) reporting.Reference {
		return reporting.Reference{Identity: element("Roles", n, n).Identity, IsReference: true, IsRootNode: n == 0}
	}
	version := func(n int) reporting.Element {
		v := element("Processes", 0, 1)
		v.VersionID = fmt.Sprintf("00000000-0000-4000-9000-%012d", n)
		v.State = "Archived"
		return v
	}
	e := element("Processes", 0, 1)
	e.ContainerPermaLink, e.PermaLink, e.State, e.Stereotype, e.Type = "https://x/c", "https://x/e/1", "Released", "Process", "process"
	e.CreationID, e.VariantDefinitionID = "00000000-0000-4000-a000-000000000001", "00000000-0000-4000-b000-000000000001"
	e.VariantID, e.VersionID = "00000000-0000-4000-c000-000000000001", "00000000-0000-4000-9000-000000000003"
	e.Attributes["description"] = map[string]string{"en": "Order handling", "de": "Auftragsabwicklung"}
	nested := element("Activities", 0, 9)
	e.Content = []reporting.Content{{Text: "Intro"}, {Element: &nested}}
	e.Related = map[string][]reporting.Reference{"performedBy": {ref(1), ref(2)}, "uses": {}}
	e.Children = []reporting.Reference{ref(3)}
	e.RootPath = []reporting.Reference{ref(0)}
	e.IsMasterVariant, e.SupportsVariants, e.SupportsVersions = true, true, true
	variant := element("Processes", 0, 1)
	variant.VariantID = "00000000-0000-4000-c000-000000000002"
	variant.Versions = []reporting.Element{version(1)}
	e.Variants = []reporting.Element{variant}
	e.Versions = []reporting.Element{version(1), version(2)}
	put(t, s, TenantA, e)
	wantElements(t, s, TenantA, reporting.ElementQuery{Take: 1}, 1, e)
}

// testConcurrent replaces a tenant's data while others read it: every read must see one
// whole data set, and the race detector must stay quiet.
func testConcurrent(t *testing.T, s Store) {
	set := func(facet string, n int) []reporting.Element {
		elements := make([]reporting.Element, n)
		for i := range elements {
			elements[i] = element(facet, i, i)
		}
		return elements
	}
	sets := [][]reporting.Element{set("Old", 30), set("New", 50)}
	put(t, s, TenantA, sets[0]...)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 100 {
				if w == 0 {
					if err := s.PutTenant(TenantA, sets[i%2]); err != nil {
						t.Error(err)
						return
					}
					continue
				}
				page, total, err := s.Elements(ctx, TenantA, reporting.ElementQuery{Skip: i % 40, Take: 10})
				if err != nil {
					t.Error(err)
					return
				}
				for _, e := range page {
					if (e.FacetName == "Old") != (total == 30) {
						t.Errorf("an element of facet %s in a result of %d", e.FacetName, total)
						return
					}
				}
				if _, _, err := s.Facets(ctx, TenantA, 0, 10); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
