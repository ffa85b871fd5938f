package query

import (
	"fmt"
	"time"
)

// Type is the data type of a field, a literal or a result column.
type Type uint8

// The field types of a Knowledge Model. The zero Type is invalid.
const (
	TypeInvalid   Type = iota
	TypeString         // UTF-8 text
	TypeInteger        // int64
	TypeFloat          // float64; the definition type "number" maps here
	TypeBoolean        // true or false
	TypeDate           // a calendar day, stored as days since 1970-01-01
	TypeDateTime       // an instant, stored as microseconds since the Unix epoch (UTC)
	TypeTimestamp      // like TypeDateTime; kept apart because the API reports it apart
	TypeTime           // a time of day, stored as microseconds since midnight
	TypeNull           // the type of the literal null only; never a field type
)

var typeNames = [...]string{
	TypeInvalid:   "invalid",
	TypeString:    "string",
	TypeInteger:   "integer",
	TypeFloat:     "float",
	TypeBoolean:   "boolean",
	TypeDate:      "date",
	TypeDateTime:  "datetime",
	TypeTimestamp: "timestamp",
	TypeTime:      "time",
	TypeNull:      "null",
}

// String returns the name the data endpoints use for t ("integer", "float", ...).
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", t)
}

// ParseType maps a definition type name to a Type. "number" is an alias of "float".
func ParseType(s string) (Type, bool) {
	switch s {
	case "string":
		return TypeString, true
	case "integer":
		return TypeInteger, true
	case "float", "number":
		return TypeFloat, true
	case "boolean":
		return TypeBoolean, true
	case "date":
		return TypeDate, true
	case "datetime":
		return TypeDateTime, true
	case "timestamp":
		return TypeTimestamp, true
	case "time":
		return TypeTime, true
	}
	return TypeInvalid, false
}

// Numeric reports whether t is integer or float.
func (t Type) Numeric() bool { return t == TypeInteger || t == TypeFloat }

// Searchable reports whether fuzzy search and the string functions read values of type t:
// strings, and times, which the API presents as strings (their HH:MM:SS text, TimeText).
func (t Type) Searchable() bool { return t == TypeString || t == TypeTime }

// Temporal reports whether t holds an instant (datetime or timestamp).
func (t Type) Temporal() bool { return t == TypeDateTime || t == TypeTimestamp }

// Value is one typed scalar: a converted literal or a cell of a result row.
// Which member holds the value depends on Type:
//
//	TypeString                 Str
//	TypeInteger                Int
//	TypeFloat                  Float
//	TypeBoolean                Bool
//	TypeDate                   Int (days since 1970-01-01)
//	TypeDateTime, TypeTimestamp Int (microseconds since the Unix epoch, UTC)
//	TypeTime                   Int (microseconds since midnight)
//
// A null value has Null set; its Type still names the column's type (or TypeNull for the
// literal null).
type Value struct {
	Type  Type
	Null  bool
	Str   string
	Int   int64
	Float float64
	Bool  bool
}

// Null returns the null value of type t.
func Null(t Type) Value { return Value{Type: t, Null: true} }

// String returns a string value.
func String(s string) Value { return Value{Type: TypeString, Str: s} }

// Int returns an integer value.
func Int(i int64) Value { return Value{Type: TypeInteger, Int: i} }

// Float returns a float value.
func Float(f float64) Value { return Value{Type: TypeFloat, Float: f} }

// Bool returns a boolean value.
func Bool(b bool) Value { return Value{Type: TypeBoolean, Bool: b} }

// Date returns the date value of the calendar day of t in UTC.
func Date(t time.Time) Value {
	return Value{Type: TypeDate, Int: DaysFromTime(t)}
}

// DateTime returns the datetime value of t (microsecond precision).
func DateTime(t time.Time) Value { return Value{Type: TypeDateTime, Int: t.UnixMicro()} }

// MicrosPerDay is the number of microseconds in a day.
const MicrosPerDay = 24 * 60 * 60 * 1_000_000

// DaysFromTime returns the number of days between 1970-01-01 and the UTC day of t.
func DaysFromTime(t time.Time) int64 {
	return floorDiv(t.UTC().Unix(), 24*60*60)
}

// DayOfMicros returns the day (days since 1970-01-01) of an instant given in microseconds
// since the Unix epoch. It rounds towards negative infinity, so instants before 1970 get the
// right day.
func DayOfMicros(us int64) int64 { return floorDiv(us, MicrosPerDay) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// TimeOfDays returns midnight UTC of the day d (days since 1970-01-01).
func TimeOfDays(d int64) time.Time { return time.Unix(d*24*60*60, 0).UTC() }

// Format renders v as the data endpoints show it in JSON: dates "2006-01-02", instants
// RFC 3339 in UTC, times "15:04:05" (with fractional seconds when present). It returns the
// Go value to marshal: nil, string, int64, float64 or bool.
func (v Value) Format() any {
	if v.Null {
		return nil
	}
	switch v.Type {
	case TypeString:
		return v.Str
	case TypeInteger:
		return v.Int
	case TypeFloat:
		return v.Float
	case TypeBoolean:
		return v.Bool
	case TypeDate:
		return TimeOfDays(v.Int).Format(time.DateOnly)
	case TypeDateTime, TypeTimestamp:
		return time.UnixMicro(v.Int).UTC().Format(time.RFC3339Nano)
	case TypeTime:
		return time.UnixMicro(v.Int).UTC().Format("15:04:05.999999")
	}
	return nil
}
