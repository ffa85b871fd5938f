package odata

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/kmkit/kmkit/internal/jsonenc"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// applyQuery is a $apply compiled for the Service: the KM-level request, and how the
// columns of its answer become the properties of the aggregated entities.
type applyQuery struct {
	q km.Request
	// out are the properties of each answer entity: grouping properties, then aggregates.
	out []*applyOut
	// limit is the number of groups topcount/bottomcount keeps, -1 without.
	limit int
}

// applyOut is one property of an aggregated entity: a value (col names the plan column)
// or, for a navigation path, an object holding kids.
type applyOut struct {
	name string
	col  string
	idx  int // the index of col among the plan's columns, set once planned
	kids []*applyOut
}

// add places the value of column col at the path (names) under o's children.
func addOut(list []*applyOut, path []string, col string) []*applyOut {
	for _, o := range list {
		if o.name == path[0] && len(path) > 1 && o.kids != nil {
			o.kids = addOut(o.kids, path[1:], col)
			return list
		}
	}
	if len(path) == 1 {
		return append(list, &applyOut{name: path[0], col: col})
	}
	return append(list, &applyOut{name: path[0], kids: addOut(nil, path[1:], col)})
}

// planApply compiles a into the KM-level request of the Service (see Apply).
func (h *Handler) planApply(m *km.KnowledgeModel, et *entityType, o *QueryOptions) (*applyQuery, error) {
	a := o.Apply
	aq := &applyQuery{limit: -1}
	switch {
	case o.Select != nil:
		return nil, applyUnsupported("$select with $apply is not supported: the answer has the grouping properties and the aliases")
	case o.Search != "":
		return nil, applyUnsupported("$search with $apply is not supported")
	case a.GroupCount != "" && o.Skip > 0:
		return nil, applyUnsupported("$skip after aggregate($count as " + a.GroupCount + ") is not supported: the answer is one entity")
	case a.Top != nil && len(o.OrderBy) > 0:
		return nil, applyUnsupported("$orderby after " + map[bool]string{false: "topcount", true: "bottomcount"}[a.Top.Bottom] + " is not supported")
	}
	filters := a.Filters
	if o.Filter != nil {
		// $filter acts on the answer of $apply. On grouping properties alone it keeps the
		// groups whose rows it keeps, so it is served as a filter before the grouping.
		if err := checkGroupFilter(a, et.rec.ID, o.Filter); err != nil {
			return nil, err
		}
		filters = append(slices.Clip(filters), o.Filter)
	}
	names := map[string]string{} // answer property -> plan column
	for _, g := range a.GroupBy {
		field, err := applyField(m, et, "groupby", g)
		if err != nil {
			return nil, err
		}
		aq.q.Fields = append(aq.q.Fields, field)
		aq.out = addOut(aq.out, strings.Split(g, "/"), field)
		names[g] = field
	}
	adHocID := func() string {
		id := "APPLY_" + strconv.Itoa(len(aq.q.AdHocKPIs)+1)
		for m.KPI(id) != nil {
			id = "_" + id
		}
		return id
	}
	// With a KPI of the KM (custom aggregate), which answers what /data answers
	// (SPEC-NOTES), the request keeps the KM's meaning, and each aggregate along a
	// navigation property carries the input set's condition itself; without one, the
	// request does (see inputSet).
	custom := slices.ContainsFunc(a.Aggregates, func(ag ApplyAggregate) bool { return !ag.Count && ag.Method == "" })
	related := false // an aggregate reads another record than the set's
	own := false     // an aggregate counts the set's rows (its grain is the set's record)
	for _, ag := range a.Aggregates {
		var id string
		switch {
		case ag.Count:
			own = true
			k, err := m.AdHocKPI(adHocID(), "count()", et.rec.ID)
			if err != nil {
				return nil, withTarget(badOption(problem.CodeParameterIllegal, "$apply: $count as %s: %v", ag.Alias, err), "$apply")
			}
			aq.q.AdHocKPIs, id = append(aq.q.AdHocKPIs, k), k.ID
		case ag.Method != "":
			field, err := applyField(m, et, "aggregate", ag.Path)
			if err != nil {
				return nil, err
			}
			arg := field
			if strings.HasPrefix(field, et.rec.ID+".") {
				own = true
			} else {
				related = true
				if custom {
					// The aggregate counts a row of its record when some entity of the set
					// related to it passes the condition, which every entity does.
					arg += ", " + query.Format(inputSet(et.rec))
				}
			}
			k, err := m.AdHocKPI(adHocID(), aggregateMethods[ag.Method]+"("+arg+")", "")
			if err != nil {
				return nil, withTarget(badOption(problem.CodeParameterIllegal, "$apply: %s with %s: %v", ag.Path, ag.Method, err), "$apply")
			}
			aq.q.AdHocKPIs, id = append(aq.q.AdHocKPIs, k), k.ID
		default:
			if m.KPI(ag.Path) == nil {
				hint := km.DidYouMean([]string{ag.Path}, m.SuggestKPI)
				if et.prop(ag.Path) >= 0 {
					hint = "; " + ag.Path + " is a property: aggregate it with " + ag.Path + " with sum as ALIAS (or min, max, average, countdistinct)"
				}
				return nil, withTarget(badOption(query.CodeFieldNotFound, "$apply: knowledge model %s has no KPI (custom aggregate) %s%s", m.ID, ag.Path, hint), "$apply")
			}
			id = ag.Path
		}
		aq.q.KPIs = append(aq.q.KPIs, id)
		aq.out = append(aq.out, &applyOut{name: ag.Alias, col: id})
		names[ag.Alias] = id
	}
	if !custom && !own && (len(a.Aggregates) == 0 || len(a.GroupBy) > 0) {
		// The groups are those of the set's rows: a count of them has every one, also a
		// group that no aggregate reads a row of (groupby alone; the null group of
		// CUSTOMERS/COUNTRY holding the orders without a customer, beside an aggregate of
		// CUSTOMERS/NAME, which reads customers only). Its column is not answered.
		k, err := m.AdHocKPI(adHocID(), "count()", et.rec.ID)
		if err != nil {
			return nil, withTarget(badOption(problem.CodeParameterIllegal, "$apply: groupby: %v", err), "$apply")
		}
		aq.q.AdHocKPIs = append(aq.q.AdHocKPIs, k)
		aq.q.KPIs = append(aq.q.KPIs, k.ID)
	}
	// Filters: filterid, then the filter steps, all bound as $filter is on the set.
	for _, id := range o.FilterIDs {
		f := m.Filter(id)
		if f == nil {
			return nil, withTarget(badOption(CodeFilterNotFound, "filterid: knowledge model %s has no filter %s%s", m.ID, id, km.DidYouMean([]string{id}, m.SuggestFilter)), "filterid")
		}
		aq.q.Where = append(aq.q.Where, f.Bound())
	}
	for _, f := range filters {
		// Lambdas and paths through to-one navigation properties, as $filter takes them.
		e, err := resolveLambdas(m, et.rec.ID, f)
		if err == nil {
			e, err = resolvePaths(m, et.rec.ID, e, "$apply")
		}
		if err == nil {
			e, err = et.bindFilter(m, e, h.now())
		}
		if err == nil {
			// The request is at KM level: the set's own fields become RECORD.FIELD.
			e, err = query.MapFields(e, func(r query.FieldRef) (query.FieldRef, error) {
				if r.Name == km.RowField {
					return r, applyUnsupported("filter on the generated key " + et.props[et.key].name + " is not supported")
				}
				if _, f := m.Field(r.Name); f == nil {
					r.Name = et.rec.ID + "." + r.Name
				}
				return r, nil
			})
		}
		if err != nil {
			if qe, ok := err.(*query.Error); ok {
				qe.Param = "$apply"
			}
			return nil, err
		}
		aq.q.Where = append(aq.q.Where, e)
	}
	if related && !custom {
		// An aggregate along a navigation property reads the entities related to the set's.
		aq.q.Where = append(aq.q.Where, inputSet(et.rec))
	}
	// Sort: $orderby names answer properties; topcount ranks by one. The count of groups
	// is one entity: $orderby (ag-grid-odata sends the grid's) does not change it.
	for _, k := range o.OrderBy {
		if a.GroupCount != "" {
			break
		}
		col, ok := names[k.Field]
		if k.Expr != nil || !ok {
			return nil, &query.Error{Kind: query.KindParameter, Code: query.CodeSortUnknownField, Param: "$orderby", Pos: query.NoPos,
				Msg: "with $apply, $orderby names the grouping properties and aliases of the answer (" + strings.Join(answerNames(a), ", ") + "), not " + k.Field}
		}
		k.Field = col
		aq.q.Sort = append(aq.q.Sort, k)
	}
	if a.Top != nil {
		aq.q.Sort = []query.SortTerm{{Field: names[a.Top.By], Desc: !a.Top.Bottom}}
		aq.limit = a.Top.N
	}
	return aq, nil
}

