package reporting

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	return load(fsys, Dir, path.Join)
}

// LoadDir is Load on the directory dir of the operating system; errors name files by their
// path under dir.
func LoadDir(dir string) (map[string][]Element, error) {
	return load(os.DirFS(dir), filepath.Join(dir, Dir), filepath.Join)
}

// load reads Dir of fsys; errors name its files join(shown, name).
func load(fsys fs.FS, shown string, join func(...string) string) (map[string][]Element, error) {
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
		file := join(shown, entry.Name())
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
// whose Reason gives the line in data.
func DecodeElements(data []byte) ([]Element, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		var syn *json.SyntaxError
		if !errors.As(err, &syn) {
			return nil, errors.New("want a JSON array of elements")
		}
		at := int(syn.Offset) - 1 // the offending byte; Offset counts the bytes read
		if at >= len(data)-1 {
			at = len(data) // the data ended early: no element is at fault
		}
		line, col := lineCol(data, at)
		reason := fmt.Sprintf("line %d, column %d: %v", line, col, err)
		starts := elementStarts(data)
		i := len(starts) - 1
		for i >= 0 && starts[i] > at {
			i--
		}
		if i < 0 || at == len(data) {
			return nil, errors.New(reason)
		}
		return nil, &ElementError{Index: i, Reason: reason}
	}
	if raws == nil {
		return nil, errors.New("want a JSON array of elements")
	}
	starts := elementStarts(data)
	elements := make([]Element, len(raws))
	for i, raw := range raws {
		if err := strictUnmarshal(raw, &elements[i]); err != nil {
			at := starts[i]
			if typ, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
				at += int(typ.Offset)
			}
			line, _ := lineCol(data, at)
			return nil, &ElementError{Index: i, Reason: fmt.Sprintf("line %d: %v", line, err)}
		}
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

// elementStarts returns the offsets in data at which the members of its top-level array
// start, as far as data is valid JSON.
func elementStarts(data []byte) []int {
	var starts []int
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil
	}
	for dec.More() {
		starts = append(starts, skipSeparators(data, int(dec.InputOffset())))
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			break
		}
	}
	return starts
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
