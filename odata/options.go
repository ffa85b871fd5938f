package odata

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/kmkit/kmkit/internal/kmparams"
	"github.com/kmkit/kmkit/internal/rawquery"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// Error codes the OData handler adds to those of the problem, query and km packages.
const (
	// CodeOptionNotSupported: a system query option, or a form of one, that valid OData
	// allows and this service does not implement ($compute, a nested $expand, a transformation of $apply, a path in $orderby ...).
	CodeOptionNotSupported = "ODATA_OPTION_NOT_SUPPORTED"
	// CodeOptionRepeated: a system query option given more than once.
	CodeOptionRepeated = "ODATA_OPTION_REPEATED"
	// CodeVersionNotSupported: the client's OData-MaxVersion is below the 4.0 the
	// service speaks.
	CodeVersionNotSupported = "ODATA_VERSION_NOT_SUPPORTED"
)

// Format is a representation of an OData answer.
type Format uint8

// The representations. FormatDefault means the request did not say: the Accept header,
// then the resource's default decide.
const (
	FormatDefault Format = iota
	FormatJSON           // JSON: OData JSON, CSDL JSON
	FormatXML            // XML: Atom feeds, AtomPub service documents, CSDL XML
)

// String returns "default", "json" or "xml".
func (f Format) String() string {
	switch f {
	case FormatJSON:
		return "json"
	case FormatXML:
		return "xml"
	}
	return "default"
}

// QueryOptions are the query options of an OData request, checked for syntax but not yet
// against an entity type.
type QueryOptions struct {
	// Format is what $format asks for; FormatDefault when absent.
	Format Format
	// IEEE754Compatible is set by $format=application/json;IEEE754Compatible=true: Int64
	// values and @odata.count are then written as JSON strings.
	IEEE754Compatible bool
	// Metadata is the odata.metadata parameter of $format (none, minimal or full, lower
	// case), "" when absent.
	Metadata string
	// Select lists the properties of $select in order, duplicates dropped; nil when absent
	// or "*" (every property).
	Select []string
	// Top is $top, or -1 when absent. Skip is $skip (0 when absent).
	Top, Skip int
	// Filter is the parsed (unbound) $filter, nil when absent; FilterText its source.
	Filter     query.Expr
	FilterText string
	// OrderBy lists the keys of $orderby in priority order.
	OrderBy []query.SortTerm
	// Count is $count=true.
	Count bool
	// Apply is the parsed $apply (ParseApply), nil when absent.
	Apply *Apply
	// Search is the term of $search (a word, or a phrase without its quotes), "" when
	// absent; see parseSearch.
	Search string
	// FilterIDs are the predefined KM filters named by filterid (comma-separated and/or
	// repeated), duplicates dropped.
	FilterIDs []string
	// Expand lists the navigation properties of $expand in order, each with its nested
	// options; nil when absent.
	Expand []ExpandItem
}

// ExpandItem is one navigation property of $expand with its nested options ($select,
// $filter, $orderby, $top, $skip, $count, and $expand in Options.Expand);
// Options.Top is -1 when not given.
type ExpandItem struct {
	Nav     string
	Options *QueryOptions
	// Levels is the nested $levels: 0 when absent, -1 for max.
	Levels int
}

// MaxExpandLevels is how deep $expand items may nest: NAV($expand=NAV2($expand=NAV3))
// is three levels. $metadata states it as ExpandRestrictions/MaxLevels.
const MaxExpandLevels = 4

// system query options by their canonical name (lower case, without "$").
const (
	optFormat  = "format"
	optSelect  = "select"
	optTop     = "top"
	optSkip    = "skip"
	optFilter  = "filter"
	optOrderBy = "orderby"
	optCount   = "count"
	optSearch  = "search"
	optApply   = "apply"
	optExpand  = "expand"
	optLevels  = "levels"
)

// unsupportedOptions are valid OData system query options this service does not offer.
var unsupportedOptions = map[string]string{
	"compute":       "computed properties are not offered",
	"index":         "ordinal access is not offered",
	"schemaversion": "the service has one schema version",
	"deltatoken":    "delta links are not offered",
	"skiptoken":     "next links page with $skip",
	"id":            "entity references are not offered",
}

