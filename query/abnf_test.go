package query

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// abnfFile holds the official OData ABNF test cases (OASIS odata-abnf). It lives beside the
// project, read-only; the test skips when it is absent.
const abnfFile = "../../shared/reference/odata-abnf-testcases.yaml"

type abnfCase struct {
	Name   string `yaml:"Name"`
	Rule   string `yaml:"Rule"`
	Input  string `yaml:"Input"`
	FailAt *int   `yaml:"FailAt"`
}

func loadABNF(t *testing.T) []abnfCase {
	t.Helper()
	data, err := os.ReadFile(abnfFile)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s is absent", abnfFile)
	}
	if err != nil {
		t.Fatal(err)
	}
	// One input holds a raw tab, which YAML does not allow in a plain scalar: quote the
	// values of such lines before decoding.
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if k, v, ok := strings.Cut(l, ": "); ok && strings.Contains(v, "\t") {
			lines[i] = k + ": " + strconv.Quote(v)
		}
	}
	var doc struct {
		TestCases []abnfCase `yaml:"TestCases"`
	}
	if err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.TestCases) < 800 {
		t.Fatalf("read %d test cases, expected the full set of about 840", len(doc.TestCases))
	}
	return doc.TestCases
}

// exprRules are the rules of filter expressions and their parts: their inputs go through
// Parse whole.
var exprRules = map[string]bool{
	"filter": true, "boolCommonExpr": true, "boolcommonExpr": true, "commonExpr": true,
	"notExpr": true, "firstMemberExpr": true, "propertyPathExpr": true, "anyExpr": true,
	"isofExpr": true,
}

// literalRules map the literal rules inside the grammar to the literal kinds that satisfy
// them; their inputs must scan as exactly one literal of such a kind. Rules named ...Value
// are payload forms, checked as they are; the others are URL forms, percent-decoded first
// as the HTTP layer does.
var literalRules = map[string][]LiteralKind{
	"boolean": {LitBoolean}, "booleanValue": {LitBoolean},
	"date": {LitDate}, "dateValue": {LitDate},
	"dateTimeOffsetValue": {LitDateTime}, "dateTimeOffsetLiteral": {LitDateTime}, "dateTimeOffsetValueInUrl": {LitDateTime},
	"timeOfDayValue": {LitTime}, "timeOfDayLiteral": {LitTime},
	"decimalValue": {LitInteger, LitDecimal}, "decimalLiteral": {LitInteger, LitDecimal},
	"doubleValue": {LitInteger, LitDecimal}, "doubleLiteral": {LitInteger, LitDecimal},
	"singleValue": {LitInteger, LitDecimal}, "singleLiteral": {LitInteger, LitDecimal},
	"byteValue": {LitInteger}, "sbyteValue": {LitInteger}, "sbyteLiteral": {LitInteger},
	"stringLiteral":    {LitString},
	"primitiveLiteral": {LitString, LitInteger, LitDecimal, LitBoolean, LitDate, LitDateTime, LitTime},
}

// scanLiteral reports the kind of s when s is exactly one literal (bare words and null
// do not count).
func scanLiteral(s string) (LiteralKind, bool) {
	if strings.HasPrefix(s, "'") {
		lx := lexer{src: s}
		tok := lx.str(0)
		return LitString, tok.end == len(s)
	}
	kind, _ := classify(s)
	return kind, kind != LitBare && kind != LitNull
}

func containsBare(e Expr) bool {
	switch e := e.(type) {
	case *Logical:
		return containsBare(e.L) || containsBare(e.R)
	case *Not:
		return containsBare(e.X)
	case *Compare:
		return e.Value.Kind == LitBare
	case *Call:
		return e.Arg.Kind == LitBare
	case *In:
		for _, v := range e.Values {
			if v.Kind == LitBare {
				return true
			}
		}
	}
	return false
}

