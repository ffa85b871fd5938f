package odata

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// $apply (OData Extension for Data Aggregation 4.0) is compiled into one km.Request at
// the Knowledge Model level, the request GET .../data?fields=...&kpis=... makes: grouping
// properties are its fields (RECORD.FIELD), custom aggregates are the KM's KPIs, the
// aggregates "P with sum as A" (min, max, average, countdistinct) and "$count as A" are
// KPIs made for the request (km.KnowledgeModel.AdHocKPI), filter(...) steps before the
// aggregation are its filters. So the same plan and the same grain rule hold on every store.
// See the package documentation for the supported forms; the rest of the grammar is 501.

// Apply is a parsed $apply: filter steps, then at most one aggregation (groupby with or
// without aggregate, or aggregate alone), then at most one topcount or bottomcount. The
// shapes outside it are refused by ParseApply.
type Apply struct {
	// Text is the option as given.
	Text string
	// Filters are the filter(...) steps before the aggregation (unbound), ANDed.
	Filters []query.Expr
	// GroupBy lists the grouping properties as written: a property, a navigation path
	// (CUSTOMERS/COUNTRY) or a Knowledge Model field (CUSTOMERS.COUNTRY). Grouped is true
	// when a groupby step is present.
	GroupBy []string
	Grouped bool
	// Aggregates are the aggregate expressions, in order.
	Aggregates []ApplyAggregate
	// Top is the topcount (or bottomcount) after the aggregation, nil without one.
	Top *ApplyTop
	// GroupCount is the alias of "groupby(...)/aggregate($count as ALIAS)": the answer is
	// one entity holding the number of groups (ag-grid-odata asks it so); "" without.
	GroupCount string
	// Concat are the branches of a final concat(...) step, each a $apply of its own with
	// the filter steps before concat as its first ones; the answer is their answers one
	// after the other. The other members are then empty.
	Concat []*Apply
}

// ApplyAggregate is one aggregate expression of $apply.
type ApplyAggregate struct {
	// Alias is the property of the answer: the "as" alias, or the custom aggregate's name.
	Alias string
	// Path is the aggregated property (with Method), or the KPI id of a custom
	// aggregate (Method ""); "" for $count.
	Path string
	// Method is sum, min, max, average or countdistinct; "" for a custom aggregate or
	// $count.
	Method string
	// Count is "$count as Alias".
	Count bool
}

// ApplyTop is topcount(N, P) or bottomcount(N, P): the N groups with the largest
// (smallest) P, an alias or grouping property.
type ApplyTop struct {
	N      int
	By     string
	Bottom bool
}

// applyNotSupported are the transformations of the grammar this service does not serve.
var applyNotSupported = map[string]string{
	"compute": "computed properties are not offered", "join": "joins along navigation properties are not offered", "outerjoin": "joins along navigation properties are not offered",
	"nest": "nested results are not offered", "addnested": "nested results are not offered",
	"bottompercent": "use topcount or bottomcount", "bottomsum": "use topcount or bottomcount",
	"toppercent": "use topcount or bottomcount", "topsum": "use topcount or bottomcount",
	"orderby": "use $orderby", "search": "use $search without $apply", "skip": "use $skip", "top": "use $top",
	"ancestors": "hierarchies are not offered", "descendants": "hierarchies are not offered", "traverse": "hierarchies are not offered",
}

// aggregateMethods maps the methods of "with" to the aggregates of the KPI language.
var aggregateMethods = map[string]string{"sum": "sum", "min": "min", "max": "max", "average": "avg", "countdistinct": "countdistinct"}

