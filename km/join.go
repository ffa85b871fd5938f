package km

import (
	"fmt"
	"slices"
)

// JoinPlan joins the records a KM-level query references. The rows of the joined result
// are the rows of Root; each step adds the record of To by looking up, for every row, the
// one row of To.Record whose To field equals the From value (or nulls when there is none).
type JoinPlan struct {
	// Root is the record whose rows the joined result has (the "many" end).
	Root string
	// Steps in order: the From record of each step is Root or the To record of an earlier step.
	Steps []Relationship
}

// Records returns Root followed by the record each step adds.
func (p *JoinPlan) Records() []string {
	out := []string{p.Root}
	for _, s := range p.Steps {
		out = append(out, s.To.Record)
	}
	return out
}

// JoinError says that two records a query references have no path of relationships
// between them.
type JoinError struct {
	A, B string
}

// Error names both records.
func (e *JoinError) Error() string {
	return fmt.Sprintf("records %s and %s are not joined by any relationship path of the knowledge model", e.A, e.B)
}

// Plan returns how to join the given records (ids of m's records, at least one): it picks
// as root the record from which all others are reachable through relationships (from the
// many side to the one side) and the shortest path to each. When no record reaches all the
// others it returns a *JoinError naming two records that cannot be joined.
func (m *KnowledgeModel) Plan(records []string) (*JoinPlan, error) {
	if len(records) == 0 {
		return nil, fmt.Errorf("km: Plan of no records")
	}
	// Candidate roots in KM order, for a deterministic choice.
	var want []string
	for _, r := range m.Records {
		if slices.Contains(records, r.ID) {
			want = append(want, r.ID)
		}
	}
	if len(want) != len(dedup(records)) {
		for _, id := range records {
			if m.Record(id) == nil {
				return nil, fmt.Errorf("km: Plan of unknown record %q", id)
			}
		}
	}
	bestReach, bestRoot := -1, ""
	var bestParent map[string]Relationship
	for _, root := range want {
		parent := m.bfs(root)
		reach := 0
		for _, id := range want {
			if _, ok := parent[id]; ok || id == root {
				reach++
			}
		}
		if reach == len(want) {
			return m.planFrom(root, want, parent), nil
		}
		if reach > bestReach {
			bestReach, bestRoot, bestParent = reach, root, parent
		}
	}
	for _, id := range want {
		if _, ok := bestParent[id]; !ok && id != bestRoot {
			return nil, &JoinError{A: bestRoot, B: id}
		}
	}
	return nil, &JoinError{A: want[0], B: want[len(want)-1]} // unreachable: some record was missing
}

// bfs returns, for every record reachable from root, the relationship that reaches it on a
// shortest path.
func (m *KnowledgeModel) bfs(root string) map[string]Relationship {
	parent := map[string]Relationship{}
	queue := []string{root}
	seen := map[string]bool{root: true}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, rel := range m.Relationships {
			if rel.From.Record != cur || seen[rel.To.Record] {
				continue
			}
			seen[rel.To.Record] = true
			parent[rel.To.Record] = rel
			queue = append(queue, rel.To.Record)
		}
	}
	return parent
}

func (m *KnowledgeModel) planFrom(root string, want []string, parent map[string]Relationship) *JoinPlan {
	p := &JoinPlan{Root: root}
	added := map[string]bool{root: true}
	var add func(id string)
	add = func(id string) {
		if added[id] {
			return
		}
		rel := parent[id]
		add(rel.From.Record)
		added[id] = true
		p.Steps = append(p.Steps, rel)
	}
	for _, id := range want {
		add(id)
	}
	return p
}

func dedup(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
