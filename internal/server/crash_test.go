package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kmkit/kmkit/scim/scimhttp"
)

// crashServer is the server binary running on a SQLite file with a fixed key.
type crashServer struct {
	cmd  *exec.Cmd
	base string
}

func startCrashServer(t *testing.T, bin, dir string) *crashServer {
	t.Helper()
	cmd := exec.Command(bin, "-db", "sqlite:"+filepath.Join(dir, "kmkit.db"), "-keys", filepath.Join(dir, "keys.yaml"), "-log-level", "error")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KMKIT_ADDR=127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "kmkit listening on "); ok {
			go io.Copy(io.Discard, stdout)
			return &crashServer{cmd: cmd, base: rest}
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Fatalf("the server printed no address; stderr:\n%s", stderr.String())
	return nil
}

const crashKey = "crash-test-key-0001"

func (s *crashServer) do(ctx context.Context, method, path, body string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.base+scimhttp.BasePath+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "AppKey "+crashKey)
	req.Header.Set("Content-Type", "application/scim+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// crashUser is the userName and displayName of user j of bulk request i.
func crashUser(i, j int) (name, display string) {
	return fmt.Sprintf("u%d-%d@example.com", i, j), fmt.Sprintf("User %d of bulk %d", j, i)
}

// bulkBody creates three users and a group holding them, referenced by bulkId.
func bulkBody(i int) string {
	var ops []string
	for j := range 3 {
		name, display := crashUser(i, j)
		ops = append(ops, fmt.Sprintf(`{"method":"POST","path":"/Users","bulkId":"u%d","data":{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":%q,"displayName":%q,"active":true}}`, j, name, display))
	}
	ops = append(ops, fmt.Sprintf(`{"method":"POST","path":"/Groups","bulkId":"g","data":{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"group %d","members":[{"value":"bulkId:u0"},{"value":"bulkId:u1"},{"value":"bulkId:u2"}]}}`, i))
	return `{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],"Operations":[` + strings.Join(ops, ",") + `]}`
}

// TestCrashSafety sends SCIM Bulk creates to the server binary on SQLite from several
// clients, kills the server with SIGKILL while requests are in flight, restarts it on the
// same file, and checks that every acknowledged operation is there and that no operation
// is there in part (every stored user is whole; every stored group has all its members).
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	dir := t.TempDir()
	keys := "keys:\n  - key: \"" + crashKey + "\"\n    name: idp\n    team: acme\n    permissions: [scim]\n"
	if err := os.WriteFile(filepath.Join(dir, "keys.yaml"), []byte(keys), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "server")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/kmkit").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv := startCrashServer(t, bin, dir)

	type ack struct{ bulk, op int }
	var (
		mu    sync.Mutex
		acked []ack
		sent  = map[int]bool{}
	)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	const clients = 3
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; ctx.Err() == nil; i += clients {
				mu.Lock()
				sent[i] = true
				mu.Unlock()
				code, body, err := srv.do(ctx, "POST", "/Bulk", bulkBody(i))
				if err != nil {
					return // the server is gone
				}
				if code == http.StatusTooManyRequests { // the SCIM burst limit: slow down
					time.Sleep(100 * time.Millisecond)
					continue
				}
				if code != 200 {
					t.Errorf("bulk %d: %d %s", i, code, body)
					return
				}
				var resp struct {
					Operations []struct{ Status string }
				}
				if err := json.Unmarshal(body, &resp); err != nil {
					t.Errorf("bulk %d: %v", i, err)
					return
				}
				mu.Lock()
				for op, r := range resp.Operations {
					if r.Status != "201" {
						t.Errorf("bulk %d operation %d: status %s", i, op, r.Status)
					}
					acked = append(acked, ack{i, op})
				}
				mu.Unlock()
			}
		}()
	}
	// Kill once a good number of requests were acknowledged, with others in flight.
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 4*30 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.cmd.Wait()
	cancel()
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no operation was acknowledged before the kill")
	}

	srv = startCrashServer(t, bin, dir)
	code, body, err := srv.do(context.Background(), "GET", "/Users?count=100000", "")
	if err != nil || code != 200 {
		t.Fatalf("list users after restart: %d %v %s", code, err, body)
	}
	var users struct {
		Resources []struct {
			ID, UserName, DisplayName string
		}
	}
	if err := json.Unmarshal(body, &users); err != nil {
		t.Fatal(err)
	}
	stored := map[string]string{} // userName -> displayName
	idName := map[string]string{}
	for _, u := range users.Resources {
		stored[u.UserName] = u.DisplayName
		idName[u.ID] = u.UserName
	}
	code, body, err = srv.do(context.Background(), "GET", "/Groups?count=100000", "")
	if err != nil || code != 200 {
		t.Fatalf("list groups after restart: %d %v %s", code, err, body)
	}
	var groups struct {
		Resources []struct {
			DisplayName string
			Members     []struct{ Value string }
		}
	}
	if err := json.Unmarshal(body, &groups); err != nil {
		t.Fatal(err)
	}
	storedGroups := map[string]bool{}
	for _, g := range groups.Resources {
		storedGroups[g.DisplayName] = true
		var i int
		if _, err := fmt.Sscanf(g.DisplayName, "group %d", &i); err != nil {
			t.Errorf("unexpected group %q", g.DisplayName)
			continue
		}
		var members []string
		for _, m := range g.Members {
			members = append(members, idName[m.Value])
		}
		var want []string
		for j := range 3 {
			name, _ := crashUser(i, j)
			want = append(want, name)
		}
		if strings.Join(members, ",") != strings.Join(want, ",") {
			t.Errorf("group %d has members %v, want %v", i, members, want)
		}
	}
	for _, a := range acked {
		if a.op == 3 {
			if !storedGroups[fmt.Sprintf("group %d", a.bulk)] {
				t.Errorf("acknowledged group of bulk %d is missing", a.bulk)
			}
			continue
		}
		name, display := crashUser(a.bulk, a.op)
		if got, ok := stored[name]; !ok {
			t.Errorf("acknowledged user %s is missing", name)
		} else if got != display {
			t.Errorf("user %s has displayName %q, want %q", name, got, display)
		}
	}
	for name, display := range stored {
		var i, j int
		if _, err := fmt.Sscanf(name, "u%d-%d@example.com", &i, &j); err != nil || !sent[i] {
			t.Errorf("unexpected user %s", name)
			continue
		}
		if _, want := crashUser(i, j); display != want {
			t.Errorf("user %s is partial: displayName %q, want %q", name, display, want)
		}
	}
	t.Logf("%d operations acknowledged before SIGKILL, %d users and %d groups after restart", len(acked), len(stored), len(storedGroups))
}
