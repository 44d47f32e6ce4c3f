package app

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version overrides the version homard reports. Release builds set it with
// -ldflags "-X github.com/homard/homard/internal/app.Version=v1.2.3";
// otherwise ("dev") the module version stamped by the Go toolchain is used
// (a tag for `go install …@v1.2.3`, a pseudo-version for a build in a git
// checkout).
var Version = "dev"

// BuildInfo is what this binary knows about its own build, for
// `homard version` and the web UI.
type BuildInfo struct {
	// Version is Version when set, else the module version, else "dev".
	Version string `json:"version"`
	// Revision is the VCS commit the binary was built from; empty when the
	// build was not made in a checkout (go install, a test binary).
	Revision string `json:"revision,omitempty"`
	// Time is the commit's time (RFC 3339), when known.
	Time string `json:"time,omitempty"`
	// Modified reports uncommitted changes in the checkout at build time.
	Modified  bool   `json:"modified"`
	GoVersion string `json:"go_version"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

// Build describes the running binary.
func Build() BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return buildFrom(Version, bi, runtime.GOOS+"/"+runtime.GOARCH)
}

// buildFrom is Build on given inputs.
func buildFrom(override string, bi *debug.BuildInfo, platform string) BuildInfo {
	out := BuildInfo{Version: "dev", GoVersion: runtime.Version(), Platform: platform}
	if bi != nil {
		out.GoVersion = bi.GoVersion
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			out.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				out.Revision = s.Value
			case "vcs.time":
				out.Time = s.Value
			case "vcs.modified":
				out.Modified = s.Value == "true"
			}
		}
	}
	if override != "" && override != "dev" {
		out.Version = override
	}
	return out
}

// String is one line: "v1.2.3 (abc123def456, 2026-12-01T10:00:00Z,
// modified) go1.26.8 linux/amd64".
func (b BuildInfo) String() string {
	var vcs []string
	if b.Revision != "" {
		rev := b.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		vcs = append(vcs, rev)
	}
	if b.Time != "" {
		vcs = append(vcs, b.Time)
	}
	if b.Modified {
		vcs = append(vcs, "modified")
	}
	s := b.Version
	if len(vcs) > 0 {
		s += " (" + strings.Join(vcs, ", ") + ")"
	}
	return fmt.Sprintf("%s %s %s", s, b.GoVersion, b.Platform)
}
