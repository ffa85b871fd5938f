package odata

import (
	"strconv"

	"github.com/kmkit/kmkit/internal/jsonenc"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/query"
)

// The versions of the two CSDL representations: both state 4.0, the version of the
// payloads (OData-Version: 4.0), the one BI tools and OData 4.0 clients read; the CSDL
// JSON Schema admits 4.0 as $Version.
const (
	csdlJSONVersion = "4.0"
	edmxVersion     = "4.0"
)

// The Capabilities vocabulary, referenced by $metadata to say what the service supports:
// read-only entity sets (no insert, update or delete), the functions $filter takes, and
// $batch.
const (
	// The vocabulary in CSDL XML and CSDL JSON (the URIs OASIS publishes it at).
	capabilitiesURI       = "https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Capabilities.V1.xml"
	capabilitiesJSONURI   = "https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Capabilities.V1.json"
	capabilitiesNamespace = "Org.OData.Capabilities.V1"
	capabilitiesAlias     = "Capabilities"
)

// filterFunctions are the canonical functions, arithmetic operators and lambda
// operators $filter supports, as Capabilities.FilterFunctions ("functions and operators
// supported in $filter") lists them: any and all are served anywhere in $filter, over a
// to-many navigation path (not nested in another lambda).
var filterFunctions = append(query.FilterFunctions(), "add", "sub", "mul", "div", "divby", "mod", "any", "all")

// setRestrictions are the restriction terms, each with the property that is false on
// every entity set: the sets are read-only. ExpandRestrictions (expandRestrictionsXML,
// expandRestrictionsJSON) and SearchRestrictions (searchRestrictionsXML,
// searchRestrictionsJSON) are written beside them.
var setRestrictions = [...][2]string{
	{"InsertRestrictions", "Insertable"},
	{"UpdateRestrictions", "Updatable"},
	{"DeleteRestrictions", "Deletable"},
}

// expandRestrictionsXML and expandRestrictionsJSON are the Capabilities.ExpandRestrictions
// of every entity set: every navigation property expands, nested down to
// MaxExpandLevels.
var (
	expandRestrictionsXML  = `<Annotation Term="` + capabilitiesAlias + `.ExpandRestrictions"><Record><PropertyValue Property="Expandable" Bool="true"/><PropertyValue Property="MaxLevels" Int="` + strconv.Itoa(MaxExpandLevels) + `"/></Record></Annotation>`
	expandRestrictionsJSON = `,"@` + capabilitiesAlias + `.ExpandRestrictions":{"Expandable":true,"MaxLevels":` + strconv.Itoa(MaxExpandLevels) + `}`
)

// containerTags are the Capabilities tags of the entity container, with their values:
// $top and $skip are served, $compute is not.
var containerTags = [...]struct {
	term string
	on   bool
}{{"TopSupported", true}, {"SkipSupported", true}, {"ComputeSupported", false}}

// metadataXML renders the CSDL XML (EDMX) document of the entity types; the KPIs are
// custom aggregates of every set (aggregationXML).
func metadataXML(types []*entityType, kpis []*km.KPI) []byte {
	b := make([]byte, 0, 512+len(types)*512)
	b = append(b, xmlHeader...)
	b = append(b, `<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="`+edmxVersion+`">`...)
	b = append(b, `<edmx:Reference Uri="`+capabilitiesURI+`"><edmx:Include Namespace="`+capabilitiesNamespace+`" Alias="`+capabilitiesAlias+`"/></edmx:Reference>`...)
	b = append(b, `<edmx:Reference Uri="`+aggregationURI+`"><edmx:Include Namespace="`+aggregationNamespace+`" Alias="`+aggregationAlias+`"/></edmx:Reference>`...)
	b = append(b, `<edmx:DataServices><Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="`+Namespace+`">`...)
	for _, et := range types {
		b = append(b, `<EntityType Name="`...)
		b = appendXMLText(b, et.name, true)
		b = append(b, `"><Key><PropertyRef Name="`...)
		b = appendXMLText(b, et.props[et.key].name, true)
		b = append(b, `"/></Key>`...)
		for _, p := range et.props {
			b = append(b, `<Property Name="`...)
			b = appendXMLText(b, p.name, true)
			b = append(b, `" Type="`...)
			b = append(b, p.edm...)
			b = append(b, `" Nullable="`...)
			b = strconv.AppendBool(b, p.nullable)
			if pr := precision(p.typ); pr >= 0 {
				b = append(b, `" Precision="`...)
				b = strconv.AppendInt(b, int64(pr), 10)
			}
			b = append(b, `"/>`...)
		}
		b = appendNavXML(b, et)
		b = append(b, `</EntityType>`...)
	}
	b = append(b, `<EntityContainer Name="`+ContainerName+`">`...)
	for _, et := range types {
		b = append(b, `<EntitySet Name="`...)
		b = appendXMLText(b, et.set, true)
		b = append(b, `" EntityType="`...)
		b = appendXMLText(b, et.qualified(), true)
		b = append(b, `">`...)
		b = appendBindingsXML(b, et)
		for _, r := range setRestrictions {
			b = append(b, `<Annotation Term="`+capabilitiesAlias+`.`+r[0]+`"><Record><PropertyValue Property="`+r[1]+`" Bool="false"/></Record></Annotation>`...)
		}
		b = append(b, expandRestrictionsXML...)
		b = append(b, searchRestrictionsXML...)
		b = aggregationXML(b, kpis)
		b = append(b, `</EntitySet>`...)
	}
	b = append(b, `<Annotation Term="`+capabilitiesAlias+`.BatchSupported" Bool="true"/>`...)
	for _, t := range containerTags {
		b = append(b, `<Annotation Term="`+capabilitiesAlias+`.`+t.term+`" Bool="`...)
		b = strconv.AppendBool(b, t.on)
		b = append(b, `"/>`...)
	}
	b = append(b, `<Annotation Term="`+capabilitiesAlias+`.FilterFunctions"><Collection>`...)
	for _, f := range filterFunctions {
		b = append(b, `<String>`+f+`</String>`...)
	}
	b = append(b, `</Collection></Annotation>`...)
	b = append(b, `</EntityContainer></Schema></edmx:DataServices></edmx:Edmx>`...)
	return b
}