// ParseApply reads $apply. Steps are separated by "/" outside parentheses and quotes:
//
//	filter(EXPR)            before the aggregation, any number (EXPR as in $filter)
//	identity                anywhere
//	groupby((P,...))        the distinct values of the grouping properties
//	groupby((P,...),aggregate(A,...))
//	aggregate(A,...)        one row over everything
//	topcount(N,X)           after the aggregation; bottomcount likewise
//	aggregate($count as A)  after groupby: the number of groups
//	concat(T1,T2,...)       last, after filter steps only: each Ti one of the forms
//	                        above (without concat), the answer theirs one after the other
//
// with A one of "KPI", "KPI as ALIAS", "P with METHOD as ALIAS" (METHOD sum, min, max,
// average, countdistinct) and "$count as ALIAS". Keywords are case-sensitive, as the ABNF
// has them. Valid forms outside these are 501 ODATA_OPTION_NOT_SUPPORTED; malformed text
// is 400 with what was expected. filterOpts apply to the filter expressions.
func ParseApply(text string, filterOpts ...query.Option) (*Apply, error) {
	a := &Apply{Text: text}
	steps, err := splitOutside(text, '/')
	if err != nil {
		return nil, err
	}
	stage := 0 // 0: before the aggregation, 1: after it, 2: after topcount
	for k, s := range steps {
		name, args, err := splitCall(s)
		if err != nil {
			return nil, err
		}
		if name == "concat" && args != nil {
			return a.parseConcat(*args, stage, k < len(steps)-1, filterOpts)
		}
		if args == nil && name != "identity" {
			return nil, applySyntax("%q is not a transformation: want filter(...), groupby(...), aggregate(...), topcount(...), bottomcount(...), concat(...) or identity", short(name))
		}
		switch {
		case name == "identity" && args == nil:
			continue
		case name == "filter":
			if stage > 0 {
				return nil, applyUnsupported("filter(...) after the aggregation (a filter on aggregated values) is not supported: filter before groupby or aggregate")
			}
			e, err := query.Parse(*args, append([]query.Option{query.WithParam("$apply"), query.ODataSyntax()}, filterOpts...)...)
			if err != nil {
				return nil, err
			}
			a.Filters = append(a.Filters, e)
		case name == "aggregate" && stage == 1 && a.Grouped && a.Top == nil:
			// The number of groups: aggregate($count as A) after groupby.
			ags, err := parseAggregates(*args)
			if err != nil {
				return nil, err
			}
			if len(ags) != 1 || !ags[0].Count {
				return nil, applyUnsupported("after groupby, aggregate takes only $count as ALIAS (the number of groups)")
			}
			a.GroupCount, stage = ags[0].Alias, 2
		case name == "groupby" || name == "aggregate":
			if stage > 0 {
				return nil, applyUnsupported("a second aggregation is not supported: $apply groups once")
			}
			stage = 1
			if name == "aggregate" {
				if a.Aggregates, err = parseAggregates(*args); err != nil {
					return nil, err
				}
				continue
			}
			a.Grouped = true
			if err := a.parseGroupBy(*args); err != nil {
				return nil, err
			}
		case name == "topcount" || name == "bottomcount":
			if stage != 1 {
				return nil, applyUnsupported(name + " is supported once, after groupby or aggregate")
			}
			stage = 2
			t, err := parseTopCount(name, *args)
			if err != nil {
				return nil, err
			}
			a.Top = t
		case applyNotSupported[name] != "" && args != nil:
			if err := checkUnsupported(name, *args); err != nil {
				return nil, err
			}
			return nil, applyUnsupported(name + "(...) is not supported: " + applyNotSupported[name])
		case strings.Contains(name, ".") && args != nil:
			return nil, applyUnsupported("custom functions (" + short(name) + ") are not supported")
		default:
			return nil, applySyntax("%q is not a transformation: want filter(...), groupby(...), aggregate(...), topcount(...), bottomcount(...), concat(...) or identity", short(s))
		}
	}
	if stage == 0 {
		return nil, applyUnsupported("$apply without groupby or aggregate is not supported: use $filter")
	}
	return a, a.check()
}

// parseConcat reads the arguments of concat(...), a step after the filter steps a holds
// (stage 0) and, when more is true, before other steps.
func (a *Apply) parseConcat(args string, stage int, more bool, filterOpts []query.Option) (*Apply, error) {
	switch {
	case stage > 0:
		return nil, applyUnsupported("concat(...) after an aggregation is not supported: put it first, after filter steps only")
	case more:
		return nil, applyUnsupported("transformations after concat(...) are not supported: end $apply with it")
	}
	parts, err := splitOutside(args, ',')
	if err != nil {
		return nil, err
	}
	if len(parts) < 2 {
		return nil, applySyntax("concat takes two transformation sequences or more, separated by commas: %q", short(args))
	}
	for _, part := range parts {
		b, err := ParseApply(part, filterOpts...)
		if err != nil {
			return nil, err
		}
		if b.Concat != nil {
			return nil, applyUnsupported("concat(...) inside concat(...) is not supported: list every sequence in one concat")
		}
		b.Filters = append(slices.Clip(a.Filters), b.Filters...)
		a.Concat = append(a.Concat, b)
	}
	return a, nil
}

