package schedule

import (
	"fmt"
	"time"
)

// Policy is what to do about slots missed while homard was down.
type Policy string

const (
	// Skip runs a slot only on time (within Grace); missed slots are
	// skipped. The zero Policy means Skip.
	Skip Policy = "skip"
	// Once runs the latest missed slot, if it is within the catch-up
	// window; older ones are skipped.
	Once Policy = "once"
)

// Grace is how late a slot may still start on time: a tick that arrives a
// little after the slot (the timer fired late, the machine was busy) runs it.
const Grace = 60 * time.Second

// ParsePolicy reads a catch-up policy; "" means Skip.
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case "", Skip:
		return Skip, nil
	case Once:
		return Once, nil
	}
	return "", fmt.Errorf("catch-up policy %q: use skip (the default) or once", s)
}

// Reach is how late a slot may still start under catchUp: Grace, or with
// Once the window if it is longer.
func Reach(catchUp Policy, window time.Duration) time.Duration {
	if catchUp == Once && window > Grace {
		return window
	}
	return Grace
}

// Due returns the slot to run at now, given last, the latest slot already
// run (the zero time if none): the latest slot in (last, now] if it is at
// most Grace old, or with Once at most window old (a window under Grace
// counts as Grace). Any other policy value, the zero one included, is
// Skip. It never returns more than one slot; nil means nothing is due.
func Due(spec Spec, last, now time.Time, catchUp Policy, window time.Duration) []time.Time {
	lo := now.Add(-Reach(catchUp, window))
	if last.After(lo) {
		lo = last
	}
	// lo is exclusive: a slot exactly reach old is still due.
	slot, ok := latestIn(spec, lo.Add(-time.Nanosecond), now)
	if !ok || !slot.After(last) {
		return nil
	}
	return []time.Time{slot}
}

// latestIn returns the latest slot in (lo, hi]. It looks back from hi in
// doubling steps, so a dense schedule over a long window costs a few
// dozen Next calls rather than one per slot.
func latestIn(spec Spec, lo, hi time.Time) (time.Time, bool) {
	if !hi.After(lo) {
		return time.Time{}, false
	}
	for step := time.Minute; ; step *= 2 {
		from := hi.Add(-step)
		if !from.After(lo) {
			from = lo
		}
		first, ok := Next(spec, from)
		if ok && !first.After(hi) {
			// Some slot lies in (from, hi]; walk to the last one.
			for {
				n, ok := Next(spec, first)
				if !ok || n.After(hi) {
					return first, true
				}
				first = n
			}
		}
		if from.Equal(lo) {
			return time.Time{}, false
		}
	}
}
