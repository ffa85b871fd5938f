package server

import (
	"bytes"
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
