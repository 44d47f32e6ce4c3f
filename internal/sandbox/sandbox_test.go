package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestInvalidSpecsAreRefused(t *testing.T) {
	root := workspace(t)
	for _, tc := range []struct {
		name string
		spec Spec
	}{
		{"relative path", Spec{Mode: ModeWritable, Path: "echo", Dir: root, Root: root}},
		{"unclean path", Spec{Mode: ModeWritable, Path: "/bin/../bin/echo", Dir: root, Root: root}},
		{"relative dir", Spec{Mode: ModeWritable, Path: "/bin/echo", Dir: "sub", Root: root}},
		{"dir outside root", Spec{Mode: ModeWritable, Path: "/bin/echo", Dir: "/tmp", Root: root}},
		{"dir sibling prefix", Spec{Mode: ModeWritable, Path: "/bin/echo", Dir: root + "x", Root: root}},
		{"root is /", Spec{Mode: ModeWritable, Path: "/bin/echo", Dir: "/", Root: "/"}},
		{"env without =", Spec{Mode: ModeWritable, Path: "/bin/echo", Dir: root, Root: root, Env: []string{"PATH"}}},
		{"env empty key", Spec{Mode: ModeWritable, Path: "/bin/echo", Dir: root, Root: root, Env: []string{"=x"}}},
		{"NUL in arg", Spec{Mode: ModeWritable, Path: "/bin/echo", Args: []string{"a\x00b"}, Dir: root, Root: root}},
		{"negative timeout", Spec{Mode: ModeWritable, Path: "/bin/echo", Dir: root, Root: root, Timeout: -1}},
	} {
		for _, b := range []Backend{NewHost(), NewBwrap(), NewLandlock()} {
			if b.Name() != "host" && b.Available() != nil {
				continue
			}
			if _, err := b.Run(context.Background(), tc.spec); !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("%s.Run(%s) err = %v; want ErrInvalidSpec", b.Name(), tc.name, err)
			}
		}
	}
}

func TestSelect(t *testing.T) {
	if b, err := Select("host"); err != nil || b.Name() != "host" {
		t.Errorf(`Select("host") = %v, %v; want host`, b, err)
	}
	if _, err := Select("docker"); !errors.Is(err, ErrUnknownBackend) {
		t.Errorf(`Select("docker") err = %v; want ErrUnknownBackend`, err)
	}
	if b, err := Select("landlock"); (err == nil) != (NewLandlock().Available() == nil) || err == nil && b.Name() != "landlock" {
		t.Errorf(`Select("landlock") = %v, %v; want landlock exactly when it is available`, b, err)
	}
	requireBwrap(t)
	for _, name := range []string{"auto", "", "bwrap"} {
		if b, err := Select(name); err != nil || b.Name() != "bwrap" {
			t.Errorf("Select(%q) = %v, %v; want bwrap", name, b, err)
		}
	}
}

// TestSelectNeverFallsBack hides bwrap and checks that neither "bwrap" nor
// "auto" quietly degrade to the host backend: "auto" picks landlock when it
// works, and fails once landlock is hidden too. Not parallel: it swaps
// package variables.
func TestSelectNeverFallsBack(t *testing.T) {
	saved := bwrapPaths
	bwrapPaths = []string{"/nonexistent/bwrap"}
	defer func() { bwrapPaths = saved }()

	if NewLandlock().Available() == nil {
		if b, err := Select("auto"); err != nil || b.Name() != "landlock" {
			t.Errorf(`Select("auto") without bwrap = %v, %v; want landlock`, b, err)
		}
	}
	helperHooked.Store(false) // makes landlock unavailable
	defer helperHooked.Store(true)

	b, err := Select("bwrap")
	if b != nil || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "apt-get install bubblewrap") {
		t.Errorf(`Select("bwrap") without bwrap = %v, %v; want nil and an install hint`, b, err)
	}
	b, err = Select("auto")
	if b != nil || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "install bubblewrap") {
		t.Errorf(`Select("auto") without bwrap = %v, %v; want nil and an install hint, never host`, b, err)
	}
	if b, err = Select("landlock"); b != nil || !errors.Is(err, ErrUnavailable) {
		t.Errorf(`Select("landlock") without the helper = %v, %v; want nil and ErrUnavailable, never host`, b, err)
	}
	if _, err := NewBwrap().Run(context.Background(), Spec{Mode: ModeWritable, Path: "/bin/true", Dir: "/tmp/x", Root: "/tmp/x"}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("unavailable bwrap Run err = %v; want ErrUnavailable", err)
	}
	rep := Report()
	if len(rep) != 3 || rep[0].Name != "bwrap" || rep[0].Available || rep[0].Reason == "" {
		t.Errorf("Report() without bwrap = %+v; want bwrap first, unavailable with a reason", rep)
	}
}

func TestReport(t *testing.T) {
	got := map[string]Status{}
	for _, s := range Report() {
		got[s.Name] = s
	}
	if s := got["host"]; !s.Available {
		t.Errorf("Report host = %+v; want available", s)
	}
	if s, ok := got["landlock"]; !ok || s.Available != (NewLandlock().Available() == nil) {
		t.Errorf("Report landlock = %+v; want it to match Available()", s)
	}
	if s, ok := got["bwrap"]; !ok || s.Available != (NewBwrap().Available() == nil) {
		t.Errorf("Report bwrap = %+v; want it to match Available()", s)
	}
}

func TestCapWriter(t *testing.T) {
	w := newCapWriter(5)
	for _, p := range []string{"ab", "cd", "efgh", "ij"} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; want %d, nil", p, n, err, len(p))
		}
	}
	if got, want := string(w.bytes()), "abcde\n[output truncated at 5 bytes]"; got != want || !w.truncated {
		t.Errorf("capWriter = %q (truncated %v); want %q", got, w.truncated, want)
	}
}
