package sqlstore

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"

	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/query"
)

// OData's canonical functions and arithmetic, pushed down. Both dialects compute what
// the query package's ApplyFunc and ApplyArith define: case mapping over Unicode
// (PostgreSQL under the C.utf8 collation, SQLite by the Go functions registered below,
// since its lower and upper map ASCII only), lengths and positions in characters, date
// parts in UTC from the stored day and microsecond numbers, null for a division by zero
// (NULLIF), and so does an integer result beyond 64 bits.

// outOfRange turns PostgreSQL's refusal of a float result beyond a double's range (the
// arithmetic of a filter or a sort, such as NET mul 1e308) into a 400: the request asked
// for it. A
// KPI's sums and its arithmetic between aggregates are not refused: after a refusal the
// statement runs again with them in numeric (wideSum, wideArith), ±Inf beyond the range.
func outOfRange(err error) error {
	if isOutOfRange(err) {
		return problem.New(400, query.CodeFilterNotSupported,
			"the arithmetic of the filter or the sort gives a number beyond the range of a 64-bit float, which the database refuses")
	}
	return err
}

// isOutOfRange reports whether err is PostgreSQL's refusal of a number beyond its type's
// range (SQLSTATE 22003).
func isOutOfRange(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "22003"
}

// dayMicros is a day in microseconds, as SQL text.
const dayMicros = "86400000000"

// value returns the SQL of a typed constant, bound as a parameter.
func (b *builder) value(v query.Value) string {
	if v.Null || v.Type == query.TypeNull {
		return "NULL"
	}
	switch v.Type {
	case query.TypeString:
		return b.arg(v.Str)
	case query.TypeFloat:
		return b.arg(v.Float)
	case query.TypeBoolean:
		return b.arg(v.Bool)
	}
	return b.arg(v.Int)
}

// scalar translates a bound value expression.
func (b *builder) scalar(r resolver, s query.Scalar) (frameCol, error) {
	switch s := s.(type) {
	case *query.FieldOperand:
		return r(s.Field.Name)
	case *query.Const:
		return frameCol{expr: b.value(s.Lit.Value), typ: s.Lit.Value.Type}, nil
	case *query.Apply:
		args := make([]frameCol, len(s.Args))
		for i, a := range s.Args {
			c, err := b.scalar(r, a)
			if err != nil {
				return frameCol{}, err
			}
			args[i] = c
		}
		e, err := b.apply(s.Func, args)
		return frameCol{expr: e, typ: s.Type}, err
	case *query.Arithmetic:
		l, err := b.scalar(r, s.L)
		if err != nil {
			return frameCol{}, err
		}
		rc, err := b.scalar(r, s.R)
		if err != nil {
			return frameCol{}, err
		}
		return frameCol{expr: b.arith(s.Op, s.Type, l, rc), typ: s.Type}, nil
	}
	return frameCol{}, fmt.Errorf("%w: value node %T", errInternal, s)
}

// timeOfDay is the microseconds since midnight (UTC) of an instant expression.
func timeOfDay(us string) string {
	return "(((" + us + ") % " + dayMicros + " + " + dayMicros + ") % " + dayMicros + ")"
}

// dayOf returns the day (days since 1970-01-01) of the instant us (microseconds since
// the Unix epoch), rounded towards negative infinity as query.DayOfMicros rounds it.
func dayOf(us string) string {
	return "((" + us + " - " + timeOfDay(us) + ") / " + dayMicros + ")"
}

// timeText returns the text of the time of day x (microseconds since midnight) as
// query.TimeText writes it, HH:MM:SS and the fraction of a second without trailing zeros
// when there is one; null for null. PostgreSQL's time type prints it so; SQLite formats
// the parts.
func timeText(pg bool, x string) string {
	if pg {
		return "CAST(TIME '00:00:00' + (" + x + ") * INTERVAL '1 microsecond' AS TEXT)"
	}
	x = "(" + x + ")"
	return "(CASE WHEN " + x + " IS NULL THEN NULL ELSE printf('%02d:%02d:%02d', " + x + " / 3600000000, " + x + " / 60000000 % 60, " +
		x + " / 1000000 % 60) || CASE WHEN " + x + " % 1000000 = 0 THEN '' ELSE rtrim(printf('.%06d', " + x + " % 1000000), '0') END END)"
}

