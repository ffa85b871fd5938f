package scim

import (
	"context"
	"errors"
	"testing"
	"time"
)

// contended returns the get and replace of an Update over a resource (its version) that
// other writes change before each of the first losses attempts to replace it.
func contended(losses int) (get func() (int64, error), replace func(int64, int64) (int64, error), attempts *int) {
	var stored int64 = 1
	attempts = new(int)
	get = func() (int64, error) { return stored, nil }
	replace = func(next, ifVersion int64) (int64, error) {
		*attempts++
		if *attempts <= losses {
			stored++ // another process wrote in between
		}
		if ifVersion != stored {
			return 0, Errorf(ErrVersionMismatch, "version %d, not %d", stored, ifVersion)
		}
		stored++
		return stored, nil
	}
	return get, replace, attempts
}

func same(v int64) int64 { return v }

// TestUpdateOutlastsContention: an update without a precondition never fails because
// other writes keep slipping in (a 412 to a client that sent no If-Match); it retries
// until it wins, however many times it loses.
func TestUpdateOutlastsContention(t *testing.T) {
	const losses = 60
	get, replace, attempts := contended(losses)
	got, err := Update(t.Context(), nil, same, nil, get, func(v int64) (int64, error) { return v, nil }, replace)
	if err != nil {
		t.Fatalf("after %d lost races: %v", *attempts, err)
	}
	if *attempts != losses+1 || got != losses+2 {
		t.Errorf("%d attempts, version %d; want %d attempts, version %d", *attempts, got, losses+1, losses+2)
	}
}

// TestUpdatePinnedVersion: with a precondition, a write slipping in between the check
// and the replace fails the update with ErrVersionMismatch, without a retry.
func TestUpdatePinnedVersion(t *testing.T) {
	get, replace, attempts := contended(1)
	pre := func(int64) error { return nil }
	_, err := Update(t.Context(), pre, same, nil, get, func(v int64) (int64, error) { return v, nil }, replace)
	if !errors.Is(err, ErrVersionMismatch) || *attempts != 1 {
		t.Errorf("%d attempts, %v; want one attempt and ErrVersionMismatch", *attempts, err)
	}
}

// TestUpdateStopsWithContext: a contended update gives up when its context ends, with
// the context's error, not ErrVersionMismatch.
func TestUpdateStopsWithContext(t *testing.T) {
	get, replace, _ := contended(1 << 30)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := Update(ctx, nil, same, nil, get, func(v int64) (int64, error) { return v, nil }, replace)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrVersionMismatch) {
		t.Errorf("err %v, want the context's deadline", err)
	}
}
