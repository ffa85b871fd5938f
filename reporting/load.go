package reporting

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Dir is the directory of a data directory that holds the element files, one
// <tenant-uuid>.json per tenant, each a JSON array of elements.
const Dir = "reporting"

// Load reads every Dir/<tenant-uuid>.json file of fsys and returns each tenant's elements,
// keyed by the tenant id in canonical lower-case form. Files in Dir whose names do not end
// in ".json" are skipped; a missing Dir is an empty result, not an error.
//
// A file that is not a JSON array of elements, an element with a member Element has no
// field for, a file name that is not a UUID, two files for one tenant, and every error
// Validate reports fail the load with an error naming the file and, where one is at fault,
// the element (its position, its id when known, and its line).
func Load(fsys fs.FS) (map[string][]Element, error) {
	return load(fsys, Dir)
}

// LoadDir is Load on the directory dir of the operating system; errors name files by their
// path under dir.
func LoadDir(dir string) (map[string][]Element, error) {
	return load(os.DirFS(dir), filepath.Join(dir, Dir))
}

func load(fsys fs.FS, shown string) (map[string][]Element, error) {
	entries, err := fs.ReadDir(fsys, Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string][]Element{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reporting: %w", err)
	}
	tenants := make(map[string][]Element, len(entries))
	from := make(map[string]string, len(entries))
	for _, entry := range entries {
		stem, isJSON := strings.CutSuffix(entry.Name(), ".json")
		if !isJSON || entry.IsDir() {
			continue
		}
		file := filepath.Join(shown, entry.Name())
		if !isUUID(stem) {
			return nil, fmt.Errorf("%s: file name is not a tenant UUID followed by .json", file)
		}
		tenant := strings.ToLower(stem)
		if other, dup := from[tenant]; dup {
			return nil, fmt.Errorf("%s: tenant %s already loaded from %s", file, tenant, other)
		}
		data, err := fs.ReadFile(fsys, path.Join(Dir, entry.Name()))
		if err != nil {
			return nil, fmt.Errorf("reporting: %w", err)
		}
		elements, err := DecodeElements(data)
		if err != nil {
			if ee, ok := errors.AsType[*ElementError](err); ok {
				ee.File = file
				return nil, ee
			}
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		tenants[tenant] = elements
		from[tenant] = file
	}
	return tenants, nil
}

// DecodeElements decodes a JSON array of elements, refusing members Element has no field
// for, and checks the result with Validate. An error about one element is an *ElementError
// whose Reason gives the line (and column) in data.
func DecodeElements(data []byte) ([]Element, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('[') {
		return nil, errors.New("want a JSON array of elements")
	}
	elements := []Element{}
	var starts []int
	for i := 0; dec.More(); i++ {
		start := skipSeparators(data, int(dec.InputOffset()))
		starts = append(starts, start)
		var e Element
		if err := dec.Decode(&e); err != nil {
			at := start
			var syn *json.SyntaxError
			var typ *json.UnmarshalTypeError
			switch {
			case errors.As(err, &syn):
				at = int(syn.Offset)
			case errors.As(err, &typ):
				at = int(typ.Offset)
			}
			line, col := lineCol(data, at)
			return nil, &ElementError{Index: i, Reason: fmt.Sprintf("line %d, column %d: %v", line, col, err)}
		}
		elements = append(elements, e)
	}
	if _, err := dec.Token(); err != nil {
		line, col := lineCol(data, int(dec.InputOffset()))
		return nil, fmt.Errorf("line %d, column %d: %v", line, col, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		line, col := lineCol(data, skipSeparators(data, int(dec.InputOffset())))
		return nil, fmt.Errorf("line %d, column %d: data after the array of elements", line, col)
	}
	if err := Validate(elements); err != nil {
		if ee, ok := errors.AsType[*ElementError](err); ok {
			line, _ := lineCol(data, starts[ee.Index])
			ee.Reason = fmt.Sprintf("%s (element starts on line %d)", ee.Reason, line)
		}
		return nil, err
	}
	return elements, nil
}

// skipSeparators returns the offset of the first byte at or after off that is neither
// JSON white space nor a comma.
func skipSeparators(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',':
			off++
		default:
			return off
		}
	}
	return off
}

// lineCol converts a byte offset in data into a 1-based line and column.
func lineCol(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = off - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
