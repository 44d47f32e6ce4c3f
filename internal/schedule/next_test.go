package schedule

import (
	"slices"
	"testing"
	"time"
)

func utcStrings(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, v := range ts {
		out[i] = v.UTC().Format(time.RFC3339)
	}
	return out
}

type upcomingCase struct {
	name  string
	spec  Spec
	after string
	want  []string // UTC instants
}

func checkUpcoming(t *testing.T, tests []upcomingCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Upcoming(tt.spec, instant(t, tt.after), len(tt.want)+1)
			if len(got) > len(tt.want) {
				got = got[:len(tt.want)]
			}
			if !slices.Equal(utcStrings(got), tt.want) {
				t.Errorf("Upcoming(%s, %s) =\n  %v\nwant\n  %v", tt.spec, tt.after, utcList(got), tt.want)
			}
		})
	}
}

func TestNextAt(t *testing.T) {
	slot := instant(t, "2026-12-24T07:00:00Z")
	s := At(slot)
	tests := []struct {
		after string
		want  string // "" = none
	}{
		{"2026-01-01T00:00:00Z", "2026-12-24T07:00:00Z"},
		{"2026-12-24T06:59:59.999999999Z", "2026-12-24T07:00:00Z"},
		{"2026-12-24T07:00:00Z", ""}, // strictly after
		{"2026-12-24T08:00:00+01:00", ""},
		{"2027-01-01T00:00:00Z", ""},
	}
	for _, tt := range tests {
		got, ok := Next(s, instant(t, tt.after))
		if tt.want == "" {
			if ok {
				t.Errorf("Next(%s, %s) = %s; want none", s, tt.after, got)
			}
			continue
		}
		if !ok || !got.Equal(instant(t, tt.want)) {
			t.Errorf("Next(%s, %s) = %s, %v; want %s", s, tt.after, got, ok, tt.want)
		}
	}
	if got := Upcoming(s, instant(t, "2026-01-01T00:00:00Z"), 3); len(got) != 1 {
		t.Errorf("Upcoming(at) = %v; want the one slot", got)
	}
	var zero Spec
	if got, ok := Next(zero, slot); ok {
		t.Errorf("Next(zero Spec) = %s; want none", got)
	}
}

func TestNextEvery(t *testing.T) {
	checkUpcoming(t, []upcomingCase{
		{"before anchor: anchor first", everySpec(t, time.Hour, "2026-01-01T10:00:00Z"), "2025-12-31T00:00:00Z",
			[]string{"2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z", "2026-01-01T12:00:00Z"}},
		{"at a slot: strictly after", everySpec(t, time.Hour, "2026-01-01T10:00:00Z"), "2026-01-01T11:00:00Z",
			[]string{"2026-01-01T12:00:00Z", "2026-01-01T13:00:00Z"}},
		{"between slots", everySpec(t, 90*time.Minute, "2026-01-01T00:00:00Z"), "2026-01-01T02:00:00.5Z",
			[]string{"2026-01-01T03:00:00Z", "2026-01-01T04:30:00Z"}},
		{"just before a slot", everySpec(t, 90*time.Minute, "2026-01-01T00:00:00Z"), "2026-01-01T02:59:59.9Z",
			[]string{"2026-01-01T03:00:00Z"}},
		{"anchor's fraction dropped", everySpec(t, time.Minute, "2026-01-01T00:00:00.7Z"), "2026-01-01T00:00:30Z",
			[]string{"2026-01-01T00:01:00Z"}},
		// 90 minutes across New York's spring-forward: UTC-counted, so the
		// local clock jumps from 01:30 EST to 04:00 EDT (2.5 h on the wall).
		{"every 90m across spring forward", everySpec(t, 90*time.Minute, "2025-03-09T05:00:00Z"), "2025-03-09T05:00:00Z",
			[]string{"2025-03-09T06:30:00Z", "2025-03-09T08:00:00Z", "2025-03-09T09:30:00Z"}},
		{"every 90m across fall back", everySpec(t, 90*time.Minute, "2025-11-02T04:00:00Z"), "2025-11-02T04:00:00Z",
			[]string{"2025-11-02T05:30:00Z", "2025-11-02T07:00:00Z", "2025-11-02T08:30:00Z"}},
	})
	// The same slots read on New York's wall clock: the interval holds, the clock shifts.
	ny := zone(t, "America/New_York")
	got := Upcoming(everySpec(t, 90*time.Minute, "2025-03-09T05:00:00Z"), instant(t, "2025-03-09T05:00:00Z"), 2)
	var wall []string
	for _, s := range got {
		wall = append(wall, s.In(ny).Format("15:04 MST"))
	}
	if want := []string{"01:30 EST", "04:00 EDT"}; !slices.Equal(wall, want) {
		t.Errorf("every 90m in New York wall time = %v; want %v", wall, want)
	}
}