// inputSet is the condition that makes the entities of rec's set the input set of $apply:
// "F is null or F is not null" on a field F of rec holds for every row of rec, and it
// restricts every other record to the rows related to one of them (a filter on rec
// propagates through the relationships, see package km). So an aggregate along a
// navigation property (CUSTOMERS/CREDIT_LIMIT with sum on ORDERS_entries) reads the
// customers the orders refer to, each once, and not the customers without an order.
func inputSet(rec *km.Record) query.Expr {
	f := query.FieldRef{At: query.NoPos, Name: rec.ID + "." + rec.Fields[0].ID, Type: rec.Fields[0].Type}
	return &query.Logical{At: query.NoPos, Op: query.Or, L: &query.IsNull{At: query.NoPos, Field: f}, R: &query.IsNull{At: query.NoPos, Field: f, Negated: true}}
}

// checkGroupFilter refuses a $filter beside $apply that is not a condition on grouping
// properties of a plain groupby (501): one on aggregated values, or after topcount,
// bottomcount or the count of groups, would need the groups first. It also refuses a
// $filter that holds for a null grouping property of another record than the set's
// (record): an entity without a related entity is in that property's null group, but a
// filter before the grouping reads the related entity's property and leaves it out, so
// the group would come back smaller than the same $apply shows it without $filter.
func checkGroupFilter(a *Apply, record string, f query.Expr) error {
	if !a.Grouped || a.Top != nil || a.GroupCount != "" {
		return applyUnsupported("$filter with this $apply is not supported: filter first inside $apply, $apply=filter(...)/groupby(...)")
	}
	_, err := query.MapFields(f, func(r query.FieldRef) (query.FieldRef, error) {
		if !slices.Contains(a.GroupBy, r.Name) {
			return r, applyUnsupported("$filter on " + short(r.Name) + " with $apply is not supported: $filter may name grouping properties only; filter rows first inside $apply, $apply=filter(...)/groupby(...)")
		}
		return r, nil
	})
	if err != nil {
		return err
	}
	related := func(name string) bool {
		rec, _, dotted := strings.Cut(name, ".")
		return strings.Contains(name, "/") || dotted && rec != record
	}
	if name := nullTest(f, false, related); name != "" {
		return applyUnsupported("$filter testing " + short(name) + " for null with $apply is not supported: its null group also holds the entities without a related entity, which a filter before the grouping leaves out; filter inside $apply, $apply=filter(...)/groupby(...)")
	}
	return nil
}