func (b *builder) apply(fn query.ScalarFunc, args []frameCol) (string, error) {
	pg := b.d.name() == "postgres"
	x := ""
	if len(args) > 0 {
		x = args[0].expr
	}
	switch fn {
	case query.FnToLower, query.FnToUpper:
		return b.d.caseMap(fn == query.FnToUpper, x), nil
	case query.FnLength:
		if pg {
			return "char_length(" + x + ")", nil
		}
		return "length(" + x + ")", nil
	case query.FnTrim:
		if pg {
			return "btrim(" + x + ", " + b.arg(query.TrimSpace) + ")", nil
		}
		return "trim(" + x + ", " + b.arg(query.TrimSpace) + ")", nil
	case query.FnIndexOf:
		if pg {
			return "(strpos(" + x + ", " + args[1].expr + ") - 1)", nil
		}
		return "(instr(" + x + ", " + args[1].expr + ") - 1)", nil
	case query.FnConcat:
		return "(" + x + " || " + args[1].expr + ")", nil
	case query.FnSubstring:
		// 0-based start, a negative one counting as 0; PostgreSQL's substr wants int4.
		start, n := "", ""
		if pg {
			start = "(least(greatest(" + args[1].expr + ", 0), 2000000000)::int + 1)"
			if len(args) > 2 {
				n = "least(greatest(" + args[2].expr + ", 0), 2000000000)::int"
			}
		} else {
			start = "(max(" + args[1].expr + ", 0) + 1)"
			if len(args) > 2 {
				n = "max(" + args[2].expr + ", 0)"
			}
		}
		if n == "" {
			return "substr(" + x + ", " + start + ")", nil
		}
		return "substr(" + x + ", " + start + ", " + n + ")", nil
	case query.FnYear, query.FnMonth, query.FnDay:
		if !pg {
			return "kmkit_datepart(" + strconv.Itoa(int(fn)) + ", " + strconv.Itoa(int(args[0].typ)) + ", " + x + ")", nil
		}
		part := map[query.ScalarFunc]string{query.FnYear: "year", query.FnMonth: "month", query.FnDay: "day"}[fn]
		day := x
		if args[0].typ != query.TypeDate {
			// The day of the instant in integers: an instant's microseconds times an
			// interval are a double, which rounds 9999-12-31T23:59:59.999999Z up to
			// the year 10000.
			day = dayOf(x)
		}
		// 400 years later (146097 days, the Gregorian cycle: the same month and day):
		// PostgreSQL has no year 0 and calls the year 0000 (1 BC) -1.
		d := "DATE '1970-01-01' + CAST(" + day + " + 146097 AS integer)"
		if fn == query.FnYear {
			return "(CAST(extract(year FROM " + d + ") AS BIGINT) - 400)", nil
		}
		return "CAST(extract(" + part + " FROM " + d + ") AS BIGINT)", nil
	case query.FnHour, query.FnMinute, query.FnSecond:
		us := x
		if args[0].typ != query.TypeTime {
			us = timeOfDay(x)
		}
		switch fn {
		case query.FnHour:
			return "(" + us + " / 3600000000)", nil
		case query.FnMinute:
			return "(" + us + " / 60000000 % 60)", nil
		}
		return "(" + us + " / 1000000 % 60)", nil
	case query.FnDate:
		return dayOf(x), nil
	case query.FnTime:
		return timeOfDay(x), nil
	case query.FnTimeText:
		return timeText(pg, x), nil
	case query.FnRound, query.FnFloor, query.FnCeiling:
		if args[0].typ != query.TypeFloat {
			return x, nil
		}
		switch {
		case fn == query.FnRound && pg:
			// round of a double rounds half to even; of a numeric half away from zero.
			return "CAST(round(CAST(" + x + " AS NUMERIC)) AS DOUBLE PRECISION)", nil
		case fn == query.FnRound:
			return "round(" + x + ")", nil
		case pg && fn == query.FnFloor:
			return "floor(" + x + ")", nil
		case pg:
			return "ceil(" + x + ")", nil
		case fn == query.FnFloor:
			return "kmkit_floor(" + x + ")", nil
		}
		return "kmkit_ceiling(" + x + ")", nil
	}
	return "", fmt.Errorf("%w: function %v", errInternal, fn)
}

var arithSQL = [...]string{query.OpAdd: "+", query.OpSub: "-", query.OpMul: "*"}

func (b *builder) arith(op query.ArithOp, t query.Type, l, r frameCol) string {
	x, y := l.expr, r.expr
	if t == query.TypeFloat {
		if l.typ != query.TypeFloat {
			x = b.d.toFloat(x)
		}
		if r.typ != query.TypeFloat {
			y = b.d.toFloat(y)
		}
	}
	switch {
	case t == query.TypeInteger && op <= query.OpMul:
		// Beyond 64 bits: null, as in the executor. PostgreSQL computes exactly in
		// numeric; SQLite turns an overflowing integer result into a real.
		if b.d.name() == "postgres" {
			r := "(CAST(" + x + " AS NUMERIC) " + arithSQL[op] + " " + y + ")"
			return "(CASE WHEN " + r + " BETWEEN -9223372036854775808 AND 9223372036854775807 THEN CAST(" + r + " AS BIGINT) END)"
		}
		r := "(" + x + " " + arithSQL[op] + " " + y + ")"
		return "(CASE WHEN typeof(" + r + ") = 'integer' THEN " + r + " END)"
	case op <= query.OpMul:
		return "(" + x + " " + arithSQL[op] + " " + y + ")"
	case t == query.TypeInteger && op == query.OpDiv:
		return "(CASE WHEN " + x + " = -9223372036854775808 AND " + y + " = -1 THEN NULL ELSE " + x + " / NULLIF(" + y + ", 0) END)"
	case op == query.OpDiv || op == query.OpDivBy:
		return "(" + x + " / NULLIF(" + y + ", 0))"
	}
	// mod
	if t == query.TypeInteger {
		return "(" + x + " % NULLIF(" + y + ", 0))"
	}
	if b.d.name() == "postgres" {
		return "(" + x + " - " + y + " * trunc(" + x + " / NULLIF(" + y + ", 0)))"
	}
	return "kmkit_fmod(" + x + ", " + y + ")"
}