// checkUnsupported checks the arguments of a transformation the service does not serve
// as far as the ABNF constrains them without a model, so that malformed text is 400 rather
// than 501: nest and addnested name every result (applyExpr "as" ALIAS), ancestors and
// descendants take a hierarchy reference ending in a property path, transformations, then
// optionally a distance and "keep start".
func checkUnsupported(name, args string) error {
	parts, err := splitOutside(args, ',')
	if err != nil {
		return err
	}
	switch name {
	case "nest", "addnested":
		first := 0
		if name == "addnested" {
			first = 1
		}
		if len(parts) <= first {
			return applySyntax("%s takes transformations, each followed by \"as ALIAS\"", name)
		}
		for _, p := range parts[first:] {
			w := strings.FieldsFunc(p, spaceOrPlus)
			if len(w) < 3 || w[len(w)-2] != "as" || !isIdentifier(w[len(w)-1]) {
				return applySyntax("%s: %q is not followed by \"as ALIAS\"", name, short(strings.TrimSpace(p)))
			}
			i := strings.LastIndex(p, " as ")
			steps, err := splitOutside(strings.TrimSpace(p[:max(i, 0)]), '/')
			if err != nil {
				return err
			}
			for _, step := range steps {
				if n, a, err := splitCall(step); err == nil && a != nil && (n == "nest" || n == "addnested") {
					if err := checkUnsupported(n, *a); err != nil {
						return err
					}
				}
			}
		}
	case "ancestors", "descendants":
		if len(parts) < 4 {
			return applySyntax("%s takes a hierarchy (root, qualifier, property path) and transformations", name)
		}
		if p := strings.TrimSpace(parts[2]); strings.ContainsAny(p, "()") || isSyntax(checkPath(name, p)) {
			return applySyntax("%s: the node property %q is not a property path", name, short(p))
		}
		rest := parts[4:]
		if len(rest) > 0 && strings.Trim(strings.TrimSpace(rest[0]), "0123456789") == "" && strings.TrimSpace(rest[0]) != "" {
			rest = rest[1:]
		}
		if len(rest) > 0 && strings.Join(strings.FieldsFunc(rest[0], spaceOrPlus), " ") == "keep start" {
			rest = rest[1:]
		}
		if len(rest) > 0 {
			return applySyntax("%s: unexpected %q: after the transformations come only a distance and \"keep start\"", name, short(strings.TrimSpace(rest[0])))
		}
	}
	return nil
}

// check refuses aliases that clash: with each other or with a member of the answer
// holding a grouping property (the property, or the object a navigation path nests it
// in: CUSTOMERS for CUSTOMERS/COUNTRY).
func (a *Apply) check() error {
	seen := map[string]bool{}   // grouping properties and aliases: what can rank the groups
	member := map[string]bool{} // the members of an answer entity
	for _, g := range a.GroupBy {
		seen[g] = true
		first, _, _ := strings.Cut(g, "/")
		member[first] = true
	}
	for _, ag := range a.Aggregates {
		if member[ag.Alias] {
			return applySyntax("the name %s is given twice in the answer: choose another alias", ag.Alias)
		}
		seen[ag.Alias], member[ag.Alias] = true, true
	}
	if a.Top != nil && !seen[a.Top.By] {
		return applyUnsupported(fmt.Sprintf("%s by %s: only a grouping property or an aggregate's alias can rank the groups", short(a.Top.By), short(a.Top.By)))
	}
	return nil
}

// parseGroupBy reads the arguments of groupby: the list of grouping properties, then
// optionally aggregate(...).
func (a *Apply) parseGroupBy(args string) error {
	parts, err := splitOutside(args, ',')
	if err != nil {
		return err
	}
	if len(parts) > 2 {
		return applySyntax("groupby takes a list of properties in parentheses and at most one transformation: %q", short(args))
	}
	list := strings.TrimSpace(parts[0])
	if len(list) < 2 || list[0] != '(' || list[len(list)-1] != ')' {
		return applySyntax("groupby starts with its properties in parentheses, groupby((P1,P2)...): found %q", short(list))
	}
	props, err := splitOutside(list[1:len(list)-1], ',')
	if err != nil {
		return err
	}
	for _, p := range props {
		p = strings.TrimSpace(p)
		if strings.HasPrefix(p, "rollup(") || strings.HasPrefix(p, "rolluprecursive(") {
			return applyUnsupported("rollup is not supported")
		}
		if i := strings.LastIndexByte(p, '/'); i >= 0 && strings.Contains(p[i:], ".") {
			return applySyntax("groupby property %q ends with a type cast: name a property after it", short(p))
		}
		if err := checkPath("groupby", p); err != nil {
			return err
		}
		if slices.Contains(a.GroupBy, p) {
			return applySyntax("groupby names %s twice", p)
		}
		a.GroupBy = append(a.GroupBy, p)
	}
	if len(parts) == 2 {
		inner := strings.TrimSpace(parts[1])
		steps, err := splitOutside(inner, '/')
		if err != nil {
			return err
		}
		if len(steps) > 1 {
			return applyUnsupported("inside groupby only one aggregate(...) is supported: found " + short(inner))
		}
		name, args, err := splitCall(inner)
		if err != nil {
			return err
		}
		if name != "aggregate" || args == nil {
			return applyUnsupported("inside groupby only aggregate(...) is supported: found " + short(inner))
		}
		if a.Aggregates, err = parseAggregates(*args); err != nil {
			return err
		}
	}
	return nil
}

