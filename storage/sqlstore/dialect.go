package sqlstore

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kmkit/kmkit/query"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// dialect is what differs between SQLite and PostgreSQL. Everything else is one code path.
type dialect interface {
	name() string
	// types replaces the type tokens of a migration (TEXT_C, BIGINT, BOOL, JSON_TEXT).
	types(ddl string) string
	// placeholder returns the n-th (1-based) parameter marker.
	placeholder(n int) string
	// rebind turns the ? markers of a fixed statement into the dialect's markers.
	rebind(q string) string
	// uniqueViolation reports whether err is a unique-constraint failure.
	uniqueViolation(err error) bool
	// retryable reports whether err is a transient conflict worth running the transaction again.
	retryable(err error) bool
	// greatest returns the largest of the SQL expressions.
	greatest(exprs []string) string
	// inArray tests expr against the values of an array parameter (a JSON array text for
	// SQLite, a typed array for PostgreSQL); vals is the list arrayArg converted.
	inArray(expr, param string, vals any) string
	// arrayArg converts a list ([]string, []int64, []float64 or []bool) to the one
	// argument inArray expects.
	arrayArg(vals any) any
	// shortList is the longest list that inArray's callers write as an IN list of
	// parameters rather than one array parameter.
	shortList() int
	// maxParams is the most parameters a statement may bind; a statement with more has
	// its arguments written as literals (see inlineArgs).
	maxParams() int
	// literal writes an argument as a literal of the statement's text, the same value
	// that binding it would give; it is followed by what castParam added to its marker.
	literal(v any) (string, error)
	// bytewise makes a string expression compare byte by byte.
	bytewise(expr string) string
	// caseMap maps a string expression to lower (or upper) case over Unicode, as
	// strings.ToLower and strings.ToUpper do (SQLite's own lower and upper map ASCII only).
	caseMap(upper bool, expr string) string
	// contains and startsWith are the case-sensitive string tests.
	contains(expr, param string) string
	startsWith(expr, param string) string
	// toFloat converts a numeric expression to a double.
	toFloat(expr string) string
	// sum and avg aggregate a double expression so that sums of decimal amounts come
	// out as the double nearest to their true sum (see the dialects').
	sum(expr string) string
	avg(expr string) string
	// intSum is the exact sum of a BIGINT expression as a BIGINT, null where it does not
	// fit in one (package km, "Numbers"), whatever its partial sums do; intAvg is the
	// mean of such an expression as a double, also where the sum does not fit.
	intSum(expr string) string
	intAvg(expr string) string
	// median is the median aggregate of a double expression: the middle value, or the
	// mean of the middle two.
	median(expr string) string
	// minMax is the min (or max) aggregate of an expression of type t.
	minMax(max bool, expr string, t query.Type) string
	// typedNull is a null of type t, for a UNION branch that has no such column.
	typedNull(t query.Type) string
	// subqueryFence ends a sub-query that the planner must not pull up into a join.
	subqueryFence() string
	// probed writes a column read by a condition that a correlated sub-query checks for
	// each row of the outer query, so that the database reaches the sub-query's rows
	// through the correlation (the relationship's index) rather than an index of the
	// condition's own.
	probed(expr string) string
	// castParam wraps a parameter marker so that the server knows its type.
	castParam(marker string, v any) string
	// sortDir is the direction of an ORDER BY item in the API's order (nulls last both
	// ways), written as the indexes read it; notNull: the expression holds no null, so
	// where nulls go does not matter.
	sortDir(desc, notNull bool) string
	// groupsBySorting reports whether the database groups rows only by sorting them
	// (SQLite, which has no hash aggregation: a GROUP BY without an index sorts every row,
	// where its DISTINCT dedups in a temporary B-tree of the distinct values).
	groupsBySorting() bool
}

// quoteIdent quotes an identifier for both dialects (standard SQL double quotes).
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

type sqliteDialect struct{}

func (sqliteDialect) name() string { return "sqlite" }

func (sqliteDialect) types(ddl string) string {
	return strings.NewReplacer("TEXT_C", "TEXT", "JSON_TEXT", "TEXT", "BOOL", "INTEGER", "BIGINT", "INTEGER").Replace(ddl)
}

func (sqliteDialect) placeholder(n int) string { return "?" + strconv.Itoa(n) }
func (sqliteDialect) rebind(q string) string   { return q }

