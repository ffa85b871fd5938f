package km

import (
	"strings"

	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/fuzzy"
)

// DefaultSearchPrecision is the search precision of a request that names none.
const DefaultSearchPrecision = fuzzy.DefaultPrecision

// last returns the last value of a parameter, or "".
func last(values []string) string {
	if len(values) == 0 {
		return ""
	}
	return strings.TrimSpace(values[len(values)-1])
}

// paging reads page and pageSize (the last value of each, when repeated).
func (h *Handler) paging(params query.Params) (page, size int, err error) {
	return query.ParsePaging(last(params.Values("page")), last(params.Values("pageSize")), h.opts.MaxPageSize)
}

// parseSchemaSort reads the sort of a schema endpoint: one field with an optional + or -.
func parseSchemaSort(values []string) (key query.SortKey, present bool, err error) {
	if len(values) == 0 {
		return query.SortKey{}, false, nil
	}
	key, err = query.ParseSchemaSort(strings.Join(values, ","))
	return key, err == nil, err
}