// metadataJSON renders the CSDL JSON document of the entity types and KPIs. Nullability is
// stated on every property, and every property names its $Type, Edm.String included,
// although both have defaults in CSDL JSON.
func metadataJSON(types []*entityType, kpis []*km.KPI) []byte {
	b := make([]byte, 0, 256+len(types)*512)
	b = append(b, `{"$Version":"`+csdlJSONVersion+`","$Reference":{"`+capabilitiesJSONURI+`":{"$Include":[{"$Namespace":"`+capabilitiesNamespace+`","$Alias":"`+capabilitiesAlias+`"}]},`+
		`"`+aggregationJSONURI+`":{"$Include":[{"$Namespace":"`+aggregationNamespace+`","$Alias":"`+aggregationAlias+`"}]}},`...)
	b = append(b, `"$EntityContainer":"`+Namespace+"."+ContainerName+`","`+Namespace+`":{`...)
	for _, et := range types {
		b = jsonenc.AppendStringNoHTMLEscape(b, et.name)
		b = append(b, `:{"$Kind":"EntityType","$Key":[`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, et.props[et.key].name)
		b = append(b, ']')
		for _, p := range et.props {
			b = append(b, ',')
			b = jsonenc.AppendStringNoHTMLEscape(b, p.name)
			b = append(b, `:{"$Type":"`...)
			b = append(b, p.edm...)
			b = append(b, `","$Nullable":`...)
			b = strconv.AppendBool(b, p.nullable)
			if pr := precision(p.typ); pr >= 0 {
				b = append(b, `,"$Precision":`...)
				b = strconv.AppendInt(b, int64(pr), 10)
			}
			b = append(b, '}')
		}
		b = appendNavJSON(b, et)
		b = append(b, `},`...)
	}
	b = append(b, `"`+ContainerName+`":{"$Kind":"EntityContainer"`...)
	for _, et := range types {
		b = append(b, ',')
		b = jsonenc.AppendStringNoHTMLEscape(b, et.set)
		b = append(b, `:{"$Collection":true,"$Type":`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, et.qualified())
		b = appendBindingsJSON(b, et)
		for _, r := range setRestrictions {
			b = append(b, `,"@`+capabilitiesAlias+`.`+r[0]+`":{"`+r[1]+`":false}`...)
		}
		b = append(b, expandRestrictionsJSON...)
		b = append(b, searchRestrictionsJSON...)
		b = aggregationJSON(b, kpis)
		b = append(b, '}')
	}
	b = append(b, `,"@`+capabilitiesAlias+`.BatchSupported":true`...)
	for _, t := range containerTags {
		b = append(b, `,"@`+capabilitiesAlias+`.`+t.term+`":`...)
		b = strconv.AppendBool(b, t.on)
	}
	b = append(b, `,"@`+capabilitiesAlias+`.FilterFunctions":[`...)
	for i, f := range filterFunctions {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `"`+f+`"`...)
	}
	return append(b, `]}}}`...)
}

// serviceJSON renders the JSON service document: the context URL (left out with
// odata.metadata=none, when context is false) and one entity set per record.
func serviceJSON(root string, types []*entityType, context bool) []byte {
	b := make([]byte, 0, 128+len(types)*96)
	b = append(b, '{')
	if context {
		b = append(b, `"@odata.context":`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, root+"$metadata")
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i, et := range types {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, et.set)
		b = append(b, `,"kind":"EntitySet","url":`...)
		b = jsonenc.AppendStringNoHTMLEscape(b, et.set)
		b = append(b, '}')
	}
	return append(b, `]}`...)
}

// serviceXML renders the AtomPub service document: one workspace titled with the
// container's qualified name and one collection per entity set, with the seed's name
// attribute beside href and atom:title.
func serviceXML(root string, types []*entityType) []byte {
	b := make([]byte, 0, 384+len(types)*160)
	b = append(b, xmlHeader...)
	b = append(b, `<app:service xmlns:app="http://www.w3.org/2007/app" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:m="http://docs.oasis-open.org/odata/ns/metadata" xml:base="`...)
	b = appendXMLText(b, root, true)
	b = append(b, `" m:context="`...)
	b = appendXMLText(b, root+"$metadata", true)
	b = append(b, `"><app:workspace><atom:title type="text">`+Namespace+"."+ContainerName+`</atom:title>`...)
	for _, et := range types {
		b = append(b, `<app:collection href="`...)
		b = appendXMLText(b, et.set, true)
		b = append(b, `" name="`...)
		b = appendXMLText(b, et.set, true)
		b = append(b, `"><atom:title type="text">`...)
		b = appendXMLText(b, et.set, false)
		b = append(b, `</atom:title></app:collection>`...)
	}
	return append(b, `</app:workspace></app:service>`...)
}