func TestEveryRejects(t *testing.T) {
	anchor := instant(t, "2026-01-01T00:00:00Z")
	for _, d := range []time.Duration{0, -time.Hour, 59 * time.Second, time.Minute + 500*time.Millisecond} {
		if _, err := Every(d, anchor); err == nil {
			t.Errorf("Every(%v) = nil error; want one", d)
		}
	}
	if _, err := Every(time.Minute, anchor); err != nil {
		t.Errorf("Every(1m) = %v; want it accepted (the minimum)", err)
	}
}

func TestNextCronZones(t *testing.T) {
	checkUpcoming(t, []upcomingCase{
		{"UTC every minute", cronSpec(t, "* * * * *", "UTC"), "2026-05-01T10:00:30Z",
			[]string{"2026-05-01T10:01:00Z", "2026-05-01T10:02:00Z"}},
		{"UTC exactly at a slot", cronSpec(t, "0 * * * *", "UTC"), "2026-05-01T10:00:00Z",
			[]string{"2026-05-01T11:00:00Z"}},
		{"UTC year end", cronSpec(t, "0 0 1 1 *", "UTC"), "2026-12-31T23:59:59Z",
			[]string{"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
		{"UTC leap day", cronSpec(t, "0 12 29 feb *", "UTC"), "2025-01-01T00:00:00Z",
			[]string{"2028-02-29T12:00:00Z", "2032-02-29T12:00:00Z"}},
		{"UTC leap day across 2100", cronSpec(t, "0 0 29 2 *", "UTC"), "2097-01-01T00:00:00Z",
			[]string{"2104-02-29T00:00:00Z"}},
		{"UTC 31st skips short months", cronSpec(t, "0 0 31 * *", "UTC"), "2026-01-31T00:00:00Z",
			[]string{"2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z"}},
		{"weekdays 09:00 Paris (CET then CEST)", cronSpec(t, "0 9 * * mon-fri", "Europe/Paris"), "2026-03-27T12:00:00Z",
			[]string{"2026-03-30T07:00:00Z", "2026-03-31T07:00:00Z"}},
		{"Paris winter is UTC+1", cronSpec(t, "30 8 * * *", "Europe/Paris"), "2026-01-10T00:00:00Z",
			[]string{"2026-01-10T07:30:00Z"}},
		{"Shanghai, no DST", cronSpec(t, "0 8 * * *", "Asia/Shanghai"), "2026-03-08T00:00:00Z",
			[]string{"2026-03-09T00:00:00Z", "2026-03-10T00:00:00Z"}},
		{"OR semantics: 1st or Monday", cronSpec(t, "0 0 1 * mon", "UTC"), "2026-06-01T00:00:00Z",
			[]string{"2026-06-08T00:00:00Z", "2026-06-15T00:00:00Z", "2026-06-22T00:00:00Z", "2026-06-29T00:00:00Z", "2026-07-01T00:00:00Z"}},
		{"AND when a day field starts with *", cronSpec(t, "0 0 */10 * mon", "UTC"), "2026-01-01T00:00:00Z",
			[]string{"2026-05-11T00:00:00Z", "2026-06-01T00:00:00Z", "2026-08-31T00:00:00Z"}},
		{"Sunday as 7", cronSpec(t, "0 0 * * 7", "UTC"), "2026-06-01T00:00:00Z",
			[]string{"2026-06-07T00:00:00Z"}},
		{"New York summer is UTC-4", cronSpec(t, "0 9 * * *", "America/New_York"), "2026-07-01T00:00:00Z",
			[]string{"2026-07-01T13:00:00Z"}},
	})
}

func TestSlotKey(t *testing.T) {
	ny := "America/New_York"
	tests := []struct {
		name string
		spec Spec
		slot string
		want string // "" = not a slot
	}{
		{"cron", cronSpec(t, "30 1 * * *", ny), "2025-11-02T05:30:00Z", "2025-11-02T01:30 America/New_York"},
		{"cron: second 01:30 is no slot", cronSpec(t, "30 1 * * *", ny), "2025-11-02T06:30:00Z", ""},
		{"cron: skipped 02:30 keeps its nominal name", cronSpec(t, "30 2 * * *", ny), "2025-03-09T07:00:00Z", "2025-03-09T02:30 America/New_York"},
		{"cron: merged hour is named by the real 03:00", cronSpec(t, "0 * * * *", ny), "2025-03-09T07:00:00Z", "2025-03-09T03:00 America/New_York"},
		{"cron: off-slot instant", cronSpec(t, "0 * * * *", ny), "2025-03-09T07:00:01Z", ""},
		{"cron: fraction of a second", cronSpec(t, "0 * * * *", ny), "2025-03-09T07:00:00.5Z", ""},
		{"every", everySpec(t, 90*time.Minute, "2025-11-02T04:00:00Z"), "2025-11-02T07:00:00Z", "2025-11-02T07:00:00Z"},
		{"every: off-slot", everySpec(t, 90*time.Minute, "2025-11-02T04:00:00Z"), "2025-11-02T07:00:01Z", ""},
		{"every: before anchor", everySpec(t, 90*time.Minute, "2025-11-02T04:00:00Z"), "2025-11-02T02:30:00Z", ""},
		{"at", At(instant(t, "2026-12-24T08:00:00+01:00")), "2026-12-24T07:00:00Z", "2026-12-24T07:00:00Z"},
		{"at: other instant", At(instant(t, "2026-12-24T08:00:00+01:00")), "2026-12-24T08:00:00Z", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := SlotKey(tt.spec, instant(t, tt.slot))
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("SlotKey(%s, %s) = %q, %v; want %q", tt.spec, tt.slot, got, ok, tt.want)
			}
		})
	}
}

