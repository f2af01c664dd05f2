package server

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Build is what the running binary was built from: /api/status's
// "build", /metrics' logdex_build_info and `logdex --version` say it, so
// a bug report or a fleet check can name the build a server runs.
type Build struct {
	// Version is the main module's: a tag, a pseudo-version that Go 1.24
	// and later derive from the commit (`go build` in a clone), or
	// "(devel)" when the build recorded none (`go run`, -buildvcs=false).
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"` // the commit, when the build recorded it
	Time     string `json:"time,omitempty"`     // the commit's time (RFC 3339)
	Modified bool   `json:"modified,omitempty"` // built with uncommitted changes
	Go       string `json:"go"`                 // the Go release that built it
	Platform string `json:"platform"`           // GOOS/GOARCH
}

// ReadBuild reads the running binary's build information.
func ReadBuild() Build {
	b := Build{Version: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if bi.Main.Version != "" {
		b.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the build in one line, as `logdex --version` prints it:
// "logdex " and Summary.
func (b Build) String() string { return "logdex " + b.Summary() }

// Summary is "VERSION[ commit REV[+dirty]], GO PLATFORM" (`logdex status`
// prints it). The commit is named only when the version does not already
// hold it (a pseudo-version ends with its first 12 hex digits).
func (b Build) Summary() string {
	var sb strings.Builder
	sb.WriteString(b.Version)
	if rev := b.Revision; rev != "" {
		short := rev[:min(12, len(rev))]
		if !strings.Contains(b.Version, short) {
			sb.WriteString(" commit ")
			sb.WriteString(short)
			if b.Modified {
				sb.WriteString("+dirty")
			}
		}
	}
	sb.WriteString(", ")
	sb.WriteString(b.Go)
	sb.WriteString(" ")
	sb.WriteString(b.Platform)
	return sb.String()
}