// nullTest returns the first field of e that pick accepts and that e tests for null in a
// way that holds when the field is null (F eq null, not (F ne null), tolower(F) eq null),
// or "". negated is whether e stands under an odd number of nots. Any other condition on
// a null operand is unknown (the three-valued logic of filters), so it keeps no null group.
func nullTest(e query.Expr, negated bool, pick func(string) bool) string {
	switch x := e.(type) {
	case *query.Logical:
		if n := nullTest(x.L, negated, pick); n != "" {
			return n
		}
		return nullTest(x.R, negated, pick)
	case *query.Not:
		return nullTest(x.X, !negated, pick)
	case *query.IsNull:
		if x.Negated == negated && pick(x.Field.Name) {
			return x.Field.Name
		}
	case *query.ScalarCompare:
		if c, ok := x.R.(*query.Const); ok && c.Lit.Kind == query.LitNull && (x.Op == query.Eq) != negated {
			var name string
			km.ExprFields(x, func(f string) {
				if name == "" && pick(f) {
					name = f
				}
			})
			return name
		}
	}
	return ""
}

// answerNames lists the properties of an aggregated answer.
func answerNames(a *Apply) []string {
	out := append([]string(nil), a.GroupBy...)
	for _, ag := range a.Aggregates {
		out = append(out, ag.Alias)
	}
	return out
}

