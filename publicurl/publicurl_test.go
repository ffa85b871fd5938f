package publicurl

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestResolver(t *testing.T) {
	listener := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 8080}
	tests := []struct {
		name, base, remote string
		trusted            []string
		header             map[string]string
		want               string
		keepsForwarded     bool
	}{
		{name: "listener, Host ignored", remote: "192.0.2.1:5000", want: "http://10.0.0.5:8080",
			header: map[string]string{"Host": "evil.example"}},
		{name: "forwarded headers of an untrusted peer", remote: "192.0.2.1:5000", trusted: []string{"10.1.0.0/16"}, want: "http://10.0.0.5:8080",
			header: map[string]string{"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"}},
		{name: "trusted proxy", remote: "10.1.2.3:5000", trusted: []string{"10.1.0.0/16"}, want: "https://api.example.com", keepsForwarded: true,
			header: map[string]string{"X-Forwarded-Host": "API.example.com, inner", "X-Forwarded-Proto": "https"}},
		{name: "trusted proxy by address, proto only", remote: "[::1]:5000", trusted: []string{"::1"}, want: "https://10.0.0.5:8080", keepsForwarded: true,
			header: map[string]string{"X-Forwarded-Proto": "https"}},
		{name: "trusted proxy, malformed host", remote: "10.1.2.3:5000", trusted: []string{"10.1.0.0/16"}, want: "http://10.0.0.5:8080", keepsForwarded: true,
			header: map[string]string{"X-Forwarded-Host": "a/b@evil"}},
		{name: "base URL wins", base: "https://kmkit.example.com/api/", remote: "10.1.2.3:5000", trusted: []string{"10.1.0.0/16"},
			want: "https://kmkit.example.com/api", keepsForwarded: true, header: map[string]string{"X-Forwarded-Host": "other.example"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := New(tt.base, tt.trusted)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			var forwarded bool
			h := res.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, _ = From(r)
				forwarded = r.Header.Get("X-Forwarded-Host") != "" || r.Header.Get("X-Forwarded-Proto") != ""
			}))
			r := httptest.NewRequest(http.MethodGet, "/x", nil)
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(listener)))
			r.RemoteAddr = tt.remote
			for k, v := range tt.header {
				if k == "Host" {
					r.Host = v
				} else {
					r.Header.Set(k, v)
				}
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
			if got != tt.want {
				t.Errorf("public URL %q, want %q", got, tt.want)
			}
			if len(tt.header) > 0 && tt.header["Host"] == "" && forwarded != tt.keepsForwarded {
				t.Errorf("X-Forwarded-* reach the handler: %v, want %v", forwarded, tt.keepsForwarded)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	for _, tt := range []struct {
		base    string
		proxies []string
		want    string
	}{
		{"ftp://x", nil, `base URL "ftp://x": want http(s)://host[:port][/path], without user, query or fragment`},
		{"https://x/?a=1", nil, `base URL "https://x/?a=1": want http(s)://host[:port][/path], without user, query or fragment`},
		{"/relative", nil, `base URL "/relative": want http(s)://host[:port][/path], without user, query or fragment`},
		{"", []string{"10.0.0.0/33"}, `trusted proxy "10.0.0.0/33": not a CIDR or an IP address`},
		{"", []string{"proxy.local"}, `trusted proxy "proxy.local": not a CIDR or an IP address`},
	} {
		_, err := New(tt.base, tt.proxies)
		if err == nil || err.Error() != tt.want {
			t.Errorf("New(%q, %q) = %v, want %q", tt.base, tt.proxies, err, tt.want)
		}
	}
}
