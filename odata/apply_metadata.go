package odata

import (
	"github.com/kmkit/kmkit/internal/jsonenc"
	"github.com/kmkit/kmkit/km"
)

// The Aggregation vocabulary, referenced by $metadata to say that entity sets take $apply
// and that the KM's KPIs are custom aggregates.
const (
	aggregationURI       = "https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Aggregation.V1.xml"
	aggregationJSONURI   = "https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Aggregation.V1.json"
	aggregationNamespace = "Org.OData.Aggregation.V1"
	aggregationAlias     = "Aggregation"
)

// applyTransformations are the transformations $apply serves (Aggregation.ApplySupported's
// Transformations).
var applyTransformations = [...]string{"aggregate", "groupby", "filter", "topcount", "bottomcount", "identity", "concat"}

// aggregationXML appends the Aggregation annotations of an entity set: ApplySupported
// (the transformations above, no rollup) and one CustomAggregate per KPI, qualified by
// the KPI id, with the type of its values.
func aggregationXML(b []byte, kpis []*km.KPI) []byte {
	b = append(b, `<Annotation Term="`+aggregationAlias+`.ApplySupported"><Record><PropertyValue Property="Transformations"><Collection>`...)
	for _, t := range applyTransformations {
		b = append(b, `<String>`+t+`</String>`...)
	}
	b = append(b, `</Collection></PropertyValue><PropertyValue Property="Rollup" EnumMember="`+aggregationAlias+`.RollupType/None"/></Record></Annotation>`...)
	for _, k := range kpis {
		b = append(b, `<Annotation Term="`+aggregationAlias+`.CustomAggregate" Qualifier="`...)
		b = appendXMLText(b, k.ID, true)
		b = append(b, `" String="`...)
		b = append(b, edmType(k.Type)...)
		b = append(b, `"/>`...)
	}
	return b
}

// aggregationJSON appends the same annotations as members of an entity set in CSDL JSON.
func aggregationJSON(b []byte, kpis []*km.KPI) []byte {
	b = append(b, `,"@`+aggregationAlias+`.ApplySupported":{"Transformations":[`...)
	for i, t := range applyTransformations {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `"`+t+`"`...)
	}
	b = append(b, `],"Rollup":"None"}`...)
	for _, k := range kpis {
		b = append(b, ',')
		b = jsonenc.AppendStringNoHTMLEscape(b, "@"+aggregationAlias+".CustomAggregate#"+k.ID)
		b = append(b, ':')
		b = jsonenc.AppendStringNoHTMLEscape(b, edmType(k.Type))
	}
	return b
}