// applyField resolves a property path of $apply to the Knowledge Model field it names
// (RECORD.FIELD): a property of the set's type, RECORD.FIELD of any record, or a path
// along navigation properties, to-one or to-many (CUSTOMERS/COUNTRY), which names the
// field of the record it leads to; the Knowledge Model joins it by its relationships, as
// it joins the same RECORD.FIELD on /data, so the path must be the one it joins along
// (501 otherwise, and for a path back to the set's own record).
func applyField(m *km.KnowledgeModel, et *entityType, where, p string) (string, error) {
	switch {
	case strings.Contains(p, "/"):
		return followPath(m, et.rec.ID, p, "$apply: "+where+" "+p, true)
	case strings.Contains(p, "."):
		if _, f := m.Field(p); f == nil {
			return "", withTarget(badOption(query.CodeFieldNotFound, "$apply: %s %s: no such field of knowledge model %s%s", where, p, m.ID, m.FieldHints(nil, []string{p})), "$apply")
		}
		return p, nil
	}
	i := et.prop(p)
	switch {
	case i < 0:
		return "", withTarget(badOption(query.CodeFieldNotFound, "$apply: %s: entity type %s has no property %s%s", where, et.name, p, km.DidYouMean([]string{p}, func(s string) []string { return m.SuggestField(et.rec, s) })), "$apply")
	case et.generated && i == et.key:
		return "", applyUnsupported(where + " " + p + ": the generated key cannot be grouped or aggregated")
	}
	return et.rec.ID + "." + p, nil
}

// serveApply answers an entity set request with $apply: the aggregated entities as an
// OData JSON collection, paged as entity sets are.
func (h *Handler) serveApply(w http.ResponseWriter, r *http.Request, m *km.KnowledgeModel, et *entityType, root string, o *QueryOptions, rep representation) {
	if rep.format == FormatXML {
		h.fail(w, r, applyUnsupported("aggregated answers are served as JSON only"))
		return
	}
	if o.Apply.Concat != nil {
		h.serveConcat(w, r, m, et, root, o, rep)
		return
	}
	aq, err := h.planApply(m, et, o)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	pageSize := h.pageSize(w, r)
	// end bounds the groups the client asked for: topcount's N and $skip+$top.
	end := -1
	if aq.limit >= 0 {
		end = aq.limit
	}
	if o.Top >= 0 && (end < 0 || o.Skip+o.Top < end) {
		end = o.Skip + o.Top
	}
	n := pageSize
	if end >= 0 {
		n = max(0, min(n, end-o.Skip))
	}
	aq.q.Skip, aq.q.PageSize, aq.q.Count = o.Skip, max(n, 1), true
	if o.Apply.GroupCount != "" {
		aq.q.Skip, aq.q.PageSize = 0, 1
	}
	res, err := h.runApply(r.Context(), m, aq)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	rows := res.Rows
	if n == 0 {
		rows = nil
	}
	count := res.Count
	if aq.limit >= 0 {
		count = min(count, aq.limit)
	}
	if o.Apply.GroupCount != "" {
		h.writeGroupCount(w, root, et, o, rep, count, n > 0)
		return
	}
	last := count
	if end >= 0 {
		last = min(last, end)
	}
	next := applyNextLink(r, root+et.set, o.Skip, o.Top, len(rows), last, n > 0)
	items := make([]applyItem, len(rows))
	for i, row := range rows {
		items[i] = applyItem{aq.out, row}
	}
	ans := applyAnswer{context: root + "$metadata#" + et.set + "(" + string(appendApplyContext(nil, aq.out)) + ")", counted: o.Count, count: count, items: items, next: next}
	write(w, rep.jsonContentType(), ans.appendJSON(nil, rep))
}

