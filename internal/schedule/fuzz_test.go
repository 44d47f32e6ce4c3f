package schedule

import (
	"slices"
	"testing"
	"time"
)

// fuzzZones have daylight-saving changes of every shape: an hour, half an
// hour (Lord Howe), two hours (Troll), 45-minute offsets (Chatham), a
// skipped calendar day (Apia, 2011-12-30), none (Shanghai, UTC).
var fuzzZones = []string{
	"UTC", "Europe/Paris", "America/New_York", "Asia/Shanghai", "Australia/Lord_Howe",
	"Antarctica/Troll", "Pacific/Chatham", "Pacific/Apia", "America/Santiago", "Asia/Tehran",
}

// matchesCivil is the oracle's reading of the expression: does it name c?
func (e *CronExpr) matchesCivil(c civil) bool {
	return e.month&(1<<c.mo) != 0 && e.dayMatches(c.d, weekday(c.y, c.mo, c.d)) &&
		e.hour&(1<<c.h) != 0 && e.minute&(1<<c.mi) != 0
}

// bruteSlots is an oracle built from the time rules alone: walking minute
// by minute over (start, end], an instant is a slot when the wall clock
// reaches, for the first time, a civil minute the expression names
// (either it reads that minute, or it jumps over it to here).
func bruteSlots(e *CronExpr, loc *time.Location, start, end int64) []int64 {
	var slots []int64
	highest := int64(-1 << 62)
	for t := start - 3*3600; t <= end; t += 60 {
		w := wallOf(time.Unix(t, 0).In(loc))
		if t > start && w > highest {
			for c := max(highest+60, w-3*86400); c <= w; c += 60 {
				if e.matchesCivil(civilMinute(c)) {
					slots = append(slots, t)
					break
				}
			}
		}
		highest = max(highest, w)
	}
	return slots
}

// FuzzNextCron checks Next against the brute-force oracle for random
// expressions and zones over two days around a daylight-saving change:
// the same slots, strictly increasing, each with its own SlotKey.
func FuzzNextCron(f *testing.F) {
	f.Add("0 * * * *", uint8(2), uint16(68), uint16(10))
	f.Add("30 2 * * *", uint8(2), uint16(300), uint16(20))
	f.Add("30 1 * * *", uint8(2), uint16(300), uint16(3))
	f.Add("* * * * *", uint8(1), uint16(90), uint16(1))
	f.Add("*/7 1-3 * * *", uint8(4), uint16(270), uint16(5))
	f.Add("0 9 * * *", uint8(7), uint16(4380), uint16(30)) // Apia's lost day
	f.Add("15,45 0-3 1,15 * mon", uint8(5), uint16(33), uint16(40))
	f.Add("0 0 * * *", uint8(6), uint16(100), uint16(47))
	f.Fuzz(func(t *testing.T, expr string, zi uint8, days uint16, back uint16) {
		spec, err := Cron(expr, zone(t, fuzzZones[int(zi)%len(fuzzZones)]))
		if err != nil {
			return
		}
		// Find the first zone change after a day in 2000-2044, and start
		// up to 48 hours before it (zones without changes: that day).
		t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(days)%16000).In(spec.loc)
		start := t0.Unix()
		if _, end := t0.ZoneBounds(); !end.IsZero() {
			start = end.Unix() - int64(back%2880)*60
		}
		end := start + 2*86400

		want := bruteSlots(&spec.cron, spec.loc, start, end)
		var got []int64
		keys := map[string]bool{}
		after := time.Unix(start, 0)
		for {
			s, ok := Next(spec, after)
			if !ok || s.Unix() > end {
				break
			}
			if !s.After(after) {
				t.Fatalf("Next(%s, %s) = %s; not after", spec, after, s)
			}
			key, ok := SlotKey(spec, s)
			if !ok || keys[key] {
				t.Fatalf("SlotKey(%s, %s) = %q, %v; want a new key", spec, s, key, ok)
			}
			keys[key] = true
			got = append(got, s.Unix())
			after = s
			if len(got) > len(want)+1 {
				break
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("cron %q in %s from %s: Next gives %v\nthe oracle %v", expr, spec.loc, time.Unix(start, 0).UTC(), fmtUnix(got, spec.loc), fmtUnix(want, spec.loc))
		}
	})
}

func fmtUnix(us []int64, loc *time.Location) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = time.Unix(u, 0).In(loc).Format("01-02 15:04 MST")
	}
	return out
}

// FuzzParseCron: no input panics, and an accepted expression reads the
// same from its String.
func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"* * * * *", "0 9 * * mon-fri", "*/15 0-6/3 1,15 jan,jul 0,7", "5/10 * * * *", "0 0 31 apr *", "1-2-3 * * * *"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		e, err := ParseCron(expr)
		if err != nil {
			return
		}
		again, err := ParseCron(e.String())
		if err != nil || again != e {
			t.Fatalf("ParseCron(%q) = %+v; from its String %q: %+v, %v", expr, e, e.String(), again, err)
		}
		if e.minute == 0 || e.hour == 0 || e.dom == 0 || e.month == 0 || e.dow == 0 {
			t.Fatalf("ParseCron(%q) accepted an empty field: %+v", expr, e)
		}
	})
}
