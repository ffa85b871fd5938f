package odata

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/kmkit/kmkit/internal/jsonenc"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// $expand follows navigation properties, nested down to MaxExpandLevels. For a page of
// parent entities each expanded property is asked for once through km.Service, filtered
// by an in list of the page's values of the join field (split into lists of at most the
// filter limits' MaxIn values, each paged through at the Service's page size), and the
// related rows are merged into their parents in Go: never one request per entity. A
// nested $expand is filled the same way from the related rows its parents show (after
// their nested $skip and $top), one request per property per level. Nested $top, $skip
// and $count apply per parent, over the related rows in their nested $orderby (then key)
// order. The related rows of one answer, all levels together, are bounded by
// WithMaxExpandedEntities.

// expansion is one $expand item, planned and then filled.
type expansion struct {
	nav navProp
	sel []string
	o   *QueryOptions
	// eq is the related record's query; parentCol the parent's column of the join
	// field, childCol the related query's column of it.
	eq                  *entityQuery
	parentCol, childCol int
	// sub are the nested $expand items, planned against the related entity type.
	sub []*expansion
	// rows are the related rows; byKey the indexes of those of each join value.
	rows  [][]query.Value
	byKey map[joinKey][]int
	// pushed is set when the store applied the nested $skip and $top (one parent);
	// total is then the related rows' count, asked with them when $count is.
	pushed bool
	total  int
}

// planExpand checks the $expand items of o against et and plans their queries (and
// those of their nested items); the join fields of the parent join eq's fields.
func (h *Handler) planExpand(m *km.KnowledgeModel, et *entityType, o *QueryOptions, eq *entityQuery) ([]*expansion, error) {
	var out []*expansion
	for _, it := range o.Expand {
		nav, ok := navigation(m, et.rec.ID, it.Nav)
		if !ok {
			return nil, withTarget(badOption(query.CodeFieldNotFound, "$expand: entity type %s has no navigation property %s%s", et.name, it.Nav, navHint(m, et.rec.ID)), "$expand")
		}
		if it.Levels > 1 {
			// A KM relationship never joins a record with itself (km's loader refuses
			// it), so no navigation property leads back to its own entity type.
			return nil, withTarget(badOption(problem.CodeParameterIllegal, "$expand=%s($levels=%d): %s leads to entity type %s, not back to %s, so it cannot recurse; $levels=1 or max expands it once", it.Nav, it.Levels, it.Nav, nav.target, et.name), "$expand")
		}
		no := it.Options
		if !nav.many && (no.OrderBy != nil || no.Top >= 0 || no.Skip != 0 || no.Count) {
			return nil, withTarget(badOption(problem.CodeParameterIllegal, "$expand=%s: %s is single-valued; it takes nested $select, $filter and $expand only", it.Nav, it.Nav), "$expand")
		}
		parentField, childField := nav.rel.To.Field, nav.rel.From.Field
		if !nav.many {
			parentField, childField = childField, parentField
		}
		target := entityTypeOf(m, nav.target)
		sub := *no
		sub.Top, sub.Skip, sub.Count = -1, 0, false
		ceq, err := h.planEntities(m, target, &sub)
		if err != nil {
			return nil, err
		}
		// A stable order to page through: the nested $orderby, then the key (the row
		// position for a generated one) unless the $orderby has it.
		key := target.fieldName(target.key)
		if !slices.ContainsFunc(ceq.q.Sort, func(k query.SortTerm) bool { return k.Expr == nil && k.Field == key }) {
			ceq.q.Sort = append(ceq.q.Sort, query.SortTerm{Field: key})
			ceq.q.Fields, _ = fieldIndex(ceq.q.Fields, key)
		}
		ex := &expansion{nav: nav, sel: no.Select, o: no, eq: ceq}
		ceq.q.Fields, ex.childCol = fieldIndex(ceq.q.Fields, childField)
		eq.q.Fields, ex.parentCol = fieldIndex(eq.q.Fields, parentField)
		if ex.sub, err = h.planExpand(m, target, no, ceq); err != nil {
			return nil, err
		}
		out = append(out, ex)
	}
	return out, nil
}

// fieldIndex returns fields with name appended unless it is there, and its index.
func fieldIndex(fields []string, name string) ([]string, int) {
	for i, f := range fields {
		if f == name {
			return fields, i
		}
	}
	return append(fields, name), len(fields)
}

// expandAll fills the expansions exps for the parent rows, then their nested items for
// the related rows each parent shows, level by level. left is what remains of the
// answer's bound on related rows.
func (h *Handler) expandAll(ctx context.Context, m *km.KnowledgeModel, exps []*expansion, parents [][]query.Value, left *int) error {
	for _, ex := range exps {
		if err := h.fill(ctx, m, ex, parents, left); err != nil {
			return err
		}
		if ex.sub == nil {
			continue
		}
		var shown [][]query.Value
		for _, r := range parents {
			idx, _ := ex.related(r)
			for _, i := range idx {
				shown = append(shown, ex.rows[i])
			}
		}
		if err := h.expandAll(ctx, m, ex.sub, shown, left); err != nil {
			return err
		}
	}
	return nil
}