// serveConcat answers $apply=concat(T1,T2,...): the aggregated entities of each branch,
// one branch after the other, each branch one request to the Service (with the count of
// its entities, so that $skip, $top, $count and server-driven paging act on the
// concatenation). $orderby and $filter would need the branches' entities together and
// are 501.
func (h *Handler) serveConcat(w http.ResponseWriter, r *http.Request, m *km.KnowledgeModel, et *entityType, root string, o *QueryOptions, rep representation) {
	switch {
	case len(o.OrderBy) > 0:
		h.fail(w, r, applyUnsupported("$orderby after concat(...) is not supported: rank inside a branch with topcount or bottomcount"))
		return
	case o.Filter != nil:
		h.fail(w, r, applyUnsupported("$filter with concat(...) is not supported: filter first inside $apply, $apply=filter(...)/concat(...)"))
		return
	}
	branches := make([]*applyQuery, len(o.Apply.Concat))
	var ctxList []byte
	seen := map[string]bool{}
	for k, a := range o.Apply.Concat {
		bo := *o
		bo.Apply, bo.Top, bo.Skip, bo.Count = a, -1, 0, false
		aq, err := h.planApply(m, et, &bo)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		branches[k] = aq
		// The context lists every property of the answer once.
		outs := aq.out
		if a.GroupCount != "" {
			outs = []*applyOut{{name: a.GroupCount}}
		}
		for _, p := range outs {
			item := string(appendApplyContext(nil, []*applyOut{p}))
			if !seen[item] {
				if len(seen) > 0 {
					ctxList = append(ctxList, ',')
				}
				seen[item] = true
				ctxList = append(ctxList, item...)
			}
		}
	}
	pageSize := h.pageSize(w, r)
	n := pageSize
	if o.Top >= 0 {
		n = min(n, o.Top)
	}
	// The page is the entities from $skip to $skip+n of the concatenation; offset is
	// where the current branch starts in it.
	var items []applyItem
	offset := 0
	for k, aq := range branches {
		a := o.Apply.Concat[k]
		skip := max(0, o.Skip-offset)
		want := n - len(items)
		aq.q.Skip, aq.q.PageSize, aq.q.Count = skip, max(want, 1), true
		if a.GroupCount != "" {
			aq.q.Skip, aq.q.PageSize = 0, 1
		}
		if aq.limit >= 0 {
			aq.q.PageSize = max(1, min(aq.q.PageSize, aq.limit-skip))
		}
		res, err := h.runApply(r.Context(), m, aq)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		total := res.Count
		switch {
		case a.GroupCount != "":
			// One entity: the number of groups.
			if skip == 0 && want > 0 {
				items = append(items, applyItem{[]*applyOut{{name: a.GroupCount}}, []query.Value{{Type: query.TypeInteger, Int: int64(res.Count)}}})
			}
			total = 1
		default:
			if aq.limit >= 0 {
				total = min(total, aq.limit)
			}
			rows := res.Rows[:max(0, min(len(res.Rows), want, total-skip))]
			for _, row := range rows {
				items = append(items, applyItem{aq.out, row})
			}
		}
		offset += total
	}
	count := offset
	last := count
	if o.Top >= 0 {
		last = min(last, o.Skip+o.Top)
	}
	next := applyNextLink(r, root+et.set, o.Skip, o.Top, len(items), last, n > 0)
	ans := applyAnswer{context: root + "$metadata#" + et.set + "(" + string(ctxList) + ")", counted: o.Count, count: count, items: items, next: next}
	write(w, rep.jsonContentType(), ans.appendJSON(nil, rep))
}

