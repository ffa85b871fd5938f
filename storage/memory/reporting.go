package memory

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/kmkit/kmkit/reporting"
)

// ReportingStore is the in-memory reporting.Store. Each tenant's elements are an immutable
// snapshot, sorted once when put, so a page is a slice of it; readers never wait for one
// another and a PutTenant never shows a reader half of a data set.
type ReportingStore struct {
	mu      sync.RWMutex
	tenants map[string]*reportingTenant
}

// reportingTenant is the snapshot of one tenant: all elements in reporting order, the
// same elements split by facet, and the sorted facet list.
type reportingTenant struct {
	all     []reporting.Element
	byFacet map[string][]reporting.Element
	facets  []reporting.Facet
}

var _ reporting.Store = (*ReportingStore)(nil)

// newReportingStore returns an empty store (DB.Reporting).
func newReportingStore() *ReportingStore {
	return &ReportingStore{tenants: map[string]*reportingTenant{}}
}

// PutTenant replaces the elements of tenant (matched case-insensitively) with
// elements after checking them with reporting.Validate. The store keeps its own copy of the
// list but shares the elements' maps and nested slices: the caller must not modify them
// afterwards.
func (s *ReportingStore) PutTenant(tenant string, elements []reporting.Element) error {
	if err := reporting.Validate(elements); err != nil {
		return err
	}
	// Sort pointers, not the elements themselves: an element is a few hundred bytes to move.
	order := make([]*reporting.Element, len(elements))
	for i := range elements {
		order[i] = &elements[i]
	}
	slices.SortFunc(order, reporting.CompareElements)
	all := make([]reporting.Element, len(order))
	for i, e := range order {
		all[i] = *e
	}
	t := &reportingTenant{all: all, byFacet: map[string][]reporting.Element{}}
	// all is sorted by facetName first, so each facet is one run of it.
	for start := 0; start < len(all); {
		name := all[start].FacetName
		end := start + 1
		for end < len(all) && all[end].FacetName == name {
			end++
		}
		t.byFacet[name] = all[start:end:end]
		t.facets = append(t.facets, reporting.Facet{Name: name})
		start = end
	}
	s.mu.Lock()
	s.tenants[strings.ToLower(tenant)] = t
	s.mu.Unlock()
	return nil
}

// DeleteTenant removes every element of tenant.
func (s *ReportingStore) DeleteTenant(tenant string) {
	s.mu.Lock()
	delete(s.tenants, strings.ToLower(tenant))
	s.mu.Unlock()
}

func (s *ReportingStore) tenant(id string) *reportingTenant {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if t, ok := s.tenants[id]; ok {
		return t
	}
	return s.tenants[strings.ToLower(id)]
}

// Elements implements reporting.Store.
func (s *ReportingStore) Elements(ctx context.Context, tenant string, q reporting.ElementQuery) ([]reporting.Element, int, error) {
	t := s.tenant(tenant)
	if t == nil {
		return []reporting.Element{}, 0, nil
	}
	matches := t.all
	if q.FacetName != "" {
		matches = t.byFacet[q.FacetName]
	}
	return reportingPage(matches, q.Skip, q.Take), len(matches), nil
}

// Facets implements reporting.Store.
func (s *ReportingStore) Facets(ctx context.Context, tenant string, skip, take int) ([]reporting.Facet, int, error) {
	t := s.tenant(tenant)
	if t == nil {
		return []reporting.Facet{}, 0, nil
	}
	return reportingPage(t.facets, skip, take), len(t.facets), nil
}

// reportingPage returns the items of s after skipping skip of them, at most take; negative
// arguments count as 0. The result is a view of s without spare capacity, so that an
// append to it cannot write into s; as the Store contract says, its items are read-only.
func reportingPage[T any](s []T, skip, take int) []T {
	start := min(max(skip, 0), len(s))
	n := min(max(take, 0), len(s)-start)
	return s[start : start+n : start+n]
}