// checkPath checks a property path: identifiers separated by "/" (navigation) or "."
// (RECORD.FIELD); type casts and other segments are 501.
func checkPath(where, p string) error {
	if p == "" {
		return applySyntax("%s has an empty property", where)
	}
	segs := strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '.' })
	if len(segs) == 0 || strings.Contains(p, "//") || strings.Contains(p, "..") || p[0] == '/' || p[0] == '.' || p[len(p)-1] == '/' || p[len(p)-1] == '.' {
		return applySyntax("%s property %q is not a property path", where, short(p))
	}
	for _, s := range segs {
		if !isIdentifier(s) {
			return applySyntax("%s property %q is not a property path", where, short(p))
		}
	}
	if strings.Contains(p, "/") && strings.Contains(p, ".") {
		return applyUnsupported(where + " property " + short(p) + ": type casts in paths are not supported")
	}
	return nil
}

// parseAggregates reads the aggregate expressions of aggregate(...) (aggregateExpr of
// the aggregation ABNF). The whole grammar is checked; the forms outside what the service
// serves (expressions, "from", custom methods, paths before $count or a custom aggregate)
// are then 501.
func parseAggregates(args string) ([]ApplyAggregate, error) {
	toks, err := aggregateTokens(args)
	if err != nil {
		return nil, err
	}
	r := &aggReader{toks: toks}
	var out []ApplyAggregate
	for {
		ag, err := r.readItem()
		if err != nil {
			return nil, err
		}
		out = append(out, ag)
		if r.next() == "" {
			return out, nil
		}
		if r.take() != "," {
			return nil, applySyntax("aggregate: unexpected %q after an aggregate expression: separate them with commas", short(r.toks[r.i-1]))
		}
	}
}