func (sqliteDialect) uniqueViolation(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && (e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}

func (sqliteDialect) retryable(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && (e.Code()&0xff == sqlite3.SQLITE_BUSY)
}

// greatest: SQLite's max of several arguments, nested in groups of sqliteMaxArgs (a
// function takes at most 1000 arguments; a search of more columns was a 500).
func (d sqliteDialect) greatest(exprs []string) string {
	if len(exprs) == 1 {
		return exprs[0]
	}
	if len(exprs) > sqliteMaxArgs {
		var groups []string
		for len(exprs) > 0 {
			n := min(len(exprs), sqliteMaxArgs)
			groups = append(groups, d.greatest(exprs[:n]))
			exprs = exprs[n:]
		}
		return d.greatest(groups)
	}
	return "max(" + strings.Join(exprs, ", ") + ")"
}

// sqliteMaxArgs is the most arguments kmkit passes to one SQLite function call
// (SQLITE_MAX_FUNCTION_ARG is 1000 by default).
const sqliteMaxArgs = 100

// inArray: json_each reads the JSON array; floats travel as strings that CAST reads as
// SQLite reads a REAL literal (correctly rounded, which its JSON number parser is not for
// every double).
func (sqliteDialect) inArray(expr, param string, vals any) string {
	if _, ok := vals.([]float64); ok {
		return expr + " IN (SELECT CAST(value AS REAL) FROM json_each(" + param + "))"
	}
	return expr + " IN (SELECT value FROM json_each(" + param + "))"
}

// arrayArg is the JSON text of the list in the stored encoding: strings as strings
// (invalid UTF-8 becomes U+FFFD, which no API lets in), integers (and dates and instants)
// as numbers, booleans as 0 and 1, floats as strings of their shortest exact decimal form.
func (sqliteDialect) arrayArg(vals any) any {
	switch v := vals.(type) {
	case []bool:
		ints := make([]int64, len(v))
		for i, b := range v {
			if b {
				ints[i] = 1
			}
		}
		vals = ints
	case []float64:
		strs := make([]string, len(v))
		for i, f := range v {
			strs[i] = sqliteFloat(f)
		}
		vals = strs
	}
	b, _ := json.Marshal(vals) // cannot fail for these types
	return string(b)
}

// sqliteFloat writes f as SQLite reads a REAL: the shortest decimal that reads back as f,
// with an exponent (so that it is never taken for an integer); infinities overflow.
func sqliteFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "9e999"
	case math.IsInf(f, -1):
		return "-9e999"
	}
	return strconv.FormatFloat(f, 'e', -1, 64)
}

func (sqliteDialect) shortList() int { return 64 }

// maxParams is SQLITE_MAX_VARIABLE_NUMBER's default since SQLite 3.32.
func (sqliteDialect) maxParams() int { return 32766 }

func (sqliteDialect) literal(v any) (string, error) {
	switch v := v.(type) {
	case int64:
		return "(" + strconv.FormatInt(v, 10) + ")", nil
	case float64:
		if math.IsNaN(v) {
			return "", fmt.Errorf("%w: NaN literal", errInternal)
		}
		return "(" + sqliteFloat(v) + ")", nil
	case bool:
		if v {
			return "1", nil
		}
		return "0", nil
	case string:
		if strings.IndexByte(v, 0) >= 0 {
			// The statement's text ends at a NUL: write the bytes in hexadecimal.
			return "CAST(X'" + hex.EncodeToString([]byte(v)) + "' AS TEXT)", nil
		}
		return "'" + strings.ReplaceAll(v, "'", "''") + "'", nil
	}
	return "", fmt.Errorf("%w: argument of type %T", errInternal, v)
}

func (sqliteDialect) bytewise(expr string) string { return expr } // BINARY is the default collation

func (sqliteDialect) caseMap(upper bool, expr string) string {
	if upper {
		return "kmkit_upper(" + expr + ")"
	}
	return "kmkit_lower(" + expr + ")"
}

// sortDir: SQLite orders nulls first ascending and last descending, as an index holds
// them; it reads an index for ASC or DESC and for neither with the other nulls clause
// (ASC NULLS LAST is a sort of the whole input in a temporary B-tree). DESC is already the
// API's order; ASC is when the column holds no null.
func (sqliteDialect) sortDir(desc, notNull bool) string {
	switch {
	case desc:
		return " DESC"
	case notNull:
		return " ASC"
	}
	return " ASC NULLS LAST"
}

