package column

import (
	"fmt"
	"testing"

	"github.com/kmkit/kmkit/query"
)

// TestCodesWidths builds string columns of dictionaries at and around each width's bound
// and checks the width chosen, that every cell reads back its value, and the bytes counted.
func TestCodesWidths(t *testing.T) {
	for _, tt := range []struct {
		values int
		width  int // bytes a cell
	}{
		{1, 1}, {256, 1}, {257, 2}, {1 << 16, 2}, {1<<16 + 1, 4},
	} {
		t.Run(fmt.Sprint(tt.values), func(t *testing.T) {
			b := NewBuilder(query.TypeString)
			rows := tt.values + 3
			for r := range rows {
				b.AppendString(fmt.Sprint("v", r%tt.values))
			}
			c := b.Build().(*Strings)
			width := 0
			switch {
			case c.Codes.U8 != nil:
				width = 1
			case c.Codes.U16 != nil:
				width = 2
			case c.Codes.U32 != nil:
				width = 4
			}
			if width != tt.width {
				t.Fatalf("%d values: %d bytes a code, want %d", tt.values, width, tt.width)
			}
			if c.Len() != rows || c.Codes.Len() != rows {
				t.Fatalf("Len %d, Codes.Len %d, want %d", c.Len(), c.Codes.Len(), rows)
			}
			for r := range rows {
				if got, want := c.Value(r).Str, fmt.Sprint("v", r%tt.values); got != want {
					t.Fatalf("row %d reads %q, want %q", r, got, want)
				}
			}
			if got := c.Codes.Bytes(); got != width*rows {
				t.Errorf("Codes.Bytes = %d, want %d", got, width*rows)
			}
		})
	}
}

func TestNarrowCodesEmpty(t *testing.T) {
	c := NarrowCodes(nil, 0)
	if c.Len() != 0 || c.Bytes() != 0 || c.U8 != nil || c.U16 != nil || c.U32 != nil {
		t.Errorf("NarrowCodes(nil, 0) = %+v, want no rows", c)
	}
}