// aggregateTokens splits the arguments of aggregate(...) into words and commas, outside
// parentheses and quotes.
func aggregateTokens(args string) ([]string, error) {
	var toks []string
	depth, quoted, start := 0, false, -1
	flush := func(i int) {
		if start >= 0 {
			toks = append(toks, args[start:i])
			start = -1
		}
	}
	for i := 0; i < len(args); i++ {
		c := args[i]
		switch {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth == 0 && spaceOrPlus(rune(c)):
			flush(i)
			continue
		case depth == 0 && c == ',':
			flush(i)
			toks = append(toks, ",")
			continue
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(args))
	if depth != 0 || quoted {
		return nil, applySyntax("%q has an unclosed parenthesis or quote", short(args))
	}
	return toks, nil
}

// aggReader reads aggregate expressions from their tokens.
type aggReader struct {
	toks []string
	i    int
}

func (r *aggReader) next() string {
	if r.i < len(r.toks) {
		return r.toks[r.i]
	}
	return ""
}

func (r *aggReader) take() string {
	t := r.next()
	if t != "" {
		r.i++
	}
	return t
}

// readItem reads one aggregate expression.
func (r *aggReader) readItem() (ApplyAggregate, error) {
	var head []string
	for t := r.next(); t != "" && t != "," && t != "with" && t != "as" && t != "from"; t = r.next() {
		head = append(head, r.take())
	}
	if len(head) == 0 {
		return ApplyAggregate{}, applySyntax("aggregate has an empty item: want KPI [as ALIAS], PROPERTY with METHOD as ALIAS or $count as ALIAS")
	}
	expr := strings.Join(head, " ")
	switch {
	case expr == "$count" || strings.HasSuffix(expr, "/$count"):
		from, err := r.from(true)
		if err != nil {
			return ApplyAggregate{}, err
		}
		alias, err := r.alias(expr)
		switch {
		case err != nil:
			return ApplyAggregate{}, err
		case expr != "$count":
			if err := checkPath("aggregate", strings.TrimSuffix(expr, "/$count")); err != nil {
				return ApplyAggregate{}, err
			}
			return ApplyAggregate{}, applyUnsupported("counting a navigation path (" + short(expr) + ") is not supported: use $count as ALIAS or P with countdistinct as ALIAS")
		case from:
			return ApplyAggregate{}, applyUnsupported("aggregate ... from ... is not supported")
		}
		return ApplyAggregate{Alias: alias, Count: true}, nil
	case r.next() == "with":
		r.take()
		custom, err := r.method()
		if err != nil {
			return ApplyAggregate{}, err
		}
		method := r.toks[r.i-1]
		from, err := r.from(true)
		if err != nil {
			return ApplyAggregate{}, err
		}
		alias, err := r.alias(expr)
		if err != nil {
			return ApplyAggregate{}, err
		}
		if len(head) > 1 || strings.ContainsAny(expr, "()'@$") || isSyntax(checkPath("aggregate", expr)) {
			return ApplyAggregate{}, aggregatedExpression(expr)
		}
		if err := checkPath("aggregate", expr); err != nil {
			return ApplyAggregate{}, err
		}
		switch {
		case custom:
			return ApplyAggregate{}, applyUnsupported("custom aggregation methods (" + short(method) + ") are not supported")
		case from:
			return ApplyAggregate{}, applyUnsupported("aggregate ... from ... is not supported")
		}
		return ApplyAggregate{Alias: alias, Path: expr, Method: method}, nil
	}
	// A custom aggregate: [path "/"] customAggregate [[from ...] as ALIAS].
	if len(head) > 1 || strings.ContainsAny(expr, "()'") {
		return ApplyAggregate{}, applySyntax("aggregate item %q: an expression is aggregated with METHOD as ALIAS", short(expr))
	}
	if err := checkPath("aggregate", expr); err != nil {
		return ApplyAggregate{}, err
	}
	from, err := r.from(false)
	if err != nil {
		return ApplyAggregate{}, err
	}
	alias := expr
	if from || r.next() == "as" {
		if alias, err = r.alias(expr); err != nil {
			return ApplyAggregate{}, err
		}
	}
	switch {
	case strings.ContainsAny(expr, "/."):
		return ApplyAggregate{}, applyUnsupported("custom aggregates along a path (" + short(expr) + ") are not supported: name the KPI")
	case from:
		return ApplyAggregate{}, applyUnsupported("aggregate ... from ... is not supported")
	}
	return ApplyAggregate{Alias: alias, Path: expr}, nil
}

// method reads an aggregation method after "with"; custom is true for a namespace-qualified
// one.
func (r *aggReader) method() (custom bool, err error) {
	m := r.take()
	if _, ok := aggregateMethods[m]; ok {
		return false, nil
	}
	if ns, name, ok := cutLast(m, "."); ok && isIdentifier(name) && checkPath("aggregate", ns) == nil {
		return true, nil
	}
	return false, applySyntax("aggregate: the method is sum, min, max, average, countdistinct or a qualified custom method, not %q", short(m))
}

// from reads any "from P1,P2 with METHOD" clauses; with is required after the grouping
// properties unless this is a custom aggregate's. It reports whether there was one.
func (r *aggReader) from(withRequired bool) (bool, error) {
	found := false
	for r.next() == "from" {
		r.take()
		found = true
		for {
			p := r.take()
			if err := checkPath("aggregate ... from", p); err != nil && isSyntax(err) {
				return false, err
			}
			if r.next() != "," || r.i+1 >= len(r.toks) || r.toks[r.i+1] == "," {
				break
			}
			r.take()
		}
		switch {
		case r.next() == "with":
			r.take()
			if _, err := r.method(); err != nil {
				return false, err
			}
		case withRequired:
			return false, applySyntax("aggregate: \"from\" grouping properties are followed by \"with METHOD\"")
		}
	}
	return found, nil
}

// alias reads "as ALIAS".
func (r *aggReader) alias(expr string) (string, error) {
	if r.next() != "as" {
		return "", applySyntax("aggregate item %q: want \"as ALIAS\"", short(expr))
	}
	r.take()
	a := r.take()
	if !isIdentifier(a) {
		return "", applySyntax("aggregate item %q: the alias %q is not an identifier", short(expr), short(a))
	}
	return a, nil
}

// aggregatedExpression answers an expression before "with": 501 when it is an expression
// of the scalar grammar or of OData beyond it, 400 when it is malformed.
func aggregatedExpression(expr string) error {
	_, err := query.ParseScalar(expr, query.WithParam("$apply"), query.ODataSyntax())
	var qe *query.Error
	if errors.As(err, &qe) && qe.Kind == query.KindSyntax && !qualifiedCall(expr) {
		return err
	}
	return applyUnsupported("aggregating an expression (" + short(expr) + ") is not supported: aggregate a property")
}

// qualifiedCall reports whether expr starts with a namespace-qualified function call,
// Namespace.Function(...), which the scalar grammar does not read.
func qualifiedCall(expr string) bool {
	name, _, ok := strings.Cut(expr, "(")
	ns, fn, dotted := cutLast(name, ".")
	return ok && dotted && isIdentifier(fn) && checkPath("", ns) == nil
}

// cutLast cuts s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// isSyntax reports whether err is a 400 (not a 501).
func isSyntax(err error) bool {
	var t *targeted
	return errors.As(err, &t) && t.Problem.Status == http.StatusBadRequest
}

// parseTopCount reads the arguments of topcount and bottomcount: a count and a name.
func parseTopCount(name, args string) (*ApplyTop, error) {
	parts, err := splitOutside(args, ',')
	if err != nil {
		return nil, err
	}
	if len(parts) != 2 {
		return nil, applySyntax("%s takes two arguments, a count and a property: %q", name, short(args))
	}
	ns, by := strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])
	n, err := strconv.ParseUint(ns, 10, 31)
	if err != nil {
		if ns != "" && strings.Trim(ns, "0123456789") == "" {
			return nil, applySyntax("%s: the count %s is too large", name, short(ns))
		}
		if len(ns) > 1 && ns[0] == '-' && strings.Trim(ns[1:], "0123456789") == "" && strings.Trim(ns[1:], "0") != "" {
			return nil, applySyntax("%s: the count %s is negative: want the number of groups to keep, 0 or more", name, short(ns))
		}
		return nil, applyUnsupported(name + ": the count must be an integer literal, not " + short(ns))
	}
	if !isIdentifier(by) {
		return nil, applyUnsupported(name + ": ranking by an expression (" + short(by) + ") is not supported: name an alias or a grouping property")
	}
	return &ApplyTop{N: int(n), By: by, Bottom: name == "bottomcount"}, nil
}

