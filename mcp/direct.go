package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kmkit/kmkit/internal/jsonenc"
)

// The query tool is the hot path of an agent, and a stateless Streamable HTTP request
// costs the SDK several times the query itself: a session per request, the message
// decoded four times and the answer marshalled three times. serveDirect answers the
// common form of that request, one tools/call of query, by writing the bytes the SDK
// would write (TestDirectQueryCallsAnswerAsTheSDK holds the two to the same status,
// headers and body). Everything else, including every request the SDK would refuse and
// every form this file does not recognise, goes to the SDK untouched.

// directMaxBody is the largest body serveDirect reads; a longer one goes to the SDK,
// whose own limit (sdk.DefaultMaxRequestBodyBytes) is larger.
const directMaxBody = 256 << 10

// directMaxDepth is the deepest nesting of arrays and objects serveDirect accepts. The
// query tool's arguments nest 3 deep inside the message's 3; the SDK refuses a message
// nested beyond 1000 with an error of its own, so anything that deep goes to it.
const directMaxDepth = 32

// directVersions are the MCP-Protocol-Version headers of the requests serveDirect
// answers (a client of 2025-03-26 may send none): versions of the Streamable HTTP
// transport where a tools/call is one JSON-RPC request answered by one JSON result.
var directVersions = []string{"2025-03-26", "2025-06-18", "2025-11-25"}

// serveDirect answers r if it is a POST of one tools/call of the query tool, as the SDK
// answers it in stateless JSON mode, and reports whether it did. When it reports false
// it has written nothing and r's body reads as it did before.
func (s *Handler) serveDirect(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || !directHeaders(r.Header) {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, directMaxBody+1))
	if err != nil || len(body) > directMaxBody {
		r.Body = readAgain{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		return false
	}
	r.Body = readAgain{bytes.NewReader(body), r.Body}
	id, args, ok := directQueryCall(body)
	if !ok {
		return false
	}
	bufs := answers.Get().(*answerBuffers)
	defer answers.Put(bufs)
	page, err := s.queryCall(r.Context(), bufs.page[:0], args)
	b := append(bufs.answer[:0], `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":{"content":[{"type":"text","text":`...)
	if err != nil {
		b = jsonenc.AppendString(b, s.toolError(r.Context(), ToolQuery, err).Error())
		b = append(b, `}],"isError":true}}`...)
	} else {
		b = jsonenc.AppendBytes(b, page)
		b = append(b, `}],"structuredContent":`...)
		b = appendHTMLEscaped(b, page)
		b = append(b, `}}`...)
	}
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b) //nolint:errcheck // a client gone has no one to tell
	bufs.keep(page, b)
	return true
}

// answerBuffers are the buffers serveDirect writes a page and its answer in.
type answerBuffers struct{ page, answer []byte }

// keep keeps page and answer for the next answer, unless they grew beyond
// directMaxAnswer.
func (a *answerBuffers) keep(page, answer []byte) {
	if cap(page) <= directMaxAnswer {
		a.page = page
	}
	if cap(answer) <= directMaxAnswer {
		a.answer = answer
	}
}

// answers holds the buffers of the answers written, for the next ones.
var answers = sync.Pool{New: func() any { return new(answerBuffers) }}

// directMaxAnswer is the largest buffer serveDirect keeps for the next answer.
const directMaxAnswer = 1 << 20

// readAgain is a request body read into memory (Reader) whose Close closes the original.
type readAgain struct {
	io.Reader
	orig io.Closer
}

// Close closes the original body.
func (b readAgain) Close() error { return b.orig.Close() }

// directHeaders reports whether h are headers the SDK accepts for a POST of JSON:
// Content-Type application/json (with no parameter but charset=utf-8), an Accept that lists application/json and
// text/event-stream by name, and a protocol version of directVersions.
func directHeaders(h http.Header) bool {
	if ct := h.Get("Content-Type"); !strings.EqualFold(ct, "application/json") && !strings.EqualFold(ct, "application/json; charset=utf-8") {
		return false
	}
	var jsonOK, streamOK bool
	for _, v := range h.Values("Accept") {
		for t := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(t, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json":
				jsonOK = true
			case "text/event-stream":
				streamOK = true
			}
		}
	}
	if !jsonOK || !streamOK {
		return false
	}
	switch v := h.Values("Mcp-Protocol-Version"); len(v) {
	case 0:
		return true // a client of 2025-03-26
	case 1:
		return slices.Contains(directVersions, v[0])
	}
	return false
}

