package odata

import (
	"errors"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// aggregationCasesEnv names the file of the OASIS "OData Aggregation ABNF Test Cases"
// (abnf/odata-aggregation-testcases.yaml of github.com/oasis-tcs/odata-abnf); see
// DEVELOPERS.md. Without it TestAggregationABNF skips.
const aggregationCasesEnv = "KMKIT_ODATA_AGGREGATION_TESTCASES"

type aggregationCase struct {
	Name   string `yaml:"Name"`
	Rule   string `yaml:"Rule"`
	Input  string `yaml:"Input"`
	FailAt *int   `yaml:"FailAt"`
}

func loadAggregationCases(t *testing.T) []aggregationCase {
	t.Helper()
	path := os.Getenv(aggregationCasesEnv)
	if path == "" {
		t.Skipf("%s is not set: it names the OASIS aggregation ABNF test cases (see DEVELOPERS.md)", aggregationCasesEnv)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TestCases []aggregationCase `yaml:"TestCases"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.TestCases) < 200 {
		t.Fatalf("read %d test cases from %s, expected the full set of about 207", len(doc.TestCases), path)
	}
	return doc.TestCases
}

// applyOption finds the $apply query option among the options of a query string (split
// at "&" outside parentheses and quotes). It returns the option's value and its offset in
// query; ok is false without one.
func applyOption(q string) (value string, offset int, ok bool) {
	depth, quoted, start := 0, false, 0
	for i := 0; i <= len(q); i++ {
		if i == len(q) || (q[i] == '&' && depth == 0 && !quoted) {
			if v, found := strings.CutPrefix(q[start:i], "$apply="); found {
				return v, start + len("$apply="), true
			}
			start = i + 1
			continue
		}
		switch q[i] {
		case '\'':
			quoted = !quoted
		case '(':
			depth++
		case ')':
			depth--
		}
	}
	return "", 0, false
}

// applyStatus is the status ParseApply's answer maps to: 0 when it parses.
func applyStatus(t *testing.T, err error) int {
	t.Helper()
	var p *problem.Problem
	var qe *query.Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &p):
		return p.Status
	case errors.As(err, &qe) && qe.Kind == query.KindUnsupported:
		return http.StatusNotImplemented // as Handler.fail answers it
	case errors.As(err, &qe):
		return qe.Status()
	}
	t.Fatalf("error %v (%T) is neither a problem nor a *query.Error", err, err)
	return 0
}

// modelCases are the invalid cases whose fault is the kind of a name in the file's example
// model (its Constraints: Amount a primitive property rather than a custom aggregate, Sales
// collection-valued, Price primitive, ShipTo a single complex property). ParseApply reads
// $apply without a model, as aggregate(KPI) and groupby((P/Q)) are well formed; the names
// are bound against the Knowledge Model afterwards, which refuses such names with 400
// (TestApplyModelErrors); except grouping along a to-many navigation property, which the
// service answers as the KM API answers a field of a to-many related record (its grain
// rule), beyond the extension.
var modelCases = map[string]bool{
	"aggregate - forbidden arithmetic on collection":              true,
	"aggregate - property requires method":                        true,
	"aggregate - property requires method and alias":              true,
	"aggregate - property from requires with 2":                   true,
	"aggregate - groupby no two consecutive primitive properties": true,
	"aggregate - join with single-valued complex property":        true,
	"aggregation methods - collection-valued navigation property": true,
}

// TestAggregationABNF runs the official aggregation ABNF test cases through ParseApply.
// A valid $apply parses, or is 501 when it is valid but outside what the service serves;
// never 400. An invalid one is 400 (never 501 for malformed text). The file's rules are
// queryOptions (a query string), odataRelativeUri (a resource path, possibly with a query)
// and commonExpr; only the $apply option of an input is the parser's, so a case is skipped,
// with its reason counted, when:
//
//   - it has no $apply option (the extension's $filter, $orderby and $compute functions,
//     context URLs, paths ending in an aggregate call, a lone expression);
//   - it is invalid at a position outside its $apply value (another option is at fault);
//   - it is invalid only by the kinds of the example model's names (modelCases).
func TestAggregationABNF(t *testing.T) {
	cases := loadAggregationCases(t)
	var ran, parsed, unsupported, refused int
	skipped := map[string]int{}
	for _, c := range cases {
		valid := c.FailAt == nil
		in := c.Input
		if c.Rule == "odataRelativeUri" {
			_, q, found := strings.Cut(in, "?")
			if !found {
				skipped["no $apply: a resource path or context URL"]++
				continue
			}
			in = q
		}
		text, offset, ok := applyOption(in)
		if !ok {
			skipped["no $apply: "+c.Rule+" of another query option or an expression"]++
			continue
		}
		if !valid && *c.FailAt != 0 && *c.FailAt < offset+(len(c.Input)-len(in)) {
			skipped["invalid before $apply (in the path or another option)"]++
			continue
		}
		if !valid && *c.FailAt > offset+len(text)+(len(c.Input)-len(in)) {
			skipped["invalid after $apply (in another option)"]++
			continue
		}
		if modelCases[c.Name] {
			skipped["invalid by the example model's kinds of names, not by syntax"]++
			continue
		}
		if d, err := url.QueryUnescape(text); err == nil {
			text = d
		}
		ran++
		status := applyStatus(t, parseApplySafely(t, text))
		switch {
		case valid && status == 0:
			parsed++
		case valid && status == http.StatusNotImplemented:
			unsupported++
		case valid:
			t.Errorf("%s (rule %s) %q: valid OData, answered %d", c.Name, c.Rule, text, status)
		case status == http.StatusBadRequest:
			refused++
		default:
			t.Errorf("%s (rule %s) %q: invalid at %d, answered %d (want 400)", c.Name, c.Rule, text, *c.FailAt, status)
		}
	}
	reasons := make([]string, 0, len(skipped))
	for r := range skipped {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	t.Logf("%d cases: %d ran ($apply: %d parsed, %d answered 501, %d refused with 400)", len(cases), ran, parsed, unsupported, refused)
	for _, r := range reasons {
		t.Logf("skipped %d: %s", skipped[r], r)
	}
	if ran < 150 {
		t.Errorf("only %d cases ran: the file or the selection is not what it was", ran)
	}
}

// parseApplySafely is ParseApply, turning a panic into a test failure with the input.
func parseApplySafely(t *testing.T, text string) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("ParseApply(%q) panicked: %v", text, r)
			err = nil
		}
	}()
	_, err = ParseApply(text)
	return err
}

// TestApplyModelErrors: the faults of modelCases, written for the demo's Knowledge Model,
// are refused with 400 once the names are bound: a property where a custom aggregate (a
// KPI) is expected, a path continuing after a primitive property.
func TestApplyModelErrors(t *testing.T) {
	h := testHandler(t)
	for _, apply := range []string{
		"aggregate(NET_VALUE)",
		"aggregate(NET_VALUE as Total)",
		"groupby((STATUS/NET_VALUE))",
	} {
		w := get(h, svc+"/ORDERS_entries?$apply="+esc(apply))
		if w.Code != http.StatusBadRequest {
			t.Errorf("$apply=%s: status %d, want 400: %s", apply, w.Code, w.Body)
		}
	}
}
