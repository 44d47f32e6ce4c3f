package arbiter_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/homard/homard/internal/policy"
)

// TestOutcomeDurations: a call that ran reports the tool's run time in
// RunDur apart from the deciding (telemetry's homard.run and
// homard.decide spans); one that did not run has no RunDur.
func TestOutcomeDurations(t *testing.T) {
	const pause = 5 * time.Millisecond
	f := newFixture(t, policy.ModeSmart, func(string) { time.Sleep(pause) })
	if err := os.WriteFile(filepath.Join(f.root, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := f.decide(t, "read_file", `{"path":"a.txt"}`)
	if out.Decision != "ran" || out.RunDur < pause || out.DecideDur <= 0 {
		t.Errorf("read_file = %s, DecideDur %v, RunDur %v; want ran, RunDur at least the tool's %v, DecideDur > 0", out.Decision, out.DecideDur, out.RunDur, pause)
	}
	out = f.decide(t, "read_file", `{"path":"../outside"}`)
	if out.Decision == "ran" || out.RunDur != 0 || out.DecideDur <= 0 {
		t.Errorf("read_file outside = %s, DecideDur %v, RunDur %v; want not run, no RunDur, DecideDur > 0", out.Decision, out.DecideDur, out.RunDur)
	}
}
