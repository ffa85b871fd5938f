package kmhttp

// Route templates of the API's endpoints, as RouteTemplate returns them.
var routeTemplates = map[endpoint]string{
	epModels:        BasePath + "/knowledge-models",
	epModel:         BasePath + "/knowledge-models/{km_id}",
	epFilters:       BasePath + "/knowledge-models/{km_id}/filters",
	epRecords:       BasePath + "/knowledge-models/{km_id}/records",
	epKPIs:          BasePath + "/knowledge-models/{km_id}/kpis",
	epModelData:     BasePath + "/knowledge-models/{km_id}/data",
	epModelQuery:    BasePath + "/knowledge-models/{km_id}/query",
	epSpec:          BasePath + "/knowledge-models/{km_id}/spec",
	epRecord:        BasePath + "/knowledge-models/{km_id}/records/{record_id}",
	epRecordData:    BasePath + "/knowledge-models/{km_id}/records/{record_id}/data",
	epRecordQuery:   BasePath + "/knowledge-models/{km_id}/records/{record_id}/query",
	epRecordSummary: BasePath + "/knowledge-models/{km_id}/records/{record_id}/summary",
}

// RouteTemplate returns the template of the endpoint the Handler serves path by, such as
// "/intelligence/api/knowledge-models/{km_id}/records/{record_id}/data", or "" when no
// endpoint has the path. Metrics and logs label requests with it: a fixed set of values,
// never a model, record or field id.
func RouteTemplate(path string) string {
	ep, _, _, ok := route(path)
	if !ok {
		return ""
	}
	return routeTemplates[ep]
}
