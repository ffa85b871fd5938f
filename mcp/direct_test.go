package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kmkit/kmkit/storage/memory"
)

// directStore is the shop test KM with customers whose names hold what JSON writers
// escape differently: HTML's <, > and &, U+2028, a quote and a backslash.
func directStore(t *testing.T) *memory.KMStore {
	t.Helper()
	fsys := fstest.MapFS{}
	err := fs.WalkDir(os.DirFS("../km/testdata/shop"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile("../km/testdata/shop/" + p)
		fsys[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	fsys["data/customers.csv"] = &fstest.MapFile{Data: []byte("ID,NAME,COUNTRY\n" +
		"C1,Smith & Sons <Ltd>,DE\n" +
		"C2,\"Line\u2028Para\u2029 \"\"quoted\"\" back\\slash\",FR\n" +
		"C3,Müller GmbH,DE\n")}
	st := memory.New().KM()
	if err := st.Import(context.Background(), fsys); err != nil {
		t.Fatal(err)
	}
	return st
}

// toolCall is the body of a tools/call of query with id and arguments.
func toolCall(id, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"query","arguments":` + args + `}}`
}

// post is a POST of body with the headers of a Streamable HTTP client of version.
func post(body, version string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, BasePath, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		r.Header.Set("Mcp-Protocol-Version", version)
	}
	return r
}

// TestDirectQueryCallsAnswerAsTheSDK sends query calls to serveDirect and to the SDK's
// handler and asserts the same status, headers and bytes: rows, every kind of tool
// error, a page cut by the byte cap, text that JSON escapes, each protocol version.
func TestDirectQueryCallsAnswerAsTheSDK(t *testing.T) {
	st := directStore(t)
	s := NewHandler(st, WithMaxBytes(400))
	calls := []string{
		toolCall("1", `{"km":"shop","record":"CUSTOMERS"}`),
		toolCall(`"req-7"`, `{"km":"shop","record":"CUSTOMERS","fields":["NAME"],"sort":["-NAME"],"pageSize":2}`),
		toolCall("0", `{"km":"shop","fields":["CUSTOMERS.NAME","ORDERS.STATUS"],"kpis":["TOTAL_NET"],"sort":["-TOTAL_NET"]}`),
		toolCall("42", `{"km":"shop","record":"ORDERS"}`), // beyond 400 bytes: cut, with a note
		toolCall("5", `{"km":"shop","record":"CUSTOMERS","search":{"term":"smith"}}`),
		toolCall("6", `{"km":"shop","record":"CUSTOMERS","distinct":true,"fields":["COUNTRY"]}`),
		toolCall("7", `{"km":"shop","record":"CUSTOMERS","filterExpr":["NAME eq 'Smith & Sons <Ltd>'"]}`),
		toolCall("8", `{"km":"shop","record":"CUSTOMERS","pageSize":0}`),
		toolCall("9", `{"km":"shop","record":"CUSTOMERS","filterExpr":["NAME <> 'x'"]}`),
		toolCall("10", `{"km":"shop","record":"NOPE"}`),
		toolCall("11", `{"record":"CUSTOMERS"}`),
		toolCall("12", `{"km":"shop","record":"CUSTOMERS","colour":"red"}`),
		toolCall("13", `{"km":"shop","record":"CUSTOMERS","filterExpr":["NAME eq 'a\u0000b'"]}`),
		toolCall("14", `{"km":"shop","record":"CUSTOMERS","pageSize":"ten"}`),
		toolCall("15", `{}`),
		toolCall("17", `{"km":"shop","record":"CUSTOMERS","KM":"nope"}`),
		toolCall("18", `{"km":"shop","record":"CUSTOMERS","pageSize":2.0,"page":1e0}`), // integers (JSON Schema)
		toolCall("19", `{"km":"shop","record":"CUSTOMERS","pageSize":2.5}`),
		`{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"query"}}`,
		"\n { \"params\" : { \"arguments\" : {\"km\":\"shop\",\"record\":\"CUSTOMERS\",\"pageSize\":1} , \"name\" : \"query\" } ,\t\"method\":\"tools/call\", \"id\":999999999999999, \"jsonrpc\":\"2.0\" } \n",
	}
	for _, version := range []string{"", "2025-03-26", "2025-06-18", "2025-11-25"} {
		for _, body := range calls {
			direct := httptest.NewRecorder()
			if !s.serveDirect(direct, post(body, version)) {
				t.Fatalf("version %q: serveDirect left %s to the SDK", version, body)
			}
			viaSDK := httptest.NewRecorder()
			s.http.ServeHTTP(viaSDK, post(body, version))
			if direct.Code != viaSDK.Code {
				t.Errorf("version %q, %s: status %d, the SDK's %d", version, body, direct.Code, viaSDK.Code)
			}
			for _, h := range []string{"Content-Type", "Cache-Control", "Mcp-Session-Id"} {
				if got, want := direct.Header().Values(h), viaSDK.Header().Values(h); !cmp.Equal(got, want) {
					t.Errorf("version %q, %s: %s %q, the SDK's %q", version, body, h, got, want)
				}
			}
			if got, want := direct.Body.String(), viaSDK.Body.String(); got != want {
				t.Errorf("version %q, %s:\n%s", version, body, cmp.Diff(want, got))
			}
		}
	}
	// The cases above reach what they are about.
	for body, want := range map[string]string{
		calls[3]:  `\"truncated\":true`,
		calls[6]:  `\u0026 Sons \u003cLtd\u003e`,
		calls[0]:  `"NAME\":\"Line\\u2028Para\\u2029 \\\"quoted\\\" back\\\\slash\"`,
		calls[7]:  `\"status\":400`,
		calls[9]:  `\"status\":404`,
		calls[12]: `GENERAL_PARAMETER_ILLEGAL`,
		calls[16]: `{\"page\":1,\"pageSize\":2,`,
		calls[17]: `cannot unmarshal number 2.5 into Go struct field QueryArgs.pageSize of type int`,
	} {
		w := httptest.NewRecorder()
		s.serveDirect(w, post(body, "2025-06-18"))
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("%s: the answer holds no %s: %s", body, want, w.Body.String())
		}
	}
}

