package reportinghttp

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kmkit/kmkit/reporting"
)

func TestAppendMatchesEncodingJSON(t *testing.T) {
	raw, err := os.ReadFile("../testdata/element.json")
	if err != nil {
		t.Fatal(err)
	}
	var full reporting.Element
	if err := strictUnmarshal(raw, &full); err != nil {
		t.Fatal(err)
	}
	odd := reporting.Element{
		Identity:   reporting.Identity{ID: "<a&b>\"\\\b\f\n\r\t\x00\x1f\x7f é \u2028\u2029 \xff\xfe ✓", Ordering: -42},
		Attributes: reporting.Attributes{"z": {"b": "2", "a": "1"}, "": nil, "a": {}},
		Content:    []reporting.Content{{Text: ""}, {Element: &reporting.Element{}}, {Text: "<script>"}},
		Related:    map[string][]reporting.Reference{"y": nil, "x": {{IsReference: true}}, "\u2028": {}},
		Children:   []reporting.Reference{},
		Variants:   []reporting.Element{{Versions: []reporting.Element{{}}}},
		Versions:   []reporting.Element{},
	}
	for name, e := range map[string]reporting.Element{"full": full, "odd": odd, "zero": {}} {
		want, err := json.Marshal(reporting.List[reporting.Element]{Items: [][]reporting.Element{{e, e}}, Skip: 3, Take: 7, TotalCount: 1 << 40})
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendElementList(nil, []reporting.Element{e, e}, 3, 7, 1<<40)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s (-encoding/json +append):\n%s", name, diff)
		}
	}
	facets := []reporting.Facet{{Name: "Roles"}, {Name: "<IT> & \u2028"}, {Name: ""}}
	want, err := json.Marshal(reporting.List[reporting.Facet]{Items: [][]reporting.Facet{facets}, Skip: 1, Take: 3, TotalCount: 4})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(appendFacetList(nil, facets, 1, 3, 4))); diff != "" {
		t.Errorf("facets (-encoding/json +append):\n%s", diff)
	}
	emptyElements, err := appendElementList(nil, nil, 0, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, empty := range []string{string(emptyElements), string(appendFacetList(nil, nil, 0, 1, 2))} {
		if want := `{"items":[[]],"skip":0,"take":1,"totalCount":2}`; empty != want {
			t.Errorf("empty page = %s, want %s", empty, want)
		}
	}
}

// BenchmarkEncodePage encodes a page of 100 elements of the demo landscape (each demo
// element four times) with the handler's encoder, next to encoding/json on the same page.
func BenchmarkEncodePage(b *testing.B) {
	tenants, err := reporting.LoadDir("../internal/demodata")
	if err != nil {
		b.Fatal(err)
	}
	demo := tenants[tenantA]
	page := make([]reporting.Element, 100)
	for i := range page {
		page[i] = demo[i%len(demo)]
	}
	b.Run("append", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf, _ = appendElementList(buf[:0], page, 0, 100, 100)
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("encoding-json", func(b *testing.B) {
		var n int
		for b.Loop() {
			out, err := json.Marshal(reporting.List[reporting.Element]{Items: [][]reporting.Element{page}, Take: 100, TotalCount: 100})
			if err != nil {
				b.Fatal(err)
			}
			n = len(out)
		}
		b.SetBytes(int64(n))
	})
}

// TestAppendCycle checks that a cycle of content pointers, which only a Store building
// elements in memory can produce, ends in an error rather than a stack overflow, and that
// Validate refuses it.
func TestAppendCycle(t *testing.T) {
	e := &reporting.Element{Identity: reporting.Identity{ID: uuid1, FacetName: "P"}}
	e.Content = []reporting.Content{{Element: e}}
	if _, err := appendElementList(nil, []reporting.Element{*e}, 0, 1, 1); err != errTooDeep {
		t.Fatalf("appendElementList of a cycle: %v, want errTooDeep", err)
	}
	want := "element 0 (id " + uuid1 + "): content, variants and versions nest more than 1000 levels deep"
	if err := reporting.Validate([]reporting.Element{*e}); err == nil || err.Error() != want {
		t.Fatalf("Validate of a cycle: %v, want %q", err, want)
	}

	var logs bytes.Buffer
	h := NewHandler(&sliceStore{tenants: map[string][]reporting.Element{tenantA: {*e}}}, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	rec := serve(h, request{target: "/api/v1/elements", tenant: []string{tenantA}, principal: principalA})
	if rec.Code != http.StatusInternalServerError || !strings.Contains(logs.String(), "nested more than 1000 levels deep") {
		t.Fatalf("handler: %d %s, log %q; want a logged 500", rec.Code, rec.Body, logs.String())
	}
}
