package ratelimit_test

import (
	"testing"

	"github.com/kmkit/kmkit/auth/ratelimit"
	"github.com/kmkit/kmkit/auth/ratelimit/limitertest"
)

func TestMemoryConformance(t *testing.T) {
	limitertest.Run(t, func(*testing.T) ratelimit.Limiter { return ratelimit.NewMemory() })
}
