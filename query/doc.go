// Package query holds the portable form of a data query (Request) and the languages its
// parameters are written in: the filter language of filterExpr and $filter, sort keys,
// paging, options and search precision, and a raw query-string decoder.
//
// # Filters
//
// Parse turns a filter text into a tree of *Logical, *Not, *Compare, *In, *Call and
// *IsNull nodes with byte positions; Bind checks it against a Schema and converts its
// literals once, so executors compare typed values. Format prints a tree back as canonical
// text; MapFields copies a tree with its field names rewritten (KM level to record level). The grammar, lowest precedence first:
//
//	expr       = and { "or" and }
//	and        = unary { "and" unary }
//	unary      = "not" unary | primary
//	primary    = "(" expr ")" | call | comparison
//	call       = ("contains" | "startswith" | "endswith") "(" field "," value ")"
//	comparison = field op value | value op field | field "in" "(" [ value { "," value } ] ")"
//	           | field "is" [ "not" ] "null" | field "not" "eq" value
//	op         = "eq" | "ne" | "gt" | "ge" | "lt" | "le"
//	field      = name { "." name }            name: a letter or _, then letters, digits, _
//	value      = 'text' | integer | decimal | true | false | null | date | date-time | time | bare word
//
// Keywords are lower case. "not" binds tighter than "and", which binds tighter than "or";
// "not A eq 1" negates the comparison. A literal on the left is mirrored ("5 lt A" is
// "A gt 5"); "eq null" and "ne null" become *IsNull, as do the legacy "is null" and
// "is not null"; the legacy "not eq" is "ne".
//
// Literals: 'text' with a doubled quote standing for one quote; integers (an integer
// beyond int64 is a decimal); decimals with optional fraction and exponent (1.5, -2e3;
// "42." and ".5" are not numbers); dates YYYY-MM-DD (years 0000 to 9999); date-times
// YYYY-MM-DDTHH:MM[:SS[.fraction]] with Z or ±hh:mm, normalised to UTC microseconds
// (fractions beyond the microsecond are cut; a leap second :60 counts as the next minute's
// first second; a date-time without a zone is no date-time but a bare word, which a
// date-time field rejects with the reason); times HH:MM[:SS[.fraction]]. An unquoted value
// that is none of these (DE, O2C-17, 2015-13-01) is a bare word, typed by the field at
// binding. The "+" of an offset must arrive as "+" or %2B: a query string decoded so that
// "+" became a space gives an error that says so (ParseRawQuery keeps the "+" of an
// offset).
//
// Valid OData outside this subset is reported with KindUnsupported: arithmetic (add, sub,
// mul, div, divby, mod, unary -), has, lambdas (any, all), paths with /, other functions,
// typed literals (duration'...', enum values), JSON arrays and objects, $it, $root, $this,
// parameter aliases (@p), upper-case keywords, a field or literal on its own as a
// condition, comparisons of two literals, comparisons with the result of a function,
// ordering comparisons with null, and null in an in list. Leading and trailing white space
// is allowed, and any ASCII white space separates tokens.
//
// # Binding
//
// Parse already gives typed literals their Value as written (an integer an Int, a date its
// day, a date-time its UTC instant); bare words get theirs from Bind. Bind resolves each
// field through the Schema (unknown: KM_FIELD_NOTFOUND) and converts each literal to the
// field's type (mismatch: FILTER_TYPE_MISMATCH):
//
//   - string fields take quoted texts, and any unquoted value as its text as written
//     (the legacy bare values: C eq DE, ZIP eq 01234); null only through eq/ne null.
//   - integer fields take integers; a decimal stays a float Value and executors compare
//     numerically. Float fields take both, as float Values.
//   - boolean fields take true and false.
//   - date fields take dates. A date-time against a date field is an error rather than a
//     silent truncation, since "D ge 2023-12-05T15:00Z" has no exact meaning for a day.
//   - datetime and timestamp fields take date-times (Value typed as the field) and dates;
//     a date keeps TypeDate and means that whole UTC day.
//   - time fields take times.
//   - contains, startswith and endswith need a string field; their argument is taken as
//     text, quoted or not.
//   - A quoted text compared with a boolean, integer, float, date, datetime, timestamp or
//     time field is read as that type when its text is a value of it, as if written
//     unquoted: 'true', '42', '4.5' (a float field also takes '42'), '2025-03-01',
//     '2025-03-01T10:00:00Z' (or a date, that day), '10:30:00'. A quoted '4.5' against an
//     integer field is a mismatch (unquoted, it compares numerically). Any other text is
//     FILTER_TYPE_MISMATCH naming the field, its type and the text.
//   - The empty quoted text against a non-string field is no value
//     (FILTER_TYPE_MISMATCH), except with ne (and "not eq"): the Power Platform connector
//     writes "not empty" as APPROVAL not eq followed by the empty quoted text, which reads
//     as "APPROVAL is not null".
//
// Bare words that a typed field cannot read give a message saying why (for example
// "month 13 is not between 01 and 12").
//
// # Errors
//
// Every error is an *Error with a Kind, an API error Code and an HTTP status of 400;
// filter errors carry the 1-based character position of the fault:
//
//	KindSyntax       FILTER_SYNTAX_ERROR
//	KindUnsupported  FILTER_NOT_SUPPORTED
//	KindType         KM_FIELD_NOTFOUND (unknown field), FILTER_TYPE_MISMATCH
//	KindLimit        GENERAL_CONSTRAINT_VIOLATION
//	KindParameter    SORT_IS_EMPTY, SORT_HAS_OPPOSITE, SORT_HAS_DUPLICATE, SORT_UNKNOWN_FIELD,
//	                 GENERAL_PARAMETER_MISSMATCH (not an integer), GENERAL_CONSTRAINT_VIOLATION
//	                 (out of range), GENERAL_PARAMETER_ILLEGAL (unknown option, a list where
//	                 one sort field is expected, a malformed percent-escape)
//
// # Request parameters
//
// ParseRawQuery splits a query string at "&" only, where url.ParseQuery would drop pairs
// holding ";". A "+" is a space, so clients that form-encode spaces work, except as the
// sign of a time offset after a time of day (T15:48+03:00), which survives unencoded; %2B
// is always a plus. ParseList merges comma-separated and repeated values.
// ParsePaging never clamps: a page size above the maximum is an error. ParseSort rejects
// a field given twice (SORT_HAS_DUPLICATE) as well as one given both ways. Option names
// are case-sensitive.
//
// # Values in JSON
//
// Value.Format defines how the data endpoints show a value; AppendJSON writes the same
// JSON without a detour through encoding/json (strings without HTML escaping; NaN and the
// infinities, which JSON cannot carry, as null), and AppendTemporal the text of a date,
// date-time or time.
//
// Everything here is safe for concurrent use: parsing keeps no state between calls.
package query