// directQueryCall reads body as one JSON-RPC tools/call request of the query tool with
// exactly the members jsonrpc, id, method and params (name and, optionally, arguments),
// each once and spelled without escapes, and returns its id as it is to be written back
// and its arguments. It reports false for anything else: a batch, a notification,
// _meta, an id that the SDK would write differently from its text (anything but a plain
// integer or a plain ASCII string).
func directQueryCall(body []byte) (id, args json.RawMessage, ok bool) {
	if !json.Valid(body) || !shallow(body) {
		return nil, nil, false
	}
	var version, method, params []byte
	if !members(body, func(k, v []byte) bool {
		switch string(k) {
		case `"jsonrpc"`:
			version = v
		case `"id"`:
			id = v
		case `"method"`:
			method = v
		case `"params"`:
			params = v
		default:
			return false
		}
		return true
	}) || string(version) != `"2.0"` || string(method) != `"tools/call"` || !plainID(id) || params == nil {
		return nil, nil, false
	}
	var name []byte
	if !members(params, func(k, v []byte) bool {
		switch string(k) {
		case `"name"`:
			name = v
		case `"arguments"`:
			args = v
		default:
			return false
		}
		return true
	}) || string(name) != `"`+ToolQuery+`"` || (args != nil && args[0] != '{') {
		return nil, nil, false
	}
	return id, args, true
}

// members calls member with the key (quoted, as written) and the value (as written) of
// each member of the JSON object obj, a valid JSON text, in order, while it returns
// true. It reports false when obj is no object, has a key twice or more than four
// members, or member said false.
func members(obj []byte, member func(key, value []byte) bool) bool {
	i := skipSpace(obj, 0)
	if i == len(obj) || obj[i] != '{' {
		return false
	}
	var seen [4][]byte // the keys so far; an object of more members is refused
	n := 0
	for i = skipSpace(obj, i+1); obj[i] != '}'; {
		k := skipValue(obj, i) // a key is a string
		key := obj[i:k]
		if n == len(seen) || slices.ContainsFunc(seen[:n], func(s []byte) bool { return bytes.Equal(s, key) }) {
			return false
		}
		seen[n], n = key, n+1
		i = skipSpace(obj, skipSpace(obj, k)+1) // past the colon
		end := skipValue(obj, i)
		if !member(key, obj[i:end]) {
			return false
		}
		if i = skipSpace(obj, end); obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return true
}

// skipSpace returns the index of the first byte of b from i on that is no JSON
// whitespace, or len(b).
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value that starts at b[i], in a valid
// JSON text.
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
			if depth < 0 { // the end of the enclosing object: a literal ended
				return i
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// plainID reports whether id is a JSON-RPC id the SDK writes back exactly as it reads:
// an integer without sign, leading zero, fraction or exponent (up to 15 digits, exact
// in a float64), or a string of printable ASCII without quotes, backslashes or HTML's
// <, > and &.
func plainID(id json.RawMessage) bool {
	switch {
	case len(id) == 0:
		return false
	case id[0] == '"':
		if len(id) < 2 || id[len(id)-1] != '"' {
			return false
		}
		for _, c := range id[1 : len(id)-1] {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
		}
		return true
	default:
		if len(id) > 15 || (id[0] == '0' && len(id) > 1) {
			return false
		}
		for _, c := range id {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
}

// shallow reports whether the JSON text b nests arrays and objects at most
// directMaxDepth deep.
func shallow(b []byte) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > directMaxDepth {
				return false
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return true
}

// appendHTMLEscaped appends the JSON text j to b with <, >, &, U+2028 and U+2029
// escaped, as encoding/json writes a json.RawMessage.
func appendHTMLEscaped(b, j []byte) []byte {
	if bytes.IndexByte(j, '<') < 0 && bytes.IndexByte(j, '>') < 0 && bytes.IndexByte(j, '&') < 0 &&
		bytes.IndexByte(j, 0xe2) < 0 { // the first byte of U+2028 and U+2029 in UTF-8
		return append(b, j...)
	}
	var buf bytes.Buffer
	json.HTMLEscape(&buf, j)
	return append(b, buf.Bytes()...)
}
