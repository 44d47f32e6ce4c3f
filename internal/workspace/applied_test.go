package workspace

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLastApplied: a write stamps its root and only its root; targets name
// roots as plan targets do; the stamp never goes back in time; a torn
// stamp reads as "just now" so that approvals lapse rather than survive.
func TestLastApplied(t *testing.T) {
	clock := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	f := newFixture(t, func(o *Options) { o.Now = func() time.Time { return clock } })
	last := func(target string) time.Time {
		t.Helper()
		got, err := f.ws.LastApplied(target)
		if err != nil {
			t.Fatalf("LastApplied(%q): %v", target, err)
		}
		return got
	}
	writeAt := func(target string, at time.Time) {
		t.Helper()
		clock = at
		p, err := f.ws.Resolve(target)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.ws.writeFile(p, []byte(at.String())); err != nil {
			t.Fatal(err)
		}
	}
	if got := last("a.md"); !got.IsZero() {
		t.Fatalf("LastApplied before any write = %v; want zero", got)
	}
	t1 := clock.Add(time.Minute)
	writeAt("a.md", t1)
	for _, tc := range []struct {
		target string
		want   time.Time
	}{
		{"a.md", t1},
		{".", t1},
		// "docs:x.md" may also be a file of that name in the default
		// root, so it reads the later of both: main's stamp for now.
		{"docs:x.md", t1},
		{"nosuch:x", t1}, // a default-root path that contains ':'
	} {
		if got := last(tc.target); !got.Equal(tc.want) {
			t.Errorf("after writing main: LastApplied(%q) = %v; want %v", tc.target, got, tc.want)
		}
	}
	t2 := t1.Add(time.Minute)
	writeAt(filepath.Join(f.docs, "x.md"), t2)
	if got := last("docs:x.md"); !got.Equal(t2) {
		t.Errorf("after writing docs: LastApplied(docs:x.md) = %v; want %v", got, t2)
	}
	if got := last("a.md"); !got.Equal(t1) {
		t.Errorf("writing docs moved main's stamp to %v; want %v", got, t1)
	}
	// A clock that goes back does not lower the stamp.
	writeAt("b.md", t1.Add(-time.Hour))
	if got := last("b.md"); !got.Equal(t1) {
		t.Errorf("after a write with an earlier clock LastApplied = %v; want still %v", got, t1)
	}
	// A refused write stamps nothing.
	clock = t2.Add(time.Hour)
	if p, err := f.ws.Resolve(".git/config"); err == nil {
		if _, err := f.ws.writeFile(p, []byte("x")); err == nil {
			t.Fatal("a write to .git/config succeeded")
		}
	}
	if got := last("a.md"); !got.Equal(t1) {
		t.Errorf("a refused write moved the stamp to %v; want %v", got, t1)
	}
	// A torn stamp reads as now.
	if err := os.WriteFile(filepath.Join(f.cpDir, appliedDir, "main"), []byte{1, 2}, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := last("a.md"); !got.Equal(clock) {
		t.Errorf("torn stamp: LastApplied = %v; want now (%v)", got, clock)
	}
}
