package exec

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// condCache keeps, per aggregate condition (a KPI's: ratio(ORDERS.DAYS_LATE gt 0),
// sum(NET_VALUE, STATUS eq 'OPEN')), the rows of its grain where it holds, a bit a row,
// so that a KPI request does not evaluate the condition over every row again (at 1M
// orders, 4 ms of the 10 ms of a request grouping three KPIs by STATUS, on the path every
// other aggregate waits for) and its first run after a start finds it built (Source.Warm
// evaluates the conditions of the KM's KPIs). Conditions are keyed by their text, their
// parameters bound; the tables are immutable, so an entry never goes stale. It holds at
// most maxBytes of bitmaps, first come first kept: beyond that a condition is evaluated
// for its request alone, as before. Safe for concurrent use: concurrent first users of a
// condition wait for one evaluation.
type condCache struct {
	entries  sync.Map // condition key -> *lazy holding a column.Bitmap
	bytes    atomic.Int64
	maxBytes int64
}

// condCacheBytes bounds a Source's cached conditions: 4 MiB holds 32 conditions over a
// million rows.
const condCacheBytes = 4 << 20

// condKey names the condition of a by what its bitmap depends on: the grain, the
// condition's home, the joins it reads, its path to the grain and its expression, every
// literal by its bound value (the text a literal was written in, which query.Format
// writes, is empty in an expression a program built). Only comparisons, in lists,
// string functions and null tests joined by and, or and not have a key; any other node
// (a scalar expression, which may read now(); a quantifier, whose relationships the
// expression does not name) leaves the condition without one: it is then evaluated for
// its request alone.
func condKey(a *km.Aggregate) (string, bool) {
	cj := a.Cond
	if len(cj.Quantifiers) > 0 {
		return "", false
	}
	var b strings.Builder
	b.WriteString(a.Grain + "\x00" + cj.Home + "\x00")
	for _, st := range cj.Reads {
		b.WriteString(st.String() + " ")
	}
	b.WriteString("\x00" + cj.Reach[a.Grain].String() + "\x00")
	ok := appendExprKey(&b, cj.Expr)
	return b.String(), ok
}

// appendExprKey writes an exact key of e to b, or reports false when e has a node
// condKey does not key.
func appendExprKey(b *strings.Builder, e query.Expr) bool {
	field := func(f query.FieldRef) { fmt.Fprintf(b, "%q:%d ", f.Name, f.Type) }
	lit := func(l query.Literal) bool {
		v := l.Value
		fmt.Fprintf(b, "[%d %d %t %q %d %x %t]", l.Kind, v.Type, v.Null, v.Str, v.Int, math.Float64bits(v.Float), v.Bool)
		return l.Raw != "now()"
	}
	switch e := e.(type) {
	case *query.Logical:
		fmt.Fprintf(b, "(%d ", e.Op)
		ok := appendExprKey(b, e.L) && appendExprKey(b, e.R)
		b.WriteByte(')')
		return ok
	case *query.Not:
		b.WriteString("(not ")
		ok := appendExprKey(b, e.X)
		b.WriteByte(')')
		return ok
	case *query.Compare:
		fmt.Fprintf(b, "(cmp %d ", e.Op)
		field(e.Field)
		ok := lit(e.Value)
		b.WriteByte(')')
		return ok
	case *query.In:
		b.WriteString("(in ")
		field(e.Field)
		for _, v := range e.Values {
			if !lit(v) {
				return false
			}
		}
		b.WriteByte(')')
		return true
	case *query.Call:
		fmt.Fprintf(b, "(call %d ", e.Func)
		field(e.Field)
		ok := lit(e.Arg)
		b.WriteByte(')')
		return ok
	case *query.IsNull:
		fmt.Fprintf(b, "(null %t ", e.Negated)
		field(e.Field)
		b.WriteByte(')')
		return true
	}
	return false
}

// condRows returns the rows of a's grain where a's condition holds, from the cache or
// evaluated now (holds, then carried to the grain). The bitmap may be shared: read it,
// never change it. An evaluation that fails or that ctx stops is not kept.
func (s *Source) condRows(ctx context.Context, a *km.Aggregate) (column.Bitmap, error) {
	eval := func() (column.Bitmap, error) {
		home, err := s.holds(ctx, a.Cond)
		if err != nil {
			return nil, err
		}
		return s.carry(home, a.Cond.Reach[a.Grain])
	}
	key, ok := condKey(a)
	gt, err := s.table(a.Grain)
	if !ok || err != nil || s.conds == nil {
		return eval()
	}
	c := s.conds
	size := int64(8 * ((gt.Rows() + 63) / 64))
	v, found := c.entries.Load(key)
	if !found {
		if c.bytes.Add(size) > c.maxBytes {
			c.bytes.Add(-size)
			return eval() // the cache is full: this request's own
		}
		var loaded bool
		if v, loaded = c.entries.LoadOrStore(key, &lazy{}); loaded {
			c.bytes.Add(-size) // another request stored it meanwhile
		}
	}
	l := v.(*lazy)
	l.once.Do(func() {
		if l.v, l.err = eval(); l.err != nil {
			c.entries.CompareAndDelete(key, l)
			c.bytes.Add(-size)
		}
	})
	if l.err != nil {
		if ctx.Err() == nil {
			return eval() // the request that evaluated it was stopped; this one was not
		}
		return nil, l.err
	}
	return l.v.(column.Bitmap), nil
}

// warmConds evaluates the conditions of the KM's KPIs, their parameters at their
// default values, into the cache (condRows).
func (s *Source) warmConds() {
	for _, k := range s.m.KPIs {
		p, err := km.NewPlan(s.m, &km.PlanRequest{KPIs: []string{k.ID}, PageSize: 1})
		if err != nil {
			continue // left to the requests that meet it
		}
		for _, a := range p.Aggregates {
			if a.Cond != nil {
				_, _ = s.condRows(context.Background(), a)
			}
		}
	}
}
