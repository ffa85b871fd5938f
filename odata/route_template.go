package odata

// RouteTemplate returns the template of the resource the Handler serves path by, such as
// BasePath+"/{km_id}.svc/{entity_set}", or "" when no resource has the path. Metrics and
// logs label requests with it: a fixed set of values, never a model or record id.
func RouteTemplate(path string) string {
	a, err := route(path)
	if err != nil {
		return ""
	}
	switch a.res {
	case resService:
		return BasePath + "/{km_id}.svc/"
	case resMetadata:
		return BasePath + "/{km_id}.svc/$metadata"
	case resEntitySet:
		return BasePath + "/{km_id}.svc/{entity_set}"
	case resCount:
		return BasePath + "/{km_id}.svc/{entity_set}/$count"
	case resEntity:
		return BasePath + "/{km_id}.svc/{entity_set}({key})"
	case resBatch:
		return BasePath + "/{km_id}.svc/$batch"
	case resNavigation:
		return BasePath + "/{km_id}.svc/{entity_set}({key})/{navigation}"
	}
	return BasePath + "/{km_id}.svc/{resource}"
}
