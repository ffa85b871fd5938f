package sqlstore

import (
	"sync"

	"github.com/kmkit/kmkit/query/fuzzy"
)

// searchDicts keeps the distinct values of the searched columns of generation tables,
// with their fuzzy index: a generation table never changes once loaded (its name is its
// content's), so a search without a filter can score a prepared index instead of reading
// the column's distinct values and indexing them again on every request, which was most
// of a search's cost (on the demo's 10,000 customer names, 12 of 16 ms of CPU). Only
// dictionaries of at most maxSearchDictValues values are kept, and at most
// searchDictBytes in all, the oldest dropped first: a table replaced by a later load
// leaves the cache that way. Safe for concurrent use.
type searchDicts struct {
	mu    sync.Mutex
	byKey map[searchDictKey]*searchDict
	order []searchDictKey // oldest first
	bytes int
}

// searchDictKey names a column of a generation table.
type searchDictKey struct{ table, field string }

// searchDict is a column's distinct non-null values and their fuzzy index.
type searchDict struct {
	values []string
	index  *fuzzy.Index
	bytes  int
}

// maxSearchDictValues bounds the dictionaries searchDicts keeps (names, labels, codes;
// not the ids of a large table), and searchDictBytes the memory of all of them (an
// estimate: fuzzy.Index keeps about twice the values' text and 30 bytes a value).
const (
	maxSearchDictValues = 1 << 17
	searchDictBytes     = 64 << 20
)

// get returns the dictionary kept for key.
func (c *searchDicts) get(key searchDictKey) (*searchDict, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.byKey[key]
	return d, ok
}

// put indexes values, the distinct non-null values of key's column, and keeps them when
// they are few enough. It returns the dictionary, kept or not.
func (c *searchDicts) put(key searchDictKey, values []string) *searchDict {
	d := &searchDict{values: values, index: fuzzy.NewIndex(values), bytes: 48 * len(values)}
	for _, v := range values {
		d.bytes += 3 * len(v)
	}
	if len(values) > maxSearchDictValues || d.bytes > searchDictBytes {
		return d
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kept, ok := c.byKey[key]; ok {
		return kept // indexed meanwhile by another search
	}
	if c.byKey == nil {
		c.byKey = map[searchDictKey]*searchDict{}
	}
	c.byKey[key] = d
	c.order = append(c.order, key)
	c.bytes += d.bytes
	for c.bytes > searchDictBytes {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= c.byKey[old].bytes
		delete(c.byKey, old)
	}
	return d
}
