package demostore

import "testing"

// TestStore loads the embedded demo and a generated one.
func TestStore(t *testing.T) {
	for _, n := range []int{0, 500} {
		if _, err := Store(n); err != nil {
			t.Errorf("Store(%d): %v", n, err)
		}
	}
}
