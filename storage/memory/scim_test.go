package memory

import (
	"context"
	"errors"
	"testing"

	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/scim/scimtest"
)

func TestSCIMStoreConformance(t *testing.T) {
	scimtest.Run(t, func(_ *testing.T, seats map[string]int) scim.Store {
		s := New().SCIM()
		for team, n := range seats {
			s.SetSeatLimit(team, n)
		}
		return s
	})
}

func TestSCIMStoreDefaultSeatLimit(t *testing.T) {
	ctx := context.Background()
	s := New().SCIM()
	s.SetDefaultSeatLimit(1)
	s.SetSeatLimit("big", 2)
	for _, team := range []string{"a", "b", "big", "big"} {
		if _, err := s.CreateUser(ctx, team, scim.User{UserName: team + "1@example.com", Active: true}); err != nil &&
			!(team == "big" && errors.Is(err, scim.ErrUniqueness)) {
			t.Fatalf("team %s: %v", team, err)
		}
	}
	if _, err := s.CreateUser(ctx, "a", scim.User{UserName: "a2@example.com", Active: true}); !errors.Is(err, scim.ErrLicenseExceeded) {
		t.Errorf("default limit: %v", err)
	}
	if _, err := s.CreateUser(ctx, "big", scim.User{UserName: "big2@example.com", Active: true}); err != nil {
		t.Errorf("team limit overrides the default: %v", err)
	}
	s.SetSeatLimit("big", 0)
	if _, err := s.CreateUser(ctx, "big", scim.User{UserName: "big3@example.com", Active: true}); err != nil {
		t.Errorf("0 means unlimited: %v", err)
	}
}
