package odata

import (
	"net/http"
	"strings"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
)

// $search is answered by the Knowledge Model API's fuzzy search (km.SearchRequest): the
// term is one word or one double-quoted phrase, searched with the default precision
// (km.DefaultSearchPrecision) in the string and time properties the answer has (all of
// them without $select, those of $select otherwise), as searchTerm without searchField
// searches the selected fields. A row matches when its best score reaches the precision;
// without $orderby, matches come best score first.
//
// The boolean forms of OData's searchExpr (AND, OR, NOT, several words, parentheses) are
// valid OData the fuzzy search does not express: they are 501, and
// Capabilities.SearchRestrictions lists them as UnsupportedExpressions.

// searchUnsupported are the members of Capabilities.SearchExpressions $search does not
// serve, as $metadata lists them.
var searchUnsupported = []string{"AND", "OR", "NOT", "group"}

// parseSearch reads $search: a word (no space, parenthesis or double quote, and not AND,
// OR or NOT) or a phrase in double quotes, in which \" and \\ escape a quote and a
// backslash. It returns the term the fuzzy search looks for.
func parseSearch(v string) (string, error) {
	s := strings.TrimFunc(v, spaceOrPlus)
	if s == "" {
		return "", badOption(problem.CodeParameterIllegal, "$search is empty: want a word or a phrase in double quotes")
	}
	if err := searchSyntax(s); err != nil {
		return "", err
	}
	if s[0] == '"' {
		term, rest, err := readPhrase(s)
		if err != nil {
			return "", err
		}
		if strings.TrimFunc(rest, spaceOrPlus) != "" {
			return "", searchNotSupported(v)
		}
		if strings.TrimSpace(term) == "" {
			return "", badOption(problem.CodeParameterIllegal, "$search is an empty phrase: want a word or a phrase in double quotes")
		}
		return term, nil
	}
	if strings.ContainsAny(s, searchSeparators) {
		return "", searchNotSupported(v)
	}
	switch s {
	case "AND", "OR", "NOT":
		return "", badOption(problem.CodeParameterIllegal, "$search is the operator %s alone: want a word or a phrase in double quotes", s)
	}
	return s, nil
}

// searchSeparators end a word of $search.
const searchSeparators = " \t+()\""

// searchSyntax refuses (400) text that OData's searchExpr does not produce whatever its
// operators: a double quote inside a word or right after a phrase, an unclosed phrase,
// parentheses that do not pair. Valid expressions beyond one term are left to the 501.
func searchSyntax(s string) error {
	refuse := func(why string) error {
		return withTarget(badOption(problem.CodeParameterIllegal, "$search %s: %s", short(s), why), "$search")
	}
	const quoted = "a double quote inside a word; a phrase is in double quotes, apart from other terms"
	depth := 0
	for i := 0; i < len(s); {
		switch s[i] {
		case ' ', '\t', '+':
			i++
			continue
		case '(':
			depth++
			i++
			continue
		case ')':
			if depth--; depth < 0 {
				return refuse("the parentheses do not pair")
			}
			i++
			continue
		case '"':
			_, rest, err := readPhrase(s[i:])
			if err != nil {
				return err
			}
			if i = len(s) - len(rest); i < len(s) && !strings.ContainsRune(" \t+)", rune(s[i])) {
				return refuse(quoted)
			}
		default:
			i += strings.IndexAny(s[i:]+" ", searchSeparators)
		}
		if i < len(s) && s[i] == '"' {
			return refuse(quoted)
		}
	}
	if depth != 0 {
		return refuse("the parentheses do not pair")
	}
	return nil
}

// readPhrase reads the phrase at the start of s (s[0] is the opening quote) and returns
// its text, unescaped, and what follows the closing quote.
func readPhrase(s string) (string, string, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
				b.WriteByte(s[i+1])
				i++
				continue
			}
			return "", "", badOption(problem.CodeParameterIllegal, "$search phrase %s: a backslash escapes only \" and \\", short(s))
		case '"':
			return b.String(), s[i+1:], nil
		default:
			b.WriteByte(c)
		}
	}
	return "", "", badOption(problem.CodeParameterIllegal, "$search phrase %s has no closing double quote", short(s))
}

// searchNotSupported is the 501 of a valid search expression beyond one word or phrase.
func searchNotSupported(v string) error {
	return problem.New(http.StatusNotImplemented, CodeOptionNotSupported,
		"$search "+short(strings.TrimSpace(v))+": only one word or one phrase in double quotes is supported (the fuzzy search of the Knowledge Model API); AND, OR, NOT, several words and parentheses are not")
}

// searchRequest returns the fuzzy search of term over the string and time properties
// among out (indexes into et.props), with the default precision. Without such a property
// it is a 400 saying which properties $search looks at.
func searchRequest(et *entityType, out []int, term string) (*km.SearchRequest, error) {
	sr := &km.SearchRequest{Term: term, Precision: -1}
	for _, i := range out {
		if p := et.props[i]; p.field != nil && p.typ.Searchable() {
			sr.Fields = append(sr.Fields, p.field.ID)
		}
	}
	if len(sr.Fields) == 0 {
		return nil, withTarget(badOption(problem.CodeParameterIllegal,
			"$search looks in the string and time properties of the answer, and %s has none: $select one", short(et.name)), "$search")
	}
	return sr, nil
}

// searchRestrictionsXML and searchRestrictionsJSON are the Capabilities.SearchRestrictions
// of every entity set: searchable, without the expressions of searchUnsupported.
var searchRestrictionsXML, searchRestrictionsJSON = searchRestrictions()

func searchRestrictions() (string, string) {
	members := make([]string, len(searchUnsupported))
	for i, m := range searchUnsupported {
		members[i] = capabilitiesAlias + ".SearchExpressions/" + m
	}
	x := `<Annotation Term="` + capabilitiesAlias + `.SearchRestrictions"><Record><PropertyValue Property="Searchable" Bool="true"/>` +
		`<PropertyValue Property="UnsupportedExpressions" EnumMember="` + strings.Join(members, " ") + `"/></Record></Annotation>`
	j := `,"@` + capabilitiesAlias + `.SearchRestrictions":{"Searchable":true,"UnsupportedExpressions":"` + strings.Join(searchUnsupported, ",") + `"}`
	return x, j
}