// fill asks for the related rows of the parent rows, in lists of at most maxIn join
// values, each paged through, taking their number from left; beyond it the answer is
// tooManyExpanded. A to-many property of a single parent (an entity by key, a page of
// one) has its nested $skip, $top and $count asked of the store instead, so that a few
// related rows of a large set are read alone.
func (h *Handler) fill(ctx context.Context, m *km.KnowledgeModel, ex *expansion, parents [][]query.Value, left *int) error {
	ex.byKey = map[joinKey][]int{}
	seen := map[joinKey]bool{}
	var keys []query.Value
	for _, r := range parents {
		v := r[ex.parentCol]
		if v.Null || seen[keyOf(v)] {
			continue
		}
		seen[keyOf(v)] = true
		keys = append(keys, v)
	}
	ex.pushed = len(keys) == 1 && ex.nav.many
	maxIn := h.svc.FilterLimits().MaxIn
	if maxIn <= 0 {
		maxIn = query.DefaultMaxIn
	}
	childField := ex.eq.q.Fields[ex.childCol]
	where := ex.eq.q.Where
	for start := 0; start < len(keys); start += maxIn {
		chunk := keys[start:min(start+maxIn, len(keys))]
		in := &query.In{At: query.NoPos, Field: query.FieldRef{At: query.NoPos, Name: childField, Type: chunk[0].Type}}
		for _, v := range chunk {
			in.Values = append(in.Values, query.Literal{At: query.NoPos, Value: v})
		}
		q := *ex.eq
		q.q.Where = append(append([]query.Expr(nil), where...), in)
		if err := h.readRelated(ctx, m, ex, &q, left); err != nil {
			return err
		}
	}
	return nil
}

// readRelated pages through the rows of q, the related rows of some parents, at the
// Service's page size and adds them to ex; for a pushed expansion from its nested $skip,
// at most its nested $top of them, and their count. Each page asks for at most one row
// beyond what left allows, which is enough to know the bound is passed.
func (h *Handler) readRelated(ctx context.Context, m *km.KnowledgeModel, ex *expansion, q *entityQuery, left *int) error {
	size := max(h.svc.MaxPageSize(), 1)
	from, upto := 0, -1 // the first row to read and how many at most (-1: all)
	if ex.pushed {
		from, upto = ex.o.Skip, ex.o.Top
	}
	for read := 0; ; {
		n := min(size, *left+1)
		if upto >= 0 {
			n = min(n, upto-read)
		}
		count := ex.pushed && ex.o.Count && read == 0
		if n <= 0 && !count {
			return nil
		}
		q.q.Skip, q.q.PageSize, q.q.Count = from+read, max(n, 1), count
		res, err := h.query(ctx, m, q)
		if err != nil {
			return err
		}
		if count {
			ex.total = res.Count
		}
		rows := res.Rows
		if n <= 0 {
			rows = nil // $top=0: the count alone
		}
		if *left -= len(rows); *left < 0 {
			return tooManyExpanded(h.opts.MaxExpanded)
		}
		for _, r := range rows {
			k := keyOf(r[ex.childCol])
			ex.byKey[k] = append(ex.byKey[k], len(ex.rows))
			ex.rows = append(ex.rows, r)
		}
		read += len(rows)
		if len(rows) < n || n <= 0 {
			return nil
		}
	}
}

// tooManyExpanded is the 400 of an answer whose expanded entities pass the bound n.
func tooManyExpanded(n int) error {
	return withTarget(badOption(problem.CodeConstraint, "$expand brings more than %d related entities into one answer; ask for fewer entities per page (Prefer: odata.maxpagesize=N or $top), narrow the nested $filter, or expand fewer properties", n), "$expand")
}

// joinKey is a map key for a join value: its type and the member of query.Value that
// type uses (Int for integers, dates, date-times and times), so that no key is built
// as text.
type joinKey struct {
	t query.Type
	s string
	i int64
	f float64
	b bool
}

// keyOf returns the joinKey of v.
func keyOf(v query.Value) joinKey {
	switch v.Type {
	case query.TypeString:
		return joinKey{t: v.Type, s: v.Str}
	case query.TypeFloat:
		return joinKey{t: v.Type, f: v.Float}
	case query.TypeBoolean:
		return joinKey{t: v.Type, b: v.Bool}
	}
	return joinKey{t: v.Type, i: v.Int}
}

// related returns the indexes of the related rows of parent row r, after the nested
// $skip and $top, and their number before them.
func (ex *expansion) related(r []query.Value) ([]int, int) {
	v := r[ex.parentCol]
	if v.Null {
		return nil, 0
	}
	all := ex.byKey[keyOf(v)]
	if ex.pushed {
		return all, ex.total
	}
	n := len(all)
	s := min(ex.o.Skip, n)
	all = all[s:]
	if ex.o.Top >= 0 && ex.o.Top < len(all) {
		all = all[:ex.o.Top]
	}
	return all, n
}

