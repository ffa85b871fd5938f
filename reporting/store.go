package reporting

import "context"

// ElementQuery asks a Store for one page of a tenant's elements.
type ElementQuery struct {
	// FacetName restricts the result to the elements whose facetName equals it exactly;
	// "" means every element.
	FacetName string
	// Skip is the number of matching elements to pass over (0 or more).
	Skip int
	// Take is the most elements to return (0 or more).
	Take int
}

// Store holds the elements of every tenant. Implementations must be safe for concurrent use.
//
// Both methods return the page asked for and the number of all matches, in the order
// CompareElements defines for elements and by name (byte by byte) for facets. A tenant
// the store knows nothing about has no elements and no facets; that is not an error.
// Returned pages and their elements may share memory with the store (the memory store
// returns views of its data, so that serving a page allocates nothing) and must not be
// modified.
type Store interface {
	// Elements returns the page q asks of the tenant's elements and how many match q.
	Elements(ctx context.Context, tenant string, q ElementQuery) (page []Element, total int, err error)
	// Facets returns take facets of the tenant after skipping skip of them, and how many
	// there are: one per distinct facetName among the tenant's elements.
	Facets(ctx context.Context, tenant string, skip, take int) (page []Facet, total int, err error)
}
