package schedule

import (
	"math"
	"time"
)

// searchYears bounds the search for a cron expression's next date. The
// rarest date a valid expression can ask for (29 February on a given
// weekday) recurs within 40 years.
const searchYears = 50

// match returns the first civil minute at or after c that e names, or
// false if there is none before limitYear ends.
func (e *CronExpr) match(c civil, limitYear int) (civil, bool) {
	for c.y <= limitYear {
		if e.month&(1<<c.mo) == 0 {
			if m := nextBit(e.month, c.mo+1); m > 0 && m <= 12 {
				c = civil{y: c.y, mo: m, d: 1}
			} else {
				c = civil{y: c.y + 1, mo: nextBit(e.month, 1), d: 1}
			}
			continue
		}
		if c.d > daysIn(c.y, c.mo) {
			c = civil{y: c.y, mo: c.mo + 1, d: 1}
			if c.mo > 12 {
				c = civil{y: c.y + 1, mo: 1, d: 1}
			}
			continue
		}
		if !e.dayMatches(c.d, weekday(c.y, c.mo, c.d)) {
			c = civil{y: c.y, mo: c.mo, d: c.d + 1}
			continue
		}
		h := nextBit(e.hour, c.h)
		if h < 0 || h > 23 {
			c = civil{y: c.y, mo: c.mo, d: c.d + 1}
			continue
		}
		if h != c.h {
			c.h, c.mi = h, 0
		}
		mi := nextBit(e.minute, c.mi)
		if mi < 0 || mi > 59 {
			c.h, c.mi = c.h+1, 0
			continue
		}
		c.mi = mi
		return c, true
	}
	return civil{}, false
}

// nextCron returns the first cron slot strictly after Unix second a (a
// slot is a whole second, so "after a.5" is "after a"), with its nominal
// civil time: the latest civil time of the expression that maps to it.
func (s *Spec) nextCron(a int64) (int64, civil, bool) {
	// Civil times below the highest wall reading up to a were all reached
	// by a; start at that reading's minute.
	c := civilMinute(maxWallUpTo(a, s.loc))
	limit := c.y + searchYears
	for {
		var ok bool
		if c, ok = s.cron.match(c, limit); !ok {
			return 0, civil{}, false
		}
		u, jumped := resolve(c.wall(), s.loc)
		if u <= a {
			c = civilMinute(c.wall() + 60)
			continue
		}
		// A civil time skipped by a forward jump runs at the jump; later
		// skipped ones, and the first real one, share that instant and
		// are one slot, named by the latest.
		nominal := c
		for jumped {
			n, ok := s.cron.match(civilMinute(nominal.wall()+60), limit)
			if !ok {
				break
			}
			var v int64
			if v, jumped = resolve(n.wall(), s.loc); v != u {
				break
			}
			nominal = n
		}
		return u, nominal, true
	}
}

// Next returns the first slot of spec strictly after after, and false if
// there is none (an At slot already past, an expression with no date in
// the next 50 years, the zero Spec).
func Next(spec Spec, after time.Time) (time.Time, bool) {
	u, _, ok := next(spec, after)
	if !ok {
		return time.Time{}, false
	}
	if spec.kind == KindCron {
		return time.Unix(u, 0).In(spec.loc), true
	}
	if spec.kind == KindAt {
		return spec.at, true
	}
	return time.Unix(u, 0).UTC(), true
}

// next is Next in Unix seconds, with a cron slot's nominal civil time.
func next(spec Spec, after time.Time) (int64, civil, bool) {
	a := after.Unix()
	switch spec.kind {
	case KindAt:
		if spec.at.After(after) {
			return spec.at.Unix(), civil{}, true
		}
	case KindEvery:
		anchor, step := spec.at.Unix(), int64(spec.interval/time.Second)
		if a < anchor {
			return anchor, civil{}, true
		}
		k := (a-anchor)/step + 1
		if k > (math.MaxInt64-anchor)/step {
			return 0, civil{}, false
		}
		return anchor + k*step, civil{}, true
	case KindCron:
		return spec.nextCron(a)
	}
	return 0, civil{}, false
}

// SlotKey returns the stable name of a slot of spec, for a unique (task,
// slot) key in the ledger: for a cron schedule the nominal local time and
// the zone ("2025-11-02T01:30 America/New_York"; a slot standing for wall
// times skipped by a forward jump is named by the latest of them), for
// every and at the UTC instant ("2025-11-02T06:30:00Z"). It is false if t
// is not a slot of spec.
func SlotKey(spec Spec, t time.Time) (string, bool) {
	u, nominal, ok := next(spec, t.Add(-time.Nanosecond))
	if !ok {
		return "", false
	}
	switch spec.kind {
	case KindCron:
		if u != t.Unix() || t.Nanosecond() != 0 {
			return "", false
		}
		return nominal.String() + " " + spec.loc.String(), true
	case KindAt:
		if !spec.at.Equal(t) {
			return "", false
		}
		return spec.at.Format(time.RFC3339Nano), true
	default:
		if u != t.Unix() || t.Nanosecond() != 0 {
			return "", false
		}
		return time.Unix(u, 0).UTC().Format(time.RFC3339), true
	}
}

// Upcoming returns the next n slots of spec after after (fewer if the
// schedule ends); `task show` and `task list` show 3.
func Upcoming(spec Spec, after time.Time, n int) []time.Time {
	var out []time.Time
	for len(out) < n {
		t, ok := Next(spec, after)
		if !ok {
			break
		}
		out = append(out, t)
		after = t
	}
	return out
}

// MinInterval returns the smallest gap between consecutive slots of spec
// whose first slot falls within a year after from (at least the first
// pair is measured, however far apart): the interval of an
// Every schedule, the closest pair of a cron schedule including any pair a
// daylight-saving change brings closer ("* * * * *" gives one minute). It
// is zero for a schedule with fewer than two slots (At). The caller
// compares it with the minimum interval a task may have.
func MinInterval(spec Spec, from time.Time) time.Duration {
	switch spec.kind {
	case KindEvery:
		return spec.interval
	case KindCron:
	default:
		return 0
	}
	end := from.Unix() + 366*86400
	prev, _, ok := next(spec, from)
	if !ok {
		return 0
	}
	best := int64(-1)
	for {
		u, _, ok := spec.nextCron(prev)
		if !ok {
			break
		}
		if gap := u - prev; best < 0 || gap < best {
			best = gap
		}
		// Cron slots are whole minutes and zone changes since the 1970s
		// fall on whole minutes: nothing is closer than a minute.
		if best <= 60 || u > end {
			break
		}
		prev = u
	}
	if best < 0 {
		return 0
	}
	return time.Duration(best) * time.Second
}
