package plancache

import (
	"strconv"
	"sync"
	"testing"
)

// TestBounded: the cache holds at most Size plans, and finds the last one kept.
func TestBounded(t *testing.T) {
	var c Cache[string, int]
	for i := range 3 * Size {
		c.Put(strconv.Itoa(i), i)
		if n := c.Len(); n > Size {
			t.Fatalf("after %d plans the cache holds %d", i+1, n)
		}
	}
	c.Put("x", 7)
	if v, ok := c.Get("x"); !ok || v != 7 {
		t.Fatalf(`Get("x") = %d, %v; want 7, true`, v, ok)
	}
	if _, ok := c.Get("y"); ok {
		t.Fatal("a plan never kept is found")
	}
}

// TestConcurrent: puts and gets from several goroutines (run with -race) keep every
// plan that was not dropped by a start-over and never return another key's plan.
func TestConcurrent(t *testing.T) {
	var c Cache[int, int]
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				k := g*10000 + i
				c.Put(k, -k)
				if v, ok := c.Get(k); ok && v != -k {
					t.Errorf("Get(%d) = %d", k, v)
				}
			}
		})
	}
	wg.Wait()
}

// TestMentionsNow: "now" in any case and anywhere is found.
func TestMentionsNow(t *testing.T) {
	for s, want := range map[string]bool{
		"STATUS eq 'OPEN'":            false,
		"":                            false,
		"CREATED lt now()":            true,
		"CREATED lt NOW()":            true,
		"nOw ( )":                     true,
		"-(now() - CREATED)":          true,
		"NAME eq 'Known'":             true, // refused, harmlessly
		"NAME eq 'no'":                false,
		"n":                           false,
		`{"filterExpr":["X gt no"]}`:  false,
		`{"filterExpr":["X gt NoW"]}`: true,
	} {
		if got := MentionsNow(s); got != want {
			t.Errorf("MentionsNow(%q) = %v, want %v", s, got, want)
		}
	}
}
