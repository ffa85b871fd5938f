package scimhttp_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kmkit/kmkit/scim/scimhttp"
)

// TestErrorsEchoAShortValue: an error that repeats a value of the request repeats at most
// scim.MaxEcho bytes of it, cut at a UTF-8 boundary, with an ellipsis and the value's
// length, so a 1 MiB value makes a body of a few hundred bytes that still says what was
// wrong (the whole value was echoed: 1 MiB errors, 2 MiB and more for discovery).
func TestErrorsEchoAShortValue(t *testing.T) {
	s := newServer(t, scimhttp.WithMaxBodyBytes(8<<20))
	const size = 1 << 20
	big := strings.Repeat("€", size/3) + "x" // 3-byte runes: 200 bytes is no boundary
	id := s.createUser("t", "a@example.com")
	gid := s.createGroup("t", "G")
	bulk := func(op map[string]any) map[string]any {
		return map[string]any{"schemas": []any{bulkURN}, "Operations": []any{op}}
	}
	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		detail             string // how the detail starts
		length             int    // the length the detail gives: the value's, or its JSON text's (0: len(big))
	}{
		{"sortOrder", "GET", "/Users?sortBy=userName&sortOrder=" + url.QueryEscape(big), nil, 400, `sortOrder must be ascending or descending, not "€€`, 0},
		{"sortBy", "GET", "/Users?sortBy=" + url.QueryEscape(big), nil, 400, "Sorting by €€", 0},
		{"filter", "GET", "/Users?filter=" + url.QueryEscape(`userName eq "`+big[:3999]+`"x`), nil, 400, `The filter "userName eq \"€€`, len(`userName eq "`) + 3999 + 2},
		{"long filter", "GET", "/Users?filter=" + url.QueryEscape(big), nil, 400, "The filter is longer than 4096 bytes.", 0},
		{"user id", "GET", "/Users/" + url.PathEscape(big), nil, 404, "User €€", 0},
		{"userName", "POST", "/Users", user("a€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€"), 400,
			`userName must be an e-mail address such as name@example.com, not "a€€`, 0},
		{"title", "POST", "/Users", user("b@example.com", "title", []any{big}), 400, `title must be a string, not ["€€`, len(big) + 4},
		{"role", "POST", "/Users", user("b@example.com", "role", big), 400, `role must be one of MEMBER, ANALYST or ADMIN, not "€€`, len(big) + 2},
		{"patch path", "PATCH", "/Users/" + id, patch(op("replace", big, "x")), 400, `Operations[0]: The path "€€`, 0},
		{"patch filter", "PATCH", "/Users/" + id, patch(op("replace", `emails[type eq "`+big+`"].value`, "x")), 400, `Operations[0]: No value of emails matches the filter of "emails[type eq \"€€`, len(big) + 24},
		{"patch op", "PATCH", "/Users/" + id, patch(op(big, "title", "x")), 400, `Operations[0].op must be add, remove or replace, not "€€`, len(big) + 2},
		{"member", "PATCH", "/Groups/" + gid, patch(op("add", "members", []any{map[string]any{"value": big}})), 400, "Group member €€", 0},
		{"If-Match", "PUT", "/Users/" + id, user("a@example.com"), 412, "If-Match €€", 0},
		{"Content-Type", "POST", "/Users", user("c@example.com"), 415, `Content-Type "€€`, 0},
		{".search attributes", "POST", "/Users/.search", map[string]any{"schemas": []any{searchURN}, "attributes": []any{"a," + big}}, 400, `The attribute name "a,€€`, len(big) + 2},
		{"discovery attributes", "GET", "/Schemas?attributes=" + url.QueryEscape("a "+big), nil, 400, `The attribute name "a €€`, len(big) + 2},
		{"discovery id", "GET", "/Schemas/" + url.PathEscape(big), nil, 404, "Resource €€", 0},
	} {
		var headers []string
		switch c.name {
		case "If-Match":
			headers = []string{"If-Match", big}
		case "Content-Type":
			headers = []string{"Content-Type", big}
		}
		r := s.call("t", c.method, c.path, c.body, headers...)
		detail := r.str("detail")
		if c.status == 0 {
			c.status = http.StatusBadRequest
		}
		if r.code != c.status || !strings.HasPrefix(detail, c.detail) || len(r.raw) > 1024 || !utf8.ValidString(detail) {
			t.Errorf("%s: %d, %d bytes, detail %.400q; want %d, a detail starting %q within 1 KiB", c.name, r.code, len(r.raw), detail, c.status, c.detail)
			continue
		}
		if c.length == 0 {
			c.length = len(big)
		}
		if want := "… (" + strconv.Itoa(c.length) + " bytes)"; c.name != "long filter" && c.name != "userName" && !strings.Contains(detail, want) {
			t.Errorf("%s: the detail %q does not say the value of %d bytes was cut", c.name, detail, c.length)
		}
	}
	// A Bulk operation's error is cut as well.
	r := s.call("t", "POST", "/Bulk", bulk(map[string]any{"method": "POST", "path": big, "bulkId": "x", "data": user("z@example.com")})).must(t, http.StatusOK)
	if len(r.raw) > 1024 || !strings.Contains(r.raw, `path must start with /Users or /Groups, not \"€€`) || !strings.Contains(r.raw, "… ("+strconv.Itoa(len(big))+" bytes)") {
		t.Errorf("bulk path: %d bytes: %.600s", len(r.raw), r.raw)
	}
}
