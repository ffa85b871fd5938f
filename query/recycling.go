package query

import "context"

// Recycling lets the caller of a query take part in recycling the memory of its results:
// a caller that will not use a result's rows (nor the values read from them; the strings
// stay valid) after some point puts a Recycling on the query's context
// (WithRecycling) and calls Release at that point; a store that recycles memory
// (the memory store's executor, for small pages) lends it to the Recycling it finds on
// the context (RecyclingFrom) instead of allocating it per query. Without a Recycling
// on the context a result's memory is the caller's, collected as usual.
//
// A Recycling belongs to one request and is not safe for concurrent use.
type Recycling struct {
	lent  []Recyclable
	first [2]Recyclable // lent's first backing array, in the same allocation
}

// Recyclable is memory a store lends to a query's results until the caller's Release.
type Recyclable interface {
	// Recycle takes the memory back; the results holding it are not read any more.
	Recycle()
}

type recyclingKey struct{}

// WithRecycling returns ctx carrying r, for a store's Query.
func WithRecycling(ctx context.Context, r *Recycling) context.Context {
	return context.WithValue(ctx, recyclingKey{}, r)
}

// RecyclingFrom returns the Recycling on ctx, or nil.
func RecyclingFrom(ctx context.Context) *Recycling {
	r, _ := ctx.Value(recyclingKey{}).(*Recycling)
	return r
}

// Lend records that x is in use by the caller's results until Release.
func (r *Recycling) Lend(x Recyclable) {
	if r.lent == nil {
		r.lent = r.first[:0]
	}
	r.lent = append(r.lent, x)
}

// Release hands back everything lent: the results of the queries made with r are not
// read after it. r may be used again.
func (r *Recycling) Release() {
	for i, x := range r.lent {
		x.Recycle()
		r.lent[i] = nil
	}
	r.lent = r.lent[:0]
}

// Lent returns how many pieces of memory are lent to r's results now.
func (r *Recycling) Lent() int { return len(r.lent) }
