package scimhttp_test

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parallel runs f(i) for i in [0, n) at once and returns the status codes, sorted.
func parallel(n int, f func(i int) int) []int {
	codes := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			codes[i] = f(i)
		}()
	}
	close(start)
	wg.Wait()
	sort.Ints(codes)
	return codes
}

func repeat(code, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = code
	}
	return out
}

func TestParallelCreatesOneUserName(t *testing.T) {
	s := newServer(t)
	codes := parallel(50, func(i int) int {
		// Different cases of one name: they are the same userName.
		name := "Same@example.com"
		if i%2 == 1 {
			name = "same@EXAMPLE.com"
		}
		return s.call("acme", "POST", "/Users", user(name)).code
	})
	want := append([]int{http.StatusCreated}, repeat(http.StatusConflict, 49)...)
	if diff := cmp.Diff(want, codes); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	r := s.call("acme", "GET", "/Users", nil)
	if r.body["totalResults"] != 1.0 {
		t.Errorf("users: %s", r.raw)
	}
}

func TestParallelMembershipsStayWithinLimit(t *testing.T) {
	s := newServer(t)
	u := s.createUser("acme", "busy@example.com")
	var groups []string
	for i := range 60 {
		groups = append(groups, s.createGroup("acme", fmt.Sprintf("g%d", i)))
	}
	codes := parallel(60, func(i int) int {
		if i%2 == 0 {
			return s.call("acme", "PATCH", "/Groups/"+groups[i], patch(op("add", "members", []any{map[string]any{"value": u}}))).code
		}
		return s.call("acme", "PUT", "/Groups/"+groups[i], group(fmt.Sprintf("g%d", i), u)).code
	})
	want := append(repeat(http.StatusOK, 50), repeat(http.StatusBadRequest, 10)...)
	if diff := cmp.Diff(want, codes); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	in := 0
	for _, g := range groups {
		for _, m := range s.call("acme", "GET", "/Groups/"+g, nil).members() {
			if m == u {
				in++
			}
		}
	}
	if in != 50 {
		t.Errorf("the user is in %d groups, want 50", in)
	}
}

func TestParallelCreatesRespectSeats(t *testing.T) {
	s := newServer(t)
	s.store.SetSeatLimit("acme", 10)
	codes := parallel(40, func(i int) int {
		return s.call("acme", "POST", "/Users", user(fmt.Sprintf("u%d@example.com", i))).code
	})
	want := append(repeat(http.StatusCreated, 10), repeat(http.StatusBadRequest, 30)...)
	sort.Ints(want)
	if diff := cmp.Diff(want, codes); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

// TestParallelPatchesLoseNothing adds members to one group from many goroutines: the
// optimistic retries of PATCH must keep every addition.
func TestParallelPatchesLoseNothing(t *testing.T) {
	s := newServer(t)
	gid := s.createGroup("acme", "Everyone")
	var users []string
	for i := range 20 {
		users = append(users, s.createUser("acme", fmt.Sprintf("m%d@example.com", i)))
	}
	codes := parallel(20, func(i int) int {
		return s.call("acme", "PATCH", "/Groups/"+gid, patch(op("add", "members", []any{map[string]any{"value": users[i]}}))).code
	})
	if diff := cmp.Diff(repeat(http.StatusOK, 20), codes); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	got := s.call("acme", "GET", "/Groups/"+gid, nil).members()
	sort.Strings(got)
	sort.Strings(users)
	if diff := cmp.Diff(users, got); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
}
