package odata

import (
	"strings"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// Lambdas: PATH/any(x: BODY) and PATH/all(x: BODY) on a to-many navigation path become a
// query.Quantified node, which the plan evaluates anywhere in $filter (under and, or and
// not): for each row of the entity set, over its related rows of the path's record
// (CHILD), reached along the path, which must be the one the KM joins the two records
// along. In BODY, x/FIELD is CHILD.FIELD, x/NAV/FIELD a field reached from the related
// row through to-one navigation properties, and the outer entity's properties (bare
// names) are its fields, read from the related row through the same relationships.
// Nulls follow the filters' three-valued logic: any counts a related row only where BODY
// is true; all fails on a related row where BODY is false or null (there is no related
// row where BODY is not true). Neither is ever null: with no related rows any is false
// and all is true, as OData says. PATH/any() (no body) holds where there is a related
// row.
//
// A path that starts with to-one properties (ITEMS/ORDERS/ACTIVITIES/any(...)) quantifies
// over the related rows of the last entity it reaches (the item's order); its body may
// not read the outer entity's properties then (501), which no row of CHILD reaches. A
// lambda inside a lambda's body is 501.

// resolveLambdas rewrites the lambdas of an unbound $filter on record rec into Quantified
// nodes (see above), before resolvePaths runs: it resolves the paths inside lambda
// bodies itself.
func resolveLambdas(m *km.KnowledgeModel, rec string, e query.Expr) (query.Expr, error) {
	switch x := e.(type) {
	case *query.Logical:
		l, err := resolveLambdas(m, rec, x.L)
		if err != nil {
			return nil, err
		}
		r, err := resolveLambdas(m, rec, x.R)
		if err != nil {
			return nil, err
		}
		return &query.Logical{At: x.At, Op: x.Op, L: l, R: r}, nil
	case *query.Not:
		inner, err := resolveLambdas(m, rec, x.X)
		if err != nil {
			return nil, err
		}
		return &query.Not{At: x.At, X: inner}, nil
	case *query.Lambda:
		return quantified(m, rec, x)
	}
	return e, nil
}

// quantified compiles PATH/any(VAR: BODY) or PATH/all(VAR: BODY) on record rec.
func quantified(m *km.KnowledgeModel, rec string, l *query.Lambda) (query.Expr, error) {
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
	q := &query.Quantified{At: l.At, All: l.All, Parent: steps[len(steps)-1].From, Record: cur}
	if l.Body == nil {
		return q, nil
	}
	if containsLambda(l.Body) {
		return nil, notSupported(param, "$filter: a lambda inside %s/%s(...) is not supported", l.Path, l.Operator())
	}
	child := m.Record(cur)
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
		case ok || !strings.Contains(r.Name, ".") && m.Record(rec).Field(r.Name) != nil:
			// A property of the outer entity (or a path from it): read from the related
			// row through the lambda's own path, which only a path of one step has.
			if q.Parent != rec {
				return r, notSupported(param, "$filter: the condition of %s/%s(...) reads %s, a property of the outer entity, which the rows of %s reach only through the lambda's path of to-one properties; compare it outside the lambda", l.Path, l.Operator(), r.Name, cur)
			}
			if ok {
				n, err := resolvePath(m, rec, r.Name, param)
				r.Name = n
				return r, err
			}
			r.Name = rec + "." + r.Name
		}
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	q.Body = body
	return q, nil
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
