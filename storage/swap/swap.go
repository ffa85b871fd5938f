// Package swap holds a km.Store that can be replaced while it serves: a server reloads its
// Knowledge Models into a new store, checks it, and swaps it in at once, and requests
// already running finish on the store they began with.
//
// A request makes several Store calls (the model, then its query, perhaps a summary); a
// swap between two of them must not mix two generations of data. Handler pins the current
// store in each request's context, and every call with that context reaches the pinned
// store, however many swaps happen meanwhile:
//
//	live := swap.NewKMStore(first)
//	mux.Handle(kmhttp.BasePath+"/", live.Handler(kmhttp.NewHandler(live)))
//	...
//	live.Swap(next) // new requests see next; running ones keep first
//
// Calls with a context Handler did not pin see the store current at the call. The old
// store stays reachable as long as a request holds it; the garbage collector frees it
// after the last one ends (a store with resources to release must be closed by the caller
// once those requests are done).
package swap

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// KMStore is a km.Store that delegates to a replaceable store. It implements every
// optional interface of a km.Store (km.Summarizer, km.RowCounter, km.MemorySizer), each
// answered by the pinned store when it implements that interface, else as km documents
// for a store without it (km.ErrUnsupported, an unknown row count, no memory sizes). It is safe for concurrent use.
type KMStore struct {
	cur atomic.Pointer[held]
}

// held boxes a store, so that atomic.Pointer can hold any km.Store.
type held struct{ s km.Store }

// pinKey is the context key of the store pinned for one KMStore.
type pinKey struct{ s *KMStore }

// NewKMStore returns a KMStore serving s.
func NewKMStore(s km.Store) *KMStore {
	k := &KMStore{}
	k.cur.Store(&held{s})
	return k
}

// Current returns the store new requests are served from.
func (k *KMStore) Current() km.Store { return k.cur.Load().s }

// Swap makes s the store of new requests and returns the previous one.
func (k *KMStore) Swap(s km.Store) (old km.Store) { return k.cur.Swap(&held{s}).s }

// Pin returns ctx carrying the current store: calls with it reach that store even after
// a Swap.
func (k *KMStore) Pin(ctx context.Context) context.Context {
	return context.WithValue(ctx, pinKey{k}, k.cur.Load().s)
}

// Handler returns next with every request pinned to the store current at its start.
func (k *KMStore) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(k.Pin(r.Context())))
	})
}

// store returns the store pinned in ctx, else the current one.
func (k *KMStore) store(ctx context.Context) km.Store {
	if s, ok := ctx.Value(pinKey{k}).(km.Store); ok {
		return s
	}
	return k.cur.Load().s
}

// Models implements km.Store.
func (k *KMStore) Models(ctx context.Context) ([]*km.KnowledgeModel, error) {
	return k.store(ctx).Models(ctx)
}

// Model implements km.Store.
func (k *KMStore) Model(ctx context.Context, id string) (*km.KnowledgeModel, error) {
	return k.store(ctx).Model(ctx, id)
}

// Query implements km.Store.
func (k *KMStore) Query(ctx context.Context, p *km.Plan) (*query.Result, error) {
	return k.store(ctx).Query(ctx, p)
}

// Summarize implements km.Summarizer.
func (k *KMStore) Summarize(ctx context.Context, p *km.Plan) (*km.Summary, error) {
	if s, ok := k.store(ctx).(km.Summarizer); ok {
		return s.Summarize(ctx, p)
	}
	return nil, km.ErrUnsupported
}

// DistinctCounts implements km.MemorySizer: the pinned store's counts, or nil when that
// store does not run plans in memory.
func (k *KMStore) DistinctCounts(ctx context.Context, m *km.KnowledgeModel) func(record, field string) (int64, bool) {
	if ms, ok := k.store(ctx).(km.MemorySizer); ok {
		return ms.DistinctCounts(ctx, m)
	}
	return nil
}

// RowCount implements km.RowCounter: the pinned store's row count, or unknown when that
// store does not count rows.
func (k *KMStore) RowCount(ctx context.Context, m *km.KnowledgeModel, record string) (int64, bool) {
	if rc, ok := k.store(ctx).(km.RowCounter); ok {
		return rc.RowCount(ctx, m, record)
	}
	return 0, false
}
