package km

import (
	"errors"
	"fmt"

	"github.com/kmkit/kmkit/query"
)

// Compile checks a KnowledgeModel built in code rather than loaded with Load, fills the
// defaults Load fills (names, sources, type names, KPI directions), and compiles its KPI
// expressions and filters. Call it once, before the KM is shared. Inheritance is not
// resolved: a KM built in code lists everything it holds. Errors are *DefinitionError
// values naming the KM.
func (m *KnowledgeModel) Compile() error {
	where := "KM " + m.ID
	d := &draft{file: where, km: m, recordAt: map[*Record]at{}, fieldAt: map[*Field]at{}, kpiAt: map[*KPI]at{}, filterAt: map[*Filter]at{}}
	a := at{file: where}
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, &DefinitionError{File: where, Reason: fmt.Sprintf(format, args...)})
	}
	if !isKMID(m.ID) {
		fail("KM id %q: want letters, digits, '.', '-' or '_'", m.ID)
	}
	m.Name = orDefault(m.Name, m.ID)
	if err := checkTeams(m.Teams); err != nil {
		fail("%v", err)
	}
	if len(m.Records) == 0 {
		fail("a KM needs at least one record")
	}
	for _, r := range m.Records {
		if !query.IsIdentifier(r.ID) {
			fail("record id %q: want letters, digits and '_', not starting with a digit", r.ID)
			continue
		}
		r.Name, r.Source = orDefault(r.Name, r.ID), orDefault(r.Source, r.ID)
		if len(r.Fields) == 0 {
			fail("record %s has no fields", r.ID)
		}
		seen := map[string]bool{}
		for _, f := range r.Fields {
			switch {
			case !query.IsIdentifier(f.ID):
				fail("field id %q of record %s: want letters, digits and '_', not starting with a digit", f.ID, r.ID)
			case seen[f.ID]:
				fail("duplicate field id %q in record %s", f.ID, r.ID)
			case f.Type == query.TypeInvalid || f.Type == query.TypeNull:
				fail("field %s.%s has no type", r.ID, f.ID)
			}
			seen[f.ID] = true
			f.Name, f.TypeName = orDefault(f.Name, f.ID), orDefault(f.TypeName, f.Type.String())
			d.fieldAt[f] = a
		}
		if r.Key != "" && r.Field(r.Key) == nil {
			fail("key %q is not a field of record %s", r.Key, r.ID)
		}
		d.recordAt[r] = a
	}
	d.relAt = make([]at, len(m.Relationships))
	for i := range d.relAt {
		d.relAt[i] = a
	}
	for _, k := range m.KPIs {
		k.Name = orDefault(k.Name, k.ID)
		switch k.Direction {
		case "":
			k.Direction = "None"
		case "Up", "Down", "None":
		default:
			fail("KPI %s: direction %q (want Up, Down or None)", k.ID, k.Direction)
		}
		d.kpiAt[k] = a
	}
	for _, f := range m.Filters {
		f.Name = orDefault(f.Name, f.ID)
		d.filterAt[f] = a
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return d.compile()
}
