package query

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testSchema = MapSchema{
	"S":    TypeString,
	"I":    TypeInteger,
	"F":    TypeFloat,
	"B":    TypeBoolean,
	"D":    TypeDate,
	"DT":   TypeDateTime,
	"TS":   TypeTimestamp,
	"T":    TypeTime,
	"R.S":  TypeString,
	"Ünï":  TypeInteger,
	"BAD":  TypeInvalid,
	"NULL": TypeNull,
}

// TestBindOperators binds every comparison operator against every field type.
func TestBindOperators(t *testing.T) {
	values := []struct {
		field string
		lit   string
		want  Value
	}{
		{"S", "'x'", String("x")},
		{"R.S", "'x'", String("x")},
		{"I", "42", Int(42)},
		{"F", "4.5", Float(4.5)},
		{"B", "true", Bool(true)},
		{"D", "2015-05-07", Value{Type: TypeDate, Int: days("2015-05-07")}},
		{"DT", "2023-12-05T15:48:44Z", Value{Type: TypeDateTime, Int: micros("2023-12-05T15:48:44Z")}},
		{"TS", "2023-12-05T15:48:44Z", Value{Type: TypeTimestamp, Int: micros("2023-12-05T15:48:44Z")}},
		{"T", "15:48:44", Value{Type: TypeTime, Int: (15*3600 + 48*60 + 44) * 1e6}},
	}
	for _, op := range []CompareOp{Eq, Ne, Gt, Ge, Lt, Le} {
		for _, v := range values {
			src := fmt.Sprintf("%s %s %s", v.field, op, v.lit)
			e, err := ParseAndBind(src, testSchema)
			if err != nil {
				t.Errorf("%s: %v", src, err)
				continue
			}
			c, ok := e.(*Compare)
			if !ok {
				t.Errorf("%s: got %T, want *Compare", src, e)
				continue
			}
			if c.Op != op || c.Field.Type != testSchema[v.field] || c.Value.Value != v.want {
				t.Errorf("%s: got op %v field type %v value %+v, want %v %v %+v", src, c.Op, c.Field.Type, c.Value.Value, op, testSchema[v.field], v.want)
			}
		}
	}
}

func TestBindConversions(t *testing.T) {
	tests := []struct {
		src  string
		want Value
	}{
		{"I eq 1.5", Float(1.5)},
		{"I eq 9223372036854775808", Float(9223372036854775808)},
		{"F eq 2", Float(2)},
		{"F eq -2e3", Float(-2000)},
		{"DT eq 2023-12-05", Value{Type: TypeDate, Int: days("2023-12-05")}},
		{"TS ge 2023-12-05", Value{Type: TypeDate, Int: days("2023-12-05")}},
		{"DT eq 2023-12-05T15:48+03:00", Value{Type: TypeDateTime, Int: micros("2023-12-05T12:48:00Z")}},
		{"DT lt 2023-12-05T15:48:44.25-05:30", Value{Type: TypeDateTime, Int: micros("2023-12-05T21:18:44.25Z")}},
		{"T eq 15:48", Value{Type: TypeTime, Int: (15*3600 + 48*60) * 1e6}},
		{"B ne false", Bool(false)},
		// bare and unquoted values on a string field are their text
		{"S eq DE", String("DE")},
		{"S eq 01234", String("01234")},
		{"S eq 1.50", String("1.50")},
		{"S eq 2015-05-07", String("2015-05-07")},
		{"S eq 2023-12-05T15:48+03:00", String("2023-12-05T15:48+03:00")},
		{"S eq true", String("true")},
		{"S eq TRUE", String("TRUE")},
		{"S eq 'it''s'", String("it's")},
		{"5 lt I", Int(5)},
	}
	for _, tt := range tests {
		e, err := ParseAndBind(tt.src, testSchema)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		if got := e.(*Compare).Value.Value; got != tt.want {
			t.Errorf("%s: value %+v, want %+v", tt.src, got, tt.want)
		}
	}
}

