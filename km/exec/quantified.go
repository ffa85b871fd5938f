package exec

import (
	"context"
	"fmt"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/column"
)

// A query.Quantified node of a conjunct (OData's any and all, km.Quantifier) is computed
// before the conjunct's expression is compiled: the rows of its Record where its body is
// true (any) or not true (all), a bitmap of the body's own conjunct (holds), are carried
// up its Down path to the rows of its Parent that have such a related row: for any the
// rows where it is true, for all the complement. The expression then reads that bitmap
// through the frame's join index to Parent, like a column of Parent. The values travel
// to compileFilter in the context (quantifiedKey), so the shared, cached frames stay
// untouched.

// quantifiedValue is the value of one Quantified node over its Parent's rows.
type quantifiedValue struct {
	// set holds the rows of Parent where the node is true.
	set column.Bitmap
	// key is a column of Parent in the conjunct's frame ("PARENT.FIELD"), whose join
	// index maps a frame row to its Parent row.
	key string
}

// quantifiedKey is the context key of a conjunct's map[*query.Quantified]quantifiedValue.
type quantifiedKey struct{}

// withQuantified returns ctx carrying the values of cj's Quantified nodes, or ctx when it
// has none.
func (s *Source) withQuantified(ctx context.Context, cj *km.Conjunct) (context.Context, error) {
	if len(cj.Quantifiers) == 0 {
		return ctx, nil
	}
	vals := make(map[*query.Quantified]quantifiedValue, len(cj.Quantifiers))
	for x, q := range cj.Quantifiers {
		t, err := s.table(x.Record)
		if err != nil {
			return nil, err
		}
		// related: the rows of Record where the body is true (every row without a body).
		var related column.Bitmap
		if q.Body != nil {
			if related, err = s.holds(ctx, q.Body); err != nil {
				return nil, err
			}
		} else {
			related = complement(column.NewBitmap(t.Rows()), nil, t.Rows())
		}
		if x.All {
			related = complement(related, nil, t.Rows()) // the rows where the body is not true
		}
		up := make(km.Path, len(q.Down))
		for i, st := range q.Down {
			up[len(q.Down)-1-i] = st.Reverse()
		}
		set, err := s.carry(related, up)
		if err != nil {
			return nil, err
		}
		if x.All {
			pt, err := s.table(x.Parent)
			if err != nil {
				return nil, err
			}
			set = complement(set, nil, pt.Rows())
		}
		vals[x] = quantifiedValue{set: set, key: x.Parent + "." + q.Down[0].FromField}
	}
	return context.WithValue(ctx, quantifiedKey{}, vals), nil
}

// compileQuantified compiles a Quantified node whose value withQuantified put in ctx. A
// frame row without a Parent row (a missing parent) has no related rows: false for any,
// true for all. The value is never unknown.
func (f *Frame) compileQuantified(ctx context.Context, e *query.Quantified) (pred, error) {
	vals, _ := ctx.Value(quantifiedKey{}).(map[*query.Quantified]quantifiedValue)
	v, ok := vals[e]
	if !ok {
		return nil, fmt.Errorf("exec: %w: %s/%s(...) outside its conjunct", ErrInvalidRequest, e.Record, e.Operator())
	}
	c, err := f.lookup(v.key)
	if err != nil {
		return nil, err
	}
	return func() truth {
		out := truth{t: column.NewBitmap(f.rows), f: column.NewBitmap(f.rows)}
		if ctx.Err() != nil {
			return out
		}
		for r := range f.rows {
			pr := c.row(int32(r))
			if pr < 0 && e.All || pr >= 0 && v.set.Get(int(pr)) {
				out.t.Set(r)
			} else {
				out.f.Set(r)
			}
		}
		return out
	}, nil
}
