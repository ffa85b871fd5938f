package kmhttp

import (
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/kmkit/kmkit/internal/kmparams"
	"github.com/kmkit/kmkit/internal/rawquery"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/query/fuzzy"
)

// DefaultSearchPrecision is the search precision of a request that names none.
const DefaultSearchPrecision = fuzzy.DefaultPrecision

// lastValue returns the last value of the parameter name (a repeated parameter takes its
// last value), trimmed of white space; "" when the parameter is absent or its value is
// empty ("page="), which stands for the default as in the real service. A value that is
// present but blank ("page=%20") must parse like any other: it is 400
// GENERAL_PARAMETER_MISSMATCH, never taken as absent. want says what the value should be.
func lastValue(params rawquery.Params, name, want string) (string, error) {
	values := params.Values(name)
	if len(values) == 0 || values[len(values)-1] == "" {
		return "", nil
	}
	v := strings.TrimSpace(values[len(values)-1])
	if v == "" {
		return "", badRequest(problem.CodeParameterMismatch, "%s: the value is blank: want %s", name, want)
	}
	return v, nil
}

// paging reads page and pageSize (the last value of each, when repeated).
func (h *Handler) paging(params rawquery.Params) (page, size int, err error) {
	pg, err := lastValue(params, "page", "an integer")
	if err != nil {
		return 0, 0, err
	}
	ps, err := lastValue(params, "pageSize", "an integer")
	if err != nil {
		return 0, 0, err
	}
	return kmparams.ParsePaging(pg, ps, h.opts.MaxPageSize)
}

// parseSchemaSort reads the sort of a schema endpoint: one field with an optional + or -.
func parseSchemaSort(values []string) (key query.SortTerm, present bool, err error) {
	if len(values) == 0 {
		return query.SortTerm{}, false, nil
	}
	key, err = kmparams.ParseSchemaSort(strings.Join(values, ","))
	return key, err == nil, err
}

// checkJSONBody checks the Content-Type of a POST body: absent, it is taken as JSON;
// application/json or any structured "+json" type (parameters such as charset allowed)
// is JSON; anything else (text/plain, application/xml, a form) is 415
// GENERAL_UNSUPPORTED_MEDIA_TYPE, and so is a header that does not parse.
func checkJSONBody(contentType []string) error {
	v := strings.Join(contentType, ", ")
	if strings.TrimSpace(v) == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(v)
	if err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return nil
	}
	return problem.New(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMedia,
		fmt.Sprintf("Content-Type %q is not supported: the body must be JSON (application/json)", v))
}
