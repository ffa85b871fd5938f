// Package memory holds in-memory implementations of every kmkit store, safe for concurrent use.
package memory
