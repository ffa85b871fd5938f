package outage

import (
	"errors"
	"fmt"
	"testing"
)

func TestIs(t *testing.T) {
	cause := errors.New("connection refused")
	marked := fmt.Errorf("query: %w", &Error{Err: cause})
	if !Is(marked) || !errors.Is(marked, ErrUnavailable) || !errors.Is(marked, cause) {
		t.Errorf("a wrapped *Error: Is %v, errors.Is ErrUnavailable %v, cause %v", Is(marked), errors.Is(marked, ErrUnavailable), errors.Is(marked, cause))
	}
	if Is(nil) || Is(cause) {
		t.Error("nil or an unmarked error taken for an outage")
	}
	special := errors.New("driver: server restarting")
	Register(func(err error) bool { return errors.Is(err, special) })
	if !Is(fmt.Errorf("x: %w", special)) {
		t.Error("a registered classifier is not asked")
	}
}
