package task

import (
	"fmt"
	"strings"
	"time"

	"github.com/homard/homard/internal/schedule"
)

// EveryExpr is the sealed expression of an every-schedule: the interval
// and the anchor its slots count from, "1h0m0s from
// 2026-12-01T21:00:00Z". The anchor is in the body so the slots are the
// ones the owner approved, whatever the row's other columns say.
func EveryExpr(d time.Duration, anchor time.Time) string {
	return d.String() + " from " + anchor.UTC().Truncate(time.Second).Format(time.RFC3339)
}

// AtExpr is the sealed expression of an at-schedule: the instant in UTC.
func AtExpr(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Spec returns the body's schedule, parsed from its sealed expression.
func (b Body) Spec() (schedule.Spec, error) {
	s := b.Sched
	switch s.Kind {
	case KindAt:
		t, err := time.Parse(time.RFC3339, s.Expr)
		if err != nil {
			return schedule.Spec{}, fmt.Errorf("task %s: at %q: want an RFC 3339 time", b.ID, s.Expr)
		}
		return schedule.At(t), nil
	case KindEvery:
		ds, as, ok := strings.Cut(s.Expr, " from ")
		if !ok {
			return schedule.Spec{}, fmt.Errorf("task %s: every %q: want \"DURATION from RFC3339\"", b.ID, s.Expr)
		}
		d, err := time.ParseDuration(ds)
		if err != nil {
			return schedule.Spec{}, fmt.Errorf("task %s: every %q: %v", b.ID, s.Expr, err)
		}
		anchor, err := time.Parse(time.RFC3339, as)
		if err != nil {
			return schedule.Spec{}, fmt.Errorf("task %s: every %q: the anchor: %v", b.ID, s.Expr, err)
		}
		return schedule.Every(d, anchor)
	case KindCron:
		loc, err := schedule.LoadZone(s.TZ)
		if err != nil {
			return schedule.Spec{}, fmt.Errorf("task %s: %w", b.ID, err)
		}
		return schedule.Cron(s.Expr, loc)
	}
	return schedule.Spec{}, fmt.Errorf("task %s: schedule kind %q: want at, every or cron", b.ID, s.Kind)
}
