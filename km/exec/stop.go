package exec

import "context"

// A stop ends a run's loops over rows soon after its context is done (the client left, the
// time limit passed, the server is shutting down). A loop calls check with the rows it
// handled since its last call; every stopEvery rows check reads the context, and once the
// context is done it panics with halted. The run's entry point (RunContext) recovers that
// into the context's error, so that a canceled request stops within a few milliseconds of
// CPU wherever it is: a column pass, a grouping, a sort (through stop.order), a search.
//
// A nil *stop checks nothing. A stop is used by one
// goroutine, the run's: the loops a run spreads over several goroutines (the aggregates,
// the parallel dense grouping) are single passes, checked between them.
type stop struct {
	ctx  context.Context
	left int
}

// stopEvery is the number of rows between two reads of the context: about a millisecond
// of the slowest per-row loop (a hash-map grouping, a sort comparison through a closure).
const stopEvery = 1 << 14

// halted is the panic value of a stop whose context is done.
type halted struct{ err error }

// newStop returns the stop of ctx, or nil when ctx can never be done.
func newStop(ctx context.Context) *stop {
	if ctx == nil || ctx.Done() == nil {
		return nil
	}
	return &stop{ctx: ctx, left: stopEvery}
}

// check counts n rows done and, every stopEvery rows, panics with halted when the context
// is done.
func (s *stop) check(n int) {
	if s == nil {
		return
	}
	if s.left -= n; s.left > 0 {
		return
	}
	s.left = stopEvery
	if err := s.ctx.Err(); err != nil {
		panic(halted{err})
	}
}

// order returns cmp counting each comparison as a row, for the sorts of a run (nil for a
// nil cmp: no order).
func (s *stop) order(cmp rowCmp) rowCmp {
	if s == nil || cmp == nil {
		return cmp
	}
	return func(a, b int32) int {
		s.check(1)
		return cmp(a, b)
	}
}

// recoverHalt, deferred by a run's entry point, turns a halted panic into the context's
// error in *err. Other panics go on.
func recoverHalt(err *error) {
	if r := recover(); r != nil {
		h, ok := r.(halted)
		if !ok {
			panic(r)
		}
		*err = h.err
	}
}
