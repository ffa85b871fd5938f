package odata

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kmkit/kmkit/internal/jsonenc"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// entityQuery is a checked entity set request: the store query and what shaping the
// answer needs.
type entityQuery struct {
	et *entityType
	q  km.Request
	// out lists the properties of each entity in order (indexes into et.props); col
	// gives, per entry of out, the result column holding it.
	out, col []int
	// skip, n: the entities [skip, skip+n) are asked for; n < 0 means no limit.
	skip, top int
}

// planEntities checks the options against the entity type and the KM and builds the
// store query (without paging).
func (h *Handler) planEntities(m *km.KnowledgeModel, et *entityType, o *QueryOptions) (*entityQuery, error) {
	eq := &entityQuery{et: et, skip: o.Skip, top: o.Top}
	eq.q.Record = et.rec.ID
	// A generated key is the plan's row key of the record (km.RowField).
	eq.q.RowKey = et.generated
	// Properties: the selected ones (all without $select), the key always among them.
	if o.Select == nil {
		for i := range et.props {
			eq.out = append(eq.out, i)
		}
	} else {
		var unknown []string
		for _, name := range o.Select {
			i := et.prop(name)
			if i < 0 {
				unknown = append(unknown, name)
				continue
			}
			eq.out = append(eq.out, i)
		}
		if len(unknown) > 0 {
			// Suggestions among the entity type's own properties (a field of another
			// record is a property of another entity type).
			hint := km.DidYouMean(unknown, func(name string) []string {
				var own []string
				for _, s := range m.SuggestField(et.rec, name) {
					if et.prop(s) >= 0 {
						own = append(own, s)
					}
				}
				return own
			})
			return nil, withTarget(badOption(query.CodeFieldNotFound, "$select: entity type %s has no propert%s %s%s", et.name, plural(len(unknown), "y", "ies"), strings.Join(unknown, ", "), hint), "$select")
		}
		if !slices.Contains(eq.out, et.key) {
			eq.out = append([]int{et.key}, eq.out...)
		}
	}
	fieldCol := map[string]int{}
	addField := func(name string) int {
		if c, ok := fieldCol[name]; ok {
			return c
		}
		c := len(eq.q.Fields)
		eq.q.Fields = append(eq.q.Fields, name)
		fieldCol[name] = c
		return c
	}
	eq.col = make([]int, len(eq.out))
	for i, p := range eq.out {
		eq.col[i] = addField(et.fieldName(p))
	}
	// $orderby: properties of the type; the store sorts by selected fields only, so
	// sort fields join the query's fields without being written.
	for _, k := range o.OrderBy {
		if k.Expr != nil {
			// An expression over the type's properties: the store computes it per row.
			// A path in it (tolower(CUSTOMERS/NAME)) is valid OData the plan cannot sort
			// by (expressions read the record's own fields): 501, not an unknown field.
			if _, err := query.MapScalarFields(k.Expr, func(r query.FieldRef) (query.FieldRef, error) {
				if isPath(r.Name) {
					return r, notSupported("$orderby", "$orderby: %s: an expression over a navigation path (%s) is not supported; sort by the path itself or by an expression over properties of %s", k.Field, r.Name, et.rec.ID)
				}
				return r, nil
			}); err != nil {
				return nil, err
			}
			e, err := query.BindScalar(k.Expr, m.FilterSchema(et.rec.ID), h.now())
			if err != nil {
				if qe, ok := err.(*query.Error); ok {
					qe.Param, qe.Pos, qe.Msg = "$orderby", query.NoPos, k.Field+": "+qe.Msg
				}
				return nil, err
			}
			k.Expr = e
			eq.q.Sort = append(eq.q.Sort, k)
			continue
		}
		if strings.Contains(k.Field, "/") {
			// A path through to-one navigation properties (CUSTOMERS/COUNTRY): the
			// related record's field, which each row reads from its one related row.
			name, err := resolvePath(m, et.rec.ID, k.Field, "$orderby")
			if err != nil {
				return nil, err
			}
			k.Field = name
			addField(name)
			eq.q.Sort = append(eq.q.Sort, k)
			eq.q.Related = true
			continue
		}
		i := et.prop(k.Field)
		switch {
		case i < 0:
			hint := ""
			if sg, ok := et.filterSchema(m).(query.Suggester); ok {
				hint = sg.SuggestText(k.Field)
			}
			return nil, &query.Error{Kind: query.KindParameter, Code: query.CodeSortUnknownField, Param: "$orderby", Pos: query.NoPos,
				Msg: fmt.Sprintf("entity type %s has no property %s", et.name, k.Field) + hint}
		}
		k.Field = et.fieldName(i)
		addField(k.Field)
		eq.q.Sort = append(eq.q.Sort, k)
	}
	// Filters: filterid and $filter, ANDed; they may name fields of any record
	// (RECORD.FIELD) and then apply through the relationships (see km.Conjunct).
	for _, id := range o.FilterIDs {
		f := m.Filter(id)
		if f == nil {
			return nil, withTarget(badOption(CodeFilterNotFound, "filterid: knowledge model %s has no filter %s%s", m.ID, id, km.DidYouMean([]string{id}, m.SuggestFilter)), "filterid")
		}
		eq.q.Where = append(eq.q.Where, f.Bound())
	}
	if o.Filter != nil {
		// now() is the request's instant, the one every backend compares with.
		e, err := resolveLambdas(m, et.rec.ID, o.Filter)
		if err != nil {
			return nil, err
		}
		if e, err = resolvePaths(m, et.rec.ID, e, "$filter"); err != nil {
			return nil, err
		}
		e, err = et.bindFilter(m, e, h.now())
		if err != nil {
			if qe, ok := err.(*query.Error); ok {
				qe.Param = "$filter"
				if qe.Pos >= 0 {
					qe.Char = query.CharPos(o.FilterText, qe.Pos)
				}
			}
			return nil, err
		}
		eq.q.Where = append(eq.q.Where, e)
	}
	if o.Search != "" {
		sr, err := searchRequest(et, eq.out, o.Search)
		if err != nil {
			return nil, err
		}
		eq.q.Search = sr
	}
	eq.q.Count = o.Count
	return eq, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// preferredPageSize reads "Prefer: odata.maxpagesize=N" (also "maxpagesize", OData
// 4.01); 0 when absent or not a positive integer.
func preferredPageSize(r *http.Request) int {
	_, val, ok := preference(r, "odata.maxpagesize", "maxpagesize")
	if n, err := strconv.Atoi(val); ok && err == nil && n > 0 {
		return n
	}
	return 0
}

// preference returns the first preference of r's Prefer headers named one of names (in
// any case; OData 4.0 names them odata.x, 4.01 also x): the name as written, lower-cased,
// and its value without quotes ("" when it has none).
func preference(r *http.Request, names ...string) (name, value string, ok bool) {
	for _, v := range r.Header.Values("Prefer") {
		for item := range strings.SplitSeq(v, ",") {
			k, val, _ := strings.Cut(strings.TrimSpace(item), "=")
			k = strings.ToLower(strings.TrimSpace(k))
			if slices.Contains(names, k) {
				return k, strings.Trim(strings.TrimSpace(val), `"`), true
			}
		}
	}
	return "", "", false
}

// serveEntities answers an entity set (or its /$count).
func (h *Handler) serveEntities(w http.ResponseWriter, r *http.Request, m *km.KnowledgeModel, et *entityType, root string, countOnly bool, via *navScope) {
	o, err := ParseQueryOptions(r.URL.RawQuery, query.WithLimits(h.opts.Limits))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	rep, err := negotiate(o, r.Header.Get("Accept"), FormatJSON)
	if countOnly {
		// The count is plain text: $format, like the options that shape a page, is refused.
		rep, err = representation{}, nil
		if o.Format == FormatDefault && o.Select == nil && o.OrderBy == nil && o.Top < 0 && o.Skip == 0 {
			o.Count = true
		} else {
			err = badOption(problem.CodeParameterIllegal, "/$count takes $filter, $search and filterid only")
		}
	}
	if err == nil && o.Apply != nil {
		if via != nil {
			err = applyUnsupported("not supported on a navigation path: ask " + et.set + "?$apply=filter(...)/..., the referring property in the filter")
		} else if o.Expand != nil {
			err = notSupported("$expand", "$expand with $apply is not supported")
		} else if countOnly {
			err = applyUnsupported("/$count with $apply is not supported: ask $count=true")
		} else {
			h.serveApply(w, r, m, et, root, o, rep)
			return
		}
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	eq, err := h.planEntities(m, et, o)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	setURL := root + et.set
	if via != nil {
		setURL = via.url
		if via.where != nil {
			eq.q.Where = append(eq.q.Where, via.where)
		}
	}
	var expand []*expansion
	if o.Expand != nil {
		if countOnly {
			err = badOption(problem.CodeParameterIllegal, "/$count takes $filter, $search and filterid only")
		} else {
			expand, err = h.planExpand(m, et, o, eq)
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
	}
	pageSize := h.pageSize(w, r)
	n := pageSize
	if eq.top >= 0 && eq.top < n {
		n = eq.top
	}
	// A next page may exist when the client asked for more than one page; whether it
	// does, the full count says (the memory store has it for free from the selection it
	// pages). Asking for one row beyond the page instead would make a store page that is
	// not aligned with $skip, and the store would read up to twice the rows.
	more := !countOnly && (eq.top < 0 || eq.top > n)
	eq.q.Count = eq.q.Count || more
	if countOnly {
		n = 0
	}
	var (
		rows  [][]query.Value
		count int
	)
	if via != nil && via.where == nil {
		n, eq.q.Count = 0, false // a navigation from no value: no entity
	}
	if n > 0 || eq.q.Count {
		eq.q.Skip, eq.q.PageSize = eq.skip, max(n, 1)
		res, err := h.query(r.Context(), m, eq)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		count = res.Count
		if n > 0 {
			rows = res.Rows
		}
	}
	if countOnly {
		write(w, "text/plain;charset=utf-8", strconv.AppendInt(nil, int64(count), 10))
		return
	}
	left := h.opts.MaxExpanded
	if err := h.expandAll(r.Context(), m, expand, rows, &left); err != nil {
		h.fail(w, r, err)
		return
	}
	next := ""
	if more && eq.skip+n < count {
		next = nextLink(setURL, r.URL.RawQuery, eq.skip+n, eq.top, n)
	}
	bp := bufPool.Get().(*[]byte)
	b := (*bp)[:0]
	pg := page{eq: eq, rows: rows, count: count, counted: o.Count, next: next, root: root, sel: o.Select, ieee754: rep.ieee754, meta: rep.metadata, expand: expand}
	if rep.format == FormatXML {
		b = pg.appendAtom(b, h.now())
		write(w, "application/atom+xml;type=feed;charset=utf-8", b)
	} else {
		b = pg.appendJSON(b)
		write(w, rep.jsonContentType(), b)
	}
	if cap(b) <= maxPooled {
		*bp = b[:0]
		bufPool.Put(bp)
	}
}

// nextLink returns the URL of the next page: the request's query string without $skip
// and $top, then the new $skip and, when the client set $top, what remains of it.
func nextLink(setURL, raw string, skip, top, served int) string {
	var b strings.Builder
	b.WriteString(setURL)
	b.WriteByte('?')
	for pair := range strings.SplitSeq(raw, "&") {
		if pair == "" {
			continue
		}
		k, _, _ := strings.Cut(pair, "=")
		if name, ok := optionName(k); ok && (name == optSkip || name == optTop) {
			continue
		}
		b.WriteString(pair)
		b.WriteByte('&')
	}
	b.WriteString("$skip=")
	b.WriteString(strconv.Itoa(skip))
	if top >= 0 {
		b.WriteString("&$top=")
		b.WriteString(strconv.Itoa(top - served))
	}
	return b.String()
}

// page is one answer of an entity set, ready to encode.
type page struct {
	eq      *entityQuery
	rows    [][]query.Value
	count   int
	counted bool
	next    string
	root    string
	sel     []string
	ieee754 bool
	meta    string // odata.metadata: minimal ("" too), none or full
	// expand are the $expand items, filled for rows.
	expand []*expansion
}

// value returns property j (an index into eq.out) of row i.
func (pg *page) value(i, j int) query.Value {
	return pg.rows[i][pg.eq.col[j]]
}

// appendContext appends the context URL: the entity set, with the $select list.
func (pg *page) appendContext(b []byte) []byte {
	b = append(b, pg.root...)
	b = append(b, "$metadata#"...)
	b = append(b, pg.eq.et.set...)
	if pg.sel != nil || pg.expand != nil {
		b = append(b, '(')
		for i, s := range pg.sel {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, s...)
		}
		b = appendExpandContext(b, pg.expand, len(pg.sel) == 0)
		b = append(b, ')')
	}
	return b
}

// appendJSON appends the page as an OData JSON collection: with odata.metadata=minimal
// (the default) the context URL, the count and the next link; with none no context URL;
// with full also each entity's control information (appendEntityBody).
func (pg *page) appendJSON(b []byte) []byte {
	keys := pg.jsonKeys()
	b = append(b, '{')
	if pg.meta != metaNone {
		b = append(b, `"@odata.context":`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, string(pg.appendContext(nil)))
		b = append(b, ',')
	}
	if pg.counted {
		b = append(b, `"@odata.count":`...)
		if pg.ieee754 {
			b = append(b, '"')
			b = strconv.AppendInt(b, int64(pg.count), 10)
			b = append(b, '"')
		} else {
			b = strconv.AppendInt(b, int64(pg.count), 10)
		}
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i := range pg.rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = pg.appendEntityBody(b, keys, i)
		b = append(b, '}')
	}
	b = append(b, ']')
	if pg.next != "" {
		b = append(b, `,"@odata.nextLink":`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, pg.next)
	}
	return append(b, '}')
}

// appendEntityJSON appends entity i as a single-entity answer: its context URL
// (SET/$entity) unless odata.metadata=none, then its properties.
func (pg *page) appendEntityJSON(b []byte, i int) []byte {
	b = append(b, '{')
	if pg.meta != metaNone {
		b = append(b, `"@odata.context":`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, string(pg.appendContext(nil))+"/$entity")
		b = append(b, ',')
	}
	b = pg.appendEntityBody(b, pg.jsonKeys(), i)
	return append(b, '}')
}

// jsonKeys returns the quoted property names of the page, each followed by ":".
func (pg *page) jsonKeys() [][]byte {
	et := pg.eq.et
	keys := make([][]byte, len(pg.eq.out))
	for j, p := range pg.eq.out {
		keys[j] = append(jsonenc.AppendStringNoHTMLEscape(nil, et.props[p].name), ':')
	}
	return keys
}

// jsonTypeNames are the @odata.type annotations of full metadata for the property types
// a JSON value does not tell (String, Boolean and Double it does).
var jsonTypeNames = map[string]string{
	"Edm.Int64": "#Int64", "Edm.Date": "#Date", "Edm.DateTimeOffset": "#DateTimeOffset", "Edm.TimeOfDay": "#TimeOfDay",
}

// appendEntityBody appends the members of entity i (without braces). With
// odata.metadata=full they start with @odata.type, @odata.id (the canonical URL,
// SET(key)) and @odata.editLink (the same, relative to the service root), and properties
// of types JSON does not tell carry NAME@odata.type.
func (pg *page) appendEntityBody(b []byte, keys [][]byte, i int) []byte {
	et := pg.eq.et
	if pg.meta == metaFull {
		keyCol := -1
		for j, p := range pg.eq.out {
			if p == et.key {
				keyCol = j
			}
		}
		link := et.set + "(" + string(appendKeyLiteral(nil, pg.value(i, keyCol))) + ")"
		b = append(b, `"@odata.type":`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, "#"+et.qualified())
		b = append(b, `,"@odata.id":`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, pg.root+link)
		b = append(b, `,"@odata.editLink":`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, link)
		b = append(b, ',')
	}
	for j, p := range pg.eq.out {
		if j > 0 {
			b = append(b, ',')
		}
		if pg.meta == metaFull {
			if t := jsonTypeNames[et.props[p].edm]; t != "" {
				b = jsonenc.AppendStringNoHTMLEscape(b, et.props[p].name+"@odata.type")
				b = append(b, ':')
				b = jsonenc.AppendStringNoHTMLEscape(b, t)
				b = append(b, ',')
			}
		}
		b = append(b, keys[j]...)
		b = appendJSONValue(b, pg.value(i, j), pg.ieee754)
	}
	if pg.expand != nil {
		b = pg.appendExpanded(b, pg.rows[i])
	}
	return b
}

// xmlTypeNames are the m:type attribute values of the non-string types.
var xmlTypeNames = map[string]string{
	"Edm.Int64": "Int64", "Edm.Double": "Double", "Edm.Boolean": "Boolean", "Edm.Date": "Date",
	"Edm.DateTimeOffset": "DateTimeOffset", "Edm.TimeOfDay": "TimeOfDay",
}

// appendAtom appends the page as an Atom feed: m:context, m:count, one entry per entity
// with its id (the canonical URL), category, updated time and m:properties, and a next
// link.
func (pg *page) appendAtom(b []byte, now time.Time) []byte {
	et := pg.eq.et
	enc := pg.atomEncoder(now)
	setURL := pg.root + et.set
	b = append(b, xmlHeader...)
	b = append(b, `<feed xmlns="http://www.w3.org/2005/Atom" xmlns:m="http://docs.oasis-open.org/odata/ns/metadata" xmlns:d="http://docs.oasis-open.org/odata/ns/data" xml:base="`...)
	b = appendXMLText(b, pg.root, true)
	b = append(b, `" m:context="`...)
	b = appendXMLText(b, string(pg.appendContext(nil)), true)
	b = append(b, `"><id>`...)
	b = appendXMLText(b, setURL, false)
	b = append(b, `</id><title type="text">`...)
	b = append(b, et.set...)
	b = append(b, `</title><updated>`...)
	b = append(b, enc.updated...)
	b = append(b, `</updated><author><name/></author><link rel="self" href="`...)
	b = append(b, et.set...)
	b = append(b, `"/>`...)
	if pg.counted {
		b = append(b, `<m:count>`...)
		b = strconv.AppendInt(b, int64(pg.count), 10)
		b = append(b, `</m:count>`...)
	}
	for i := range pg.rows {
		b = enc.appendEntry(b, pg, i, false)
	}
	if pg.next != "" {
		b = append(b, `<link rel="next" href="`...)
		b = appendXMLText(b, pg.next, true)
		b = append(b, `"/>`...)
	}
	return append(b, `</feed>`...)
}

// appendAtomEntry appends entity i of the page as an Atom entry document (an entity
// addressed by key).
func (pg *page) appendAtomEntry(b []byte, now time.Time, i int) []byte {
	b = append(b, xmlHeader...)
	return pg.atomEncoder(now).appendEntry(b, pg, i, true)
}

// atomEncoder holds what every entry of a page shares: property element names and type
// attributes, the updated time, the prefix of entry ids.
type atomEncoder struct {
	open, openNull, closeTag [][]byte
	updated                  []byte
	idPrefix                 []byte
	keyCol                   int
	key                      []byte // the key literal of the entry being written
	// navs are the expanded navigation properties of the entries.
	navs []atomNav
}

func (pg *page) atomEncoder(now time.Time) *atomEncoder {
	et := pg.eq.et
	enc := &atomEncoder{
		open:     make([][]byte, len(pg.eq.out)),
		openNull: make([][]byte, len(pg.eq.out)),
		closeTag: make([][]byte, len(pg.eq.out)),
		updated:  now.UTC().Truncate(time.Second).AppendFormat(nil, time.RFC3339),
		keyCol:   -1,
	}
	for j, p := range pg.eq.out {
		prop := et.props[p]
		t := ""
		if name := xmlTypeNames[prop.edm]; name != "" {
			t = ` m:type="` + name + `"`
		}
		enc.open[j] = []byte("<d:" + prop.name + t + ">")
		enc.openNull[j] = []byte("<d:" + prop.name + t + ` m:null="true"/>`)
		enc.closeTag[j] = []byte("</d:" + prop.name + ">")
		if p == et.key {
			enc.keyCol = j
		}
	}
	// Entry ids are the canonical URLs set(key); key literals are percent-encoded ASCII,
	// so only "&" (and, in the attribute, nothing else) needs escaping.
	enc.idPrefix = appendXMLText(nil, pg.root+et.set+"(", false)
	enc.navs = pg.atomNavs(now)
	return enc
}

// appendEntry appends entity i as an Atom entry; a top-level entry (an entry document)
// declares the namespaces, the base and the context itself.
func (enc *atomEncoder) appendEntry(b []byte, pg *page, i int, topLevel bool) []byte {
	et := pg.eq.et
	enc.key = appendKeyLiteral(enc.key[:0], pg.value(i, enc.keyCol))
	key := enc.key
	if topLevel {
		b = append(b, `<entry xmlns="http://www.w3.org/2005/Atom" xmlns:m="http://docs.oasis-open.org/odata/ns/metadata" xmlns:d="http://docs.oasis-open.org/odata/ns/data" xml:base="`...)
		b = appendXMLText(b, pg.root, true)
		b = append(b, `" m:context="`...)
		b = appendXMLText(b, string(pg.appendContext(nil))+"/$entity", true)
		b = append(b, `"><id>`...)
	} else {
		b = append(b, `<entry><id>`...)
	}
	b = append(b, enc.idPrefix...)
	b = appendEscapedASCII(b, key)
	b = append(b, `)</id><category scheme="http://docs.oasis-open.org/odata/ns/scheme" term="#`...)
	b = append(b, et.qualified()...)
	b = append(b, `"/><link rel="edit" href="`...)
	b = append(b, et.set...)
	b = append(b, '(')
	b = appendEscapedASCII(b, key)
	b = append(b, ')')
	b = append(b, `"/>`...)
	b = enc.appendAtomLinks(b, pg, i, key)
	b = append(b, `<title/><updated>`...)
	b = append(b, enc.updated...)
	b = append(b, `</updated><author><name/></author><content type="application/xml"><m:properties>`...)
	for j := range pg.eq.out {
		v := pg.value(i, j)
		if v.Null {
			b = append(b, enc.openNull[j]...)
			continue
		}
		b = append(b, enc.open[j]...)
		b = appendXMLValue(b, v)
		b = append(b, enc.closeTag[j]...)
	}
	return append(b, `</m:properties></content></entry>`...)
}

// appendEscapedASCII appends ASCII text escaped for XML character data and attribute values.
func appendEscapedASCII(b, s []byte) []byte {
	for _, c := range s {
		switch c {
		case '&':
			b = append(b, "&amp;"...)
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '"':
			b = append(b, "&quot;"...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// query asks the Service for eq's rows of m: it checks, plans and bounds the request as
// for every other surface.
func (h *Handler) query(ctx context.Context, m *km.KnowledgeModel, eq *entityQuery) (*query.Result, error) {
	p, err := h.svc.Prepare(m, &eq.q)
	if err != nil {
		return nil, err
	}
	return h.svc.Run(ctx, p)
}

// pageSize is the server-driven page size of an entity set answer: the handler's and the
// Service's cap, or the client's odata.maxpagesize preference when smaller, which the
// answer then says it applied.
func (h *Handler) pageSize(w http.ResponseWriter, r *http.Request) int {
	size := min(h.opts.MaxPageSize, h.svc.MaxPageSize())
	if n := preferredPageSize(r); n > 0 && n < size {
		size = n
		w.Header().Set("Preference-Applied", "odata.maxpagesize="+strconv.Itoa(n))
	}
	return size
}
