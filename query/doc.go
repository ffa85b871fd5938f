// Package query holds the languages a data query is written in: the filter language of
// filterExpr and $filter, the KPI expression language, sort keys, the checks of paging and
// search precision, typed values, and the Result a store returns. The request itself is
// km's (km.Request, km.PlanRequest): this package knows no KM.
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
// (the unit of the values: a literal with digits past the microsecond, up to 12 as OData
// writes them, lies between two microseconds and is compared as such, eq never holding,
// ne always, lt and le taking the microsecond before it, gt and ge the one after; a leap
// second :60 counts as the next minute's first second; a date-time without a zone is no
// date-time but a bare word, which a date-time field rejects with the reason); times
// HH:MM[:SS[.fraction]]. An unquoted value that is none of these (DE, O2C-17, 2015-13-01)
// is a bare word, typed by the field at binding. The "+" of an offset must arrive as "+"
// or %2B: a query string decoded so that "+" became a space gives an error that says so
// (the handlers' query-string decoder, internal/rawquery, keeps the "+" of an offset).
//
// A call of contains, startswith or endswith may be compared with true or false ("eq true",
// "eq false", "ne true", "ne false", on either side): that is the call or its negation
// (SAP Cloud SDK writes only this form). In three-valued logic this is exact: a call on a
// null field is unknown, and unknown compared with true or false stays unknown, so the row
// is left out in all four forms (OData's two-valued null comparison would keep the null
// rows under "ne true"; the SQL reading is the one every backend computes).
//
// Valid OData outside this subset is reported with KindUnsupported: arithmetic (add, sub,
// mul, div, divby, mod) and unary - (ODataSyntax accepts them, see Functions; -x reads as
// 0 sub x), has, lambdas (any, all), paths with /, other functions (ODataSyntax accepts the
// canonical ones), typed literals (duration'...', enum values), JSON arrays and objects,
// $it, $root, $this, parameter aliases (@p), upper-case keywords, a field or literal on
// its own as a condition (ODataSyntax reads a property on its own, as in "EXPRESS" or "not
// EXPRESS", as "EXPRESS eq true", and Bind refuses it unless the field is a boolean),
// comparisons of two literals, comparisons of a boolean function with anything
// but true or false, ordering comparisons with null, and null in an in list. Leading and trailing white space
// is allowed, and any ASCII white space separates tokens.
//
// # Functions (ODataSyntax)
//
// Under ODataSyntax a side of a condition may also be a value expression, parsed with this
// grammar wherever the plain one above cannot read a condition:
//
//	scalarCond = operand [ op operand | "in" "(" value { "," value } ")" ]
//	operand    = term { ("add" | "sub") term }
//	term       = atom { ("mul" | "div" | "divby" | "mod") atom }
//	atom       = "(" operand ")" | function "(" [ operand { "," operand } ] ")" | field | value
//
// A condition whose sides are a field and a literal stays a *Compare (*IsNull, *Call), so
// executors keep their paths for them; the others are *ScalarCompare (also "X eq null")
// and *ScalarMatch (contains(tolower(A),'x')) over *FieldOperand, *Const, *Apply and
// *Arithmetic. "X in (...)" on a value expression is the disjunction of its equalities.
// The functions and their types (Bind checks them; a mismatch is FILTER_TYPE_MISMATCH with
// the position):
//
//	tolower, toupper, trim (string) string        trim removes ' ', \t, \n, \r at both ends
//	length (string) integer                       in characters
//	indexof (string, string) integer              0-based character index, -1 when absent
//	concat (string, string) string
//	substring (string, integer [, integer])       0-based, in characters; a negative start
//	                                              counts as 0, a negative length takes nothing
//	year, month, day (date|datetime|timestamp)    integer, of the UTC calendar day
//	hour, minute, second (datetime|timestamp|time) integer; the second without its fraction
//	date (datetime|timestamp) date                the UTC day
//	time (datetime|timestamp) time                the UTC time of day
//	now () datetime                               read once per binding (BindAt, WithNow)
//	round, floor, ceiling (number)                the operand's type; round half away from zero
//	add, sub, mul, div, mod (number, number)      integer when both are, else float
//	divby (number, number) float
//
// A null argument gives null, and so does a division or modulo by zero (not an error), in
// every backend, as does an integer result beyond 64 bits; div and mod of integers
// truncate toward zero (the remainder has the dividend's sign). Literal arguments are
// converted as a comparison converts them ('3' as an integer argument reads 3; any
// literal is text where a string is wanted); null as an
// argument and date or time arithmetic are type errors. Comparisons need comparable sides:
// numbers with numbers, instants with instants, others with their own type. ApplyFunc,
// ApplyArith, CompareValues and MatchText define the semantics row by row;
// FilterFunctions lists the function names.
//
// Other OData functions (matchesPattern, fractionalseconds, totalseconds, cast, isof,
// geo.*, ...) and the has operator are KindUnsupported; a function name OData does not
// define is a syntax error.
//
// # KPI expressions
//
// ParseKPI turns a KPI expression into a Metric: *Aggregate, *Arith and *Number nodes, the
// conditions of aggregates being filter trees parsed as above (with the same Options);
// ParseAndBindKPI also binds each condition to a Schema. The grammar:
//
//	expr    = term { ("+" | "-") term }
//	term    = factor { ("*" | "/") factor }
//	factor  = number | "-" factor | "(" expr ")" | call
//	call    = count "(" [field ["," cond]] ")" | ratio "(" cond ")"
//	        | agg "(" field ["," cond] ")"
//	agg     = countdistinct | sum | avg | min | max | median
//
// Function names are case-insensitive; fields are RECORD.FIELD (ASCII identifiers); numbers
// are decimals with an optional exponent. The parentheses of the expression count against
// Limits.MaxDepth. Placeholders (${param}) are not part of the language: the Knowledge
// Model fills them before parsing.
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
//   - date fields take dates, and date-times (bare or quoted, as grids write them:
//     ORDER_DATE ge 2025-06-01T00:00:00.000Z): the date stands for its midnight UTC, so a
//     date-time at a midnight is that day and the comparison becomes one between dates; any
//     other instant lies inside its day d, and D gt/ge it means D ge d+1, D lt/le it means
//     D le d, eq never holds and ne always does (a null date stays unknown); an in list
//     keeps the instants that are midnights.
//   - datetime and timestamp fields take date-times (Value typed as the field) and dates;
//     a date keeps TypeDate and means that whole UTC day.
//   - time fields take times.
//   - contains, startswith and endswith need a string field; their argument is taken as
//     text, quoted or not. A time field counts as one: the API presents times as strings,
//     so these functions, the string functions of OData (tolower, length, substring...)
//     and fuzzy search read its text, HH:MM:SS with the fraction of a second when there is
//     one (TimeText; Bind inserts FnTimeText). Comparisons keep reading it as a time.
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
// Every error is an *Error with a Kind, an API error Code and an HTTP status of 400. Filter
// and KPI errors have one position convention: Pos is the byte offset of the fault (from
// 0) and Char its 1-based character (rune) position, which Error() reports as "position
// N"; an error in a condition of a KPI expression is positioned in the whole expression.
// The KPI parser's own errors are KindSyntax (FILTER_SYNTAX_ERROR) or KindLimit
// (GENERAL_CONSTRAINT_VIOLATION, nesting too deep); its conditions' errors keep their
// kinds and codes. The kinds and codes:
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
// The query strings are the adapters': internal/rawquery decodes them (split at "&" only,
// "+" a space except as the sign of a time offset) and internal/kmparams reads the KM
// API's parameters (lists, paging, sort keys, filterExpr values of several expressions).
// What every surface's request must meet is here: CheckPaging never clamps (a page size
// above the maximum is an error), CheckSearchPrecision and CheckPrecisionParam (0 or 1 to
// 100, in one wording for the KM API's query string and body and the MCP tools), and
// CheckSort (a sort key must be among the selected fields and KPIs).
//
// # Values in JSON
//
// Value.Format defines how the data endpoints show a value; the handlers' encoders
// (internal/jsonenc.AppendJSON) write the same JSON without a detour through encoding/json.
// The package imports no net/http: it is the query language of the domain, shared by the
// HTTP adapters and the backends.
//
// Everything here is safe for concurrent use: parsing keeps no state between calls.
package query
