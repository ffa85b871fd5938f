// Package deadline bounds a request's work by a time limit, as context.WithDeadlineCause
// does, without starting a timer (nor registering with the parent context) for work
// that only polls Err: the limit is read from the clock on each Err, and the timer of a
// standard context starts on the first call of Done, by work that waits on the channel.
// A small query of the memory store, which polls Err between phases, ends with no timer
// made; a database driver, which waits on Done, gets one as before.
package deadline

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Context is a context ended by a deadline (or by its parent, or by its cancel
// function), with a cause for the deadline. Create it with New.
type Context struct {
	parent   context.Context
	at       time.Time
	cause    error
	canceled atomic.Bool

	mu     sync.Mutex // guards the creation of timed
	timed  atomic.Pointer[context.Context]
	cancel context.CancelFunc
}

// New returns a context that ends at the instant at with cause (see
// context.WithDeadlineCause), or when parent ends, or when the returned function is
// called. Call the function when the work is done. A deadline already past ends it at
// once.
func New(parent context.Context, at time.Time, cause error) (*Context, context.CancelFunc) {
	c := &Context{parent: parent, at: at, cause: cause}
	return c, c.stop
}

// stop ends c: Err reports context.Canceled unless c ended before.
func (c *Context) stop() {
	if c.Err() == nil {
		c.canceled.Store(true)
	}
	c.mu.Lock()
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// started returns the standard context that carries the timer, making it on first use.
func (c *Context) started() context.Context {
	if t := c.timed.Load(); t != nil {
		return *t
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.timed.Load(); t != nil {
		return *t
	}
	t, cancel := context.WithDeadlineCause(c.parent, c.at, c.cause)
	if c.canceled.Load() {
		cancel()
	}
	c.cancel = cancel
	c.timed.Store(&t)
	return t
}

// Deadline implements context.Context: the earlier of the parent's deadline and c's.
func (c *Context) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.at) {
		return d, true
	}
	return c.at, true
}

// Done implements context.Context; the first call starts the timer.
func (c *Context) Done() <-chan struct{} {
	return c.started().Done()
}

// Err implements context.Context: context.Canceled after the cancel function or the
// parent's error, context.DeadlineExceeded from the deadline on.
func (c *Context) Err() error {
	if t := c.timed.Load(); t != nil {
		return (*t).Err()
	}
	if c.canceled.Load() {
		return context.Canceled
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.at) {
		return context.DeadlineExceeded
	}
	return nil
}

// enclosingKey is the key for which a Context's Value is the Context itself (Enclosing).
type enclosingKey struct{}

// Enclosing returns the innermost Context of this package with the given cause that ctx
// is or is made from, or nil: work that shares one deadline (the parts of a batch) finds
// the one it runs in.
func Enclosing(ctx context.Context, cause error) *Context {
	c, _ := ctx.Value(enclosingKey{}).(*Context)
	for c != nil && c.cause != cause {
		c, _ = c.parent.Value(enclosingKey{}).(*Context)
	}
	return c
}

// Value implements context.Context: c itself for Enclosing, else the parent's values.
func (c *Context) Value(key any) any {
	if _, ok := key.(enclosingKey); ok {
		return c
	}
	if t := c.timed.Load(); t != nil {
		return (*t).Value(key)
	}
	return c.parent.Value(key)
}

// Expired reports whether c ended by its deadline, which context.Cause reports for the
// standard context only once the timer started: then context.Cause(c) is the cause given
// to New.
func (c *Context) Expired() bool {
	if t := c.timed.Load(); t != nil {
		return context.Cause(*t) == c.cause
	}
	return !c.canceled.Load() && c.parent.Err() == nil && !time.Now().Before(c.at)
}

// Reached reports whether ctx ended by the deadline of cause: a Context of this package
// that expired, or a standard context whose cause is cause.
func Reached(ctx context.Context, cause error) bool {
	if c, ok := ctx.(*Context); ok {
		return c.Expired()
	}
	return context.Cause(ctx) == cause
}
