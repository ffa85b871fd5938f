package odata

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// CodeEntityNotFound: an entity addressed by key does not exist.
const CodeEntityNotFound = "ODATA_ENTITY_NOTFOUND"

// entityKey is a parsed key predicate: the condition "key eq literal" (for a generated
// key, "km.RowField eq row number").
type entityKey struct {
	cond query.Expr
}

// parseKey reads a key predicate, the text between the parentheses of SET(...): a key
// literal as the payloads write it ('SO-1' with ” for a quote, 42, 2025-01-05, ...) or
// NAME=literal naming the key property. For a declared key the literal is read by the
// $filter grammar as the operand of "KEY eq", and must be exactly one literal of the key's
// type; for a generated key it is a positive integer (with an optional L suffix), the
// row's position in the record. Errors are 400 problems saying what was wrong.
func parseKey(m *km.KnowledgeModel, et *entityType, text string) (entityKey, error) {
	keyName := et.props[et.key].name
	lit := strings.TrimSpace(text)
	if name, value, ok := cutKeyName(lit); ok {
		if name != keyName {
			return entityKey{}, badOption(problem.CodeParameterIllegal, "key predicate (%s): entity type %s has the key property %s, not %s", short(text), et.name, keyName, short(name))
		}
		lit = strings.TrimSpace(value)
	}
	if lit == "" {
		return entityKey{}, badOption(problem.CodeParameterIllegal, "key predicate (%s): no key value", short(text))
	}
	if et.generated {
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSuffix(lit, "L"), "l"), 10, 64)
		if err != nil || n < 1 {
			return entityKey{}, badOption(problem.CodeParameterMismatch, "key predicate (%s): %s is a row number, a positive integer", short(text), keyName)
		}
		lit = strconv.FormatInt(n, 10)
	}
	src := keyName + " eq " + lit
	e, err := query.ParseAndBind(src, et.filterSchema(m), query.ODataSyntax(), query.WithParam("key"))
	if err != nil {
		var msg string
		if qe, ok := err.(*query.Error); ok {
			msg = qe.Msg
			if qe.Code == query.CodeFieldNotFound {
				// A name where the literal goes (ORDERS_entries(O1)): $filter reads it
				// as a property, but a key predicate holds a literal.
				msg = fmt.Sprintf("%s is no literal of the key property %s; write text in quotes, as ('%s')", short(lit), keyName, strings.ReplaceAll(lit, "'", "''"))
			}
		} else {
			msg = err.Error()
		}
		return entityKey{}, badOption(problem.CodeParameterMismatch, "key predicate (%s): %s", short(text), msg)
	}
	c, ok := e.(*query.Compare)
	if !ok || c.Op != query.Eq || (c.Field.Name != keyName && c.Field.Name != et.rec.ID+"."+keyName) {
		return entityKey{}, badOption(problem.CodeParameterMismatch, "key predicate (%s): want one value of the key property %s", short(text), keyName)
	}
	cond, err := et.storeNames(c)
	if err != nil {
		return entityKey{}, err
	}
	return entityKey{cond: cond}, nil
}

// cutKeyName splits NAME=value when the predicate starts with an identifier and "=".
func cutKeyName(s string) (name, value string, ok bool) {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return "", "", false
	}
	name = strings.TrimSpace(s[:i])
	if !isIdentifier(name) {
		return "", "", false
	}
	return name, s[i+1:], true
}

// serveEntity answers an entity addressed by key: SET('SO-1') or SET(KEY='SO-1'). It takes
// $select and $format; the entity is 404 ODATA_ENTITY_NOTFOUND when no row has the key.
func (h *Handler) serveEntity(w http.ResponseWriter, r *http.Request, m *km.KnowledgeModel, et *entityType, root, keyText string) {
	h.serveSingle(w, r, m, et, root, func() (query.Expr, error) {
		key, err := parseKey(m, et, keyText)
		return key.cond, err
	}, notFoundEntity(et, keyText))
}

// serveSingle answers the one entity of et where the condition cond returns holds (read
// after the options, whose errors come first; nil: none can), with $select, $expand and
// $format. When no row holds it, it fails with missing, or answers 204 No Content when
// missing is nil (a single-valued navigation property that leads to no entity).
func (h *Handler) serveSingle(w http.ResponseWriter, r *http.Request, m *km.KnowledgeModel, et *entityType, root string,
	cond func() (query.Expr, error), missing error) {
	o, err := ParseQueryOptions(r.URL.RawQuery, query.WithLimits(h.opts.Limits))
	if err == nil && (o.Filter != nil || o.OrderBy != nil || o.Top >= 0 || o.Skip != 0 || o.Count || o.FilterIDs != nil || o.Apply != nil || o.Search != "") {
		err = badOption(problem.CodeParameterIllegal, "an entity addressed by key takes $select, $expand and $format only")
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	rep, err := negotiate(o, r.Header.Get("Accept"), FormatJSON)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	where, err := cond()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if where == nil { // no entity can hold it
		h.noEntity(w, r, missing)
		return
	}
	eq, err := h.planEntities(m, et, o)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var expand []*expansion
	if o.Expand != nil {
		expand, err = h.planExpand(m, et, o, eq)
		if err != nil {
			h.fail(w, r, err)
			return
		}
	}
	eq.q.Where = append(eq.q.Where, where)
	eq.q.Page, eq.q.PageSize = 0, 1
	res, err := h.query(r.Context(), m, eq)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if len(res.Rows) == 0 {
		h.noEntity(w, r, missing)
		return
	}
	left := h.opts.MaxExpanded
	if err := h.expandAll(r.Context(), m, expand, res.Rows[:1], &left); err != nil {
		h.fail(w, r, err)
		return
	}
	pg := page{eq: eq, rows: res.Rows[:1], root: root, sel: o.Select, ieee754: rep.ieee754, meta: rep.metadata, expand: expand}
	if rep.format == FormatXML {
		write(w, "application/atom+xml;type=entry;charset=utf-8", pg.appendAtomEntry(nil, h.now(), 0))
		return
	}
	write(w, rep.jsonContentType(), pg.appendEntityJSON(nil, 0))
}

// noEntity answers a request for one entity that none is: it fails with missing, or
// answers 204 No Content when missing is nil.
func (h *Handler) noEntity(w http.ResponseWriter, r *http.Request, missing error) {
	if missing == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h.fail(w, r, missing)
}

func notFoundEntity(et *entityType, keyText string) error {
	return problem.New(http.StatusNotFound, CodeEntityNotFound, "entity set "+et.set+" has no entity with the key ("+short(keyText)+")")
}