func TestMinInterval(t *testing.T) {
	from := instant(t, "2025-01-01T00:00:00Z")
	tests := []struct {
		name string
		spec Spec
		want time.Duration
	}{
		{"at never repeats", At(from), 0},
		{"every", everySpec(t, 90*time.Minute, "2025-01-01T00:00:00Z"), 90 * time.Minute},
		{"every minute", cronSpec(t, "* * * * *", "UTC"), time.Minute},
		{"every 5 minutes", cronSpec(t, "*/5 * * * *", "UTC"), 5 * time.Minute},
		{"uneven list", cronSpec(t, "0,10,45 * * * *", "UTC"), 10 * time.Minute},
		{"daily", cronSpec(t, "0 9 * * *", "Europe/Paris"), 23 * time.Hour}, // spring forward shortens one day
		{"daily UTC", cronSpec(t, "0 9 * * *", "UTC"), 24 * time.Hour},
		{"hourly New York", cronSpec(t, "0 * * * *", "America/New_York"), time.Hour},
		// 01:30 EST then 02:30 (skipped) at 03:00 EDT: half an hour apart on 2025-03-09.
		{"DST brings slots closer", cronSpec(t, "30 1,2 * * *", "America/New_York"), 30 * time.Minute},
		{"leap day only", cronSpec(t, "0 0 29 2 *", "UTC"), (365*4 + 1) * 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MinInterval(tt.spec, from); got != tt.want {
				t.Errorf("MinInterval(%s) = %v; want %v", tt.spec, got, tt.want)
			}
		})
	}
}

func TestSpecAccessors(t *testing.T) {
	anchor := instant(t, "2026-01-01T10:00:00+01:00")
	tests := []struct {
		spec     Spec
		kind     Kind
		instant  time.Time
		interval time.Duration
		expr     string
		zone     string
		str      string
	}{
		{At(anchor), KindAt, anchor, 0, "", "UTC", "at 2026-01-01T09:00:00Z"},
		{everySpec(t, 90*time.Minute, "2026-01-01T10:00:00+01:00"), KindEvery, anchor, 90 * time.Minute, "", "UTC", "every 1h30m0s from 2026-01-01T09:00:00Z"},
		{cronSpec(t, "0  9 * *   mon-fri", "Europe/Paris"), KindCron, time.Time{}, 0, "0 9 * * mon-fri", "Europe/Paris", "cron 0 9 * * mon-fri Europe/Paris"},
		{Spec{}, 0, time.Time{}, 0, "", "UTC", "none"},
	}
	for _, tt := range tests {
		s := tt.spec
		if s.Kind() != tt.kind || !s.Instant().Equal(tt.instant) || s.Interval() != tt.interval ||
			s.Expr() != tt.expr || s.Location().String() != tt.zone || s.String() != tt.str {
			t.Errorf("%s: got kind %v instant %s interval %v expr %q zone %s; want %v %s %v %q %s %q",
				s, s.Kind(), s.Instant(), s.Interval(), s.Expr(), s.Location(), tt.kind, tt.instant, tt.interval, tt.expr, tt.zone, tt.str)
		}
	}
}
