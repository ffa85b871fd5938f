package deadline

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

var errLimit = errors.New("limit")

type key struct{}

// TestPolledDeadline: without Done, Err turns to DeadlineExceeded at the deadline and
// Expired reports it; no timer is made.
func TestPolledDeadline(t *testing.T) {
	parent := context.WithValue(context.Background(), key{}, "v")
	c, cancel := New(parent, time.Now().Add(30*time.Millisecond), errLimit)
	defer cancel()
	if err := c.Err(); err != nil || c.Expired() {
		t.Fatalf("before the deadline: Err %v, Expired %v", err, c.Expired())
	}
	if c.Value(key{}) != "v" {
		t.Fatal("the parent's value is not seen")
	}
	if d, ok := c.Deadline(); !ok || d != c.at {
		t.Fatalf("Deadline() = %v, %v", d, ok)
	}
	time.Sleep(40 * time.Millisecond)
	if err := c.Err(); err != context.DeadlineExceeded || !c.Expired() {
		t.Fatalf("after the deadline: Err %v, Expired %v; want DeadlineExceeded, true", err, c.Expired())
	}
	if c.timed.Load() != nil {
		t.Fatal("a timer was made without Done")
	}
	// Done after the deadline: closed at once, the cause is the limit's.
	select {
	case <-c.Done():
	case <-time.After(time.Second):
		t.Fatal("Done not closed after the deadline")
	}
	if !c.Expired() || context.Cause(c) != errLimit {
		t.Fatalf("Expired %v, Cause %v; want true, %v", c.Expired(), context.Cause(c), errLimit)
	}
}

// TestWaitedDeadline: Done closes at the deadline, as the standard context's.
func TestWaitedDeadline(t *testing.T) {
	c, cancel := New(context.Background(), time.Now().Add(20*time.Millisecond), errLimit)
	defer cancel()
	start := time.Now()
	select {
	case <-c.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("Done not closed at the deadline")
	}
	if time.Since(start) < 15*time.Millisecond {
		t.Fatal("Done closed before the deadline")
	}
	if c.Err() != context.DeadlineExceeded || !c.Expired() || context.Cause(c) != errLimit {
		t.Fatalf("Err %v, Expired %v, Cause %v", c.Err(), c.Expired(), context.Cause(c))
	}
	// A child context ends with it.
	child, cc := context.WithCancel(c)
	defer cc()
	<-child.Done()
}

// TestCanceled: the cancel function and the parent end c with Canceled, before and after
// Done was asked for; neither is reported as the deadline.
func TestCanceled(t *testing.T) {
	for _, waited := range []bool{false, true} {
		c, cancel := New(context.Background(), time.Now().Add(time.Hour), errLimit)
		if waited {
			_ = c.Done()
		}
		cancel()
		if c.Err() != context.Canceled || c.Expired() {
			t.Errorf("waited %v, after cancel: Err %v, Expired %v", waited, c.Err(), c.Expired())
		}
		if waited {
			<-c.Done()
		} else {
			select {
			case <-c.Done(): // made after the cancel: closed
			case <-time.After(time.Second):
				t.Error("Done after cancel is not closed")
			}
		}

		parent, pcancel := context.WithCancel(context.Background())
		c, cancel = New(parent, time.Now().Add(time.Hour), errLimit)
		if waited {
			_ = c.Done()
		}
		pcancel()
		if waited {
			<-c.Done()
		}
		if c.Err() != context.Canceled || c.Expired() {
			t.Errorf("waited %v, parent canceled: Err %v, Expired %v", waited, c.Err(), c.Expired())
		}
		cancel()
	}
}

// TestParentDeadlineFirst: an earlier parent deadline is c's, and ending by it is not
// c's limit.
func TestParentDeadlineFirst(t *testing.T) {
	parent, pcancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer pcancel()
	c, cancel := New(parent, time.Now().Add(time.Hour), errLimit)
	defer cancel()
	pd, _ := parent.Deadline()
	if d, _ := c.Deadline(); d != pd {
		t.Fatalf("Deadline() = %v, want the parent's %v", d, pd)
	}
	<-parent.Done()
	if c.Err() != context.DeadlineExceeded || c.Expired() {
		t.Fatalf("Err %v, Expired %v; want DeadlineExceeded, false", c.Err(), c.Expired())
	}
}

// TestConcurrent: Done, Err and cancel from several goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	for range 50 {
		c, cancel := New(context.Background(), time.Now().Add(time.Millisecond), errLimit)
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				if i%2 == 0 {
					<-c.Done()
				}
				for c.Err() == nil {
					time.Sleep(100 * time.Microsecond)
				}
			})
		}
		wg.Wait()
		if !c.Expired() {
			t.Fatal("not expired after the deadline")
		}
		cancel()
	}
}

// TestEnclosing: a Context is found from the contexts made from it, by its cause only.
func TestEnclosing(t *testing.T) {
	a, b := errors.New("a"), errors.New("b")
	outer, cancel := New(context.Background(), time.Now().Add(time.Hour), a)
	defer cancel()
	inner, cancel2 := New(context.WithValue(outer, key{}, 1), time.Now().Add(time.Hour), b)
	defer cancel2()
	if Enclosing(inner, a) != outer || Enclosing(inner, b) != inner || Enclosing(context.Background(), a) != nil {
		t.Error("Enclosing does not find the contexts by their causes")
	}
	_ = inner.Done() // the timer starts: Value still finds the Context
	if Enclosing(inner, b) != inner {
		t.Error("a started Context is not found")
	}
}