// scalarCompare translates "L op R" on value expressions; R null is a null test.
func (b *builder) scalarCompare(r resolver, e *query.ScalarCompare) (string, error) {
	if e.Op < query.Eq || e.Op > query.Le {
		return "", fmt.Errorf("%w: comparison operator %d", errInternal, e.Op)
	}
	l, err := b.scalar(r, e.L)
	if err != nil {
		return "", err
	}
	if c, ok := e.R.(*query.Const); ok && (c.Lit.Value.Null || c.Lit.Value.Type == query.TypeNull) {
		switch e.Op {
		case query.Eq:
			return "(" + l.expr + " IS NULL)", nil
		case query.Ne:
			return "(" + l.expr + " IS NOT NULL)", nil
		}
		return unknown, nil
	}
	rc, err := b.scalar(r, e.R)
	if err != nil {
		return "", err
	}
	return "(" + b.col(l) + " " + sqlOps[e.Op] + " " + b.col(rc) + ")", nil
}

// scalarMatch translates contains, startswith and endswith on value expressions.
func (b *builder) scalarMatch(r resolver, e *query.ScalarMatch) (string, error) {
	x, err := b.scalar(r, e.X)
	if err != nil {
		return "", err
	}
	arg, err := b.scalar(r, e.Arg)
	if err != nil {
		return "", err
	}
	switch e.Func {
	case query.Contains:
		return b.d.contains(x.expr, arg.expr), nil
	case query.StartsWith:
		return b.d.startsWith(x.expr, arg.expr), nil
	case query.EndsWith:
		return "(length(" + x.expr + ") >= length(" + arg.expr + ") AND substr(" + x.expr + ", length(" + x.expr +
			") - length(" + arg.expr + ") + 1) = " + arg.expr + ")", nil
	}
	return "", fmt.Errorf("%w: function %d", errInternal, e.Func)
}

// The Go functions SQLite runs for the canonical functions it lacks or computes otherwise.
func init() {
	text := func(f func(string) string) func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
		return func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			switch v := args[0].(type) {
			case nil:
				return nil, nil
			case string:
				return f(v), nil
			}
			return nil, fmt.Errorf("text function on %T", args[0])
		}
	}
	float := func(f func(float64) float64) func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
		return func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			switch v := args[0].(type) {
			case nil:
				return nil, nil
			case float64:
				return f(v), nil
			case int64:
				return f(float64(v)), nil
			}
			return nil, fmt.Errorf("numeric function on %T", args[0])
		}
	}
	sqlite.MustRegisterFunction("kmkit_lower", &sqlite.FunctionImpl{NArgs: 1, Deterministic: true, Scalar: text(strings.ToLower)})
	sqlite.MustRegisterFunction("kmkit_upper", &sqlite.FunctionImpl{NArgs: 1, Deterministic: true, Scalar: text(strings.ToUpper)})
	sqlite.MustRegisterFunction("kmkit_floor", &sqlite.FunctionImpl{NArgs: 1, Deterministic: true, Scalar: float(math.Floor)})
	sqlite.MustRegisterFunction("kmkit_ceiling", &sqlite.FunctionImpl{NArgs: 1, Deterministic: true, Scalar: float(math.Ceil)})
	sqlite.MustRegisterFunction("kmkit_fmod", &sqlite.FunctionImpl{NArgs: 2, Deterministic: true,
		Scalar: func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			var xy [2]float64
			for i, a := range args {
				switch v := a.(type) {
				case nil:
					return nil, nil
				case float64:
					xy[i] = v
				case int64:
					xy[i] = float64(v)
				default:
					return nil, fmt.Errorf("kmkit_fmod on %T", a)
				}
			}
			if xy[1] == 0 {
				return nil, nil
			}
			return math.Mod(xy[0], xy[1]), nil
		}})
	// kmkit_datepart(fn, type, v): year, month or day (query.ScalarFunc) of v, a day number
	// (query.TypeDate) or an instant in microseconds.
	sqlite.MustRegisterFunction("kmkit_datepart", &sqlite.FunctionImpl{NArgs: 3, Deterministic: true,
		Scalar: func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			fn, ok1 := args[0].(int64)
			typ, ok2 := args[1].(int64)
			if args[2] == nil {
				return nil, nil
			}
			v, ok3 := args[2].(int64)
			if !ok1 || !ok2 || !ok3 {
				return nil, fmt.Errorf("kmkit_datepart(%T, %T, %T)", args[0], args[1], args[2])
			}
			return query.DatePart(query.ScalarFunc(fn), query.Value{Type: query.Type(typ), Int: v}), nil
		}})
}
