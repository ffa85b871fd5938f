package kmhttp

import (
	"cmp"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kmkit/kmkit/internal/rawquery"
	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/problem"
	"github.com/kmkit/kmkit/problem/problemhttp"
	"github.com/kmkit/kmkit/query"
)

// The JSON shapes of the schema endpoints.

type modelItem struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Published string `json:"published,omitempty"`
}

type modelDetails struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	ExtendedKMID string `json:"extendedKMId,omitempty"`
}

type filterItem struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

type recordItem struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Description      string `json:"description"`
	ShortDisplayName string `json:"shortDisplayName"`
	InternalNote     string `json:"internalNote"`
}

type recordDetails struct {
	recordItem
	Fields []fieldItem `json:"fields"`
}

type fieldItem struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Description      string `json:"description"`
	ShortDisplayName string `json:"shortDisplayName"`
	InternalNote     string `json:"internalNote"`
	Type             string `json:"type"`
	Format           string `json:"format"`
	Unit             string `json:"unit"`
}

type kpiItem struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Format      string          `json:"format"`
	Unit        string          `json:"unit"`
	Direction   string          `json:"direction"`
	Target      string          `json:"target,omitempty"`
	Parameters  []parameterItem `json:"parameters"`
}

type parameterItem struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

type schemaPage[T any] struct {
	Page     int    `json:"page"`
	PageSize int    `json:"pageSize"`
	Total    int    `json:"total"`
	Sort     string `json:"sort"`
	Content  []T    `json:"content"`
}

// sortKeys are the members a schema list can be sorted by: the string fields of its item
// type T, by their JSON names, so that the names to sort by are those the answer shows.
type sortKeys[T any] struct {
	names []string         // in field order, for error messages
	index map[string][]int // JSON name to field index
}

// Sort keys of the schema lists.
var (
	modelSort  = sortKeysOf[modelItem]()
	filterSort = sortKeysOf[filterItem]()
	recordSort = sortKeysOf[recordItem]()
	fieldSort  = sortKeysOf[fieldItem]()
	kpiSort    = sortKeysOf[kpiItem]()
)

func sortKeysOf[T any]() sortKeys[T] {
	k := sortKeys[T]{index: map[string][]int{}}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[T]()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Type.Kind() == reflect.String && name != "" && name != "-" {
			k.names = append(k.names, name)
			k.index[name] = f.Index
		}
	}
	return k
}

// sortItems sorts items by the single sort key of a schema endpoint, comparing values
// case-insensitively (ties keep definition order), and returns the sort as reported.
// Without a sort parameter items keep definition order and the reported sort is "".
func sortItems[T any](items []T, sortParam []string, keys sortKeys[T]) (string, error) {
	sk, present, err := parseSchemaSort(sortParam)
	if err != nil || !present {
		return "", err
	}
	field, ok := keys.index[sk.Field]
	if !ok {
		return "", query.CheckSort([]query.SortKey{sk}, keys.names)
	}
	value := func(it *T) string { return strings.ToLower(reflect.ValueOf(it).Elem().FieldByIndex(field).String()) }
	slices.SortStableFunc(items, func(a, b T) int {
		c := cmp.Compare(value(&a), value(&b))
		if sk.Desc {
			return -c
		}
		return c
	})
	return sk.String(), nil
}

// serveList sorts and pages items and writes the schema result page.
func serveList[T any](h *Handler, w http.ResponseWriter, r *http.Request, items []T, keys sortKeys[T]) {
	params, err := rawquery.Parse(r.URL.RawQuery)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	page, size, err := h.paging(params)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	sorted, err := sortItems(items, params.Values("sort"), keys)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	content := []T{}
	if start := page * size; start < len(items) && start >= 0 {
		content = items[start:min(len(items), start+size)]
	}
	writeJSON(w, schemaPage[T]{Page: page, PageSize: size, Total: len(content), Sort: sorted, Content: content})
}

