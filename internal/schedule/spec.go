package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kind is which of the three forms a Spec has.
type Kind uint8

// The three forms of a schedule. The zero Kind is an empty Spec, which
// has no slots.
const (
	KindAt    Kind = iota + 1 // one slot at an instant
	KindEvery                 // anchor + k·interval, counted in UTC
	KindCron                  // a cron expression read in a time zone
)

func (k Kind) String() string {
	switch k {
	case KindAt:
		return "at"
	case KindEvery:
		return "every"
	case KindCron:
		return "cron"
	}
	return "none"
}

// MinEvery is the shortest interval Every accepts.
const MinEvery = time.Minute

// Spec is a schedule: exactly one of At, Every or Cron. The zero Spec has
// no slots. A Spec is a value; copies are independent.
type Spec struct {
	kind     Kind
	at       time.Time      // KindAt: the slot; KindEvery: the anchor (UTC, whole seconds for every)
	interval time.Duration  // KindEvery
	cron     CronExpr       // KindCron
	loc      *time.Location // KindCron
}

// At is a schedule with one slot, at t (its monotonic clock reading, if
// any, is dropped).
func At(t time.Time) Spec {
	return Spec{kind: KindAt, at: t.Round(0).UTC()}
}

// Every is a schedule with slots at anchor, anchor+d, anchor+2d, … counted
// in UTC: a local clock shifts by the daylight-saving change, the interval
// does not. d must be at least MinEvery and a whole number of seconds; the
// anchor is truncated to the second. There are no slots before the anchor.
func Every(d time.Duration, anchor time.Time) (Spec, error) {
	if err := checkEvery(d); err != nil {
		return Spec{}, err
	}
	return Spec{kind: KindEvery, interval: d, at: anchor.Round(0).UTC().Truncate(time.Second)}, nil
}

func checkEvery(d time.Duration) error {
	if d < MinEvery {
		return fmt.Errorf("every %v: the shortest interval is %v; use a longer one such as 5m", d, MinEvery)
	}
	if d%time.Second != 0 {
		return fmt.Errorf("every %v: use a whole number of seconds", d)
	}
	return nil
}

// Cron is a schedule whose slots are the local wall times in loc that the
// 5-field expression expr names (see ParseCron and the package comment for
// the daylight-saving rules). loc is required; a named IANA zone (see
// LoadZone) keeps slot keys stable, time.Local does not.
func Cron(expr string, loc *time.Location) (Spec, error) {
	if loc == nil {
		return Spec{}, fmt.Errorf("cron %q: a time zone is required, e.g. --tz Europe/Paris", expr)
	}
	e, err := ParseCron(expr)
	if err != nil {
		return Spec{}, err
	}
	return Spec{kind: KindCron, cron: e, loc: loc}, nil
}

// Kind reports which form s has.
func (s Spec) Kind() Kind { return s.kind }

// Instant is the slot of an At schedule and the anchor of an Every
// schedule (UTC); zero for cron.
func (s Spec) Instant() time.Time {
	if s.kind == KindAt || s.kind == KindEvery {
		return s.at
	}
	return time.Time{}
}

// Interval is the interval of an Every schedule; zero for the others.
func (s Spec) Interval() time.Duration { return s.interval }

// Expr is the expression of a cron schedule, fields separated by one
// space; "" for the others.
func (s Spec) Expr() string {
	if s.kind == KindCron {
		return s.cron.String()
	}
	return ""
}

// Location is the zone of a cron schedule, UTC for the others.
func (s Spec) Location() *time.Location {
	if s.kind == KindCron {
		return s.loc
	}
	return time.UTC
}

// String describes s for a person: "at 2026-12-24T07:00:00Z",
// "every 1h30m0s from 2026-01-01T00:00:00Z", "cron 0 9 * * 1-5 Europe/Paris".
func (s Spec) String() string {
	switch s.kind {
	case KindAt:
		return "at " + s.at.Format(time.RFC3339Nano)
	case KindEvery:
		return "every " + s.interval.String() + " from " + s.at.Format(time.RFC3339)
	case KindCron:
		return "cron " + s.cron.String() + " " + s.loc.String()
	}
	return "none"
}

// ParseEvery parses an interval for Every: a Go duration ("90m", "1h30m",
// "45s" is refused as too short) optionally led by whole days ("1d",
// "7d", "1d12h"). It must be at least MinEvery and whole seconds.
func ParseEvery(text string) (time.Duration, error) {
	s := strings.TrimSpace(text)
	var d time.Duration
	if days, rest, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 3650 || days[0] == '+' {
			return 0, fmt.Errorf("parse every %q: want a duration such as 90m, 1h30m, 1d or 7d", text)
		}
		d = time.Duration(n) * 24 * time.Hour
		s = rest
	}
	if s != "" {
		r, err := time.ParseDuration(s)
		if err != nil || r < 0 {
			return 0, fmt.Errorf("parse every %q: want a duration such as 90m, 1h30m, 1d or 7d", text)
		}
		d += r
	}
	if err := checkEvery(d); err != nil {
		return 0, fmt.Errorf("parse every %q: %w", text, err)
	}
	return d, nil
}

// localLayouts are the zone-less forms ParseAt reads in its location.
var localLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02 15:04:05"}

// ParseAt parses a time for At: RFC 3339 with an offset
// ("2026-12-24T08:00:00+01:00") or a local "YYYY-MM-DDTHH:MM" (seconds
// optional, a space may replace the T) read in loc. A local time in a
// repeated hour means its first occurrence; one skipped by a forward jump
// means the instant of the jump, as for cron slots.
func ParseAt(text string, loc *time.Location) (time.Time, error) {
	s := strings.TrimSpace(text)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range localLayouts {
		t, err := time.ParseInLocation(layout, s, time.UTC)
		if err != nil {
			continue
		}
		if loc == nil {
			return time.Time{}, fmt.Errorf("parse at %q: a local time needs a time zone (--tz Europe/Paris) or an offset (2026-12-24T08:00:00+01:00)", text)
		}
		u, _ := resolve(t.Unix(), loc)
		return time.Unix(u, 0).In(loc), nil
	}
	return time.Time{}, fmt.Errorf("parse at %q: want RFC 3339 (2026-12-24T08:00:00+01:00) or a local time YYYY-MM-DDTHH:MM", text)
}
