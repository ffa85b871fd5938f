package scim

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFilter(t *testing.T) {
	tests := []struct {
		filter, resourceType string
		want                 []Equal
		err                  string
	}{
		{`userName eq "a@b.c"`, "User", []Equal{{Attr: "userName", Value: "a@b.c"}}, ""},
		{`USERNAME EQ "a"`, "User", []Equal{{Attr: "userName", Value: "a"}}, ""},
		{`urn:ietf:params:scim:schemas:core:2.0:User:userName eq "a"`, "User", []Equal{{Attr: "userName", Value: "a"}}, ""},
		{`externalId eq "x" and id eq "y" and displayName eq "z"`, "User",
			[]Equal{{Attr: "externalId", Value: "x"}, {Attr: "id", Value: "y"}, {Attr: "displayName", Value: "z"}}, ""},
		{`(displayName eq "g")`, "Group", []Equal{{Attr: "displayName", Value: "g"}}, ""},
		{`userName eq "a"`, "Group", nil, "filtering on userName is not supported: Group filters may use displayName, externalId, id"},
		{`urn:ietf:params:scim:schemas:core:2.0:Group:displayName eq "a"`, "User", nil,
			"filtering on urn:ietf:params:scim:schemas:core:2.0:Group:displayName is not supported: User filters may use userName, externalId, id, displayName"},
		{`userName pr`, "User", nil, `the operator "pr" is not supported: filters compare with "eq" only`},
		{`userName eq null`, "User", nil, "the attribute userName must be compared with a quoted string"},
		{`userName eq true`, "User", nil, "the attribute userName must be compared with a quoted string"},
		{`members[value eq "x"]`, "Group", []Equal{{Attr: MemberFilter, Value: "x"}}, ""},
		{`id eq "g" and members[value eq "u"]`, "Group", []Equal{{Attr: "id", Value: "g"}, {Attr: MemberFilter, Value: "u"}}, ""},
		{`members.value eq "u"`, "Group", []Equal{{Attr: MemberFilter, Value: "u"}}, ""},
		{`emails[type eq "work"].value eq "x@y.example"`, "User", []Equal{{Attr: EmailFilter, Value: "x@y.example", Type: "work"}}, ""},
		{`EMAILS[TYPE EQ "work"].VALUE EQ "x@y.example" and userName eq "u"`, "User",
			[]Equal{{Attr: EmailFilter, Value: "x@y.example", Type: "work"}, {Attr: "userName", Value: "u"}}, ""},
		{`emails[type eq "a]b" and value eq "x"]`, "User", []Equal{{Attr: EmailFilter, Value: "x", Type: "a]b"}}, ""},
		{`emails.value eq "x"`, "User", []Equal{{Attr: EmailFilter, Value: "x"}}, ""},
		{`emails[type eq "work"].value co "x"`, "User", nil, `the value filter on emails is not supported: User filters may use emails[value eq "..."] with "and type eq \"...\""`},
		{`emails[type eq "work"]`, "User", nil, `the value filter on emails is not supported: User filters may use emails[value eq "..."] with "and type eq \"...\""`},
		{`emails[value eq "x"]`, "Group", nil, `the value filter on emails is not supported: Group filters may use members[value eq "..."]`},
		{`members[value eq "x" or value eq "y"]`, "Group", nil, `the value filter on members is not supported: Group filters may use members[value eq "..."]`},
		{`userName eq "a" or id eq "b"`, "User", nil, `the operator "or" is not supported: filters combine terms with "and" only`},
		{`not(id eq "b")`, "User", nil, `the operator "not" is not supported in filters`},
		{`userName eq "a" and (id eq "b" or id eq "c")`, "User", nil, `the operator "or" is not supported: filters combine terms with "and" only`},
		// String literals are JSON strings: their escapes are decoded (Okta escapes the
		// quotes of a group name it checks for), invalid ones are a syntax error.
		{`displayName eq "Sales \"EMEA\" \\ Ops"`, "Group", []Equal{{Attr: "displayName", Value: `Sales "EMEA" \ Ops`}}, ""},
		{`displayName eq "Gr\u00fc\u00dfe" and externalId eq "a\/b\tc"`, "Group",
			[]Equal{{Attr: "displayName", Value: "Grüße"}, {Attr: "externalId", Value: "a/b\tc"}}, ""},
		{`emails[type eq "w\"k"].value eq "a\u0040b.example"`, "User", []Equal{{Attr: EmailFilter, Value: "a@b.example", Type: `w"k`}}, ""},
		{`members[value eq "\u0031"]`, "Group", []Equal{{Attr: MemberFilter, Value: "1"}}, ""},
		// The rewrite of Entra ID's emails[...].value form does not reach into strings.
		{`displayName eq "a[b].c eq true"`, "Group", []Equal{{Attr: "displayName", Value: "a[b].c eq true"}}, ""},
		{`userName eq "a\qb"`, "User", nil, `the filter "userName eq \"a\\qb\"" is not valid SCIM filter syntax`},
		{`userName eq "a\u00"`, "User", nil, `the filter "userName eq \"a\\u00\"" is not valid SCIM filter syntax`},
		{`userName eq "a\u0000b"`, "User", nil,
			`the string "a\u0000b" of the filter contains a NUL character (U+0000): text in requests must be UTF-8 without NUL characters`},
		{`emails[type eq "\u0000"].value eq "a"`, "User", nil,
			`the string "\u0000" of the filter contains a NUL character (U+0000): text in requests must be UTF-8 without NUL characters`},
		{`userName eq "unterminated`, "User", nil, `the filter "userName eq \"unterminated" is not valid SCIM filter syntax`},
		{strings.Repeat("x", 5000), "User", nil, "the filter is longer than 4096 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			got, err := parseFilter(tt.filter, tt.resourceType)
			var msg string
			if err != nil {
				msg = err.Error()
			}
			if diff := cmp.Diff(tt.err, msg); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("terms (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseFilter checks that any input gives either terms on supported attributes or an
// error, never a panic.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{
		`userName eq "a@b.c"`, `externalId eq "x" and id eq "y"`, `displayName eq "g"`,
		`members[value eq "x"]`, `not (id eq "1")`, `a eq 1 or b gt 2.5e3`, `title pr`,
		`emails[type eq "work" and value co "@"].value`, `meta.lastModified gt "2011-05-13T04:42:34Z"`, `(`, `"`, ``,
		`emails[type eq "work"].value eq "x@y.z"`, `emails[type eq "]"].value eq "[" and id eq "1"`, `emails.value eq "v"`, `members.value eq "m"`,
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, user bool) {
		rt := "Group"
		if user {
			rt = "User"
		}
		terms, err := parseFilter(s, rt)
		if err != nil {
			if terms != nil || err.Error() == "" {
				t.Fatalf("error %v with terms %v", err, terms)
			}
			return
		}
		if len(terms) == 0 {
			t.Fatalf("no terms and no error for %q", s)
		}
		for _, e := range terms {
			if !slices.Contains(filterAttrs[rt], e.Attr) && e.Attr != map[bool]string{true: EmailFilter, false: MemberFilter}[user] {
				t.Fatalf("unsupported attribute %q accepted from %q", e.Attr, s)
			}
		}
	})
}
