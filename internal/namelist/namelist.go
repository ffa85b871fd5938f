// Package namelist words lists of names in error details: duplicates dropped, at most a
// few names listed, plural endings.
package namelist

import (
	"fmt"
	"slices"
	"strings"
)

// Plural is "s" unless n is 1, for error details such as "unknown field%s".
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Dedup drops repeated values, keeping the first of each, in linear time (lists
// come from clients and may be long).
func Dedup(s []string) []string {
	if len(s) <= 16 {
		// Short lists: compare pairwise, and return s itself when nothing repeats.
		for i, v := range s {
			if slices.Contains(s[:i], v) {
				return dedupMap(s)
			}
		}
		return s[:len(s):len(s)]
	}
	return dedupMap(s)
}

// dedupMap is Dedup with a set of the values seen.
func dedupMap(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// maxListed bounds how many unknown names an error detail lists.
const maxListed = 10

// Join joins names for an error detail, at most maxListed of them and a count of the rest.
func Join(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxListed], ", ") + fmt.Sprintf(" and %d more", len(names)-maxListed)
}
