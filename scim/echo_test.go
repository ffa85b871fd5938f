package scim_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kmkit/kmkit/scim"
)

func TestEcho(t *testing.T) {
	long := strings.Repeat("ab", 150) // 300 bytes
	euros := strings.Repeat("€", 100) // 300 bytes; byte 200 is inside the 67th rune
	for _, c := range []struct {
		format, value, want string
	}{
		{"%s", "short", "short"},
		{"%q", `sh"ort`, `"sh\"ort"`},
		{"%v", strings.Repeat("x", scim.MaxEcho), strings.Repeat("x", scim.MaxEcho)},
		{"%s", long, long[:200] + "… (300 bytes)"},
		{"%q", long, `"` + long[:200] + `"… (300 bytes)`},
		{"%s", euros, strings.Repeat("€", 66) + "… (300 bytes)"},
		{"not %q.", "a\x00" + euros, `not "a\x00` + strings.Repeat("€", 66) + `"… (302 bytes).`},
	} {
		if got := fmt.Sprintf(c.format, scim.Echo(c.value)); got != c.want {
			t.Errorf("Sprintf(%q, %.40q…) = %q, want %q", c.format, c.value, got, c.want)
		}
	}
}