func TestBindTrees(t *testing.T) {
	tests := []struct {
		src  string
		want Expr
	}{
		{"S in ('a', b, 1)", &In{Field: FieldRef{Name: "S", Type: TypeString}, Values: []Literal{
			{Kind: LitString, Raw: "a", Value: String("a")},
			{Kind: LitBare, Raw: "b", Value: String("b")},
			{Kind: LitInteger, Raw: "1", Value: String("1")}}}},
		{"F in (1, 2.5)", &In{Field: FieldRef{Name: "F", Type: TypeFloat}, Values: []Literal{
			{Kind: LitInteger, Raw: "1", Value: Float(1)},
			{Kind: LitDecimal, Raw: "2.5", Value: Float(2.5)}}}},
		{"DT in (2023-12-05, 2023-12-05T00:00Z)", &In{Field: FieldRef{Name: "DT", Type: TypeDateTime}, Values: []Literal{
			{Kind: LitDate, Raw: "2023-12-05", Value: Value{Type: TypeDate, Int: days("2023-12-05")}},
			{Kind: LitDateTime, Raw: "2023-12-05T00:00Z", Value: Value{Type: TypeDateTime, Int: micros("2023-12-05T00:00:00Z")}}}}},
		{"contains(S, 'x') or not startswith(R.S, ab) and endswith(S, 12)", or(
			&Call{Func: Contains, Field: FieldRef{Name: "S", Type: TypeString}, Arg: Literal{Kind: LitString, Raw: "x", Value: String("x")}},
			and(not(&Call{Func: StartsWith, Field: FieldRef{Name: "R.S", Type: TypeString}, Arg: Literal{Kind: LitBare, Raw: "ab", Value: String("ab")}}),
				&Call{Func: EndsWith, Field: FieldRef{Name: "S", Type: TypeString}, Arg: Literal{Kind: LitInteger, Raw: "12", Value: String("12")}}))},
		{"I is null and T ne null", and(
			&IsNull{Field: FieldRef{Name: "I", Type: TypeInteger}},
			&IsNull{Field: FieldRef{Name: "T", Type: TypeTime}, Negated: true})},
		{"Ünï eq 3", &Compare{Field: FieldRef{Name: "Ünï", Type: TypeInteger}, Op: Eq, Value: Literal{Kind: LitInteger, Raw: "3", Value: Int(3)}}},
	}
	for _, tt := range tests {
		got, err := ParseAndBind(tt.src, testSchema)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, ignorePos); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", tt.src, diff)
		}
	}
}

func TestBindNullTests(t *testing.T) {
	for name, typ := range testSchema {
		if typ == TypeInvalid || typ == TypeNull {
			continue
		}
		for _, src := range []string{name + " eq null", name + " is not null"} {
			e, err := ParseAndBind(src, testSchema)
			if err != nil {
				t.Errorf("%s: %v", src, err)
				continue
			}
			if got := e.(*IsNull).Field.Type; got != typ {
				t.Errorf("%s: field type %v, want %v", src, got, typ)
			}
		}
	}
}

// TestBindQuotedLiterals reads quoted texts compared with non-string fields as values of
// the field's type, and ne with the empty quoted text on such a field as "is not null".
func TestBindQuotedLiterals(t *testing.T) {
	tests := []struct {
		src  string
		want Value
	}{
		{"B eq 'true'", Bool(true)},
		{"B ne 'false'", Bool(false)},
		{"I eq '42'", Int(42)},
		{"I ge '-7'", Int(-7)},
		{"F eq '4.5'", Float(4.5)},
		{"F lt '42'", Float(42)},
		{"D eq '2025-03-01'", Value{Type: TypeDate, Int: days("2025-03-01")}},
		{"DT eq '2025-03-01T10:00:00Z'", Value{Type: TypeDateTime, Int: micros("2025-03-01T10:00:00Z")}},
		{"TS gt '2025-03-01T10:00:00Z'", Value{Type: TypeTimestamp, Int: micros("2025-03-01T10:00:00Z")}},
		{"DT eq '2025-03-01'", Value{Type: TypeDate, Int: days("2025-03-01")}},
		{"T eq '10:30:00'", Value{Type: TypeTime, Int: (10*3600 + 30*60) * 1e6}},
		{"S eq '42'", String("42")},
	}
	for _, tt := range tests {
		e, err := ParseAndBind(tt.src, testSchema)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		if c, ok := e.(*Compare); !ok || c.Value.Value != tt.want {
			t.Errorf("%s: got %#v, want value %+v", tt.src, e, tt.want)
		}
	}
	e, err := ParseAndBind("I in ('1', 2)", testSchema)
	if err != nil || e.(*In).Values[0].Value != Int(1) {
		t.Errorf("in with a quoted integer: %#v %v", e, err)
	}
	for _, src := range []string{"B ne ''", "B not eq ''", "D ne ''", "I ne ''"} {
		e, err := ParseAndBind(src, testSchema)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if n, ok := e.(*IsNull); !ok || !n.Negated {
			t.Errorf("%s: got %#v, want is not null", src, e)
		}
	}
	// On a string field '' is the empty text.
	if e, err := ParseAndBind("S ne ''", testSchema); err != nil || e.(*Compare).Value.Value != String("") {
		t.Errorf("S ne '': %#v %v", e, err)
	}
}

