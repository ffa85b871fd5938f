package server

import (
	"runtime/debug"
	"strings"
)

// versionText describes the build as -version prints it, one line:
//
//	kmkit v1.2.3 (revision 0123456789ab, 2026-11-23T10:00:00Z) go1.26.0
//	kmkit (devel) (revision 0123456789ab+modified, 2026-11-23T10:00:00Z) go1.26.0
//	kmkit (devel) (revision unknown: built without VCS information) go1.26.0
//
// The module version is the one go install records ("(devel)" for a build in a
// checkout); the revision and its time are what the go command stamps from the VCS, which
// it leaves out under -buildvcs=false or outside a repository.
func versionText(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "kmkit (unknown version: built without module information)"
	}
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var rev, at, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	var b strings.Builder
	b.WriteString("kmkit " + version + " (")
	if rev == "" {
		b.WriteString("revision unknown: built without VCS information")
	} else {
		b.WriteString("revision " + rev[:min(len(rev), 12)] + modified)
		if at != "" {
			b.WriteString(", " + at)
		}
	}
	b.WriteString(") " + info.GoVersion)
	return b.String()
}