// splitCall splits "name(args)" into its name and arguments (nil without parentheses).
// The closing parenthesis must end s.
func splitCall(s string) (string, *string, error) {
	s = strings.TrimFunc(s, spaceOrPlus)
	i := strings.IndexByte(s, '(')
	if i < 0 {
		if s == "" {
			return "", nil, applySyntax("a transformation is empty")
		}
		return s, nil, nil
	}
	name := strings.TrimFunc(s[:i], spaceOrPlus)
	end, err := closing(s, i)
	if err != nil {
		return "", nil, err
	}
	if end != len(s)-1 {
		return "", nil, applySyntax("unexpected %q after %s(...): separate transformations with /", short(s[end+1:]), short(name))
	}
	args := s[i+1 : end]
	return name, &args, nil
}

// closing returns the index of the parenthesis closing the one at open, skipping quoted
// text.
func closing(s string, open int) (int, error) {
	depth, quoted := 0, false
	for i := open; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i, nil
			}
		}
	}
	return 0, applySyntax("%q has an unclosed parenthesis or quote", short(s))
}

// splitOutside splits s at sep outside parentheses and quotes; unbalanced parentheses are
// a syntax error.
func splitOutside(s string, sep byte) ([]string, error) {
	var parts []string
	depth, start, quoted := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			if depth == 0 {
				return nil, applySyntax("%q has a \")\" without its \"(\"", short(s))
			}
			depth--
		case c == sep && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	if depth != 0 || quoted {
		return nil, applySyntax("%q has an unclosed parenthesis or quote", short(s))
	}
	return append(parts, s[start:]), nil
}

// applySyntax is the 400 of malformed $apply text.
func applySyntax(format string, args ...any) error {
	return withTarget(badOption(problem.CodeParameterIllegal, "$apply: "+format, args...), "$apply")
}

// applyUnsupported is the 501 of valid $apply the service does not serve.
func applyUnsupported(msg string) error {
	return withTarget(problem.New(http.StatusNotImplemented, CodeOptionNotSupported, "$apply: "+msg), "$apply")
}
