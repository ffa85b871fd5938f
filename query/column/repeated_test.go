package column

import (
	"math"
	"testing"

	"github.com/kmkit/kmkit/query"
)

func TestRepeated(t *testing.T) {
	null := query.Value{Null: true}
	str := func(s string) query.Value { return query.Value{Type: query.TypeString, Str: s} }
	num := func(typ query.Type, v int64) query.Value { return query.Value{Type: typ, Int: v} }
	flt := func(v float64) query.Value { return query.Value{Type: query.TypeFloat, Float: v} }
	boolean := func(v bool) query.Value { return query.Value{Type: query.TypeBoolean, Bool: v} }
	tests := []struct {
		name  string
		typ   query.Type
		cells []query.Value
		want  query.Value // TypeInvalid: none repeated
	}{
		{"strings unique", query.TypeString, []query.Value{str("a"), str("b"), null, str("c")}, query.Value{}},
		{"strings nulls twice", query.TypeString, []query.Value{null, str("a"), null}, query.Value{}},
		{"strings repeated", query.TypeString, []query.Value{str("a"), str("b"), str("c"), str("b"), str("a")}, str("b")},
		{"integers ascending", query.TypeInteger, []query.Value{num(query.TypeInteger, 1), null, num(query.TypeInteger, 2), num(query.TypeInteger, 5)}, query.Value{}},
		{"integers unordered, unique", query.TypeInteger, []query.Value{num(query.TypeInteger, 5), num(query.TypeInteger, 1), null, null, num(query.TypeInteger, 3)}, query.Value{}},
		{"integers repeated, ascending", query.TypeInteger, []query.Value{num(query.TypeInteger, 1), num(query.TypeInteger, 2), num(query.TypeInteger, 2)}, num(query.TypeInteger, 2)},
		{"integers repeated apart", query.TypeInteger, []query.Value{num(query.TypeInteger, 7), num(query.TypeInteger, 1), num(query.TypeInteger, 7)}, num(query.TypeInteger, 7)},
		{"integers sparse, repeated", query.TypeInteger, []query.Value{num(query.TypeInteger, 1<<40), num(query.TypeInteger, -3), num(query.TypeInteger, 1<<40)}, num(query.TypeInteger, 1<<40)},
		{"integers sparse, unique", query.TypeInteger, []query.Value{num(query.TypeInteger, 1<<62), num(query.TypeInteger, -1<<62), null}, query.Value{}},
		{"integers extremes", query.TypeInteger, []query.Value{num(query.TypeInteger, math.MaxInt64), num(query.TypeInteger, math.MinInt64), num(query.TypeInteger, math.MaxInt64)}, num(query.TypeInteger, math.MaxInt64)},
		{"dates repeated", query.TypeDate, []query.Value{num(query.TypeDate, 19000), num(query.TypeDate, 18000), num(query.TypeDate, 19000)}, num(query.TypeDate, 19000)},
		{"floats repeated", query.TypeFloat, []query.Value{flt(1.5), flt(0.5), flt(1.5)}, flt(1.5)},
		{"booleans repeated", query.TypeBoolean, []query.Value{boolean(true), null, boolean(false), boolean(true)}, boolean(true)},
		{"empty", query.TypeString, nil, query.Value{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBuilder(tt.typ)
			for _, v := range tt.cells {
				if v.Null {
					b.AppendNull()
				} else if err := b.Append(v); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := Repeated(b.Build())
			if ok != (tt.want.Type != query.TypeInvalid) || got != tt.want {
				t.Errorf("Repeated = %+v, %v; want %+v", got, ok, tt.want)
			}
		})
	}
}
