package server

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"released", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-11-23T10:00:00Z"}, {Key: "vcs.modified", Value: "false"}}},
			true, "kmkit v1.2.3 (revision 0123456789ab, 2026-11-23T10:00:00Z) go1.26.0"},
		{"modified checkout", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}},
			true, "kmkit (devel) (revision 0123456789ab+modified) go1.26.0"},
		{"no VCS", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}},
			true, "kmkit (devel) (revision unknown: built without VCS information) go1.26.0"},
		{"no build info", nil, false, "kmkit (unknown version: built without module information)"},
	}
	for _, tt := range tests {
		if got := versionText(tt.info, tt.ok); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestVersionFlag builds the binary with and without VCS stamping, and checks -version
// against what "go version -m" reads from the same binary. (The go command stamps no VCS
// information in a git worktree, whose .git is a file, or under -buildvcs=false.)
func TestVersionFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server")
	}
	dir := t.TempDir()
	for _, vcs := range []string{"false", "auto"} {
		bin := filepath.Join(dir, "kmkit-"+vcs)
		build := exec.Command("go", "build", "-buildvcs="+vcs, "-o", bin, "../../cmd/kmkit")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
		var stdout bytes.Buffer
		cmd := exec.Command(bin, "-version")
		cmd.Stdout = &stdout
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		got := strings.TrimSpace(stdout.String())
		meta, err := exec.Command("go", "version", "-m", bin).Output()
		if err != nil {
			t.Fatal(err)
		}
		settings := map[string]string{}
		version := "(devel)"
		for line := range strings.SplitSeq(string(meta), "\n") {
			f := strings.Fields(line)
			if len(f) >= 3 && f[0] == "mod" {
				version = f[2] // stamped from VCS by Go 1.24 and later, (devel) otherwise
			}
			if len(f) == 2 && f[0] == "build" {
				if k, v, ok := strings.Cut(f[1], "="); ok {
					settings[k] = v
				}
			}
		}
		want := "kmkit " + version + " (revision unknown: built without VCS information) " + runtime.Version()
		if rev := settings["vcs.revision"]; rev != "" {
			if vcs == "false" {
				t.Fatalf("-buildvcs=false stamped revision %s", rev)
			}
			mod := ""
			if settings["vcs.modified"] == "true" {
				mod = "+modified"
			}
			want = "kmkit " + version + " (revision " + rev[:12] + mod + ", " + settings["vcs.time"] + ") " + runtime.Version()
		}
		if got != want {
			t.Errorf("-buildvcs=%s: -version printed %q, want %q", vcs, got, want)
		}
	}
}

// TestHelpFlag is item 8 of issue 31: "kmkit -h" exited 1 and printed "Usage of server:".
// The binary prints "Usage of kmkit:" and the flags, and exits 0.
func TestHelpFlag(t *testing.T) {
	var stderr bytes.Buffer
	if code := exitCode(Run(context.Background(), []string{"-h"}, func(string) string { return "" }, io.Discard, &stderr), "kmkit", &stderr); code != 0 {
		t.Errorf("Run -h: exit code %d, stderr %s", code, stderr.String())
	}
	if !strings.HasPrefix(stderr.String(), "Usage of kmkit:\n") || !strings.Contains(stderr.String(), "-cors-origins") {
		t.Errorf("Run -h printed %q", stderr.String())
	}
	if testing.Short() {
		t.Skip("builds the server")
	}
	bin := filepath.Join(t.TempDir(), "kmkit")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/kmkit").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, arg := range []string{"-h", "-help", "--help"} {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, arg)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("kmkit %s: %v (exit code %d)", arg, err, cmd.ProcessState.ExitCode())
		}
		if !strings.HasPrefix(stderr.String(), "Usage of kmkit:\n") || stdout.Len() != 0 {
			t.Errorf("kmkit %s: stdout %q, stderr %q", arg, stdout.String(), stderr.String())
		}
	}
	// An unknown flag is still an error.
	cmd := exec.Command(bin, "-nope")
	if err := cmd.Run(); cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("kmkit -nope: %v, want exit code 1", err)
	}
}
