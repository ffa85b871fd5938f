package reportinghttp

import (
	"bytes"
	"encoding/json"
	"regexp"
)

// Tenants and element ids of the tests (the same as package reporting's tests use).
const (
	tenantA = "7d6c8f5e-2a4b-4c1d-9e3f-0a1b2c3d4e5f"
	tenantB = "c0ffee00-1234-4abc-8def-0123456789ab"
	uuid1   = "11111111-1111-4111-8111-111111111111"
	uuid2   = "22222222-2222-4222-8222-222222222222"
)

// strictUnmarshal decodes data into v and refuses members v has no field for, as package
// reporting decodes element files.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

var uuidForm = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// isUUID reports whether s has the 8-4-4-4-12 hexadecimal form of a UUID, in either case.
func isUUID(s string) bool { return uuidForm.MatchString(s) }
