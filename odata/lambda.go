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
// not read the outer entity's properties then (501), which no row of CHILD reaches.
//
// A lambda inside a lambda's body quantifies over a path from an enclosing lambda's
// variable (ORDERS/any(o: o/ORDER_ITEMS/any(i: i/QUANTITY gt 5))): a Quantified node in
// the body of the enclosing one, whose Parent is that variable's record. Its body reads
// its own variable's fields, an enclosing variable's (o/FIELD) and the outer entity's,
// each going up from its related row, so each lambda between must quantify straight
// from where it stands (no to-one prefix; else 501, as above). A lambda in a body whose
// path does not start at a lambda variable (the outer entity's collection, inside
// another lambda) is 501.

// lambdaVar is a variable a lambda body may name: its record, and whether the related
// rows of the body reach that variable's row going up.
type lambdaVar struct {
	rec   string
	reach bool
}

// lambdaScope is where a lambda stands: in $filter on record rec, or inside the bodies of
// the lambdas whose variables vars holds (nil at the top). The outer entity is vars[""].
type lambdaScope struct {
	rec  string
	vars map[string]lambdaVar
}

// resolveLambdas rewrites the lambdas of an unbound $filter on record rec into Quantified
// nodes (see above), before resolvePaths runs: it resolves the paths inside lambda
// bodies itself.
func resolveLambdas(m *km.KnowledgeModel, rec string, e query.Expr) (query.Expr, error) {
	return resolveIn(m, lambdaScope{rec: rec}, e)
}

// resolveIn rewrites the lambdas of e, a condition standing in sc.
func resolveIn(m *km.KnowledgeModel, sc lambdaScope, e query.Expr) (query.Expr, error) {
	switch x := e.(type) {
	case *query.Logical:
		l, err := resolveIn(m, sc, x.L)
		if err != nil {
			return nil, err
		}
		r, err := resolveIn(m, sc, x.R)
		if err != nil {
			return nil, err
		}
		return &query.Logical{At: x.At, Op: x.Op, L: l, R: r}, nil
	case *query.Not:
		inner, err := resolveIn(m, sc, x.X)
		if err != nil {
			return nil, err
		}
		return &query.Not{At: x.At, X: inner}, nil
	case *query.Lambda:
		return quantified(m, sc, x)
	}
	return e, nil
}

// rowKeyName returns the name of the row key of record rec (RECORD.#row, km.RowField)
// when prop is its generated key property: rec declares no key, and prop is the property
// its entity type names the row number with.
func rowKeyName(m *km.KnowledgeModel, rec, prop string) (string, bool) {
	r := m.Record(rec)
	if r == nil || !keyless(r) || r.Field(prop) != nil {
		return "", false
	}
	et := newEntityType(r)
	if et.props[et.key].name != prop {
		return "", false
	}
	return rec + "." + km.RowField, true
}

// isGenerated reports whether prop is the generated key property of record rec.
func isGenerated(m *km.KnowledgeModel, rec, prop string) bool {
	_, ok := rowKeyName(m, rec, prop)
	return ok
}

// generatedOuterKey is the 501 of a lambda body naming the generated key of an entity
// other than its own related one (whose, says what): the plan reads a row key only on
// the rows a condition stands on.
func generatedOuterKey(l *query.Lambda, r query.FieldRef, whose string) error {
	return notSupported("$filter", "$filter: the condition of %s/%s(...) reads %s, the generated key of %s, which a lambda's condition cannot read; compare it outside the lambda", l.Path, l.Operator(), r.Name, whose)
}

// quantified compiles PATH/any(VAR: BODY) or PATH/all(VAR: BODY) standing in sc.
func quantified(m *km.KnowledgeModel, sc lambdaScope, l *query.Lambda) (query.Expr, error) {
	const param = "$filter"
	rec := sc.rec
	segs := strings.Split(l.Path, "/")
	start := rec
	if sc.vars != nil {
		v, ok := sc.vars[segs[0]]
		if !ok || segs[0] == "" {
			return nil, notSupported(param, "$filter: %s/%s(...) inside a lambda's condition: a lambda there is supported on a path from a lambda variable (x/NAV/%s(...))", l.Path, l.Operator(), l.Operator())
		}
		if len(segs) == 1 {
			return nil, withTarget(badOption(problem.CodeParameterIllegal, "$filter: %s/%s(...) needs a collection; %s is an entity of %s", l.Path, l.Operator(), segs[0], v.rec), param)
		}
		start, segs = v.rec, segs[1:]
	}
	cur := start
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
	if err := sameJoin(m, start, cur, steps, l.Path, param); err != nil {
		return nil, err
	}
	q := &query.Quantified{At: l.At, All: l.All, Parent: steps[len(steps)-1].From, Record: cur}
	if l.Body == nil {
		return q, nil
	}
	// The variables of the body: the enclosing ones, reached from a related row when they
	// were reached from a row of start, and the lambda's own.
	direct := q.Parent == start
	vars := map[string]lambdaVar{"": {rec: rec, reach: direct}}
	for name, v := range sc.vars {
		vars[name] = lambdaVar{rec: v.rec, reach: v.reach && direct}
	}
	vars[l.Var] = lambdaVar{rec: cur, reach: true}
	body, err := resolveIn(m, lambdaScope{rec: rec, vars: vars}, l.Body)
	if err != nil {
		return nil, err
	}
	outer := func(r query.FieldRef, what string) error {
		return notSupported(param, "$filter: the condition of %s/%s(...) reads %s, %s, which the rows of %s reach only through the lambda's path of to-one properties; compare it outside the lambda", l.Path, l.Operator(), r.Name, what, cur)
	}
	body, err = query.MapFields(body, func(r query.FieldRef) (query.FieldRef, error) {
		name, rel, ok := strings.Cut(r.Name, "/")
		v, isVar := vars[name]
		switch {
		case ok && isVar && name != "":
			// A variable's property, or a path from it (x/NAV/FIELD).
			if !v.reach {
				return r, outer(r, "a property of an enclosing lambda's variable")
			}
			if !strings.Contains(rel, "/") {
				if n, isKey := rowKeyName(m, v.rec, rel); isKey {
					if name != l.Var {
						return r, generatedOuterKey(l, r, "an enclosing lambda's variable")
					}
					r.Name = n
					return r, nil
				}
				if m.Record(v.rec).Field(rel) == nil {
					return r, withTarget(badOption(query.CodeFieldNotFound, "$filter: %s: entity type %s has no property %s", l.Path, v.rec, rel), param)
				}
				r.Name = v.rec + "." + rel
				return r, nil
			}
			n, err := resolvePath(m, v.rec, rel, param)
			r.Name = n
			return r, err
		case !ok && isGenerated(m, rec, r.Name):
			return r, generatedOuterKey(l, r, "the outer entity")
		case !ok && isVar:
			return r, withTarget(badOption(problem.CodeParameterIllegal, "$filter: %s is an entity of %s; compare its properties, as %s/FIELD", name, v.rec, name), param)
		case ok || !strings.Contains(r.Name, ".") && m.Record(rec).Field(r.Name) != nil:
			// A property of the outer entity (or a path from it): read from the related
			// row going up.
			if !vars[""].reach {
				return r, outer(r, "a property of the outer entity")
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
