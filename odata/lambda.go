package odata

import (
	"strings"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// Lambdas: PATH/any(x: BODY) on a to-many navigation path is the KM's filter across
// records. A KM filter that names fields of a child record keeps a parent row when at
// least one connected child row passes it (SPEC-NOTES, "Filters across records": a
// semi-join), which is exactly any: BODY, with x/FIELD read as CHILD.FIELD and the outer
// entity's properties as PARENT.FIELD (the child's own parent through the same
// relationships), becomes one filter conjunct whose home is the child record. Nulls follow
// the filters' three-valued logic: a child row counts only where BODY is true, so a parent
// with no children, or whose children's BODY is null, does not pass. PATH/any() (no
// body) keeps parents with at least one child.
//
// The rewrite holds where the lambda is a condition of its own, ANDed with the rest of
// $filter; inside or or not it would change meaning (a semi-join is not negated by a
// negated body), so there it is 501. all is 501 too: it is a negated semi-join (no child
// where BODY is not true), which the KM's filters cannot state.

// resolveLambdas rewrites the lambdas of an unbound $filter on record rec into KM filters
// (see above), after resolvePaths has not yet run: it resolves the paths inside lambda
// bodies itself.
func resolveLambdas(m *km.KnowledgeModel, rec string, e query.Expr) (query.Expr, error) {
	var walk func(e query.Expr, top bool) (query.Expr, error)
	walk = func(e query.Expr, top bool) (query.Expr, error) {
		switch x := e.(type) {
		case *query.Logical:
			l, err := walk(x.L, top && x.Op == query.And)
			if err != nil {
				return nil, err
			}
			r, err := walk(x.R, top && x.Op == query.And)
			if err != nil {
				return nil, err
			}
			return &query.Logical{At: x.At, Op: x.Op, L: l, R: r}, nil
		case *query.Not:
			if _, err := walk(x.X, false); err != nil {
				return nil, err
			}
			return x, nil
		case *query.Lambda:
			if x.All {
				return nil, notSupported("$filter", "$filter: %s/all(...) is not supported: the knowledge model's filters keep a record when some related row passes, not when every one does; write %s/any(...) or filter the related entity set", x.Path, x.Path)
			}
			if !top {
				return nil, notSupported("$filter", "$filter: %s/any(...) is supported as a condition ANDed with the rest of $filter, not inside or or not", x.Path)
			}
			return anyFilter(m, rec, x)
		}
		return e, nil
	}
	return walk(e, true)
}

// anyFilter rewrites PATH/any(VAR: BODY) on record rec.
func anyFilter(m *km.KnowledgeModel, rec string, l *query.Lambda) (query.Expr, error) {
	const param = "$filter"
	segs := strings.Split(l.Path, "/")
	cur := rec
	var steps []km.Step
	many := false
	for i, s := range segs {
		n, ok := navigation(m, cur, s)
		if !ok {
			if i == 0 && len(segs) == 1 && m.Record(cur).Field(s) != nil {
				return nil, withTarget(badOption(problem.CodeParameterIllegal, "$filter: %s/%s(...) needs a collection-valued navigation property; %s is a property of %s", l.Path, l.Operator(), s, cur), param)
			}
			return nil, withTarget(badOption(query.CodeFieldNotFound, "$filter: %s has no navigation property %s%s", cur, s, navHint(m, cur)), param)
		}
		if n.many && i < len(segs)-1 {
			return nil, withTarget(badOption(problem.CodeParameterIllegal, "$filter: %s is a collection; a lambda's path may only end in one: %s/any(x: x/%s/...)", strings.Join(segs[:i+1], "/"), strings.Join(segs[:i+1], "/"), strings.Join(segs[i+1:], "/")), param)
		}
		many = n.many
		steps = append(steps, n.step())
		cur = n.target
	}
	if !many {
		return nil, withTarget(badOption(problem.CodeParameterIllegal, "$filter: %s/%s(...) needs a collection; %s is a single entity: compare its properties as %s/FIELD", l.Path, l.Operator(), l.Path, l.Path), param)
	}
	if err := sameJoin(m, rec, cur, steps, l.Path, param); err != nil {
		return nil, err
	}
	child := m.Record(cur)
	if l.Body == nil {
		return someRow(l.At, child), nil
	}
	if containsLambda(l.Body) {
		return nil, notSupported(param, "$filter: a lambda inside %s/any(...) is not supported", l.Path)
	}
	body, err := query.MapFields(l.Body, func(r query.FieldRef) (query.FieldRef, error) {
		name, rel, ok := strings.Cut(r.Name, "/")
		switch {
		case ok && name == l.Var:
			if !strings.Contains(rel, "/") {
				if child.Field(rel) == nil {
					return r, withTarget(badOption(query.CodeFieldNotFound, "$filter: %s: entity type %s has no property %s", l.Path, cur, rel), param)
				}
				r.Name = cur + "." + rel
				return r, nil
			}
			n, err := resolvePath(m, cur, rel, param)
			r.Name = n
			return r, err
		case r.Name == l.Var:
			return r, withTarget(badOption(problem.CodeParameterIllegal, "$filter: %s is an entity of %s; compare its properties, as %s/FIELD", l.Var, cur, l.Var), param)
		case ok:
			n, err := resolvePath(m, rec, r.Name, param)
			r.Name = n
			return r, err
		case !strings.Contains(r.Name, "."):
			// The outer entity's property: its field, reached from the child.
			if m.Record(rec).Field(r.Name) != nil {
				r.Name = rec + "." + r.Name
			}
		}
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	named := false
	if _, err := query.MapFields(body, func(r query.FieldRef) (query.FieldRef, error) {
		named = named || strings.HasPrefix(r.Name, cur+".")
		return r, nil
	}); err != nil {
		return nil, err
	}
	if !named {
		// A body over the child's parents only (i/ORDERS/STATUS): the child is the row
		// that must exist, so the conjunct names it, true for every row of it.
		body = &query.Logical{At: l.At, Op: query.And, L: body, R: someRow(l.At, child)}
	}
	// One conjunct: the KM splits a filter at its top-level ands, and each part would be
	// a semi-join of its own (two children, not one). not (not A or not B) is A and B in
	// three-valued logic too, and is not split.
	if a, ok := body.(*query.Logical); ok && a.Op == query.And {
		body = &query.Not{At: a.At, X: &query.Logical{At: a.At, Op: query.Or, L: &query.Not{At: a.At, X: a.L}, R: &query.Not{At: a.At, X: a.R}}}
	}
	return body, nil
}

// containsLambda reports whether e holds a lambda.
func containsLambda(e query.Expr) bool {
	switch x := e.(type) {
	case *query.Logical:
		return containsLambda(x.L) || containsLambda(x.R)
	case *query.Not:
		return containsLambda(x.X)
	case *query.Lambda:
		return true
	}
	return false
}

// someRow is a condition every row of rec meets: its first field is null or not.
func someRow(at query.Pos, rec *km.Record) query.Expr {
	ref := query.FieldRef{At: at, Name: rec.ID + "." + rec.Fields[0].ID}
	return &query.Logical{At: at, Op: query.Or, L: &query.IsNull{At: at, Field: ref}, R: &query.IsNull{At: at, Field: ref, Negated: true}}
}
