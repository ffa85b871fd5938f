package exec

import (
	"container/list"
	"sync"

	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/query/fuzzy"
)

// scoreCache keeps the fuzzy scores of string dictionaries, one byte per dictionary value,
// per (column, term), so that a search repeated with the same term (a user paging through
// the matches, a grid refreshing) looks its scores up instead of scoring the dictionary
// again. An entry is scored for a precision, its floor (fuzzy.Matcher.ScoreAllAtLeast:
// scores at or above the floor exact, those below it possibly 0), so it serves every
// search of that precision or a higher one; a lower precision scores the dictionary again
// and the entry takes the lower floor. It holds at most maxBytes of scores,
// dropping the least recently used entry first. Columns are immutable, so an entry never
// goes stale; the cache belongs to a Source, whose tables it keys, and goes with it.
// A new term is scored over the dictionary's fuzzy.Index, built once per dictionary on
// first use (or by Source.Warm) and kept for the cache's life, outside its bound: about
// twice the dictionary's text and 30 bytes a value (fuzzy.Index).
// Safe for concurrent use.
type scoreCache struct {
	mu       sync.Mutex
	maxBytes int
	bytes    int
	lru      list.List // of *scoreEntry, the most recently used at the front
	byKey    map[scoreKey]*list.Element
	indexes  sync.Map // dictKey -> *lazy of *fuzzy.Index
}

// dictKey names a dictionary by its memory, so that columns sharing one (the demo's
// three ORDER_ID columns) share its index.
type dictKey struct {
	first *string
	n     int
}

type scoreKey struct {
	col  *column.Strings
	term string
}

type scoreEntry struct {
	key    scoreKey
	scores []uint8
	floor  int // the precision the scores are exact from
}

// scoreCacheBytes bounds a Source's cached scores: 8 MiB holds the scores of 160 terms
// over a dictionary of 50,000 values, or of 8 over a million.
const scoreCacheBytes = 8 << 20

func newScoreCache(maxBytes int) *scoreCache {
	return &scoreCache{maxBytes: maxBytes, byKey: map[scoreKey]*list.Element{}}
}

// scores returns the score of every value of col's dictionary against m's term, exact
// from precision on (below it a score may read 0), from the cache or scored now
// (scoreDict, which st may stop: a stopped scoring caches nothing). The slice returned is
// shared: read it, never change it. A nil cache scores every time.
func (c *scoreCache) scores(col *column.Strings, term string, m *fuzzy.Matcher, precision int, st *stop) []uint8 {
	precision = max(precision, 0)
	if c == nil {
		return scoreDict(m, fuzzy.NewIndex(col.Dict), precision, st)
	}
	key := scoreKey{col: col, term: term}
	c.mu.Lock()
	if e, ok := c.byKey[key]; ok && e.Value.(*scoreEntry).floor <= precision {
		c.lru.MoveToFront(e)
		s := e.Value.(*scoreEntry).scores
		c.mu.Unlock()
		return s
	}
	c.mu.Unlock()
	// Scored outside the lock: other searches go on meanwhile. Two searches of the same
	// new term may both score it; the second keeps the lower floor.
	s := scoreDict(m, c.index(col), precision, st)
	if len(s) > c.maxBytes {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(e)
		if old := e.Value.(*scoreEntry); precision < old.floor {
			old.scores, old.floor = s, precision // the same size: the bytes do not change
		}
		return s
	}
	c.byKey[key] = c.lru.PushFront(&scoreEntry{key: key, scores: s, floor: precision})
	c.bytes += len(s)
	for c.bytes > c.maxBytes {
		old := c.lru.Back()
		e := old.Value.(*scoreEntry)
		c.lru.Remove(old)
		delete(c.byKey, e.key)
		c.bytes -= len(e.scores)
	}
	return s
}

// index returns the fuzzy.Index of col's dictionary, building it on first use; a search
// meanwhile waits for the build it needs, which is never done twice.
func (c *scoreCache) index(col *column.Strings) *fuzzy.Index {
	key := dictKey{n: len(col.Dict)}
	if len(col.Dict) > 0 {
		key.first = &col.Dict[0]
	}
	v, _ := cachedIn(&c.indexes, key, func() (any, error) { return fuzzy.NewIndex(col.Dict), nil })
	return v.(*fuzzy.Index)
}