// TestAppendHTMLEscaped holds appendHTMLEscaped to encoding/json's writing of a
// json.RawMessage.
func TestAppendHTMLEscaped(t *testing.T) {
	for _, j := range []string{`{}`, `{"a":"plain"}`, `{"a":"<b> & \u003c","c":["\u2028",">"]}`, "[\"\u2028\u2029é\"]"} {
		want, err := json.Marshal(json.RawMessage(j))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendHTMLEscaped([]byte("x"), []byte(j)); string(got) != "x"+string(want) {
			t.Errorf("appendHTMLEscaped(%s) = %s, encoding/json writes %s", j, got[1:], want)
		}
	}
}

// TestDirectLeavesOtherRequestsToTheSDK asserts that serveDirect writes nothing and
// leaves the body as it was for every request that is not the common form of a query
// call, and that the handler then answers as the SDK does.
func TestDirectLeavesOtherRequestsToTheSDK(t *testing.T) {
	s := NewHandler(directStore(t))
	args := `{"km":"shop","record":"CUSTOMERS"}`
	deep := strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40)
	bodies := []string{
		`[` + toolCall("1", args) + `]`, // a batch
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"query","arguments":` + args + `}}`, // a notification
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"query","arguments":` + args + `,"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"find_field_values","arguments":` + args + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"query","arguments":` + args + `}}`,
		`{"jsonrpc":"2.0","id":1,"meth\u006fd":"tools/call","params":{"name":"query","arguments":` + args + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/call","params":{"name":"query","arguments":` + args + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"query","name":"query","arguments":` + args + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","extra":1,"params":{"name":"query","arguments":` + args + `}}`,
		toolCall("1.0", args), toolCall("-1", args), toolCall("01", args), toolCall("1e2", args),
		toolCall("1234567890123456", args), toolCall(`"a<b"`, args), toolCall(`"a\u0041"`, args), toolCall(`"é"`, args),
		toolCall("null", args), toolCall("true", args),
		toolCall("1", `[]`), toolCall("1", `"km"`), toolCall("1", `null`), toolCall("1", `{"km":`+deep+`}`),
		`{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"query","arguments":` + args + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"query","arguments":` + args + `}`, // not JSON
		toolCall("1", `{"km":"`+strings.Repeat("x", directMaxBody)+`"}`),
		``,
	}
	headers := []func(*http.Request){
		func(r *http.Request) { r.Header.Set("Accept", "*/*") },
		func(r *http.Request) { r.Header.Set("Accept", "application/json") },
		func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") },
		func(r *http.Request) { r.Header.Set("Mcp-Protocol-Version", "2099-01-01") },
		func(r *http.Request) { r.Header.Set("Mcp-Protocol-Version", "") },
		func(r *http.Request) { r.Header.Add("Mcp-Protocol-Version", "2025-06-18") },
		func(r *http.Request) { r.Method = http.MethodGet },
		func(r *http.Request) { r.Method = http.MethodPut },
	}
	check := func(name, body string, r *http.Request) {
		t.Helper()
		w := httptest.NewRecorder()
		if s.serveDirect(w, r) {
			t.Fatalf("%s: serveDirect answered %.200s", name, body)
		}
		if w.Body.Len() != 0 || len(w.Header()) != 0 {
			t.Errorf("%s: serveDirect wrote %v %q", name, w.Header(), w.Body.String())
		}
		if rest, err := io.ReadAll(r.Body); err != nil || string(rest) != body {
			t.Errorf("%s: the body reads %.200q (%v) after serveDirect", name, rest, err)
		}
	}
	for _, body := range bodies {
		check("body", body, post(body, "2025-06-18"))
		got, want := httptest.NewRecorder(), httptest.NewRecorder()
		s.ServeHTTP(got, post(body, "2025-06-18"))
		s.http.ServeHTTP(want, post(body, "2025-06-18"))
		if got.Code != want.Code || got.Body.String() != want.Body.String() {
			t.Errorf("%.200s: %d %.300s, the SDK's %d %.300s", body, got.Code, got.Body, want.Code, want.Body)
		}
	}
	for i, set := range headers {
		body := toolCall("1", args)
		r := post(body, "2025-06-18")
		set(r)
		check("headers "+string(rune('a'+i)), body, r)
	}
}

// FuzzDirectQueryCall holds directQueryCall to the SDK's own reading of a message: a body
// it takes is, for the SDK, a tools/call request of query with the same id and
// arguments.
func FuzzDirectQueryCall(f *testing.F) {
	for _, s := range []string{
		toolCall("1", `{"km":"o2c","record":"ORDERS"}`), toolCall(`"x"`, `{}`),
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"query"}}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"query","arguments":{}}}`,
		` {"id":2 ,"params":{"arguments":{"a":[1,{"b":"}"}]},"name":"query"},"method":"tools/call","jsonrpc":"2.0"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		id, args, ok := directQueryCall(body)
		if !ok {
			return
		}
		msg, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			t.Fatalf("taken, but the SDK refuses it: %v", err)
		}
		req, isReq := msg.(*jsonrpc.Request)
		if !isReq || req.Method != "tools/call" || !req.IsCall() {
			t.Fatalf("taken, but for the SDK it is %#v", msg)
		}
		if sdkID, err := json.Marshal(req.ID.Raw()); err != nil || !bytes.Equal(sdkID, id) {
			t.Fatalf("id %s, the SDK writes %s (%v)", id, sdkID, err)
		}
		var params sdk.CallToolParamsRaw
		if err := json.Unmarshal(req.Params, &params); err != nil || params.Name != ToolQuery || params.Meta != nil {
			t.Fatalf("params %s: %+v (%v)", req.Params, params, err)
		}
		if !jsonEqual(t, args, params.Arguments) {
			t.Fatalf("arguments %s, the SDK reads %s", args, params.Arguments)
		}
	})
}

// jsonEqual reports whether a and b are the same JSON value (both absent counts).
func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		t.Fatalf("not JSON: %s, %s", a, b)
	}
	return cmp.Equal(va, vb)
}
