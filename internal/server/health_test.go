package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHealthcheckFlag(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "ok\n")
	}))
	defer ok.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ok.URL, "http://"))
	env := func(string) string { return "" }
	for _, addr := range []string{":" + port, "0.0.0.0:" + port, "127.0.0.1:" + port} {
		if err := Run(context.Background(), []string{"-healthcheck", "-addr", addr}, env, io.Discard, io.Discard); err != nil {
			t.Errorf("-addr %s: %v", addr, err)
		}
	}
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer bad.Close()
	_, port, _ = net.SplitHostPort(strings.TrimPrefix(bad.URL, "http://"))
	err := Run(context.Background(), []string{"-healthcheck", "-addr", ":" + port}, env, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "503 Service Unavailable") {
		t.Errorf("unhealthy server: %v", err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	if err := Run(context.Background(), []string{"-healthcheck", "-addr", addr}, env, io.Discard, io.Discard); err == nil {
		t.Error("no server: no error")
	}
}
