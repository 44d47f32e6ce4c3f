package app

import (
	"runtime/debug"
	"testing"
)

// TestBuildFrom: the version comes from the -X override, else the module
// version the toolchain stamped, else "dev"; the VCS settings fill the
// revision, time and dirty flag; String shortens the revision.
func TestBuildFrom(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/homard/homard", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"},
			{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	devel := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}
	for _, tc := range []struct {
		name     string
		override string
		bi       *debug.BuildInfo
		want     BuildInfo
		line     string
	}{
		{"stamped", "dev", stamped,
			BuildInfo{Version: "v0.3.0", Revision: "0123456789abcdef0123", Time: "2026-12-01T10:00:00Z", Modified: true, GoVersion: "go1.26.8", Platform: "linux/arm64"},
			"v0.3.0 (0123456789ab, 2026-12-01T10:00:00Z, modified) go1.26.8 linux/arm64"},
		{"override wins", "v1.0.0", stamped,
			BuildInfo{Version: "v1.0.0", Revision: "0123456789abcdef0123", Time: "2026-12-01T10:00:00Z", Modified: true, GoVersion: "go1.26.8", Platform: "linux/arm64"},
			"v1.0.0 (0123456789ab, 2026-12-01T10:00:00Z, modified) go1.26.8 linux/arm64"},
		{"devel build", "dev", devel,
			BuildInfo{Version: "dev", GoVersion: "go1.26.8", Platform: "linux/arm64"},
			"dev go1.26.8 linux/arm64"},
		{"override on a devel build", "v2.0.0", devel,
			BuildInfo{Version: "v2.0.0", GoVersion: "go1.26.8", Platform: "linux/arm64"},
			"v2.0.0 go1.26.8 linux/arm64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := buildFrom(tc.override, tc.bi, "linux/arm64")
			if got != tc.want {
				t.Errorf("buildFrom(%q) = %+v; want %+v", tc.override, got, tc.want)
			}
			if s := got.String(); s != tc.line {
				t.Errorf("String() = %q; want %q", s, tc.line)
			}
		})
	}
	if got := buildFrom("", nil, "darwin/arm64"); got.Version != "dev" || got.GoVersion == "" {
		t.Errorf("buildFrom without build info = %+v; want version dev and the running Go version", got)
	}
}
