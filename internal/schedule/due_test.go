package schedule

import (
	"slices"
	"testing"
	"time"
)

func TestDue(t *testing.T) {
	hourly := cronSpec(t, "0 * * * *", "UTC")
	minutely := cronSpec(t, "* * * * *", "UTC")
	nyDaily := cronSpec(t, "30 2 * * *", "America/New_York")
	at := At(instant(t, "2026-05-01T10:00:00Z"))
	every := everySpec(t, 90*time.Minute, "2026-05-01T00:00:00Z")
	never := time.Time{}
	tests := []struct {
		name      string
		spec      Spec
		last, now string // "" last = never ran
		policy    Policy
		window    time.Duration
		want      string // "" = nothing due
	}{
		{"on time", hourly, "", "2026-05-01T10:00:00Z", Skip, 0, "2026-05-01T10:00:00Z"},
		{"late within grace", hourly, "", "2026-05-01T10:00:59Z", Skip, 0, "2026-05-01T10:00:00Z"},
		{"exactly grace late", hourly, "", "2026-05-01T10:01:00Z", Skip, 0, "2026-05-01T10:00:00Z"},
		{"past grace: skipped", hourly, "", "2026-05-01T10:01:01Z", Skip, 0, ""},
		{"zero policy is skip", hourly, "", "2026-05-01T10:30:00Z", "", 6 * time.Hour, ""},
		{"unknown policy is skip", hourly, "", "2026-05-01T10:30:00Z", "later", 6 * time.Hour, ""},
		{"skip ignores the window", hourly, "2026-05-01T07:00:00Z", "2026-05-01T10:30:00Z", Skip, 6 * time.Hour, ""},
		{"already ran", hourly, "2026-05-01T10:00:00Z", "2026-05-01T10:00:30Z", Skip, 0, ""},
		{"before the slot", hourly, "2026-05-01T09:00:00Z", "2026-05-01T09:59:59Z", Skip, 0, ""},
		{"once: latest missed only", hourly, "2026-05-01T06:00:00Z", "2026-05-01T10:30:00Z", Once, 6 * time.Hour, "2026-05-01T10:00:00Z"},
		{"once: latest missed, never ran", minutely, "", "2026-05-01T10:30:20Z", Once, 6 * time.Hour, "2026-05-01T10:30:00Z"},
		{"once: outside the window", hourly, "2026-05-01T06:00:00Z", "2026-05-01T10:30:00Z", Once, 20 * time.Minute, ""},
		{"once: at the window's edge", hourly, "2026-05-01T06:00:00Z", "2026-05-01T10:20:00Z", Once, 20 * time.Minute, "2026-05-01T10:00:00Z"},
		{"once: window under grace acts as grace", hourly, "", "2026-05-01T10:00:45Z", Once, time.Second, "2026-05-01T10:00:00Z"},
		{"once: latest already ran", hourly, "2026-05-01T10:00:00Z", "2026-05-01T10:50:00Z", Once, 6 * time.Hour, ""},
		{"once: daily missed for days", nyDaily, "2026-04-20T06:30:00Z", "2026-05-01T12:00:00Z", Once, 24 * time.Hour, "2026-05-01T06:30:00Z"},
		{"once: skipped wall time, caught up", nyDaily, "2025-03-08T07:30:00Z", "2025-03-09T09:00:00Z", Once, 6 * time.Hour, "2025-03-09T07:00:00Z"},
		{"at: due", at, "", "2026-05-01T10:00:10Z", Skip, 0, "2026-05-01T10:00:00Z"},
		{"at: missed, caught up", at, "", "2026-05-01T12:00:00Z", Once, 3 * time.Hour, "2026-05-01T10:00:00Z"},
		{"at: ran", at, "2026-05-01T10:00:00Z", "2026-05-01T12:00:00Z", Once, 3 * time.Hour, ""},
		{"every: due", every, "2026-05-01T00:00:00Z", "2026-05-01T01:30:00Z", Skip, 0, "2026-05-01T01:30:00Z"},
		{"every: anchor", every, "", "2026-05-01T00:00:30Z", Skip, 0, "2026-05-01T00:00:00Z"},
		{"every: missed, caught up", every, "2026-05-01T00:00:00Z", "2026-05-01T05:00:00Z", Once, 24 * time.Hour, "2026-05-01T04:30:00Z"},
		{"clock went back: last is after now", hourly, "2026-05-01T11:00:00Z", "2026-05-01T10:00:10Z", Once, 24 * time.Hour, ""},
		{"zero spec", Spec{}, "", "2026-05-01T10:00:00Z", Once, 24 * time.Hour, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			last := never
			if tt.last != "" {
				last = instant(t, tt.last)
			}
			got := Due(tt.spec, last, instant(t, tt.now), tt.policy, tt.window)
			var want []string
			if tt.want != "" {
				want = []string{tt.want}
			}
			if !slices.Equal(utcStrings(got), want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("Due(%s, last %q, now %s, %q, %v) = %v; want %v", tt.spec, tt.last, tt.now, tt.policy, tt.window, utcStrings(got), want)
			}
		})
	}
}

// TestDueDenseWindow runs Due over a long window of a dense schedule: it
// must still return the latest slot, once.
func TestDueDenseWindow(t *testing.T) {
	spec := cronSpec(t, "* 9 * * *", "Europe/Paris") // every minute of 09:xx
	got := Due(spec, time.Time{}, instant(t, "2026-05-01T15:00:00Z"), Once, 12*time.Hour)
	if want := []string{"2026-05-01T07:59:00Z"}; !slices.Equal(utcStrings(got), want) {
		t.Errorf("Due(every minute of 09:xx Paris, now 17:00) = %v; want %v", utcStrings(got), want)
	}
}

func TestParsePolicy(t *testing.T) {
	for in, want := range map[string]Policy{"": Skip, "skip": Skip, "once": Once} {
		if got, err := ParsePolicy(in); err != nil || got != want {
			t.Errorf("ParsePolicy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"all", "Once", "latest"} {
		if _, err := ParsePolicy(in); err == nil {
			t.Errorf("ParsePolicy(%q) = nil error; want one", in)
		}
	}
}

// TestReach: how late a slot may start — what Due looks back over, and
// what river's job for a slot may still start by.
func TestReach(t *testing.T) {
	for _, c := range []struct {
		policy Policy
		window time.Duration
		want   time.Duration
	}{
		{Skip, time.Hour, Grace},
		{"", time.Hour, Grace},
		{Once, time.Hour, time.Hour},
		{Once, time.Second, Grace}, // a window under Grace counts as Grace
		{"sometimes", time.Hour, Grace},
	} {
		t.Run(string(c.policy)+"/"+c.window.String(), func(t *testing.T) {
			if got := Reach(c.policy, c.window); got != c.want {
				t.Errorf("Reach(%q, %v) = %v; want %v", c.policy, c.window, got, c.want)
			}
		})
	}
}