// runApply asks the Service for aq's groups (aq.q's Skip and PageSize, with their
// count), and sets the plan column of each answer property.
func (h *Handler) runApply(ctx context.Context, m *km.KnowledgeModel, aq *applyQuery) (*query.Result, error) {
	p, err := h.svc.Prepare(m, &aq.q)
	if err != nil {
		return nil, err
	}
	res, err := h.svc.Run(ctx, p)
	if err != nil {
		return nil, err
	}
	cols := map[string]int{}
	for i, c := range p.Plan.Columns {
		cols[c.Name] = i
	}
	var setIdx func([]*applyOut)
	setIdx = func(list []*applyOut) {
		for _, o := range list {
			o.idx = cols[o.col]
			setIdx(o.kids)
		}
	}
	setIdx(aq.out)
	return res, nil
}

// applyItem is one aggregated entity of an answer: its properties and the row they read.
type applyItem struct {
	out []*applyOut
	row []query.Value
}

// applyAnswer is an answer of aggregated entities, ready to encode.
type applyAnswer struct {
	context string
	counted bool
	count   int
	items   []applyItem
	next    string
}

// appendJSON appends the answer as an OData JSON collection.
func (a *applyAnswer) appendJSON(b []byte, rep representation) []byte {
	b = append(b, '{')
	if rep.metadata != metaNone {
		b = append(b, `"@odata.context":`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, a.context)
		b = append(b, ',')
	}
	if a.counted {
		b = append(b, `"@odata.count":`...)
		if rep.ieee754 {
			b = strconv.AppendQuote(b, strconv.Itoa(a.count))
		} else {
			b = strconv.AppendInt(b, int64(a.count), 10)
		}
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i, it := range a.items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendApplyObject(b, it.out, it.row, rep.ieee754)
	}
	b = append(b, ']')
	if a.next != "" {
		b = append(b, `,"@odata.nextLink":`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, a.next)
	}
	return append(b, '}')
}

// appendApplyContext appends the select list of the context URL: P, NAV(P), ALIAS.
func appendApplyContext(b []byte, list []*applyOut) []byte {
	for i, o := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, o.name...)
		if o.kids != nil {
			b = append(b, '(')
			b = appendApplyContext(b, o.kids)
			b = append(b, ')')
		}
	}
	return b
}

// appendApplyObject appends one aggregated entity (or a nested navigation object).
func appendApplyObject(b []byte, list []*applyOut, row []query.Value, ieee754 bool) []byte {
	b = append(b, '{')
	for i, o := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendStringNoHTMLEscape(b, o.name)
		b = append(b, ':')
		if o.kids != nil {
			b = appendApplyObject(b, o.kids, row, ieee754)
			continue
		}
		b = appendJSONValue(b, row[o.idx], ieee754)
	}
	return append(b, '}')
}

// writeGroupCount answers groupby(...)/aggregate($count as A): one entity {A: count} (none
// with $top=0), with @odata.count 1 when asked.
func (h *Handler) writeGroupCount(w http.ResponseWriter, root string, et *entityType, o *QueryOptions, rep representation, count int, rows bool) {
	alias := o.Apply.GroupCount
	b := []byte{'{'}
	if rep.metadata != metaNone {
		b = append(b, `"@odata.context":`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, root+"$metadata#"+et.set+"("+alias+")")
		b = append(b, ',')
	}
	if o.Count {
		b = append(b, `"@odata.count":`...)
		b = appendJSONValue(b, query.Value{Type: query.TypeInteger, Int: 1}, rep.ieee754)
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	if rows {
		b = append(b, '{')
		b = jsonenc.AppendStringNoHTMLEscape(b, alias)
		b = append(b, ':')
		b = appendJSONValue(b, query.Value{Type: query.TypeInteger, Int: int64(count)}, rep.ieee754)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	write(w, rep.jsonContentType(), b)
}

// applyNextLink is the nextLink of an $apply page of shown items from skip, the items
// asked for ending before last ($top, topcount or the count), or "" where the page ends
// them or none was asked (paged false: $top=0). top is $top, negative when absent.
func applyNextLink(r *http.Request, setURL string, skip, top, shown, last int, paged bool) string {
	if !paged || skip+shown >= last {
		return ""
	}
	return nextLink(setURL, r.URL.RawQuery, skip+shown, max(top, -1), shown)
}
