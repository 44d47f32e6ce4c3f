package schedule

import (
	"slices"
	"testing"
	"time"
)

// The two New York changes of 2025 (issue 14): on 2025-03-09 the clock
// goes from 01:59:59 EST to 03:00:00 EDT (07:00 UTC); on 2025-11-02 from
// 01:59:59 EDT back to 01:00:00 EST (06:00 UTC).
func TestNextAcrossDST(t *testing.T) {
	ny := "America/New_York"
	checkUpcoming(t, []upcomingCase{
		{"daily 02:30 on spring-forward day runs at 03:00 EDT once", cronSpec(t, "30 2 * * *", ny), "2025-03-08T12:00:00Z",
			[]string{
				"2025-03-09T07:00:00Z", // 02:30 does not exist: the jump, 03:00 EDT
				"2025-03-10T06:30:00Z", // 02:30 EDT
			}},
		{"daily 01:30 on fall-back day runs once at 01:30 EDT", cronSpec(t, "30 1 * * *", ny), "2025-11-01T12:00:00Z",
			[]string{
				"2025-11-02T05:30:00Z", // 01:30 EDT; not again at 01:30 EST (06:30 UTC)
				"2025-11-03T06:30:00Z", // 01:30 EST
			}},
		{"daily 01:30: asked from inside the repeated hour", cronSpec(t, "30 1 * * *", ny), "2025-11-02T06:10:00Z", // 01:10 EST
			[]string{"2025-11-03T06:30:00Z"}},
		{"daily 01:30: between the two 01:30s", cronSpec(t, "30 1 * * *", ny), "2025-11-02T05:30:00Z",
			[]string{"2025-11-03T06:30:00Z"}},
		{"hourly across spring forward: 02:00 does not exist, 03:00 runs once", cronSpec(t, "0 * * * *", ny), "2025-03-09T05:30:00Z",
			[]string{
				"2025-03-09T06:00:00Z", // 01:00 EST
				"2025-03-09T07:00:00Z", // 03:00 EDT (nominal 02:00 and 03:00, one slot)
				"2025-03-09T08:00:00Z", // 04:00 EDT
			}},
		{"hourly across fall back: the repeated 01:00 is not a new slot", cronSpec(t, "0 * * * *", ny), "2025-11-02T03:30:00Z",
			[]string{
				"2025-11-02T04:00:00Z", // 00:00 EDT
				"2025-11-02T05:00:00Z", // 01:00 EDT
				"2025-11-02T07:00:00Z", // 02:00 EST (01:00 EST at 06:00 UTC is the repeat)
				"2025-11-02T08:00:00Z", // 03:00 EST
			}},
		{"half-hourly across spring forward", cronSpec(t, "0,30 * * * *", ny), "2025-03-09T06:15:00Z",
			[]string{
				"2025-03-09T06:30:00Z", // 01:30 EST
				"2025-03-09T07:00:00Z", // 02:00, 02:30 and 03:00: one slot at 03:00 EDT
				"2025-03-09T07:30:00Z", // 03:30 EDT
			}},
		{"every minute through the repeated hour", cronSpec(t, "* * * * *", ny), "2025-11-02T05:58:30Z",
			[]string{
				"2025-11-02T05:59:00Z", // 01:59 EDT
				"2025-11-02T07:00:00Z", // 02:00 EST: every minute of the repeat is skipped
				"2025-11-02T07:01:00Z",
			}},
		{"Paris spring forward: 02:30 runs at 03:00 CEST", cronSpec(t, "30 2 * * *", "Europe/Paris"), "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
		{"Paris fall back: 02:30 runs at the first (CEST)", cronSpec(t, "30 2 * * *", "Europe/Paris"), "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		// Lord Howe Island moves its clock by 30 minutes.
		{"Lord Howe half-hour jump", cronSpec(t, "15 2 * * *", "Australia/Lord_Howe"), "2025-10-04T12:00:00Z",
			[]string{"2025-10-04T15:30:00Z", "2025-10-05T15:15:00Z"}},
	})
}

// TestNextDSTWallTimes reads the hourly New York slots on the wall clock:
// the hour that does not exist has no run, no hour runs twice.
func TestNextDSTWallTimes(t *testing.T) {
	spec := cronSpec(t, "0 * * * *", "America/New_York")
	tests := []struct {
		name, after string
		want        []string
	}{
		{"spring", "2025-03-09T04:30:00Z", []string{"00:00 EST", "01:00 EST", "03:00 EDT", "04:00 EDT"}},
		{"fall", "2025-11-02T03:30:00Z", []string{"00:00 EDT", "01:00 EDT", "02:00 EST", "03:00 EST"}},
	}
	for _, tt := range tests {
		var wall []string
		for _, s := range Upcoming(spec, instant(t, tt.after), len(tt.want)) {
			wall = append(wall, s.Format("15:04 MST"))
		}
		if !slices.Equal(wall, tt.want) {
			t.Errorf("%s: hourly wall times = %v; want %v", tt.name, wall, tt.want)
		}
	}
}

func TestParseAt(t *testing.T) {
	ny := zone(t, "America/New_York")
	paris := zone(t, "Europe/Paris")
	tests := []struct {
		in   string
		loc  *time.Location
		want string // UTC; "" = error
	}{
		{"2026-12-24T08:00", paris, "2026-12-24T07:00:00Z"},
		{"2026-12-24 08:00", paris, "2026-12-24T07:00:00Z"},
		{"2026-12-24T08:00:30", paris, "2026-12-24T07:00:30Z"},
		{"2026-12-24T08:00:00+01:00", nil, "2026-12-24T07:00:00Z"},
		{"2026-12-24T08:00:00Z", ny, "2026-12-24T08:00:00Z"}, // an offset wins over loc
		{"2025-03-09T02:30", ny, "2025-03-09T07:00:00Z"},     // skipped: the jump
		{"2025-11-02T01:30", ny, "2025-11-02T05:30:00Z"},     // repeated: the first
		{"2026-12-24T08:00", nil, ""},
		{"tomorrow", paris, ""},
		{"2026-13-01T08:00", paris, ""},
		{"2026-12-24", paris, ""},
	}
	for _, tt := range tests {
		got, err := ParseAt(tt.in, tt.loc)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("ParseAt(%q) = %s; want an error", tt.in, got)
		case tt.want != "" && err != nil:
			t.Errorf("ParseAt(%q) error: %v", tt.in, err)
		case tt.want != "" && !got.Equal(instant(t, tt.want)):
			t.Errorf("ParseAt(%q) = %s; want %s", tt.in, got.UTC().Format(time.RFC3339), tt.want)
		}
	}
}

func TestParseEvery(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration // 0 = error
	}{
		{"90m", 90 * time.Minute},
		{"1h30m", 90 * time.Minute},
		{"1m", time.Minute},
		{"1d", 24 * time.Hour},
		{"7d", 7 * 24 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{" 5m ", 5 * time.Minute},
		{"30s", 0},
		{"1m0.5s", 0},
		{"", 0},
		{"d", 0},
		{"-5m", 0},
		{"+1d", 0},
		{"1x", 0},
		{"soon", 0},
	}
	for _, tt := range tests {
		got, err := ParseEvery(tt.in)
		if tt.want == 0 {
			if err == nil {
				t.Errorf("ParseEvery(%q) = %v; want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseEvery(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}
