package odata

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// navScope is the part of a target's entity set a navigation path addresses.
type navScope struct {
	// where holds the related entities: the referring (or referred) field equals the
	// entity's value; nil when the entity has no value there (no related entity).
	where query.Expr
	// url is the path's absolute URL, which next links continue.
	url string
}

// serveNavigation answers SET(key)/NAV: the entities the navigation property NAV of the
// entity with the key leads to. A collection-valued property answers as the target's
// entity set restricted to them, with every option of an entity set ($filter, $select,
// $orderby, $top, $skip, $count, $expand, $search; $apply is 501); a single-valued one
// answers as the entity it leads to (with $select, $expand and $format), or 204 No Content
// when it leads to none. The entity with the key must exist (404 ODATA_ENTITY_NOTFOUND).
// A property of the entity type in NAV's place is 501: $select addresses properties.
func (h *Handler) serveNavigation(w http.ResponseWriter, r *http.Request, m *km.KnowledgeModel, et *entityType, root, keyText, name string) {
	nav, ok := navigation(m, et.rec.ID, name)
	if !ok {
		if et.prop(name) >= 0 {
			h.fail(w, r, notSupported(name, "%s(%s)/%s: a property is not addressable on its own; ask %s(%s)?$select=%s",
				et.set, short(keyText), name, et.set, short(keyText), name))
			return
		}
		h.fail(w, r, notFoundPath(r.URL.Path, fmt.Sprintf("entity type %s has no navigation property %s%s", et.name, name, navHint(m, et.rec.ID))))
		return
	}
	key, err := parseKey(m, et, keyText)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The entity's value of the field the relationship joins on its side.
	from, to := nav.rel.From.Field, nav.rel.To.Field // the referring field, the referred one
	own, related := from, to
	if nav.many {
		own, related = to, from
	}
	pq := &entityQuery{et: et}
	pq.q.Record, pq.q.RowKey = et.rec.ID, et.generated
	pq.q.Fields, pq.q.Where, pq.q.PageSize = []string{own}, []query.Expr{key.cond}, 1
	res, err := h.query(r.Context(), m, pq)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if len(res.Rows) == 0 {
		h.fail(w, r, notFoundEntity(et, keyText))
		return
	}
	var where query.Expr
	if v := res.Rows[0][0]; !v.Null {
		where = &query.Compare{At: query.NoPos, Field: query.FieldRef{At: query.NoPos, Name: related, Type: v.Type}, Op: query.Eq,
			Value: query.Literal{At: query.NoPos, Value: v}}
	}
	target := entityTypeOf(m, nav.target)
	if !nav.many {
		h.serveSingle(w, r, m, target, root, func() (query.Expr, error) { return where, nil }, nil)
		return
	}
	h.serveEntities(w, r, m, target, root, false, &navScope{where: where, url: root + pathAfterService(r)})
}

// pathAfterService returns r's path after the KM's service root ({km_id}.svc/), escaped
// as the request wrote it.
func pathAfterService(r *http.Request) string {
	p := r.URL.EscapedPath()
	if i := strings.Index(p, ".svc/"); i >= 0 {
		return p[i+len(".svc/"):]
	}
	return p
}