func (h *Handler) serveModels(w http.ResponseWriter, r *http.Request) {
	models, err := km.VisibleModels(r.Context(), h.store)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	items := make([]modelItem, len(models))
	for i, m := range models {
		items[i] = modelItem{ID: m.ID, Name: m.Name}
		if !m.Published.IsZero() {
			items[i].Published = m.Published.UTC().Format(time.RFC3339)
		}
	}
	// Stores return models in any order; the unsorted list is ordered by id.
	slices.SortFunc(items, func(a, b modelItem) int { return cmp.Compare(a.ID, b.ID) })
	serveList(h, w, r, items, modelSort)
}

func (h *Handler) serveModel(w http.ResponseWriter, _ *http.Request, m *km.KnowledgeModel) {
	writeJSON(w, modelDetails{ID: m.ID, Name: m.Name, ExtendedKMID: m.ExtendedKMID})
}

func (h *Handler) serveFilters(w http.ResponseWriter, r *http.Request, m *km.KnowledgeModel) {
	items := make([]filterItem, len(m.Filters))
	for i, f := range m.Filters {
		items[i] = filterItem{ID: f.ID, Name: f.Name, Description: f.Description}
	}
	serveList(h, w, r, items, filterSort)
}

func (h *Handler) serveRecords(w http.ResponseWriter, r *http.Request, m *km.KnowledgeModel) {
	items := make([]recordItem, len(m.Records))
	for i, rec := range m.Records {
		items[i] = toRecordItem(rec)
	}
	serveList(h, w, r, items, recordSort)
}

func toRecordItem(rec *km.Record) recordItem {
	return recordItem{ID: rec.ID, Name: rec.Name, Description: rec.Description,
		ShortDisplayName: rec.ShortDisplayName, InternalNote: rec.InternalNote}
}

func (h *Handler) serveKPIs(w http.ResponseWriter, r *http.Request, m *km.KnowledgeModel) {
	items := make([]kpiItem, len(m.KPIs))
	for i, k := range m.KPIs {
		params := make([]parameterItem, len(k.Parameters))
		for j, p := range k.Parameters {
			params[j] = parameterItem(p)
		}
		items[i] = kpiItem{ID: k.ID, Name: k.Name, Description: k.Description, Format: k.Format, Unit: k.Unit,
			Direction: k.Direction, Target: k.Target, Parameters: params}
	}
	serveList(h, w, r, items, kpiSort)
}

// serveRecord writes the record details; its sort parameter orders the fields.
func (h *Handler) serveRecord(w http.ResponseWriter, r *http.Request, rec *km.Record) {
	params, err := rawquery.Parse(r.URL.RawQuery)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	fields := make([]fieldItem, len(rec.Fields))
	for i, f := range rec.Fields {
		fields[i] = fieldItem{ID: f.ID, Name: f.Name, Description: f.Description, ShortDisplayName: f.ShortDisplayName,
			InternalNote: f.InternalNote, Type: recordFieldType(f), Format: f.Format, Unit: f.Unit}
	}
	if _, err := sortItems(fields, params.Values("sort"), fieldSort); err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, recordDetails{recordItem: toRecordItem(rec), Fields: fields})
}

// recordFieldType is a field's type as the record details report it: the type as the
// definition declares it ("number" stays "number"), except time, which the record-field
// enum of the API (unlike the data header enum) does not have: a time field is reported as
// "string" there, the form its values take ("HH:MM:SS").
func recordFieldType(f *km.Field) string {
	if f.Type == query.TypeTime {
		return "string"
	}
	return f.TypeName
}

// writeJSON writes v as a 200 JSON response.
func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil { // only plain structs of strings and numbers reach here
		problemhttp.Write(w, http.StatusInternalServerError, problem.CodeFatal, "encoding the response: "+err.Error())
		return
	}
	writeBody(w, body)
}

// writeBody writes a 200 JSON body. Answers carry a team's data behind credentials, so
// they are kept out of shared caches.
// Shared header values of writeBody.
var (
	headerJSON    = []string{"application/json"}
	headerNoStore = []string{"private, no-store"}
)

func writeBody(w http.ResponseWriter, body []byte) {
	h := w.Header()
	// The keys are canonical and the value slices shared: nothing to allocate but the
	// length. (Header.Add appends to a full slice, so a shared one is never changed.)
	h["Content-Type"] = headerJSON
	h["Cache-Control"] = headerNoStore
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
