package problem

import (
	"net/http"
	"testing"
)

// TestStatusTextMatchesNetHTTP checks the package's own reason phrases against net/http's.
func TestStatusTextMatchesNetHTTP(t *testing.T) {
	for code := 100; code < 600; code++ {
		if got, want := StatusText(code), http.StatusText(code); got != want {
			t.Errorf("StatusText(%d) = %q, want %q (net/http)", code, got, want)
		}
	}
}