func (sqliteDialect) contains(expr, param string) string {
	return "(instr(" + expr + ", " + param + ") > 0)"
}

func (sqliteDialect) startsWith(expr, param string) string {
	return "(substr(" + expr + ", 1, length(" + param + ")) = " + param + ")"
}

func (sqliteDialect) toFloat(expr string) string { return "CAST(" + expr + " AS REAL)" }

// sum: SQLite's own, which compensates its rounding (Kahan-Babuska-Neumaier, since
// SQLite 3.43).
func (sqliteDialect) sum(expr string) string { return "sum(" + expr + ")" }

// avg: SQLite's own, its sum compensated as sum's.
func (sqliteDialect) avg(expr string) string { return "avg(" + expr + ")" }

// intSum: SQLite's sum of integers is exact but fails the statement ("integer overflow")
// as soon as a partial sum leaves int64. So the high 32 bits (x >> 32, an arithmetic
// shift) and the low 32 bits (x & 0xFFFFFFFF, from 0 to 2^32-1) of the values are summed
// apart, neither of which can overflow below 2^31 rows, and put together as
// q*2^32 + r (q = hi + lo>>32, r = lo & 0xFFFFFFFF): the sum fits in int64 exactly when
// q is within ±2^31. Where it does not, no branch computes it and the result is null.
func (sqliteDialect) intSum(expr string) string {
	hi := "sum((" + expr + ") >> 32)"
	lo := "sum((" + expr + ") & 4294967295)"
	q := "(" + hi + " + (" + lo + " >> 32))"
	return "(CASE WHEN " + q + " BETWEEN -2147483648 AND 2147483647 THEN (" + q + " << 32) + (" + lo + " & 4294967295) END)"
}

// intAvg: SQLite's avg of integers adds them exactly while the sum fits in int64 and in
// compensated doubles beyond, without failing.
func (sqliteDialect) intAvg(expr string) string { return "avg(" + expr + ")" }

func (sqliteDialect) median(expr string) string { return "kmkit_median(" + expr + ")" }

// minMax: booleans are 0/1, so min and max serve every type.
func (sqliteDialect) minMax(max bool, expr string, _ query.Type) string {
	if max {
		return "max(" + expr + ")"
	}
	return "min(" + expr + ")"
}

func (sqliteDialect) typedNull(query.Type) string { return "NULL" }

// subqueryFence: SQLite keeps a correlated EXISTS a sub-query.
func (sqliteDialect) subqueryFence() string { return "" }

func (sqliteDialect) groupsBySorting() bool { return true }

// probed: SQLite's unary plus, which keeps the value and rules out an index on the
// column. Its planner keeps a correlated EXISTS a loop per outer row and picks the
// sub-query's access path by its statistics; without them (a host's database never
// analysed) it assumes that an equality on any index selects a few rows and, for a filter
// on a two-valued column two relationships away, read half the child table for every
// parent row: issue 29's request on 50,000 rows took 38 s. Through the relationship's
// index each parent reads only its own children, and the page stops at its last parent
// (BenchmarkFilterTwoStepsAway); an uncorrelated IN, which also runs in time, read every
// child for the first page (57 ms against 0.8 ms for a page of 50 of the 200,000-order
// demo).
func (sqliteDialect) probed(expr string) string { return "+" + expr }

func (sqliteDialect) castParam(marker string, _ any) string { return marker }

type postgresDialect struct{}

func (postgresDialect) name() string { return "postgres" }

func (postgresDialect) types(ddl string) string {
	return strings.NewReplacer("TEXT_C", `TEXT COLLATE "C"`, "JSON_TEXT", "TEXT", "BOOL", "BOOLEAN").Replace(ddl)
}

func (postgresDialect) placeholder(n int) string { return "$" + strconv.Itoa(n) }

