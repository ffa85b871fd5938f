package km

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Step is one relationship crossed while walking from one record to another.
//
// Rows f of From and t of To are related when f.FromField = t.ToField, both non-null. When Up
// is true, From is the child (the many side of the relationship) and To its parent: each
// row of From has at most one related row of To, and ToField is To's key. When Up is false,
// From is the parent and To the child: a row of From has any number of related rows of To,
// and FromField is From's key.
type Step struct {
	From, To           string // record ids
	FromField, ToField string // field ids of From and To whose values are equal
	Up                 bool
}

// String returns "FROM.FIELD>TO.FIELD" for a step up and "FROM.FIELD<TO.FIELD" down.
func (s Step) String() string {
	dir := "<"
	if s.Up {
		dir = ">"
	}
	return s.From + "." + s.FromField + dir + s.To + "." + s.ToField
}

// Path is a walk between two records: each step's From is the previous step's To. The
// empty path leads from a record to itself.
type Path []Step

// String names the records along p joined by "-": "ORDERS-ORDER_ITEMS-MATERIALS".
func (p Path) String() string {
	if len(p) == 0 {
		return ""
	}
	parts := []string{p[0].From}
	for _, s := range p {
		parts = append(parts, s.To)
	}
	return strings.Join(parts, "-")
}

// PathError says that two records have no path of relationships between them
// (Candidates empty), or several shortest ones (Candidates lists them). The handler answers
// it with 400 KM_JOIN_NOT_POSSIBLE or KM_JOIN_AMBIGUOUS.
type PathError struct {
	From, To string
	// UpOnly is true when only paths going up (child to parent) were looked for.
	UpOnly bool
	// Candidates are the shortest paths when there are several (at most maxCandidates).
	Candidates []Path
}

// maxCandidates bounds how many ambiguous paths an error names.
const maxCandidates = 5

// Error names both records and, when the path is ambiguous, the candidates.
func (e *PathError) Error() string {
	if len(e.Candidates) > 1 {
		names := make([]string, len(e.Candidates))
		for i, p := range e.Candidates {
			names[i] = p.String()
		}
		return fmt.Sprintf("records %s and %s are joined by several shortest relationship paths: %s; the join is ambiguous", e.From, e.To, strings.Join(names, " or "))
	}
	if e.UpOnly {
		return fmt.Sprintf("record %s does not reach record %s through relationships from the many side to the one side", e.From, e.To)
	}
	return fmt.Sprintf("records %s and %s are not joined by any relationship path of the knowledge model", e.From, e.To)
}

// Code is the problem code of the error: KM_JOIN_AMBIGUOUS or KM_JOIN_NOT_POSSIBLE.
func (e *PathError) Code() string {
	if len(e.Candidates) > 1 {
		return CodeJoinAmbiguous
	}
	return CodeJoinNotPossible
}

// PathBetween returns the shortest path from record a to record b in the relationship
// graph taken as undirected. Several shortest paths, or none, give a *PathError. The
// returned path is shared: do not modify it.
func (m *KnowledgeModel) PathBetween(a, b string) (Path, error) {
	return m.cachedPath(a, b, false)
}

// UpPath returns the shortest path from record a to record b that only goes up (child to
// parent): the chain of parent rows through which a row of a reads the fields of b.
// Several shortest such paths, or none, give a *PathError. The returned path is shared:
// do not modify it.
func (m *KnowledgeModel) UpPath(a, b string) (Path, error) {
	return m.cachedPath(a, b, true)
}

// pathKey and pathResult are the entries of KnowledgeModel.paths: the paths between two
// records are computed once per KM (its relationships do not change once it is loaded).
type pathKey struct {
	a, b   string
	upOnly bool
}

type pathResult struct {
	p   Path
	err error
}

// pathCache holds the paths between records of one KM, computed once each.
type pathCache struct{ m sync.Map }

func (m *KnowledgeModel) cachedPath(a, b string, upOnly bool) (Path, error) {
	if m.paths == nil { // a KM built in code and not compiled
		return m.shortest(a, b, upOnly)
	}
	k := pathKey{a, b, upOnly}
	if v, ok := m.paths.m.Load(k); ok {
		r := v.(pathResult)
		return r.p, r.err
	}
	p, err := m.shortest(a, b, upOnly)
	m.paths.m.Store(k, pathResult{p, err})
	return p, err
}

// reachesUp reports whether a reaches b going only up (a reaches itself): whether an up
// path exists, one or several.
func (m *KnowledgeModel) reachesUp(a, b string) bool {
	_, err := m.UpPath(a, b)
	pe, ok := err.(*PathError)
	return err == nil || ok && len(pe.Candidates) > 1
}

// steps returns the steps leaving record cur: up along every relationship from cur, and,
// unless upOnly, down along every relationship to cur, in relationship order.
func (m *KnowledgeModel) steps(cur string, upOnly bool) []Step {
	var out []Step
	for _, rel := range m.Relationships {
		if rel.From.Record == cur {
			out = append(out, Step{From: cur, To: rel.To.Record, FromField: rel.From.Field, ToField: rel.To.Field, Up: true})
		}
		if !upOnly && rel.To.Record == cur {
			out = append(out, Step{From: cur, To: rel.From.Record, FromField: rel.To.Field, ToField: rel.From.Field, Up: false})
		}
	}
	return out
}

// shortest finds the shortest path from a to b by breadth-first search, keeping every
// predecessor step on a shortest path so that ambiguity is seen.
func (m *KnowledgeModel) shortest(a, b string, upOnly bool) (Path, error) {
	if a == b {
		return Path{}, nil
	}
	dist := map[string]int{a: 0}
	preds := map[string][]Step{}
	queue := []string{a}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if d, ok := dist[b]; ok && dist[cur] >= d {
			break
		}
		for _, s := range m.steps(cur, upOnly) {
			d, seen := dist[s.To]
			switch {
			case !seen:
				dist[s.To] = dist[cur] + 1
				preds[s.To] = append(preds[s.To], s)
				queue = append(queue, s.To)
			case d == dist[cur]+1:
				preds[s.To] = append(preds[s.To], s)
			}
		}
	}
	if _, ok := dist[b]; !ok {
		return nil, &PathError{From: a, To: b, UpOnly: upOnly}
	}
	var found []Path
	var walk func(at string, suffix Path)
	walk = func(at string, suffix Path) {
		if len(found) >= maxCandidates {
			return
		}
		if at == a {
			found = append(found, slices.Clone(suffix))
			return
		}
		for _, s := range preds[at] {
			walk(s.From, append(Path{s}, suffix...))
		}
	}
	walk(b, nil)
	if len(found) > 1 {
		return nil, &PathError{From: a, To: b, UpOnly: upOnly, Candidates: found}
	}
	return found[0], nil
}

// tree merges paths that all start at root into a tree of steps: each step adds one record
// and its From is root or the To of an earlier step. Paths taken from one breadth-first
// search share their prefixes; a record reached by two different steps is an ambiguity
// the caller reports (it returns the record).
func tree(paths []Path) ([]Step, string) {
	var out []Step
	added := map[string]Step{}
	for _, p := range paths {
		for _, s := range p {
			if prev, ok := added[s.To]; ok {
				if prev != s {
					return nil, s.To
				}
				continue
			}
			added[s.To] = s
			out = append(out, s)
		}
	}
	return out, ""
}
