package principal_test

import (
	"context"
	"testing"

	"github.com/kmkit/kmkit/principal"
)

func TestContext(t *testing.T) {
	if p, ok := principal.FromContext(context.Background()); ok || p != nil {
		t.Errorf("empty context: %v, %v; want nil, false", p, ok)
	}
	if p, ok := principal.FromContext(principal.NewContext(context.Background(), nil)); ok || p != nil {
		t.Errorf("nil principal: %v, %v; want nil, false", p, ok)
	}
	want := &principal.Principal{Name: "k", Team: "acme"}
	if p, ok := principal.FromContext(principal.NewContext(context.Background(), want)); !ok || p != want {
		t.Errorf("got %v, %v; want %v, true", p, ok, want)
	}
}

func TestCan(t *testing.T) {
	p := &principal.Principal{Permissions: []principal.Permission{principal.PermKM, principal.PermOData}}
	for _, tt := range []struct {
		p    *principal.Principal
		perm principal.Permission
		want bool
	}{
		{p, principal.PermKM, true},
		{p, principal.PermOData, true},
		{p, principal.PermSCIM, false},
		{nil, principal.PermKM, false},
	} {
		if got := tt.p.Can(tt.perm); got != tt.want {
			t.Errorf("%v.Can(%s) = %v, want %v", tt.p, tt.perm, got, tt.want)
		}
	}
}