// ParseQueryOptions reads the query options of a raw query string (the part of the URL
// after "?") with rawquery.Parse: pairs split at "&" only, so a ";" inside $filter
// survives; "+" is a space except as the sign of a time offset (T15:48+03:00), and %2B is
// a plus. In $select and $orderby a plus also separates words, since no name contains
// one; in $format a space stands for the "+" of a media type (application/atom+xml).
//
// System option names are matched without regard to case, with or without the "$"
// prefix, as OData 4.01 has it; each may occur once. filterid may be repeated and
// comma-separated. Other names starting with "$" or "@" are errors; any other custom
// option is ignored, as OData requires.
//
// Options for the filter parser (query.WithLimits) apply to $filter.
//
// Errors are *problem.Problem values (415 for an unknown $format, 400 otherwise) or
// *query.Error values (400) for $filter and paging, each saying what was wrong.
func ParseQueryOptions(raw string, filterOpts ...query.Option) (*QueryOptions, error) {
	params, err := rawquery.Parse(raw)
	if err != nil {
		return nil, err
	}
	o := &QueryOptions{Top: -1}
	seen := map[string]bool{}
	for _, p := range params {
		name, system := optionName(p.Key)
		if !system {
			switch {
			case strings.HasPrefix(p.Key, "@"):
				return nil, badOption(CodeOptionNotSupported, "parameter aliases such as %s are not supported; write the value into the expression", short(p.Key))
			case strings.HasPrefix(p.Key, "$"):
				return nil, badOption(problem.CodeParameterIllegal, "unknown system query option %s (supported: $select, $filter, $orderby, $top, $skip, $count, $search, $apply, $expand, $format)", short(p.Key))
			case strings.EqualFold(p.Key, "filterid"):
				for _, id := range kmparams.ParseList([]string{p.Value}) {
					if !slices.Contains(o.FilterIDs, id) {
						o.FilterIDs = append(o.FilterIDs, id)
					}
				}
			}
			continue
		}
		if why, ok := unsupportedOptions[name]; ok {
			// Valid OData the service does not implement: 501 (OData's Minimal
			// conformance level), as unsupported $filter features are.
			return nil, problem.New(http.StatusNotImplemented, CodeOptionNotSupported, fmt.Sprintf("$%s is not supported: %s", name, why))
		}
		if name == optLevels {
			return nil, badOption(problem.CodeParameterIllegal, "$levels is an option of an $expand item: $expand=NAV($levels=1)")
		}
		if seen[name] {
			return nil, badOption(CodeOptionRepeated, "$%s is given more than once", name)
		}
		seen[name] = true
		if err := o.set(name, p.Value, filterOpts); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// optionName returns the canonical name of a system query option, and whether key names
// one (supported or not).
func optionName(key string) (string, bool) {
	name := strings.ToLower(strings.TrimPrefix(key, "$"))
	switch name {
	case optFormat, optSelect, optTop, optSkip, optFilter, optOrderBy, optCount, optSearch, optApply:
		return name, true
	}
	if _, ok := unsupportedOptions[name]; ok || name == optExpand || name == optLevels {
		// Without "$" these are plain words a host may use as custom options.
		return name, strings.HasPrefix(key, "$")
	}
	return "", false
}

func (o *QueryOptions) set(name, v string, filterOpts []query.Option) error {
	var err error
	switch name {
	case optFormat:
		o.Format, o.IEEE754Compatible, o.Metadata, err = parseFormat(v)
	case optSelect:
		o.Select, err = parseSelect(v)
	case optTop:
		o.Top, err = parseCount("$top", v)
	case optSkip:
		o.Skip, err = parseCount("$skip", v)
	case optCount:
		switch strings.ToLower(strings.TrimSpace(v)) { // true and false in any case (4.01)
		case "true":
			o.Count = true
		case "false":
			o.Count = false
		default:
			err = badOption(problem.CodeParameterMismatch, "$count is %q: want true or false", short(v))
		}
	case optFilter:
		o.FilterText = v
		o.Filter, err = query.Parse(v, append([]query.Option{query.WithParam("$filter"), query.ODataSyntax()}, filterOpts...)...)
	case optOrderBy:
		o.OrderBy, err = parseOrderBy(v)
	case optSearch:
		o.Search, err = parseSearch(v)
	case optApply:
		o.Apply, err = ParseApply(v, filterOpts...)
	case optExpand:
		o.Expand, err = parseExpand(v, filterOpts, 1)
	}
	return err
}

// parseExpand reads $expand at nesting level depth (1 for the request's own): a comma
// list of navigation property names, each optionally followed by nested options in
// parentheses, separated by ";" (ORDERS($select=ID;$top=2;$expand=EVENTS)). The nested
// options $select, $filter, $orderby, $top, $skip, $count, $expand (down to
// MaxExpandLevels) and $levels (a positive integer or max) are read; another nested
// option, "*", a path (NAV/NAV) and $ref are 501.
func parseExpand(v string, filterOpts []query.Option, depth int) ([]ExpandItem, error) {
	if depth > MaxExpandLevels {
		return nil, badOption(problem.CodeConstraint, "$expand nests more than %d levels deep", MaxExpandLevels)
	}
	items, err := splitTop(v, ',')
	if err != nil {
		return nil, err
	}
	var out []ExpandItem
	for _, item := range items {
		item = strings.TrimFunc(item, spaceOrPlus)
		name, rest, hasOpts := strings.Cut(item, "(")
		name = strings.TrimFunc(name, spaceOrPlus)
		switch {
		case name == "*" || strings.HasSuffix(name, "/$ref") || strings.Contains(name, "/"):
			return nil, problem.New(http.StatusNotImplemented, CodeOptionNotSupported, fmt.Sprintf("$expand item %q is not supported: name a navigation property of the entity type (nest $expand inside it for the next level)", short(name)))
		case !isIdentifier(name):
			return nil, badOption(problem.CodeParameterIllegal, "$expand item %q is not a navigation property name", short(item))
		}
		for _, e := range out {
			if e.Nav == name {
				return nil, badOption(CodeOptionRepeated, "$expand names %s more than once", name)
			}
		}
		it := ExpandItem{Nav: name, Options: &QueryOptions{Top: -1}}
		if hasOpts {
			if err := it.parseOptions(item, rest, filterOpts, depth); err != nil {
				return nil, err
			}
		}
		out = append(out, it)
	}
	return out, nil
}

// parseOptions reads the nested options of $expand item (the text after its "(" is rest)
// into it.
func (it *ExpandItem) parseOptions(item, rest string, filterOpts []query.Option, depth int) error {
	name, o := it.Nav, it.Options
	if !strings.HasSuffix(rest, ")") {
		return badOption(problem.CodeParameterIllegal, "$expand item %q: the nested options lack their closing parenthesis", short(item))
	}
	opts, err := splitTop(strings.TrimSuffix(rest, ")"), ';')
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, opt := range opts {
		if strings.TrimFunc(opt, spaceOrPlus) == "" {
			continue // NAV() has no options
		}
		k, val, _ := strings.Cut(opt, "=")
		k = strings.TrimSpace(k)
		sub, ok := optionName(k)
		if !ok || !strings.HasPrefix(k, "$") {
			return badOption(problem.CodeParameterIllegal, "$expand=%s: %q is not a system query option", name, short(opt))
		}
		switch sub {
		case optSelect, optFilter, optOrderBy, optTop, optSkip, optCount, optExpand, optLevels:
		default:
			return problem.New(http.StatusNotImplemented, CodeOptionNotSupported, fmt.Sprintf("$expand=%s: the nested option $%s is not supported; nested $select, $filter, $orderby, $top, $skip, $count, $expand and $levels are", name, sub))
		}
		if seen[sub] {
			return badOption(CodeOptionRepeated, "$expand=%s: $%s is given more than once", name, sub)
		}
		seen[sub] = true
		switch sub {
		case optExpand:
			o.Expand, err = parseExpand(val, filterOpts, depth+1)
		case optLevels:
			it.Levels, err = parseLevels(name, val)
		default:
			err = o.set(sub, val, filterOpts)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// parseLevels reads the value of a nested $levels: a positive integer or max (-1).
func parseLevels(nav, v string) (int, error) {
	v = strings.TrimSpace(v)
	if v == "max" {
		return -1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || v[0] == '+' {
		return 0, badOption(problem.CodeParameterMismatch, "$expand=%s: $levels is %q: want a positive integer or max", nav, short(v))
	}
	return n, nil
}

// splitTop splits s at the separator sep outside parentheses and single-quoted strings.
func splitTop(s string, sep byte) ([]string, error) {
	var out []string
	depth, start, quoted := 0, 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted:
			if c == '\'' {
				quoted = false // a doubled quote reopens at the next character
			}
		case c == '\'':
			quoted = true
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return nil, badOption(problem.CodeParameterIllegal, "$expand %q has an unmatched closing parenthesis", short(s))
			}
		case c == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if depth != 0 || quoted {
		return nil, badOption(problem.CodeParameterIllegal, "$expand %q has an unclosed parenthesis or string", short(s))
	}
	return append(out, s[start:]), nil
}

// parseFormat reads $format: json, xml, atom or a media type (parameters allowed).
// Anything else is 415, and so is an odata.metadata parameter other than none, minimal
// or full.
func parseFormat(v string) (Format, bool, string, error) {
	mt, params, _ := strings.Cut(strings.TrimSpace(v), ";")
	// No media type holds a space: one here is a "+" (atom+xml) decoded as form encoding.
	f := formatOfMediaType(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(mt)), " ", "+"))
	if f == FormatDefault {
		return 0, false, "", problem.New(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMedia,
			fmt.Sprintf("$format %q is not supported: use json, xml, atom, application/json, application/xml or application/atom+xml", short(v)))
	}
	if f != FormatJSON {
		return f, false, "", nil
	}
	ieee, meta, err := jsonParams(params)
	if err != nil {
		return 0, false, "", err
	}
	return f, ieee, meta, nil
}

// formatOfMediaType maps a $format value or a media type (lower case, no parameters).
func formatOfMediaType(mt string) Format {
	switch mt {
	case "json", "application/json":
		return FormatJSON
	case "xml", "atom", "application/xml", "application/atom+xml", "application/atomsvc+xml", "text/xml":
		return FormatXML
	}
	return FormatDefault
}

// jsonParams reads the parameters of a JSON media type: IEEE754Compatible=true, and
// odata.metadata (also "metadata", as OData 4.01 allows) none, minimal or full, any case;
// "" when absent. Another odata.metadata value is 415.
func jsonParams(params string) (ieee754 bool, metadata string, err error) {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.Trim(strings.TrimSpace(v), `"`)
		switch k {
		case "ieee754compatible":
			ieee754 = strings.EqualFold(v, "true")
		case "odata.metadata", "metadata":
			switch lv := strings.ToLower(v); lv {
			case metaNone, metaMinimal, metaFull:
				metadata = lv
			default:
				return false, "", problem.New(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMedia,
					fmt.Sprintf("odata.metadata=%s is not supported: want none, minimal or full", short(v)))
			}
		}
	}
	return ieee754, metadata, nil
}

// parseCount reads $top or $skip: a non-negative decimal integer within int32.
func parseCount(name, v string) (int, error) {
	s := strings.TrimSpace(v)
	n, err := strconv.ParseUint(s, 10, 31)
	if err == nil {
		return int(n), nil
	}
	if s != "" && strings.Trim(s, "0123456789") == "" {
		return 0, badOption(problem.CodeConstraint, "%s is %s: at most %d is allowed", name, short(s), int32(^uint32(0)>>1))
	}
	return 0, badOption(problem.CodeParameterMismatch, "%s is %q: want a non-negative integer", name, short(v))
}

// spaceOrPlus reports whether c separates words in $select and $orderby.
func spaceOrPlus(c rune) bool { return c == ' ' || c == '\t' || c == '+' }

// parseSelect reads $select: "*" or a comma list of property names.
func parseSelect(v string) ([]string, error) {
	var out []string
	all := false
	for item := range strings.SplitSeq(v, ",") {
		name := strings.TrimFunc(item, spaceOrPlus)
		switch {
		case name == "":
			return nil, badOption(problem.CodeParameterIllegal, "$select has an empty item: %q", short(v))
		case name == "*":
			all = true
		case isIdentifier(name):
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		case strings.ContainsAny(name, "/()"):
			return nil, badOption(CodeOptionNotSupported, "$select item %q: paths and options in $select are not supported; name properties", short(name))
		default:
			return nil, badOption(problem.CodeParameterIllegal, "$select item %q is not a property name", short(name))
		}
	}
	if all {
		return nil, nil
	}
	return out, nil
}

// parseOrderBy reads $orderby: a comma list of "property [asc|desc]".
func parseOrderBy(v string) ([]query.SortTerm, error) {
	var keys []query.SortTerm
	for _, item := range kmparams.SplitTopLevel(v) {
		words := strings.FieldsFunc(item, spaceOrPlus)
		if len(words) == 0 {
			return nil, &query.Error{Kind: query.KindParameter, Code: query.CodeSortIsEmpty, Param: "$orderby", Pos: query.NoPos,
				Msg: fmt.Sprintf("an item names no property: %q", short(v))}
		}
		k := query.SortTerm{}
		if n := len(words); n >= 2 {
			switch strings.ToLower(words[n-1]) { // OData 4.01: case-insensitive
			case "asc":
				words = words[:n-1]
			case "desc":
				k.Desc = true
				words = words[:n-1]
			}
		}
		k.Field = strings.Join(words, " ")
		if !isIdentifier(k.Field) {
			if !isExpression(words) {
				if len(words) == 2 && isIdentifier(words[0]) {
					return nil, badOption(problem.CodeParameterIllegal, "$orderby item %q: the direction is asc or desc, not %q", short(strings.TrimSpace(item)), short(words[1]))
				}
				if len(words) > 1 {
					return nil, badOption(problem.CodeParameterIllegal, "$orderby item %q: want a property name or an expression, and optionally asc or desc", short(strings.TrimSpace(item)))
				}
			}
			// A value expression: tolower(NAME), year(ORDER_DATE), NET mul 2.
			e, err := query.ParseScalar(k.Field, query.WithParam("$orderby"))
			if err != nil {
				return nil, err
			}
			if f, ok := e.(*query.FieldOperand); ok {
				if isPath(f.Field.Name) {
					k.Field = f.Field.Name // NAV/FIELD: resolved against the entity type
				} else if !isIdentifier(f.Field.Name) {
					return nil, badOption(CodeOptionNotSupported, "$orderby item %q: only property names and expressions over them can be sorted by, optionally followed by asc or desc", short(strings.TrimSpace(item)))
				}
				k.Field = f.Field.Name // a parenthesised property: (NAME)
			} else {
				k.Field, k.Expr = query.FormatScalar(e), e
			}
		}
		for _, prev := range keys {
			if prev.Field != k.Field {
				continue
			}
			code, msg := query.CodeSortHasDuplicate, "is given twice"
			if prev.Desc != k.Desc {
				code, msg = query.CodeSortHasOpposite, "is sorted both ascending and descending"
			}
			return nil, &query.Error{Kind: query.KindParameter, Code: code, Param: "$orderby", Pos: query.NoPos,
				Msg: fmt.Sprintf("property %s %s", k.Field, msg)}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// isExpression reports whether the words of an $orderby item hold a function call or an
// arithmetic operator.
func isExpression(words []string) bool {
	for _, w := range words {
		switch strings.ToLower(w) {
		case "add", "sub", "mul", "div", "divby", "mod":
			return true
		}
		if strings.ContainsAny(w, "()") {
			return true
		}
	}
	return false
}

// isIdentifier reports whether s is an OData simple identifier in ASCII: a letter or "_",
// then letters, digits and "_", at most 128 characters. Record and field ids are such.
func isIdentifier(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// badOption returns a 400 problem.
func badOption(code, format string, args ...any) *problem.Problem {
	return problem.New(http.StatusBadRequest, code, fmt.Sprintf(format, args...))
}

// short cuts a user-supplied text for an error message.
func short(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}
