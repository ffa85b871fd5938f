package reporting_test

import (
	"fmt"
	"testing/fstest"

	"github.com/kmkit/kmkit/reporting"
)

// ExampleLoad reads the element files of a data directory; an error names the file, the
// element and what is wrong with it.
func ExampleLoad() {
	data := fstest.MapFS{
		"reporting/7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f.json": {Data: []byte(`[
  {"id": "11111111-1111-4111-8111-111111111111", "facetName": "Roles",
   "attributes": {"name": {"en": "Buyer", "de": "Einkäufer"}}}
]`)},
	}
	tenants, err := reporting.Load(data)
	if err != nil {
		panic(err)
	}
	for tenant, elements := range tenants {
		fmt.Println(tenant, len(elements), elements[0].Attributes["name"]["de"])
	}

	data["reporting/c0ffee00-1234-4abc-8def-0123456789ab.json"] = &fstest.MapFile{Data: []byte(`[
  {"id": "22222222-2222-4222-8222-222222222222", "facetName": "Roles", "versionId": "v2"}
]`)}
	_, err = reporting.Load(data)
	fmt.Println(err)
	// Output:
	// 7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f 1 Einkäufer
	// reporting/c0ffee00-1234-4abc-8def-0123456789ab.json: element 0 (id 22222222-2222-4222-8222-222222222222): versionId: "v2" is not a UUID (want the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx) (element starts on line 2)
}
