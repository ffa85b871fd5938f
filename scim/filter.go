package scim

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/scim2/filter-parser/v2"
)

// maxFilterLength bounds the filter expression; identity providers send short ones.
const maxFilterLength = 4096

// filterAttrs are the attributes a filter may compare, by resource type, in canonical case.
var filterAttrs = map[string][]string{
	"User":  {"userName", "externalId", "id", "displayName"},
	"Group": {"displayName", "externalId", "id"},
}

// valuePathCompare matches a comparison on a sub-attribute of a value path, as in
// `emails[type eq "work"].value eq "x"` (which Entra ID sends and RFC 7644's grammar does
// not have), so that it can be rewritten to the equivalent `emails[type eq "work" and
// value eq "x"]`.
var valuePathCompare = regexp.MustCompile(`(?i)([A-Za-z][\w$-]*)\[([^\[\]"]*(?:"(?:[^"\\]|\\.)*"[^\[\]"]*)*)\]\.([A-Za-z][\w$-]*)\s+(eq|ne|co|sw|ew|gt|ge|lt|le)\s+("(?:[^"\\]|\\.)*"|true|false|null|[-+.\deE]+)`)

// parseFilter turns a SCIM filter on a resource type ("User" or "Group") into a conjunction
// of equalities. Only eq and and are supported, on the attributes of filterAttrs; any other
// construct is an error whose message says what is not supported.
func parseFilter(s, resourceType string) ([]Equal, error) {
	if len(s) > maxFilterLength {
		return nil, fmt.Errorf("the filter is longer than %d bytes", maxFilterLength)
	}
	expr, err := parseFilterText(s, func(s string) string {
		return valuePathCompare.ReplaceAllString(s, "$1[$2 and $3 $4 $5]")
	})
	if errors.As(err, new(nulError)) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("the filter %q is not valid SCIM filter syntax", Echo(s))
	}
	var out []Equal
	if err := collectEqualities(expr, resourceType, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// parseFilterText parses a filter (or a valFilter) whose string literals are JSON strings,
// as RFC 7644 section 3.4.2.2 has them (compValue is RFC 7159's string). The filter parser
// keeps a literal's escapes as written, so that "Sales \"EMEA\"" would compare with a
// text holding backslashes, and refuses some of them ("Gr\u00fc\u00dfe"). So each literal
// is decoded here and the parser sees its number, as a string, in its place; rewrite, when
// not nil, changes the text with the literals so replaced before it is parsed.
func parseFilterText(s string, rewrite func(string) string) (filter.Expression, error) {
	var b strings.Builder
	var texts []string
	for i := 0; i < len(s); i++ {
		end := -1
		if s[i] == '"' {
			end = stringEnd(s, i)
		}
		if end < 0 {
			b.WriteByte(s[i])
			continue
		}
		var text string
		if err := json.Unmarshal([]byte(s[i:end+1]), &text); err != nil {
			return nil, fmt.Errorf("%s is not a JSON string: %w", Echo(s[i:end+1]), err)
		}
		if strings.IndexByte(text, 0) >= 0 {
			// As anywhere in a request: no store holds it (PostgreSQL refuses it).
			return nil, nulError(s[i : end+1])
		}
		b.WriteString(strconv.Quote(strconv.Itoa(len(texts))))
		texts = append(texts, text)
		i = end
	}
	text := b.String()
	if rewrite != nil {
		text = rewrite(text)
	}
	expr, err := filter.ParseFilter([]byte(text))
	if err != nil {
		return nil, err
	}
	restoreTexts(expr, texts)
	return expr, nil
}

// nulError is the error of a filter string that decodes to a NUL character.
type nulError string

func (e nulError) Error() string {
	return fmt.Sprintf("the string %s of the filter contains a NUL character (U+0000): text in requests must be UTF-8 without NUL characters", Echo(e))
}

// stringEnd returns the index of the quote that closes the JSON string opening at s[open],
// or -1 when it is not closed.
func stringEnd(s string, open int) int {
	for i := open + 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// restoreTexts puts the decoded literals back in place of their numbers.
func restoreTexts(e filter.Expression, texts []string) {
	switch e := e.(type) {
	case *filter.LogicalExpression:
		restoreTexts(e.Left, texts)
		restoreTexts(e.Right, texts)
	case *filter.NotExpression:
		restoreTexts(e.Expression, texts)
	case *filter.ValuePath:
		restoreTexts(e.ValueFilter, texts)
	case *filter.AttributeExpression:
		if s, ok := e.CompareValue.(string); ok {
			if i, err := strconv.Atoi(s); err == nil && i >= 0 && i < len(texts) {
				e.CompareValue = texts[i]
			}
		}
	}
}

func collectEqualities(e filter.Expression, resourceType string, out *[]Equal) error {
	switch e := e.(type) {
	case *filter.LogicalExpression:
		if e.Operator != filter.AND {
			return fmt.Errorf("the operator %q is not supported: filters combine terms with \"and\" only", Echo(e.Operator))
		}
		if err := collectEqualities(e.Left, resourceType, out); err != nil {
			return err
		}
		return collectEqualities(e.Right, resourceType, out)
	case *filter.AttributeExpression:
		name, err := filterAttribute(e.AttributePath, resourceType)
		if err != nil {
			return err
		}
		if e.Operator != filter.EQ {
			return fmt.Errorf("the operator %q is not supported: filters compare with \"eq\" only", Echo(e.Operator))
		}
		v, ok := e.CompareValue.(string)
		if !ok {
			return fmt.Errorf("the attribute %s must be compared with a quoted string", Echo(name))
		}
		*out = append(*out, Equal{Attr: name, Value: v})
		return nil
	case *filter.NotExpression:
		return fmt.Errorf("the operator \"not\" is not supported in filters")
	case *filter.ValuePath:
		return valuePathEqualities(e, resourceType, out)
	}
	return fmt.Errorf("the filter is not supported")
}

// valuePathEqualities reads the value filters this package supports: on users
// emails[value eq "x" and type eq "t"] (type optional), on groups members[value eq "id"].
func valuePathEqualities(e *filter.ValuePath, resourceType string, out *[]Equal) error {
	multi, attr := "emails", EmailFilter
	if resourceType == "Group" {
		multi, attr = "members", MemberFilter
	}
	name := e.AttributePath.AttributeName
	unsupported := fmt.Errorf("the value filter on %s is not supported: %s filters may use %s[value eq \"...\"]%s",
		Echo(name), resourceType, multi, map[bool]string{true: ` with "and type eq \"...\""`, false: ""}[multi == "emails"])
	if !strings.EqualFold(name, multi) || e.AttributePath.SubAttribute != nil {
		return unsupported
	}
	if e.AttributePath.URIPrefix != nil && !strings.EqualFold(e.AttributePath.URI(), coreSchemaOf(resourceType)) {
		return unsupported
	}
	var inner []*filter.AttributeExpression
	var walk func(x filter.Expression) bool
	walk = func(x filter.Expression) bool {
		switch x := x.(type) {
		case *filter.LogicalExpression:
			return x.Operator == filter.AND && walk(x.Left) && walk(x.Right)
		case *filter.AttributeExpression:
			inner = append(inner, x)
			return true
		}
		return false
	}
	if !walk(e.ValueFilter) {
		return unsupported
	}
	t := Equal{Attr: attr}
	var hasValue bool
	for _, x := range inner {
		v, ok := x.CompareValue.(string)
		sub := strings.ToLower(x.AttributePath.AttributeName)
		switch {
		case x.Operator != filter.EQ || !ok || x.AttributePath.SubAttribute != nil:
			return unsupported
		case sub == "value" && !hasValue:
			t.Value, hasValue = v, true
		case sub == "type" && multi == "emails" && t.Type == "":
			t.Type = v
		default:
			return unsupported
		}
	}
	if !hasValue {
		return unsupported
	}
	*out = append(*out, t)
	return nil
}

func filterAttribute(p filter.AttributePath, resourceType string) (string, error) {
	supported := filterAttrs[resourceType]
	if sub := strings.ToLower(p.SubAttributeName()); sub == "value" && p.URIPrefix == nil {
		switch {
		case resourceType == "User" && strings.EqualFold(p.AttributeName, "emails"):
			return EmailFilter, nil
		case resourceType == "Group" && strings.EqualFold(p.AttributeName, "members"):
			return MemberFilter, nil
		}
	}
	bad := func() error {
		return fmt.Errorf("filtering on %s is not supported: %s filters may use %s", Echo(p.String()), resourceType,
			strings.Join(supported, ", "))
	}
	if p.SubAttribute != nil {
		return "", bad()
	}
	if p.URIPrefix != nil && !strings.EqualFold(p.URI(), coreSchemaOf(resourceType)) {
		return "", bad()
	}
	for _, a := range supported {
		if strings.EqualFold(a, p.AttributeName) {
			return a, nil
		}
	}
	return "", bad()
}

// sortAttrs are the attributes lists may be sorted by, by resource type.
var sortAttrs = map[string][]string{
	"User":  {"userName", "displayName", "externalId", "id", "meta.created", "meta.lastModified"},
	"Group": {"displayName", "externalId", "id", "meta.created", "meta.lastModified"},
}

// parseSort reads sortBy and sortOrder (RFC 7644 section 3.4.2.3); sortOrder without
// sortBy is ignored, as the RFC says.
func parseSort(sortBy, sortOrder, resourceType string) (SortKey, *Error) {
	var k SortKey
	switch strings.ToLower(sortOrder) {
	case "", "ascending":
	case "descending":
		k.Descending = true
	default:
		e := badValue("sortOrder must be ascending or descending, not %q.", Echo(sortOrder))
		return k, &e
	}
	if sortBy == "" {
		return SortKey{}, nil
	}
	name := sortBy
	if p := coreSchemaOf(resourceType) + ":"; len(name) > len(p) && strings.EqualFold(name[:len(p)], p) {
		name = name[len(p):]
	}
	for _, a := range sortAttrs[resourceType] {
		if strings.EqualFold(a, name) {
			k.Attr = a
			return k, nil
		}
	}
	e := badValue("Sorting by %s is not supported: %s lists sort by %s.", Echo(sortBy), resourceType, strings.Join(sortAttrs[resourceType], ", "))
	return k, &e
}

// filterError is the 400 invalidFilter answer to a filter parseFilter refused.
func filterError(err error) Error {
	msg := err.Error()
	return apiError(StatusBadRequest, TypeInvalidFilter, "%s%s.", strings.ToUpper(msg[:1]), msg[1:])
}

// ParseFilter turns the filter of a list request on a resource type ("User" or "Group")
// into the conjunction of equalities a ListQuery takes. Only eq and and are supported, on
// the attributes the package documentation lists; anything else is a 400 invalidFilter
// Error naming the unsupported part.
func ParseFilter(s, resourceType string) ([]Equal, *Error) {
	terms, err := parseFilter(s, resourceType)
	if err != nil {
		e := filterError(err)
		return nil, &e
	}
	return terms, nil
}

// ParseSort reads sortBy and sortOrder of a list request (RFC 7644 section 3.4.2.3) on a
// resource type ("User" or "Group"); sortOrder without sortBy is ignored. An attribute
// lists cannot be sorted by, or a sortOrder other than ascending or descending, is a 400
// invalidValue Error.
func ParseSort(sortBy, sortOrder, resourceType string) (SortKey, *Error) {
	return parseSort(sortBy, sortOrder, resourceType)
}

func coreSchemaOf(resourceType string) string {
	if resourceType == "Group" {
		return GroupSchema
	}
	return UserSchema
}
