package odata

import (
	"bufio"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// batchCredentialCases are the credential headers of requests in a batch sent with
// "Authorization: AppKey k1", and the status each request answers: none or the batch's
// own (up to white space and the scheme word's case) run as the batch's caller; any
// other is 400 for that request alone (it ran as the batch's caller, silently).
var batchCredentialCases = []struct {
	header, value string
	status        int
}{
	{"", "", 200},
	{"Authorization", "AppKey k1", 200},
	{"Authorization", "appkey   k1 ", 200},
	{"Authorization", "AppKey k2", 400},
	{"Authorization", "AppKey K1", 400},
	{"Authorization", "Bearer k1", 400},
	{"AppKey", "k1", 400}, // the batch sent no AppKey header
}

// batchCredentialDetail is the detail of the 400 of a request with other credentials.
const batchCredentialDetail = "a request in a batch runs as the batch's caller: its credential headers (Authorization, AppKey) must be the batch request's or absent, and this request's differ"

// TestBatchRequestCredentials: a request in a batch that names credentials other than
// the batch's is refused 400 in its place, in both batch formats; the others run.
func TestBatchRequestCredentials(t *testing.T) {
	h := testHandler(t)
	send := func(contentType, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://example.com"+svc+"/$batch", strings.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		r.Header.Set("Authorization", "AppKey k1")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		return w
	}
	var want []int
	var jsonReqs []string
	var parts strings.Builder
	for i, c := range batchCredentialCases {
		want = append(want, c.status)
		headers, line := "{}", ""
		if c.header != "" {
			headers = `{` + strconv.Quote(c.header) + `:` + strconv.Quote(c.value) + `}`
			line = c.header + ": " + c.value + "\r\n"
		}
		jsonReqs = append(jsonReqs, `{"id":"`+strconv.Itoa(i)+`","method":"GET","url":"ORDERS_entries/$count","headers":`+headers+`}`)
		parts.WriteString("--b\r\nContent-Type: application/http\r\n\r\nGET ORDERS_entries/$count HTTP/1.1\r\n" + line + "\r\n\r\n")
	}
	parts.WriteString("--b--\r\n")

	w := send("application/json", `{"requests":[`+strings.Join(jsonReqs, ",")+`]}`)
	var got struct {
		Responses []struct {
			Status int
			Body   json.RawMessage
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	var statuses []int
	for i, rs := range got.Responses {
		statuses = append(statuses, rs.Status)
		checkCredentialAnswer(t, "JSON", i, rs.Status, rs.Body)
	}
	if !slices.Equal(statuses, want) {
		t.Errorf("JSON batch: statuses %v, want %v", statuses, want)
	}

	w = send("multipart/mixed; boundary=b", parts.String())
	_, params, _ := mime.ParseMediaType(w.Header().Get("Content-Type"))
	mr := multipart.NewReader(w.Body, params["boundary"])
	statuses = nil
	for i := 0; ; i++ {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(part), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		statuses = append(statuses, resp.StatusCode)
		checkCredentialAnswer(t, "multipart", i, resp.StatusCode, b)
	}
	if !slices.Equal(statuses, want) {
		t.Errorf("multipart batch: statuses %v, want %v", statuses, want)
	}
}

// checkCredentialAnswer checks the body of the answer to request i of a batch: the count
// when it ran, else the problem saying why it did not.
func checkCredentialAnswer(t *testing.T, format string, i, status int, body []byte) {
	t.Helper()
	if status == 200 {
		if string(body) != "7" && string(body) != `"7"` {
			t.Errorf("%s request %d: %s, want the count 7", format, i, body)
		}
		return
	}
	var p struct {
		Status    int
		ErrorCode string
		Detail    string
		Error     struct{ Message string }
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Status != 400 || p.ErrorCode != "GENERAL_PARAMETER_ILLEGAL" ||
		p.Detail != batchCredentialDetail || p.Error.Message != batchCredentialDetail {
		t.Errorf("%s request %d: %d %s, want 400 GENERAL_PARAMETER_ILLEGAL %q", format, i, status, body, batchCredentialDetail)
	}
}
