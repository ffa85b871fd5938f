// Package parallel runs independent pieces of work on the process's cores.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls f(0) to f(n-1), each once, on up to GOMAXPROCS goroutines that take the next
// index as they finish one, and returns when every call has returned. With one core or one
// piece the calls run in order on the calling goroutine.
func For(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}
