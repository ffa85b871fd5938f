package server

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBinaryReloadsOnSIGHUP runs the server on a data directory and SQLite, with metrics
// on a second address: a broken definition and SIGHUP keep the old data serving, a good one
// swaps; the metrics address answers without credentials.
func TestBinaryReloadsOnSIGHUP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "server")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/kmkit").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := filepath.Join(tmp, "data")
	if err := os.CopyFS(dir, os.DirFS("../../km/testdata/shop")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-addr", "127.0.0.1:0", "-metrics-addr", "127.0.0.1:0", "-data", dir, "-db", "sqlite:"+filepath.Join(tmp, "k.db"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	var base, key, metricsURL string
	sc := bufio.NewScanner(stdout)
	for (base == "" || key == "" || metricsURL == "") && sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "kmkit listening on "); ok {
			base = rest
		}
		if _, rest, ok := strings.Cut(line, "development key (valid until the server stops): "); ok {
			key = rest
		}
		if rest, ok := strings.CutPrefix(line, "metrics without credentials on "); ok {
			metricsURL = rest
		}
	}
	go io.Copy(io.Discard, stdout)
	if base == "" || key == "" || metricsURL == "" {
		t.Fatalf("no address, key or metrics address; stderr:\n%s", stderr.String())
	}
	name := func() string {
		req, _ := http.NewRequest(http.MethodGet, base+"/intelligence/api/knowledge-models/shop", nil)
		req.Header.Set("Authorization", "AppKey "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("status %d: %s", res.StatusCode, body)
		}
		return string(body)
	}
	waitLog := func(s string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if strings.Contains(stderr.String(), s) {
				return
			}
		}
		t.Fatalf("the log never said %q:\n%s", s, stderr.String())
	}
	if got := name(); !strings.Contains(got, `"name":"Shop"`) {
		t.Fatalf("before: %s", got)
	}
	models := filepath.Join(dir, "models", "shop.yaml")
	good, _ := os.ReadFile(models)
	writeFile(t, models, strings.Replace(string(good), "extends: shop-base", "extends: gone", 1))
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(`models/shop.yaml:3: extends unknown KM`)
	if got := name(); !strings.Contains(got, `"name":"Shop"`) {
		t.Errorf("after a broken reload: %s", got)
	}
	writeFile(t, models, strings.Replace(string(good), "name: Shop\n", "name: Shop renamed\n", 1))
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog("msg=reloaded")
	if got := name(); !strings.Contains(got, `"name":"Shop renamed"`) {
		t.Errorf("after the reload: %s", got)
	}

	res, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`kmkit_reloads_total{result="failed"} 1`, `kmkit_reloads_total{result="ok"} 1`, `go_sql_open_connections{db_name="sqlite"}`,
		`kmkit_http_requests_total{api="km",code="200",method="GET",route="/intelligence/api/knowledge-models/{km_id}"} 3`} {
		if res.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("metrics without credentials: %d, lacks %s", res.StatusCode, want)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server exit: %v\n%s", err, stderr.String())
	}
}