func TestBindErrors(t *testing.T) {
	tests := []struct {
		src  string
		code string
		msg  string
	}{
		{"X eq 1", CodeFieldNotFound, `filterExpr: position 1: unknown field "X"`},
		{"S eq 'x' and r.s eq 'y'", CodeFieldNotFound, `filterExpr: position 14: unknown field "r.s"`},
		{"BAD eq 1", CodeFieldNotFound, `filterExpr: position 1: unknown field "BAD"`},
		{"NULL eq 1", CodeFieldNotFound, `filterExpr: position 1: unknown field "NULL"`},
		{"I eq 'x'", CodeFilterTypeMismatch, "filterExpr: position 6: I is an integer and cannot be compared with the text 'x'; write a number such as 42"},
		{"I eq '5.5'", CodeFilterTypeMismatch, "filterExpr: position 6: I is an integer and cannot be compared with the text '5.5'; write a number such as 42"},
		{"I eq ''", CodeFilterTypeMismatch, "filterExpr: position 6: I is an integer and cannot be compared with the text ''; write a number such as 42"},
		{"B in ('true', '')", CodeFilterTypeMismatch, "filterExpr: position 15: B is a boolean and cannot be compared with the text ''; write true or false"},
		{"I eq DE", CodeFilterTypeMismatch, "filterExpr: position 6: I is an integer and DE is not a number: a number is written like 42, -7, 1.5 or 2e3"},
		{"F ge 42.", CodeFilterTypeMismatch, "filterExpr: position 6: F is a float and 42. is not a number: a number is written like 42, -7, 1.5 or 2e3"},
		{"F lt 1e400", CodeFilterTypeMismatch, "filterExpr: position 6: F is a float and 1e400 is not a number: it is beyond the range of a 64-bit float"},
		{"S eq 'x' and I in (1, -1e999)", CodeFilterTypeMismatch, "filterExpr: position 23: I is an integer and -1e999 is not a number: it is beyond the range of a 64-bit float"},
		{"B eq yes", CodeFilterTypeMismatch, "filterExpr: position 6: B is a boolean and cannot be compared with the word yes; write true or false"},
		{"I eq true", CodeFilterTypeMismatch, "filterExpr: position 6: I is an integer and cannot be compared with the boolean true; write a number such as 42"},
		{"F eq 2015-05-07", CodeFilterTypeMismatch, "filterExpr: position 6: F is a float and cannot be compared with the date 2015-05-07; write a number such as 4.2"},
		{"B eq 1", CodeFilterTypeMismatch, "filterExpr: position 6: B is a boolean and cannot be compared with the integer 1; write true or false"},
		{"B eq 'yes'", CodeFilterTypeMismatch, "filterExpr: position 6: B is a boolean and cannot be compared with the text 'yes'; write true or false"},
		{"D eq '2015-05-32'", CodeFilterTypeMismatch, "filterExpr: position 6: D is a date and cannot be compared with the text '2015-05-32'; write a date such as 2015-05-07"},
		{"D eq 2015-13-01", CodeFilterTypeMismatch, "filterExpr: position 6: D is a date and 2015-13-01 is not a date: month 13 is not between 01 and 12"},
		{"D eq 2015-02-29", CodeFilterTypeMismatch, "filterExpr: position 6: D is a date and 2015-02-29 is not a date: day 29 does not exist in 2015-02"},
		{"D eq 2015-5-7", CodeFilterTypeMismatch, "filterExpr: position 6: D is a date and 2015-5-7 is not a date: a date is written YYYY-MM-DD"},
		{"DT eq 2023-12-05T15:48", CodeFilterTypeMismatch, "filterExpr: position 7: DT is a datetime and 2023-12-05T15:48 is not a date-time: the date-time 2023-12-05T15:48 needs a time zone: Z or an offset ±hh:mm (a + sent unencoded in a URL may arrive as a space: send %2B)"},
		{"TS eq 2023-12-05T24:00Z", CodeFilterTypeMismatch, "filterExpr: position 7: TS is a timestamp and 2023-12-05T24:00Z is not a date-time: hour 24 is not between 00 and 23"},
		{"DT eq 2023-12-05T10:00+24:00", CodeFilterTypeMismatch, "filterExpr: position 7: DT is a datetime and 2023-12-05T10:00+24:00 is not a date-time: the offset +24:00 is not ±hh:mm with hh up to 23 and mm up to 59"},
		{"DT eq 2023-12-05T10:00UTC", CodeFilterTypeMismatch, "filterExpr: position 7: DT is a datetime and 2023-12-05T10:00UTC is not a date-time: the time zone UTC is not Z or an offset ±hh:mm"},
		{"DT eq 15:00", CodeFilterTypeMismatch, "filterExpr: position 7: DT is a datetime and cannot be compared with the time 15:00; write a date-time such as 2023-12-05T15:48:44Z or a date such as 2023-12-05"},
		{"T eq 2015-05-07", CodeFilterTypeMismatch, "filterExpr: position 6: T is a time and cannot be compared with the date 2015-05-07; write a time such as 15:48:44"},
		{"T eq 25:00", CodeFilterTypeMismatch, "filterExpr: position 6: T is a time and 25:00 is not a time: hour 25 is not between 00 and 23"},
		{"T eq 10:61", CodeFilterTypeMismatch, "filterExpr: position 6: T is a time and 10:61 is not a time: minute 61 is not between 00 and 59"},
		{"contains(I, 'x')", CodeFilterTypeMismatch, "filterExpr: position 10: contains needs a string field; I is an integer"},
		{"endswith(D, 'x')", CodeFilterTypeMismatch, "filterExpr: position 10: endswith needs a string field; D is a date"},
		{"startswith(S, null)", CodeFilterTypeMismatch, "filterExpr: position 15: startswith needs a text to look for, not null"},
		{"F in (1, 'x')", CodeFilterTypeMismatch, "filterExpr: position 10: F is a float and cannot be compared with the text 'x'; write a number such as 4.2"},
		{"'ä' eq S and I eq 'é'", CodeFilterTypeMismatch, "filterExpr: position 19: I is an integer and cannot be compared with the text 'é'; write a number such as 42"},
	}
	for _, tt := range tests {
		_, err := ParseAndBind(tt.src, testSchema)
		var qe *Error
		if !errors.As(err, &qe) {
			t.Errorf("%s: got %v, want an *Error", tt.src, err)
			continue
		}
		if qe.Kind != KindType || qe.Code != tt.code || qe.Error() != tt.msg {
			t.Errorf("%s:\n got %v %s %q\nwant type %s %q", tt.src, qe.Kind, qe.Code, qe.Error(), tt.code, tt.msg)
		}
	}
}