// related returns the page of ex's related rows, encoded as pg is.
func (pg *page) related(ex *expansion) *page {
	return &page{eq: ex.eq, rows: ex.rows, root: pg.root, ieee754: pg.ieee754, meta: pg.meta, expand: ex.sub}
}

// appendExpanded appends the expanded navigation properties of parent row r as JSON
// members (each preceded by a comma): null or the entity for a to-one property, the
// array of entities (and NAV@odata.count when asked) for a to-many one.
func (pg *page) appendExpanded(b []byte, r []query.Value) []byte {
	for _, ex := range pg.expand {
		idx, n := ex.related(r)
		child := pg.related(ex)
		keys := child.jsonKeys()
		if ex.nav.many && ex.o.Count {
			b = append(b, ',')
			b = jsonenc.AppendStringNoHTMLEscape(b, ex.nav.name+"@odata.count")
			b = append(b, ':')
			if pg.ieee754 {
				b = strconv.AppendQuote(b, strconv.Itoa(n))
			} else {
				b = strconv.AppendInt(b, int64(n), 10)
			}
		}
		b = append(b, ',')
		b = jsonenc.AppendStringNoHTMLEscape(b, ex.nav.name)
		b = append(b, ':')
		if !ex.nav.many {
			if len(idx) == 0 {
				b = append(b, "null"...)
				continue
			}
			b = append(b, '{')
			b = child.appendEntityBody(b, keys, idx[0])
			b = append(b, '}')
			continue
		}
		b = append(b, '[')
		for k, i := range idx {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			b = child.appendEntityBody(b, keys, i)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return b
}

// appendExpandContext appends the expanded items of the context URL's select list, as
// OData 4.01 writes them: NAV(nested select list, nested expanded items), NAV() without
// either.
func appendExpandContext(b []byte, expand []*expansion, first bool) []byte {
	for _, ex := range expand {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, ex.nav.name...)
		b = append(b, '(')
		for i, s := range ex.sel {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, s...)
		}
		b = appendExpandContext(b, ex.sub, len(ex.sel) == 0)
		b = append(b, ')')
	}
	return b
}

// atomNav is an expanded navigation property of the entries an atomEncoder writes: the
// page of its related rows and their encoder.
type atomNav struct {
	ex   *expansion
	pg   *page
	enc  *atomEncoder
	open []byte // the link element's start tag up to its href's value
}

// atomNavs returns the encoders of the expanded properties of pg's entries.
func (pg *page) atomNavs(now time.Time) []atomNav {
	navs := make([]atomNav, len(pg.expand))
	for k, ex := range pg.expand {
		child := pg.related(ex)
		kind := "entry"
		if ex.nav.many {
			kind = "feed"
		}
		open := `<link rel="http://docs.oasis-open.org/odata/ns/related/` + ex.nav.name + `" type="application/atom+xml;type=` + kind + `" title="` + ex.nav.name + `" href="`
		navs[k] = atomNav{ex: ex, pg: child, enc: child.atomEncoder(now), open: []byte(open)}
	}
	return navs
}

// appendAtomLinks appends the expanded navigation properties of entity i of pg (whose
// key literal is key) as OData's Atom format writes them: a link to the property
// (SET(key)/NAV) holding m:inline, with the related entry (empty for none) of a to-one
// property, or an inline feed of the related entries (with m:count when asked) of a
// to-many one.
func (enc *atomEncoder) appendAtomLinks(b []byte, pg *page, i int, key []byte) []byte {
	r := pg.rows[i]
	for _, nav := range enc.navs {
		idx, n := nav.ex.related(r)
		b = append(b, nav.open...)
		b = append(b, pg.eq.et.set...)
		b = append(b, '(')
		b = appendEscapedASCII(b, key)
		b = append(b, ')', '/')
		b = append(b, nav.ex.nav.name...)
		b = append(b, `">`...)
		if !nav.ex.nav.many {
			if len(idx) == 0 {
				b = append(b, `<m:inline/></link>`...)
				continue
			}
			b = append(b, `<m:inline>`...)
			b = nav.enc.appendEntry(b, nav.pg, idx[0], false)
			b = append(b, `</m:inline></link>`...)
			continue
		}
		b = append(b, `<m:inline><feed><id>`...)
		b = append(b, enc.idPrefix...)
		b = appendEscapedASCII(b, key)
		b = append(b, ')', '/')
		b = append(b, nav.ex.nav.name...)
		b = append(b, `</id><title type="text">`...)
		b = append(b, nav.ex.nav.name...)
		b = append(b, `</title><updated>`...)
		b = append(b, enc.updated...)
		b = append(b, `</updated><author><name/></author>`...)
		if nav.ex.o.Count {
			b = append(b, `<m:count>`...)
			b = strconv.AppendInt(b, int64(n), 10)
			b = append(b, `</m:count>`...)
		}
		for _, j := range idx {
			b = nav.enc.appendEntry(b, nav.pg, j, false)
		}
		b = append(b, `</feed></m:inline></link>`...)
	}
	return b
}
