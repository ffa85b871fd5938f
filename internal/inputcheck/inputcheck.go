// Package inputcheck refuses client text that no store can hold: a NUL character or bytes
// that are not UTF-8, in the path, the query string, the headers the APIs read, or the
// request body (where a JSON escape \u0000 is a NUL too).
//
// PostgreSQL rejects both in text values (SQLSTATE 22021), SQLite and the memory backend
// would store what PostgreSQL refuses, so the four API handlers (KM, OData, SCIM,
// reporting) call Request before they reach a store and answer its *Error as a 400 in their
// own error shape. Every backend thus answers the same.
package inputcheck

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Headers are the request headers the APIs read as text; Request checks them. (Credentials
// are checked by package auth, which accepts visible ASCII only; net/http itself refuses a
// NUL in any header.)
var Headers = []string{
	"X-Tenant-Id", "Accept", "Content-Type", "If-Match", "If-None-Match",
	"Odata-Version", "Odata-Maxversion", "Prefer",
}

// DefaultMaxBody is the body size Request checks for handlers that have no body limit of
// their own (1 MiB).
const DefaultMaxBody = 1 << 20

// Error is client text refused by Request.
type Error struct {
	// Where names the text: `query parameter "FacetName"`, `path segment 3`,
	// `header X-Tenant-Id`, `request body at byte 17`.
	Where string
	// NUL is true for a NUL character, false for bytes that are not UTF-8.
	NUL bool
}

// Error returns the message for the client.
func (e *Error) Error() string {
	what := "is not valid UTF-8"
	if e.NUL {
		what = "contains a NUL character (U+0000)"
	}
	return e.Where + " " + what + ": text in requests must be UTF-8 without NUL characters"
}

// Request checks the path, the query string, the Headers and the body of r. The body is
// read up to maxBody bytes (any size when maxBody <= 0) and put back, so the handler reads
// it as sent; a longer body is put back unchecked beyond its first maxBody bytes, for the
// handler's own size limit to refuse. It returns the first bad text, or nil. An error of
// reading the body (a *http.MaxBytesError from a limit in front, say) is not returned: the
// handler meets it where it reads the body and answers it as it answers its own.
func Request(r *http.Request, maxBody int64) *Error {
	if err := Path(r.URL.Path); err != nil {
		return err
	}
	if err := Query(r.URL.RawQuery); err != nil {
		return err
	}
	for _, name := range Headers {
		for _, v := range r.Header[name] {
			if _, nul, bad := check(v); bad {
				return &Error{Where: "header " + name, NUL: nul}
			}
		}
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	return body(r, maxBody)
}

// Path checks a decoded URL path segment by segment.
func Path(path string) *Error {
	if _, _, bad := check(path); !bad {
		return nil
	}
	for i, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		if _, nul, bad := check(seg); bad {
			return &Error{Where: "path segment " + strconv.Itoa(i+1) + " " + quote(seg), NUL: nul}
		}
	}
	return nil // unreachable: the whole path was bad, so one segment is
}

// Query checks the names and values of a raw query string after percent-decoding (as
// application/x-www-form-urlencoded: '&' separates pairs, '+' is kept as is, which does
// not change validity). A malformed escape is left for the handler's parser to refuse.
func Query(raw string) *Error {
	if raw == "" {
		return nil
	}
	if _, _, bad := check(raw); !bad && strings.IndexByte(raw, '%') < 0 {
		// Nothing to decode: the names and values are parts of raw split at ASCII bytes,
		// valid when raw is.
		return nil
	}
	var arr [512]byte
	buf := arr[:0]
	for part := range strings.SplitSeq(raw, "&") {
		name, value, _ := strings.Cut(part, "=")
		buf = unescape(buf[:0], name)
		if badBytes(buf) {
			n := string(buf)
			_, nul, _ := check(n)
			return &Error{Where: "query parameter name " + quote(n), NUL: nul}
		}
		buf = unescape(buf[:0], value)
		if badBytes(buf) {
			_, nul, _ := check(string(buf))
			return &Error{Where: "query parameter " + quote(string(unescape(nil, name))), NUL: nul}
		}
	}
	return nil
}

// badBytes reports whether b holds a NUL or bytes that are not UTF-8, as check does,
// without a string of b.
func badBytes(b []byte) bool {
	return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b)
}

// Body checks a request body: UTF-8 without NUL bytes and without the JSON escape \u0000
// (a backslash escaped as \\ does not start an escape).
func Body(b []byte) *Error {
	if i, nul, bad := check(string(b)); bad {
		return &Error{Where: "request body at byte " + strconv.Itoa(i), NUL: nul}
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) && string(b[i+2:i+6]) == "0000" {
			return &Error{Where: "request body at byte " + strconv.Itoa(i) + ` (JSON escape \u0000)`, NUL: true}
		}
		i++ // skip the escaped character, a backslash included
	}
	return nil
}

// body reads, checks and puts back the body of r.
func body(r *http.Request, maxBody int64) *Error {
	src := r.Body
	var rd io.Reader = src
	if maxBody > 0 {
		rd = io.LimitReader(src, maxBody+1)
	}
	b, err := io.ReadAll(rd)
	rest := io.Reader(bytes.NewReader(b))
	switch {
	case err != nil:
		rest = io.MultiReader(rest, errReader{err})
	case maxBody > 0 && int64(len(b)) > maxBody:
		rest = io.MultiReader(rest, src)
		b = b[:maxBody]
	}
	r.Body = readCloser{rest, src}
	if err != nil {
		return nil
	}
	return Body(b)
}

type readCloser struct {
	io.Reader
	io.Closer
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// check reports whether s holds a NUL or bytes that are not UTF-8, and where the first is.
func check(s string) (at int, nul, bad bool) {
	for i, c := range s {
		switch {
		case c == 0:
			return i, true, true
		case c == utf8.RuneError:
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i, false, true
			}
		}
	}
	return 0, false, false
}

// unescape appends s with its %XX escapes decoded; other bytes, malformed escapes
// included, are copied.
func unescape(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]) {
			dst = append(dst, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		dst = append(dst, s[i])
	}
	return dst
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// quote quotes client text in a message, shortened, with bad bytes escaped.
func quote(s string) string {
	const max = 64
	if len(s) > max {
		s = s[:max] + "…"
	}
	return fmt.Sprintf("%q", s)
}
