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

// Reverse returns the step that crosses the same relationship the other way.
func (s Step) Reverse() Step {
	return Step{From: s.To, To: s.From, FromField: s.ToField, ToField: s.FromField, Up: !s.Up}
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
// (Candidates empty), that the rule of PathBetween leaves several paths (Candidates lists
// them), or that the path between them is not the chain of lookups a request needs
// (UpOnly). The handler answers it with 400 KM_JOIN_NOT_POSSIBLE or KM_JOIN_AMBIGUOUS.
type PathError struct {
	From, To string
	// UpOnly is true when a path going only up (child to parent) was needed and Via, the
	// path between the records, steps down.
	UpOnly bool
	Via    Path
	// Candidates are the paths the rule cannot choose between (at most maxCandidates).
	Candidates []Path
	// Merged is true when Candidates are two ways from From to To that the paths to
	// several records, each chosen on its own, take (see tree).
	Merged bool
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
		if e.Merged {
			return fmt.Sprintf("the paths from record %s to the records the request needs reach record %s in two ways: %s; the join is ambiguous", e.From, e.To, strings.Join(names, " or "))
		}
		return fmt.Sprintf("records %s and %s are joined by several equally short relationship paths, none of them the only chain of lookups: %s; the join is ambiguous", e.From, e.To, strings.Join(names, " or "))
	}
	if e.UpOnly {
		return fmt.Sprintf("record %s does not reach record %s through relationships from the many side to the one side: the path between them is %s", e.From, e.To, e.Via)
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

// PathBetween returns the path from record a to record b by the one rule every form of a
// request uses (rows, KPIs, filters, sort, search): the shortest path in the relationship
// graph taken as undirected wins; among several equally short ones, a lookup chain (a
// path whose steps all go the same way: read from one of its ends, every step is a
// many-to-one lookup) wins over the paths that change direction; several lookup chains
// left, or several paths and no lookup chain, give a *PathError naming them, and so does
// no path at all. The rule is symmetric: PathBetween(b, a) is the reverse of
// PathBetween(a, b). The returned path is shared: do not modify it.
func (m *KnowledgeModel) PathBetween(a, b string) (Path, error) {
	return m.cachedPath(a, b)
}

// upPath returns PathBetween(a, b) when it only goes up (child to parent): the chain of
// parent rows through which a row of a reads the fields of b. A path that steps down, or
// several candidates, give a *PathError.
func (m *KnowledgeModel) upPath(a, b string) (Path, error) {
	p, err := m.PathBetween(a, b)
	if err != nil {
		return nil, err
	}
	if !p.allUp() {
		return nil, &PathError{From: a, To: b, UpOnly: true, Via: p}
	}
	return p, nil
}

// allUp reports whether every step of p goes up (the empty path does).
func (p Path) allUp() bool {
	for _, s := range p {
		if !s.Up {
			return false
		}
	}
	return true
}

// pathKey and pathResult are the entries of KnowledgeModel.paths: the paths between two
// records are computed once per KM (its relationships do not change once it is loaded).
type pathKey struct{ a, b string }

type pathResult struct {
	p   Path
	err error
}

// pathCache holds the paths between records of one KM, computed once each.
type pathCache struct{ m sync.Map }

func (m *KnowledgeModel) cachedPath(a, b string) (Path, error) {
	if m.paths == nil { // a KM built in code and not compiled
		return m.choosePath(a, b)
	}
	k := pathKey{a, b}
	if v, ok := m.paths.m.Load(k); ok {
		r := v.(pathResult)
		return r.p, r.err
	}
	p, err := m.choosePath(a, b)
	m.paths.m.Store(k, pathResult{p, err})
	return p, err
}

// reachesUp reports whether the path from a to b goes only up (a reaches itself), or,
// when several paths tie, whether one of them does: the caller then asks for the path
// and reports the ambiguity.
func (m *KnowledgeModel) reachesUp(a, b string) bool {
	p, err := m.PathBetween(a, b)
	if err == nil {
		return p.allUp()
	}
	pe, ok := err.(*PathError)
	return ok && slices.ContainsFunc(pe.Candidates, Path.allUp)
}

// steps returns the steps leaving record cur, up along every relationship from cur and
// down along every relationship to cur, in relationship order.
func (m *KnowledgeModel) steps(cur string) []Step {
	var out []Step
	for _, rel := range m.Relationships {
		if rel.From.Record == cur {
			out = append(out, Step{From: cur, To: rel.To.Record, FromField: rel.From.Field, ToField: rel.To.Field, Up: true})
		}
		if rel.To.Record == cur {
			out = append(out, Step{From: cur, To: rel.From.Record, FromField: rel.To.Field, ToField: rel.From.Field, Up: false})
		}
	}
	return out
}

// choosePath applies PathBetween's rule: a breadth-first search keeps every predecessor
// step on a shortest path, then the walk back from b collects the lookup chains among
// the shortest paths, and only when there is none every shortest path.
func (m *KnowledgeModel) choosePath(a, b string) (Path, error) {
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
		for _, s := range m.steps(cur) {
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
		return nil, &PathError{From: a, To: b}
	}
	collect := func(chainsOnly bool) []Path {
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
				if chainsOnly && len(suffix) > 0 && s.Up != suffix[0].Up {
					continue
				}
				walk(s.From, append(Path{s}, suffix...))
			}
		}
		walk(b, nil)
		return found
	}
	found := collect(true)
	if len(found) == 0 {
		found = collect(false)
	}
	if len(found) > 1 {
		return nil, &PathError{From: a, To: b, Candidates: found}
	}
	return found[0], nil
}

// tree merges paths that all start at root into a tree of steps: each step adds one record
// and its From is root or the To of an earlier step. A record reached by two different
// steps (the paths to two records disagree on the way to a third) is an ambiguity: tree
// returns a *PathError naming the two ways from root to it. PathBetween's rule makes the
// part of a chosen path up to a record the chosen path to that record (a unique shortest
// path has unique shortest prefixes; the only chain among shortest paths has chains as
// prefixes, and a second chain to the record would make a second one to the end), so
// paths PathBetween chose always merge; the check guards the invariant.
func tree(root string, paths []Path) ([]Step, error) {
	var out []Step
	type added struct {
		s   Step
		via Path // the path from root to s.To
	}
	seen := map[string]added{}
	for _, p := range paths {
		for i, s := range p {
			if prev, ok := seen[s.To]; ok {
				if prev.s != s {
					return nil, &PathError{From: root, To: s.To, Candidates: []Path{prev.via, p[:i+1]}, Merged: true}
				}
				continue
			}
			seen[s.To] = added{s, p[:i+1]}
			out = append(out, s)
		}
	}
	return out, nil
}
