package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// TestForCallsEachIndexOnce holds For's contract on one core and on several: every index
// from 0 to n-1 is called exactly once, none outside, and all before For returns.
func TestForCallsEachIndexOnce(t *testing.T) {
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 2, 7, 1000} {
			calls := make([]atomic.Int32, n)
			For(n, func(i int) { calls[i].Add(1) })
			for i := range calls {
				if got := calls[i].Load(); got != 1 {
					t.Errorf("GOMAXPROCS %d, n %d: index %d called %d times", procs, n, i, got)
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}