func TestBindDoesNotModifyInput(t *testing.T) {
	e, err := Parse("S eq DE and (I in (1, 2) or not contains(S, 'x')) and D is null")
	if err != nil {
		t.Fatal(err)
	}
	before := Format(e)
	snapshot, _ := Parse(before)
	if _, err := Bind(e, testSchema); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(snapshot, e, ignorePos); diff != "" {
		t.Errorf("Bind changed its input (-before +after):\n%s", diff)
	}
}

func TestBindErrorWithoutSource(t *testing.T) {
	e, err := Parse("S eq 1 and X eq 2")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Bind(e, testSchema)
	want := `position 12: unknown field "X"`
	if err == nil || err.Error() != want {
		t.Errorf("Bind = %v, want %s", err, want)
	}
}

func TestBindAndFormatNil(t *testing.T) {
	e, err := Bind(nil, testSchema)
	if e != nil || err != nil {
		t.Errorf("Bind(nil) = %v, %v; want nil, nil", e, err)
	}
	_, err = Bind(&Logical{Op: And, L: &IsNull{Field: fr("S")}}, testSchema)
	var qe *Error
	if !errors.As(err, &qe) || qe.Error() != "the expression tree holds an invalid node <nil>" {
		t.Errorf("Bind of a tree with a nil operand = %v", err)
	}
	if got := Format(nil); got != "" {
		t.Errorf("Format(nil) = %q", got)
	}
}