func (postgresDialect) rebind(q string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

func (postgresDialect) uniqueViolation(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23505"
}

func (postgresDialect) retryable(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && (e.Code == "40001" || e.Code == "40P01")
}

func (postgresDialect) greatest(exprs []string) string {
	if len(exprs) == 1 {
		return exprs[0]
	}
	return "greatest(" + strings.Join(exprs, ", ") + ")"
}

// inArray: the parameter is a typed array (castParam), which pgx encodes from the slice;
// the planner sees its values (estimates, a hashed lookup for long lists) and an index on
// expr serves it.
func (postgresDialect) inArray(expr, param string, _ any) string {
	return expr + " = ANY(" + param + ")"
}

func (postgresDialect) arrayArg(vals any) any { return vals }

// shortList: PostgreSQL estimates and hashes the elements of an array parameter.
func (postgresDialect) shortList() int { return 0 }

// maxParams is the extended protocol's limit (a 16-bit count).
func (postgresDialect) maxParams() int { return 65535 }

func (d postgresDialect) literal(v any) (string, error) {
	switch v := v.(type) {
	case int64:
		return "(" + strconv.FormatInt(v, 10) + ")", nil
	case float64:
		// float8's input reads the shortest exact decimal back exactly, and the words.
		switch {
		case math.IsNaN(v):
			return "'NaN'", nil
		case math.IsInf(v, 1):
			return "'Infinity'", nil
		case math.IsInf(v, -1):
			return "'-Infinity'", nil
		}
		return "'" + strconv.FormatFloat(v, 'e', -1, 64) + "'", nil
	case bool:
		if v {
			return "TRUE", nil
		}
		return "FALSE", nil
	case string:
		if strings.IndexByte(v, 0) >= 0 {
			return "", fmt.Errorf("sqlstore: a string with a NUL byte: PostgreSQL text cannot hold it")
		}
		// An escape string literal means the same whatever standard_conforming_strings is.
		return "E'" + strings.NewReplacer(`\`, `\\`, "'", "''").Replace(v) + "'", nil
	case []string:
		return arrayLiteral(d, v)
	case []int64:
		return arrayLiteral(d, v)
	case []float64:
		return arrayLiteral(d, v)
	case []bool:
		return arrayLiteral(d, v)
	}
	return "", fmt.Errorf("%w: argument of type %T", errInternal, v)
}

// arrayLiteral writes ARRAY[...] of the literals of vals (castParam's cast that follows
// types it, even when empty).
func arrayLiteral[T any](d postgresDialect, vals []T) (string, error) {
	var b strings.Builder
	b.WriteString("ARRAY[")
	for i, v := range vals {
		if i > 0 {
			b.WriteString(", ")
		}
		l, err := d.literal(v)
		if err != nil {
			return "", err
		}
		b.WriteString(l)
	}
	b.WriteString("]")
	return b.String(), nil
}

func (postgresDialect) bytewise(expr string) string { return expr + ` COLLATE "C"` }

func (postgresDialect) caseMap(upper bool, expr string) string {
	if upper {
		return "upper((" + expr + `) COLLATE "C.utf8")`
	}
	return "lower((" + expr + `) COLLATE "C.utf8")`
}

// sortDir: PostgreSQL's ascending order has nulls last, as its ascending indexes hold
// them. Descending, a column that can hold nulls is DESC NULLS LAST, which a descending
// index column declared so serves (Index); a NOT NULL column is plain DESC (nulls first,
// of which it has none), the order of an ascending index read backwards.
func (postgresDialect) sortDir(desc, notNull bool) string {
	switch {
	case desc && notNull:
		return " DESC"
	case desc:
		return " DESC NULLS LAST"
	}
	return " ASC NULLS LAST"
}

func (postgresDialect) contains(expr, param string) string {
	return "(strpos(" + expr + ", " + param + ") > 0)"
}

func (postgresDialect) startsWith(expr, param string) string {
	return "starts_with(" + expr + ", " + param + ")"
}

func (postgresDialect) toFloat(expr string) string { return "CAST(" + expr + " AS DOUBLE PRECISION)" }

// sum: PostgreSQL adds doubles plainly, in an order that changes with its parallel
// workers: on 1M amounts of two decimals the total was off by up to 60 units in the
// last place, and different from run to run. Summing the integral parts (exact while the
// total stays below 2^53) and the fractional remainders (small, so their rounding errors
// are far below the total's last place) apart gives the double nearest to the true sum of
// decimal amounts, deterministically, at 1.5x the time of sum(x); sum(x::numeric) gives it
// too, at 8x (BENCHMARKS.md, "PostgreSQL: sums of doubles"). Infinities give NaN.
func (postgresDialect) sum(expr string) string {
	return "(sum(round(" + expr + ")) + sum(" + expr + " - round(" + expr + ")))"
}

// avg: sum's total over the count of non-null values.
func (d postgresDialect) avg(expr string) string {
	return "(" + d.sum(expr) + " / count(" + expr + "))"
}

// intSum: PostgreSQL's sum of BIGINT is an exact numeric (added in 128 bits), cast back
// where it fits.
func (postgresDialect) intSum(expr string) string {
	s := "sum(" + expr + ")"
	return "(CASE WHEN " + s + " BETWEEN -9223372036854775808 AND 9223372036854775807 THEN CAST(" + s + " AS BIGINT) END)"
}

// intAvg: the exact sum over the count in numeric, with 20 decimals (avg's numeric
// division keeps none for large quotients), so that the one rounding to a double is that
// of the exact mean.
func (postgresDialect) intAvg(expr string) string {
	return "CAST(round(sum(" + expr + "), 20) / count(" + expr + ") AS DOUBLE PRECISION)"
}

// median is the middle value, or the mean of the middle two as stats.Midpoint computes
// it (the other backends' median). One percentile_disc over the fractions 0.5 and
// 0.5 + 2^-40 takes the ceil(n/2)-th and the ceil(n/2 + n/2^40)-th values in one sort:
// the middle value twice for an odd n, the two middle values for an even one (in groups
// of up to 2^39 rows); PostgreSQL computes the repeated call once. percentile_cont(0.5),
// lo + (hi-lo)/2, overflowed where hi-lo does (-1.5e308 and 1.5e308 gave Infinity, not
// 0) and rounded otherwise than the other backends, at the same cost
// (bench/pgmedian/median.sql).
func (postgresDialect) median(expr string) string {
	mid := "percentile_disc(ARRAY[0.5, 0.5000000000009094947017729282379150390625]) WITHIN GROUP (ORDER BY " + expr + ")" // 0.5 + 2^-40
	lo, hi := "("+mid+")[1]", "("+mid+")[2]"
	return "CASE WHEN abs(" + lo + ") < 1 AND abs(" + hi + ") < 1 THEN (" + lo + " + " + hi + ") / 2 ELSE " +
		lo + " / 2 + " + hi + " / 2 END"
}

// minMax: PostgreSQL has no min or max of booleans; bool_and and bool_or are they.
func (postgresDialect) minMax(max bool, expr string, t query.Type) string {
	switch {
	case t == query.TypeBoolean && max:
		return "bool_or(" + expr + ")"
	case t == query.TypeBoolean:
		return "bool_and(" + expr + ")"
	case max:
		return "max(" + expr + ")"
	}
	return "min(" + expr + ")"
}

func (postgresDialect) typedNull(t query.Type) string {
	switch t {
	case query.TypeString:
		return `CAST(NULL AS TEXT)`
	case query.TypeFloat:
		return "CAST(NULL AS DOUBLE PRECISION)"
	case query.TypeBoolean:
		return "CAST(NULL AS BOOLEAN)"
	}
	return "CAST(NULL AS BIGINT)"
}

// subqueryFence: PostgreSQL does not turn an EXISTS with an OFFSET into a semi-join.
func (postgresDialect) subqueryFence() string { return " OFFSET 0" }

// groupsBySorting: PostgreSQL hashes the groups of an unordered GROUP BY.
func (postgresDialect) groupsBySorting() bool { return false }

// probed: PostgreSQL plans EXISTS as a semi-join, costed every way: the column as it is.
func (postgresDialect) probed(expr string) string { return expr }

func (postgresDialect) castParam(marker string, v any) string {
	switch v.(type) {
	case string:
		return marker + "::text"
	case int64:
		return marker + "::bigint"
	case float64:
		return marker + "::float8"
	case bool:
		return marker + "::boolean"
	}
	return marker + pgType(v)
}

// pgType is the cast to the array type of a list argument, "" for other values.
func pgType(v any) string {
	switch v.(type) {
	case []string:
		return "::text[]"
	case []int64:
		return "::bigint[]"
	case []float64:
		return "::float8[]"
	case []bool:
		return "::boolean[]"
	}
	return ""
}