// TestABNFConformance runs the official OData ABNF test cases of the rules inside the
// filter grammar. Valid inputs must parse, or fail with KindUnsupported when they are OData
// outside the subset (never KindSyntax); invalid inputs must fail. Where the grammar is
// deliberately different, cases are excluded by class:
//
//   - bare words: the legacy form "field eq value" takes an unquoted word as a value typed
//     by the field, so an official reject such as a property name inside an in list is a
//     list of bare words here.
//   - lower-case literals: true, false and null are lower case here, as the keywords are;
//     OData also reads tRUe.
//   - special numbers: INF, -INF and NaN are not literals here (the fields they would be
//     compared with never hold them).
//   - long and negative years: dates are 0000 to 9999 (the range clients send and the
//     executors store).
//   - query option syntax: the "$filter=" part, and white space around "=", is the HTTP
//     layer's; the parser takes the expression, and allows white space around it.
func TestABNFConformance(t *testing.T) {
	cases := loadABNF(t)
	var ran, matched, excluded, outOfScope, accepted, unsupported int
	excludedBy := map[string]int{}
	exclude := func(class string) { excluded++; excludedBy[class]++ }
	for _, c := range cases {
		valid := c.FailAt == nil
		if kinds, ok := literalRules[c.Rule]; ok {
			in := c.Input
			if !strings.HasSuffix(c.Rule, "Value") {
				if d, err := url.PathUnescape(in); err == nil {
					in = d
				}
			}
			switch {
			case valid && (in == "INF" || in == "-INF" || in == "NaN"):
				exclude("special numbers")
				continue
			case valid && strings.HasPrefix(in, "-") && (strings.HasPrefix(c.Rule, "date")):
				exclude("long and negative years")
				continue
			case valid && strings.ToLower(in) != in && (c.Rule == "boolean" || c.Rule == "booleanValue"):
				exclude("lower-case literals")
				continue
			}
			ran++
			kind, ok := scanLiteral(in)
			accepted := ok && slices.Contains(kinds, kind)
			if accepted == valid {
				matched++
			} else {
				t.Errorf("%s (rule %s) %q: accepted %v, official verdict valid=%v", c.Name, c.Rule, c.Input, accepted, valid)
			}
			continue
		}
		if !exprRules[c.Rule] {
			outOfScope++
			continue
		}
		in := c.Input
		if c.Rule == "filter" {
			rest, ok := strings.CutPrefix(in, "$filter=")
			if !ok {
				rest, ok = strings.CutPrefix(in, "filter=")
			}
			if !ok || strings.TrimSpace(rest) != rest {
				exclude("query option syntax")
				continue
			}
			in = rest
		}
		if d, err := url.PathUnescape(in); err == nil {
			in = d
		}
		ran++
		e, err := Parse(in)
		var qe *Error
		if err != nil && !errors.As(err, &qe) {
			t.Errorf("%s (rule %s) %q: error %v is not an *Error", c.Name, c.Rule, in, err)
			continue
		}
		switch {
		case valid && err == nil:
			matched++
			accepted++
		case valid && qe.Kind == KindUnsupported:
			matched++
			unsupported++
		case valid:
			t.Errorf("%s (rule %s) %q: valid OData, got %v error %v", c.Name, c.Rule, in, qe.Kind, err)
		case err != nil:
			matched++
		case containsBare(e):
			ran--
			exclude("bare words")
		default:
			t.Errorf("%s (rule %s) %q: invalid (fails at %d) but accepted as %s", c.Name, c.Rule, in, *c.FailAt, Format(e))
		}
	}
	t.Logf("ABNF cases: %d in the file, %d ran, %d matched the official verdict, %d excluded %v, %d out of scope (rules outside the filter grammar)",
		len(cases), ran, matched, excluded, excludedBy, outOfScope)
	t.Logf("valid expressions: %d accepted, %d reported as unsupported", accepted, unsupported)
	if ran < 150 || accepted < 15 || unsupported < 100 {
		t.Errorf("only %d cases ran (%d accepted, %d unsupported); the selection has gone wrong", ran, accepted, unsupported)
	}
}
