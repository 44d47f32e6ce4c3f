package schedule

import (
	"fmt"
	"time"
)

// A civil time is a wall-clock minute with no zone: what a cron
// expression names. "Wall seconds" are the seconds of a civil time counted
// as if it were UTC; a zone maps them to instants (see resolve).
type civil struct {
	y, mo, d, h, mi int
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	m = int(mp + 3)
	if m > 12 {
		m -= 12
	}
	y = int(yoe + era*400)
	if m <= 2 {
		y++
	}
	return y, m, d
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y, m int) int {
	if m == 2 && !isLeap(y) {
		return 28
	}
	return daysInMonthMax[m]
}

// weekday of a date, Sunday = 0 (1970-01-01 was a Thursday).
func weekday(y, m, d int) int {
	w := (daysFromCivil(y, m, d) + 4) % 7
	if w < 0 {
		w += 7
	}
	return int(w)
}

func (c civil) wall() int64 {
	return daysFromCivil(c.y, c.mo, c.d)*86400 + int64(c.h)*3600 + int64(c.mi)*60
}

// civilMinute returns the civil minute containing wall seconds w.
func civilMinute(w int64) civil {
	days := w / 86400
	rem := w % 86400
	if rem < 0 {
		rem += 86400
		days--
	}
	y, m, d := civilFromDays(days)
	return civil{y: y, mo: m, d: d, h: int(rem / 3600), mi: int(rem % 3600 / 60)}
}

func (c civil) String() string {
	return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d", c.y, c.mo, c.d, c.h, c.mi)
}

// wallOf returns the wall seconds an instant shows in loc.
func wallOf(t time.Time) int64 {
	_, off := t.Zone()
	return t.Unix() + int64(off)
}

// maxOffset bounds any zone's distance from UTC (real ones stay within
// -12h..+14h; local mean times within ±16h); 26 hours is a safe margin.
const maxOffset = 26 * 3600

// resolve maps wall seconds w in loc to the first instant (Unix seconds) at
// which the zone's wall clock reads w or later. In a repeated hour (fall
// back) that is the first occurrence; for a wall time skipped by a forward
// jump (spring forward) it is the instant of the jump, and jumped is true.
func resolve(w int64, loc *time.Location) (unix int64, jumped bool) {
	// Start well before any instant that could show w; walk the zone's
	// periods forward until the wall clock reaches w.
	t := time.Unix(w-maxOffset, 0).In(loc)
	for range 64 { // a handful of periods at most; the bound only guards a broken zone
		_, off := t.Zone()
		_, end := t.ZoneBounds()
		u := w - int64(off)
		if u < t.Unix() {
			return t.Unix(), true // this period began past w: w was skipped
		}
		if end.IsZero() || u < end.Unix() {
			return u, false
		}
		t = end.In(loc)
	}
	return w, false
}

// maxWallUpTo returns the largest wall reading (Unix seconds of the wall
// clock, or the limit just before a backward jump) loc shows at or before
// instant a. Every civil time below it was reached at or before a.
func maxWallUpTo(a int64, loc *time.Location) int64 {
	t := time.Unix(a, 0).In(loc)
	m := wallOf(t)
	for range 64 {
		start, _ := t.ZoneBounds()
		if start.IsZero() || start.Unix() <= a-maxOffset {
			return m
		}
		prev := time.Unix(start.Unix()-1, 0).In(loc)
		if w := wallOf(prev) + 1; w > m {
			m = w // the clock read just under w before going back
		}
		t = prev
	}
	return m
}
