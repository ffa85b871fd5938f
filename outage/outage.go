// Package outage tells the errors of a store whose database cannot be reached right now
// (refused or dropped connections, a server shutting down or starting) from other errors,
// so that every API answers them with 503 Service Unavailable and a Retry-After header,
// which clients and identity providers retry, instead of 500.
//
// A backend marks such errors itself (wrapping them with Error, or returning an error that
// matches ErrUnavailable), or registers a Classifier that recognises its driver's errors,
// as database/sql drivers register themselves: package sqlstore registers one for
// PostgreSQL and SQLite. Handlers and the auth middleware ask Is.
package outage

import (
	"errors"
	"sync"
	"time"
)

// ErrUnavailable matches (errors.Is) every error that Is reports.
var ErrUnavailable = errors.New("the database is unavailable")

// RetryAfter is the wait the APIs advise in Retry-After when a store is unavailable.
const RetryAfter = 5 * time.Second

// RetryAfterSeconds is RetryAfter as the text of a Retry-After header.
const RetryAfterSeconds = "5"

// Detail is the message of the APIs' 503 answers.
const Detail = "the database is unavailable; retry later"

// Error marks Err as an outage of the store.
type Error struct{ Err error }

// Error returns the cause's message.
func (e *Error) Error() string { return "database unavailable: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(e, ErrUnavailable) true.
func (e *Error) Is(target error) bool { return target == ErrUnavailable }

// A Classifier reports whether err, an error of its backend, means the database cannot be
// reached right now.
type Classifier func(err error) bool

var (
	mu          sync.RWMutex
	classifiers []Classifier
)

// Register adds a Classifier; backends call it from an init function.
func Register(c Classifier) {
	mu.Lock()
	defer mu.Unlock()
	classifiers = append(classifiers, c)
}

// Is reports whether err means that the store's database is unavailable: it matches
// ErrUnavailable, or a registered Classifier recognises it.
func Is(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) {
		return true
	}
	mu.RLock()
	defer mu.RUnlock()
	for _, c := range classifiers {
		if c(err) {
			return true
		}
	}
	return false
}
