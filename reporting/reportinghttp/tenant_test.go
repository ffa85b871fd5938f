package reportinghttp

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kmkit/kmkit/problem"
)

func TestParseTenant(t *testing.T) {
	const notUUID = " is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)"
	tests := []struct {
		in   []string
		want string
		err  *problem.Problem
	}{
		{[]string{tenantA}, tenantA, nil},
		{[]string{" " + strings.ToUpper(tenantA) + "\t"}, tenantA, nil},
		{nil, "", problem.New(400, "GENERAL_PARAMETER_MISSING", "missing x-tenant-id header")},
		{[]string{" "}, "", problem.New(400, "GENERAL_PARAMETER_MISSING", "empty x-tenant-id header")},
		{[]string{"urn:uuid:" + tenantA}, "", problem.New(400, "GENERAL_PARAMETER_ILLEGAL", `x-tenant-id "urn:uuid:`+tenantA+`"`+notUUID)},
		{[]string{"{" + tenantA + "}"}, "", problem.New(400, "GENERAL_PARAMETER_ILLEGAL", `x-tenant-id "{`+tenantA+`}"`+notUUID)},
		{[]string{strings.ReplaceAll(tenantA, "-", "")}, "", problem.New(400, "GENERAL_PARAMETER_ILLEGAL", `x-tenant-id "`+strings.ReplaceAll(tenantA, "-", "")+`"`+notUUID)},
		{[]string{strings.Repeat("x", 70)}, "", problem.New(400, "GENERAL_PARAMETER_ILLEGAL", `x-tenant-id "`+strings.Repeat("x", 64)+`…"`+notUUID)},
		{[]string{tenantA, tenantA}, "", problem.New(400, "GENERAL_PARAMETER_ILLEGAL", "send one x-tenant-id header")},
	}
	for _, tt := range tests {
		got, err := ParseTenant(tt.in)
		if tt.err == nil {
			if err != nil || got != tt.want {
				t.Errorf("ParseTenant(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			continue
		}
		var p *problem.Problem
		if !errors.As(err, &p) {
			t.Errorf("ParseTenant(%q) = %q, %v; want the problem %v", tt.in, got, err, tt.err)
			continue
		}
		if diff := cmp.Diff(tt.err, p); diff != "" {
			t.Errorf("ParseTenant(%q) problem (-want +got):\n%s", tt.in, diff)
		}
	}
}

// FuzzParseTenant checks that any x-tenant-id header yields a UUID in canonical lower-case
// form or a 400 problem, never a panic.
func FuzzParseTenant(f *testing.F) {
	for _, s := range []string{tenantA, "", " ", strings.ToUpper(tenantA), "urn:uuid:" + tenantA, "{" + tenantA + "}", "x"} {
		f.Add(s, false)
	}
	f.Add(tenantA, true)
	f.Fuzz(func(t *testing.T, v string, twice bool) {
		values := []string{v}
		if twice {
			values = append(values, v)
		}
		got, err := ParseTenant(values)
		if err != nil {
			if p, ok := errors.AsType[*problem.Problem](err); !ok || p.Status != http.StatusBadRequest {
				t.Fatalf("ParseTenant(%q) error %#v, want a 400 problem", values, err)
			}
			return
		}
		if twice || len(got) != 36 || got != strings.ToLower(got) || !strings.EqualFold(got, strings.Trim(v, " \t")) {
			t.Fatalf("ParseTenant(%q) = %q", values, got)
		}
	})
}
