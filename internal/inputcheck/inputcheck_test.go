package inputcheck

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRequest(t *testing.T) {
	tests := []struct {
		name, target, body string
		header             [2]string
		want               string // "" when accepted
	}{
		{name: "clean", target: "/a/b?x=1&y=%C3%A9", body: `{"a":"b\\u0000"}`},
		{name: "NUL in value", target: "/a?FacetName=%00", want: `query parameter "FacetName" contains a NUL character (U+0000): text in requests must be UTF-8 without NUL characters`},
		{name: "bad UTF-8 in value", target: "/a?filterExpr=A%20eq%20'%FF'", want: `query parameter "filterExpr" is not valid UTF-8: text in requests must be UTF-8 without NUL characters`},
		{name: "bad UTF-8 in name", target: "/a?%FE=1", want: `query parameter name "\xfe" is not valid UTF-8: text in requests must be UTF-8 without NUL characters`},
		{name: "truncated sequence", target: "/a?x=%C3", want: `query parameter "x" is not valid UTF-8: text in requests must be UTF-8 without NUL characters`},
		{name: "malformed escape left to the handler", target: "/a?x=%zz"},
		{name: "NUL in path", target: "/scim/v2/Users/%00", want: `path segment 4 "\x00" contains a NUL character (U+0000): text in requests must be UTF-8 without NUL characters`},
		{name: "bad UTF-8 in path", target: "/scim/v2/Users/a%C0%AF", want: `path segment 4 "a\xc0\xaf" is not valid UTF-8: text in requests must be UTF-8 without NUL characters`},
		{name: "header", target: "/a", header: [2]string{"If-Match", "W/\"\xff\""}, want: `header If-Match is not valid UTF-8: text in requests must be UTF-8 without NUL characters`},
		{name: "unread header", target: "/a", header: [2]string{"User-Agent", "\xff"}},
		{name: "JSON escape", target: "/a", body: `{"displayName":"a\u0000b"}`, want: `request body at byte 17 (JSON escape \u0000) contains a NUL character (U+0000): text in requests must be UTF-8 without NUL characters`},
		{name: "escaped backslash then escape", target: "/a", body: `{"a":"\\\u0000"}`, want: `request body at byte 8 (JSON escape \u0000) contains a NUL character (U+0000): text in requests must be UTF-8 without NUL characters`},
		{name: "NUL byte in body", target: "/a", body: "{\"a\":\"\x00\"}", want: `request body at byte 6 contains a NUL character (U+0000): text in requests must be UTF-8 without NUL characters`},
		{name: "bad UTF-8 in body", target: "/a", body: "{\"a\":\"\xed\xa0\x80\"}", want: `request body at byte 6 is not valid UTF-8: text in requests must be UTF-8 without NUL characters`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			r := httptest.NewRequest(http.MethodPost, tt.target, body)
			if tt.header[0] != "" {
				r.Header.Set(tt.header[0], tt.header[1])
			}
			got := ""
			if err := Request(r, 1<<20); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Request = %q, want %q", got, tt.want)
			}
			if tt.body != "" {
				b, _ := io.ReadAll(r.Body)
				if string(b) != tt.body {
					t.Errorf("body read after the check = %q, want %q", b, tt.body)
				}
			}
		})
	}
}

// TestLongBodyIsPutBack checks that a body beyond maxBody reaches the handler whole, for
// its own limit to refuse, and that an error of reading is passed on.
func TestLongBodyIsPutBack(t *testing.T) {
	long := strings.Repeat("x", 100) + "\x00"
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(long))
	if err := Request(r, 10); err != nil {
		t.Fatalf("Request = %v, want the first 10 bytes accepted", err)
	}
	if b, _ := io.ReadAll(r.Body); string(b) != long {
		t.Errorf("body = %q, want %q", b, long)
	}

	w := httptest.NewRecorder()
	r = httptest.NewRequest(http.MethodPost, "/", strings.NewReader(long))
	r.Body = http.MaxBytesReader(w, r.Body, 5)
	if err := Request(r, 0); err != nil {
		t.Fatalf("Request = %v, want nil: the reading error is the handler's", err)
	}
	b, err := io.ReadAll(r.Body)
	if string(b) != "xxxxx" || !errors.As(err, new(*http.MaxBytesError)) {
		t.Errorf("body = %q, %v; want the 5 bytes read, then the *http.MaxBytesError", b, err)
	}
}

// FuzzQuery compares Query with net/url's decoding and the standard library's UTF-8 check.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{"a=b", "FacetName=%00", "x=%FF&y=1", "%C3%A9=%E2%82%AC", "a=%zz", "a=%C3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if strings.ContainsAny(raw, ";+") {
			t.Skip() // net/url refuses ';' and turns '+' into a space
		}
		vals, err := url.ParseQuery(raw)
		if err != nil {
			t.Skip() // malformed escapes are the handler's to refuse
		}
		want := false
		for k, vs := range vals {
			for _, s := range append(vs, k) {
				want = want || !utf8.ValidString(s) || strings.ContainsRune(s, 0)
			}
		}
		if got := Query(raw) != nil; got != want {
			t.Errorf("Query(%q) refused = %v, want %v", raw, got, want)
		}
	})
}

// FuzzBody compares Body on valid JSON with encoding/json's decoding: refused exactly when
// the raw bytes are not UTF-8 or a decoded string (key or value) holds a NUL.
func FuzzBody(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `{"a":"\u0000"}`, `["\\u0000"]`, `{"\u0000":1}`, "\"\xff\"", `"\ud800"`, `"\\\\\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if json.Unmarshal(b, &v) != nil {
			t.Skip()
		}
		want := !utf8.Valid(b) || hasNUL(v)
		if got := Body(b) != nil; got != want {
			t.Errorf("Body(%q) refused = %v, want %v", b, got, want)
		}
	})
}

func hasNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.ContainsRune(v, 0)
	case []any:
		for _, e := range v {
			if hasNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.ContainsRune(k, 0) || hasNUL(e) {
				return true
			}
		}
	}
	return false
}
