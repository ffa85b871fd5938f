package publicurl

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
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

func TestParseHost(t *testing.T) {
	for _, tt := range []struct {
		in, want, err string
	}{
		{in: "api.example.com", want: "api.example.com"},
		{in: "API.Example.com:8443", want: "api.example.com:8443"},
		{in: "api.example.com.", want: "api.example.com."},
		{in: "10.0.0.1:1", want: "10.0.0.1:1"},
		{in: "[::1]", want: "[::1]"},
		{in: "[2001:DB8::1]:65535", want: "[2001:db8::1]:65535"},
		{in: "localhost", want: "localhost"},
		{in: "[::1", err: `host "[::1": an IPv6 address without its closing bracket`},
		{in: "[::1]x", err: `host "[::1]x": text after the IPv6 address`},
		{in: "[fe80::1%eth0]", err: `host "[fe80::1%eth0]": not an IPv6 address in brackets`},
		{in: "[10.0.0.1]", err: `host "[10.0.0.1]": not an IPv6 address in brackets`},
		{in: "::1", err: `host "::1": not a DNS name or an IPv4 address`},
		{in: "api.example.com:99999", err: `host "api.example.com:99999": the port is not a number from 1 to 65535`},
		{in: "api.example.com:0", err: `host "api.example.com:0": the port is not a number from 1 to 65535`},
		{in: "api.example.com:", err: `host "api.example.com:": the port is not a number from 1 to 65535`},
		{in: "api.example.com:+80", err: `host "api.example.com:+80": the port is not a number from 1 to 65535`},
		{in: "a/b@evil", err: `host "a/b@evil": not a DNS name or an IPv4 address`},
		{in: "-a.example", err: `host "-a.example": not a DNS name or an IPv4 address`},
		{in: "a..example", err: `host "a..example": not a DNS name or an IPv4 address`},
		{in: "300.1.1.1", err: `host "300.1.1.1": not a DNS name or an IPv4 address`},
		{in: "", err: `host "": empty or too long`},
	} {
		got, err := ParseHost(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseHost(%q) = %q, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseHost(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// FuzzParseHost: whatever ParseHost accepts makes a URL whose host Go reads back as it.
func FuzzParseHost(f *testing.F) {
	for _, s := range []string{"api.example.com", "a:1", "[::1]:443", "[::1", "x:99999", "10.0.0.1", "a/b@c", "[fe80::1%25x]", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHost(s)
		if err != nil {
			return
		}
		u, err := url.Parse("https://" + h + "/x")
		if err != nil || u.Host != h || u.Path != "/x" {
			t.Fatalf("ParseHost(%q) = %q, which makes the URL %v (%v)", s, h, u, err)
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				t.Fatalf("ParseHost(%q) = %q: port %q", s, h, p)
			}
		}
	})
}

// TestIgnoredForwardedHostIsLogged is item 7 of issue 31 at the Resolver: "[::1" and a
// port of 99999 from a trusted proxy are ignored and logged.
func TestIgnoredForwardedHostIsLogged(t *testing.T) {
	for _, h := range []string{"[::1", "api.example.com:99999"} {
		var log bytes.Buffer
		res, err := New("", []string{"10.1.0.0/16"}, WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
		if err != nil {
			t.Fatal(err)
		}
		var got string
		srv := res.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, _ = From(r) }))
		r := httptest.NewRequest(http.MethodGet, "/x", nil)
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(&net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 8080})))
		r.RemoteAddr = "10.1.2.3:5000"
		r.Header.Set("X-Forwarded-Host", h)
		r.Header.Set("X-Forwarded-Proto", "https")
		srv.ServeHTTP(httptest.NewRecorder(), r)
		if got != "https://10.0.0.5:8080" {
			t.Errorf("X-Forwarded-Host %q: public URL %q, want https://10.0.0.5:8080", h, got)
		}
		if !strings.Contains(log.String(), "level=WARN msg=\"publicurl: X-Forwarded-Host of a trusted proxy ignored\" peer=10.1.2.3:5000") {
			t.Errorf("X-Forwarded-Host %q: log %q", h, log.String())
		}
	}
}
