package scim

import (
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// MaxEcho is the most bytes of a value of the request that an error's detail repeats.
const MaxEcho = 200

// Echo is a value of a request that an error's detail repeats ("not %q", "User %s not
// found."): every error of this package and of scim/scimhttp that quotes its input
// formats the value as an Echo. Formatted with %q it is quoted (strconv.Quote), with %s or
// %v written as it is. A value of more than MaxEcho bytes is cut to its first MaxEcho
// bytes, at a UTF-8 boundary, followed by an ellipsis and its whole length, so that a
// 1 MiB value makes a short error that still shows what was sent:
//
//	userName must be an e-mail address such as name@example.com, not "aaaa…"… (1048576 bytes).
type Echo string

// Format writes the echo of the value (fmt.Formatter).
func (e Echo) Format(f fmt.State, verb rune) {
	s := string(e)
	cut := len(s)
	if cut > MaxEcho {
		cut = MaxEcho
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
	}
	if verb == 'q' {
		io.WriteString(f, strconv.Quote(s[:cut])) //nolint:errcheck // fmt reports write errors itself
	} else {
		io.WriteString(f, s[:cut]) //nolint:errcheck // as above
	}
	if cut < len(s) {
		fmt.Fprintf(f, "… (%d bytes)", len(s))
	}
}
