package km

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Suggestions for unknown ids. Every surface (the KM API, OData, MCP) resolves record,
// field, KPI, filter and KPI parameter ids through this package, and an unknown id is
// answered with the closest known ones ("did you mean ORDER_ID?"), in this order of
// preference: the ids equal to it but for case; else the ids within a small edit distance
// of it (case-insensitive Levenshtein distance: none for ids of one or two characters, 1
// up to 4, 2 up to 12, else 3), nearest first; else, for a field, the same field id on another record
// (RECORD.FIELD), related records first. At record level a field named RECORD.FIELD of the
// record itself is suggested by its bare id (STATUS for ORDERS.STATUS). At most
// maxSuggestions ids are suggested.
const maxSuggestions = 3

// closest returns the candidates nearest to name, as the package comment orders them.
func closest(name string, candidates []string) []string {
	var out []string
	for _, c := range candidates {
		if strings.EqualFold(c, name) && c != name {
			out = append(out, c)
		}
	}
	if len(out) > 0 {
		return out[:min(len(out), maxSuggestions)]
	}
	limit := smallDistance(utf8.RuneCountInString(name))
	type near struct {
		id string
		d  int
	}
	var found []near
	for _, c := range candidates {
		if c == name {
			continue
		}
		if d := editDistance(name, c, limit); d <= limit {
			found = append(found, near{c, d})
		}
	}
	slices.SortStableFunc(found, func(a, b near) int { return a.d - b.d })
	for _, n := range found[:min(len(found), maxSuggestions)] {
		out = append(out, n.id)
	}
	return out
}

// smallDistance is the largest edit distance at which an id of n characters is suggested.
func smallDistance(n int) int {
	switch {
	case n <= 2:
		return 0 // only a change of case
	case n <= 4:
		return 1
	case n <= 12:
		return 2
	}
	return 3
}

// editDistance is the Levenshtein distance between a and b compared case-insensitively,
// or limit+1 when it exceeds limit.
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// DidYouMean words the suggestions for unknown ids in an error detail: "" when there are
// none, "; did you mean ORDER_ID?" for one unknown id, and "; did you mean ORDER_ID for
// order_id, TOTAL_NET for TOTALNET?" for several. suggest returns the suggestions for one
// id (one of the Suggest methods).
func DidYouMean(unknown []string, suggest func(string) []string) string {
	var parts []string
	for _, u := range unknown[:min(len(unknown), 10)] {
		s := suggest(u)
		if len(s) == 0 {
			continue
		}
		alt := orList(s)
		if len(unknown) > 1 {
			alt += " for " + u
		}
		parts = append(parts, alt)
	}
	if len(parts) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(parts, ", ") + "?"
}

// orList joins ids as "A", "A or B", "A, B or C".
func orList(ids []string) string {
	if len(ids) == 1 {
		return ids[0]
	}
	return strings.Join(ids[:len(ids)-1], ", ") + " or " + ids[len(ids)-1]
}

// SuggestRecord returns the record ids closest to an unknown id.
func (m *KnowledgeModel) SuggestRecord(id string) []string {
	ids := make([]string, len(m.Records))
	for i, r := range m.Records {
		ids[i] = r.ID
	}
	return closest(id, ids)
}

// SuggestKPI returns the KPI ids closest to an unknown id.
func (m *KnowledgeModel) SuggestKPI(id string) []string {
	ids := make([]string, len(m.KPIs))
	for i, k := range m.KPIs {
		ids[i] = k.ID
	}
	return closest(id, ids)
}

// SuggestFilter returns the predefined filter ids closest to an unknown id.
func (m *KnowledgeModel) SuggestFilter(id string) []string {
	ids := make([]string, len(m.Filters))
	for i, f := range m.Filters {
		ids[i] = f.ID
	}
	return closest(id, ids)
}

// SuggestParameter returns the parameter ids of k closest to an unknown id.
func SuggestParameter(k *KPI, id string) []string {
	ids := make([]string, len(k.Parameters))
	for i, p := range k.Parameters {
		ids[i] = p.ID
	}
	return closest(id, ids)
}

// SuggestField returns the field names closest to an unknown name: at record level (rec
// not nil) rec's field ids, at KM level (rec nil) RECORD.FIELD names; then the same field
// id on other records, as RECORD.FIELD (records related to rec first). A name that is
// RECORD.FIELD of rec itself is suggested by its bare id.
func (m *KnowledgeModel) SuggestField(rec *Record, name string) []string {
	field := name
	var named *Record // the record a RECORD.FIELD name names, but for case
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		field = name[i+1:]
		for _, r := range m.Records {
			if strings.EqualFold(r.ID, name[:i]) {
				named = r
				break
			}
		}
	}
	var cands []string
	switch {
	case rec != nil && named == rec:
		// RECORD.FIELD of the record itself: its bare id.
		if f := fieldFold(rec, field); f != nil {
			return []string{f.ID}
		}
		name = field
		for _, f := range rec.Fields {
			cands = append(cands, f.ID)
		}
	case named != nil:
		for _, f := range named.Fields {
			cands = append(cands, named.ID+"."+f.ID)
		}
	case rec != nil:
		for _, f := range rec.Fields {
			cands = append(cands, f.ID)
		}
	default:
		for _, r := range m.Records {
			for _, f := range r.Fields {
				cands = append(cands, r.ID+"."+f.ID)
			}
		}
	}
	if s := closest(name, cands); len(s) > 0 {
		return s
	}
	// The same field id on other records: related ones (a path from rec) first.
	var related, others []string
	for _, r := range m.Records {
		if r == rec {
			continue
		}
		f := fieldFold(r, field)
		if f == nil || r.ID+"."+f.ID == name {
			continue
		}
		if rec != nil {
			if _, err := m.PathBetween(rec.ID, r.ID); err != nil {
				others = append(others, r.ID+"."+f.ID)
				continue
			}
		}
		related = append(related, r.ID+"."+f.ID)
	}
	out := append(related, others...)
	return out[:min(len(out), maxSuggestions)]
}

// fieldFold returns the field of r whose id is id but for case (the exact one first).
func fieldFold(r *Record, id string) *Field {
	if f := r.Field(id); f != nil {
		return f
	}
	for i := range r.Fields {
		if strings.EqualFold(r.Fields[i].ID, id) {
			return r.Fields[i]
		}
	}
	return nil
}

// FieldHints words the suggestions for unknown field names that a request selects (fields,
// searchField, excludeFields) at record level rec, or at KM level (rec nil); see
// DidYouMean.
func (m *KnowledgeModel) FieldHints(rec *Record, unknown []string) string {
	return m.fieldHints(rec, unknown, true)
}

// fieldHints words the suggestions for unknown field names at record level rec (nil at
// KM level): DidYouMean, and where a suggestion is a field of another record that
// rec's endpoints cannot select, where it can be named.
func (m *KnowledgeModel) fieldHints(rec *Record, unknown []string, selects bool) string {
	var foreign bool
	hint := DidYouMean(unknown, func(name string) []string {
		s := m.SuggestField(rec, name)
		if rec != nil && slices.ContainsFunc(s, func(id string) bool { return strings.Contains(id, ".") }) {
			foreign = true
		}
		return s
	})
	if foreign && selects {
		hint += " (fields of other records are selected at knowledge model level, and filtered in filterExpr as RECORD.FIELD)"
	}
	return hint
}

// SuggestText implements query.Suggester: the field names closest to an unknown one in a
// filter (the record's bare ids at record level, RECORD.FIELD of any record).
func (s planSchema) SuggestText(name string) string {
	return s.m.fieldHints(s.rec, []string{name}, false)
}
