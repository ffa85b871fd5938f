package kmhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/kmkit/kmkit/internal/demodata/demostore"
	"github.com/kmkit/kmkit/km/kmhttp"
)

// The reference server's KM handler: the embedded order-to-cash demo in the memory store,
// built as examples/server builds it. (Only tests read the demo; no package imports
// examples.)
func demoHandler(t *testing.T) http.Handler {
	t.Helper()
	s, err := demostore.Store(0)
	if err != nil {
		t.Fatal(err)
	}
	return kmhttp.NewHandler(s)
}

// specRouter fetches the spec of kmID from h and returns it with a router over its paths.
func specRouter(t *testing.T, h http.Handler, kmID, rawQuery string) (*openapi3.T, routers.Router) {
	t.Helper()
	r := httptest.NewRequest("GET", "http://kmkit.test"+api+"/"+kmID+"/spec?"+rawQuery, nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatalf("spec of %s: status %d: %s", kmID, w.Code, w.Body)
	}
	doc := loadSpec(t, w.Body.Bytes())
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return doc, router
}

// validateExchange sends r to h, then checks the request and the response against the
// spec's operation for r: the parameters, the status and the body against the response
// schema (formats included).
func validateExchange(t *testing.T, h http.Handler, router routers.Router, r *http.Request) int {
	t.Helper()
	route, pathParams, err := router.FindRoute(r)
	if err != nil {
		t.Fatalf("%s: no route in the spec: %v", r.URL, err)
	}
	opts := &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		AuthenticationFunc: func(_ context.Context, in *openapi3filter.AuthenticationInput) error {
			if in.SecuritySchemeName == kmhttp.SchemeAppKey && in.RequestValidationInput.Request.Header.Get("AppKey") != "" {
				return nil
			}
			return errors.New("no AppKey header")
		},
	}
	reqIn := &openapi3filter.RequestValidationInput{Request: r, PathParams: pathParams, Route: route, Options: opts}
	if err := openapi3filter.ValidateRequest(context.Background(), reqIn); err != nil {
		t.Fatalf("%s: the request does not fit the spec: %v", r.URL, err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if err := validateResponse(reqIn, w); err != nil {
		t.Errorf("%s: status %d: the response does not fit the spec: %v\n%.2000s", r.URL, w.Code, err, w.Body)
	}
	return w.Code
}

func validateResponse(reqIn *openapi3filter.RequestValidationInput, w *httptest.ResponseRecorder) error {
	return openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: reqIn,
		Status:                 w.Code,
		Header:                 w.Header(),
		Body:                   io.NopCloser(strings.NewReader(w.Body.String())),
		Options:                reqIn.Options,
	})
}

func newSpecRequest(path string, q url.Values) *http.Request {
	r := httptest.NewRequest("GET", "http://kmkit.test"+path+"?"+q.Encode(), nil)
	r.Header.Set("AppKey", "test")
	return r
}

// TestSpecPathsAnswerOnTheReferenceServer: every path of the generated spec answers on the
// reference server's KM handler with a body that validates against the spec's own response
// schema, for requests the spec describes (every field, a few fields sorted, a KPI).
func TestSpecPathsAnswerOnTheReferenceServer(t *testing.T) {
	h := demoHandler(t)
	for _, kmID := range []string{"o2c", "o2c-base"} {
		for _, curated := range []string{"false", "true"} {
			doc, router := specRouter(t, h, kmID, "curated="+curated)
			paths := doc.Paths.InMatchingOrder()
			if len(paths) < 2 {
				t.Fatalf("%s: only %d paths", kmID, len(paths))
			}
			for _, path := range paths {
				t.Run(kmID+" curated="+curated+" "+path, func(t *testing.T) {
					fields := paramEnum(t, doc, path, "fields")
					var requests []url.Values
					if strings.HasSuffix(path, "/records/"+recordOf(path)+"/query") {
						requests = []url.Values{
							{},
							{"fields": {strings.Join(fields[:2], ",")}, "sort": {"-" + fields[1]}, "pageSize": {"7"}, "page": {"1"}},
							{"fields": {fields[0]}, "options": {"distinct"}, "filterExpr": {fields[0] + " ne null"}},
						}
					} else {
						kpis := paramEnum(t, doc, path, "kpis")
						requests = []url.Values{
							{"kpis": {kpis[0]}},
							{"fields": {fields[0]}, "kpis": {kpis[0]}, "pageSize": {"5"}},
							{"fields": {strings.Join(fields[:3], ",")}, "pageSize": {"20"}, "sort": {fields[2]}},
						}
					}
					for _, q := range requests {
						if code := validateExchange(t, h, router, newSpecRequest(path, q)); code != 200 {
							t.Errorf("%s?%s: status %d", path, q.Encode(), code)
						}
					}
					// An error answer fits the spec too.
					bad := url.Values{"fields": {fields[0]}, "sort": {"+" + fields[0] + ",-" + fields[0]}}
					if code := validateExchange(t, h, router, newSpecRequest(path, bad)); code != 400 {
						t.Errorf("%s?%s: status %d, want 400", path, bad.Encode(), code)
					}
				})
			}
		}
	}
}

// recordOf returns the record id of a record query path, or "".
func recordOf(path string) string {
	_, rest, ok := strings.Cut(path, "/records/")
	if !ok {
		return ""
	}
	rec, _, _ := strings.Cut(rest, "/")
	return rec
}

// TestSpecValidationCatchesBadBodies is the control of the test above: bodies that break
// the schema (a date that is no date, an unknown field, a missing member) fail validation.
func TestSpecValidationCatchesBadBodies(t *testing.T) {
	h := demoHandler(t)
	doc, router := specRouter(t, h, "o2c", "")
	var path, dateField string
	for _, p := range doc.Paths.InMatchingOrder() {
		rec := recordOf(p)
		if rec == "" {
			continue
		}
		for name, s := range doc.Components.Schemas[rec+".Row"].Value.Properties {
			if s.Value.Format == "date" || s.Value.Format == "date-time" {
				path, dateField = p, name
			}
		}
	}
	if path == "" {
		t.Fatal("the demo has no record with a date field")
	}
	r := newSpecRequest(path, url.Values{})
	route, pathParams, err := router.FindRoute(r)
	if err != nil {
		t.Fatal(err)
	}
	reqIn := &openapi3filter.RequestValidationInput{Request: r, PathParams: pathParams, Route: route,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	for _, body := range []string{
		`{"page":0,"pageSize":50,"total":1,"sort":[],"content":[{"` + dateField + `":"yesterday"}]}`,
		`{"page":0,"pageSize":50,"total":1,"sort":[],"content":[{"NO_SUCH_FIELD":1}]}`,
		`{"page":0,"pageSize":50,"total":1,"content":[]}`,
		`{"page":"0","pageSize":50,"total":1,"sort":[],"content":[]}`,
	} {
		w := httptest.NewRecorder()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		w.Body.WriteString(body)
		if err := validateResponse(reqIn, w); err == nil {
			t.Errorf("body %s validates against %s", body, path)
		}
	}
	w := httptest.NewRecorder()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(200)
	w.Body.WriteString(`{"page":0,"pageSize":50,"total":1,"sort":[],"content":[{"` + dateField + `":null}]}`)
	if err := validateResponse(reqIn, w); err != nil {
		t.Errorf("a valid body fails: %v", err)
	}
}
