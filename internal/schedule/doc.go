// Package schedule computes when scheduled tasks run: it parses schedules
// (one instant, a fixed interval, or a 5-field cron expression in a time
// zone) and answers which slot comes next, which slot is due now, and how
// close two slots can be. It is pure: it never reads the clock, every
// function takes the time it reasons about.
//
// The time rules (issue 14):
//
//   - A cron slot is a nominal local wall time in the schedule's zone.
//   - In a repeated hour (fall back) a wall time runs once, at its first
//     occurrence: 01:30 daily in America/New_York on 2025-11-02 runs at
//     01:30 EDT (05:30 UTC), not again at 01:30 EST.
//   - A wall time skipped by a forward jump (spring forward) runs at the
//     instant of the jump: 02:30 daily in America/New_York on 2025-03-09
//     runs at 03:00 EDT (07:00 UTC).
//   - No two slots share an instant. Skipped wall times and the first real
//     one after the jump all map to the jump's instant and are one slot: an
//     hourly "0 * * * *" runs 01:00 EST, 03:00 EDT, 04:00 EDT on
//     2025-03-09 — the hour that does not exist has no run of its own —
//     and 00:00 EDT, 01:00 EDT, 02:00 EST on 2025-11-02 (the second 01:00
//     is not a new slot; the gap between 01:00 EDT and 02:00 EST is two
//     hours).
//   - Every-slots are anchor + k·interval counted in UTC, so a local clock
//     shifts by the change while the interval does not.
//   - A slot has a stable name (SlotKey): the nominal local time and zone
//     for cron ("2025-11-02T01:30 America/New_York"), the UTC instant for
//     every and at. The ledger's unique (task, slot) key is built on it so
//     a restart, two schedulers or a clock jump never run a slot twice.
//   - Catch-up (Due): Skip runs a slot only within Grace of its time; Once
//     runs the latest missed slot within a window; never more than one.
//
// Cron expressions are parsed here, not by robfig/cron, which skips and
// doubles slots around daylight-saving changes. Zone data is embedded
// (time/tzdata), so LoadZone works on a machine without zoneinfo.
package schedule

import (
	"fmt"
	"strings"
	"sync"
	"time"

	// The zone database, embedded in every binary that schedules tasks so
	// --tz Europe/Paris works on a machine without /usr/share/zoneinfo. A
	// blank import is the only way to link it (stdlib, no registration of
	// our own); the package that needs the data is the one that pulls it.
	_ "time/tzdata"
)

// LoadZone returns the IANA time zone name ("Europe/Paris", "UTC"). It
// refuses "" and "Local", whose meaning depends on the machine: a slot
// key must mean the same wall time wherever homard runs.
func LoadZone(name string) (*time.Location, error) {
	if name == "" || strings.EqualFold(name, "local") {
		return nil, fmt.Errorf("time zone %q: name an IANA zone such as Europe/Paris or UTC", name)
	}
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("time zone %q: not a known IANA zone name; use one such as Europe/Paris, America/New_York or UTC", name)
	}
	zones.Store(name, loc)
	return loc, nil
}

// zones caches loaded zones by name: time.LoadLocation reads and parses
// the zone's file (or the embedded copy) on every call, and the scheduler
// asks for a task's zone on every tick that finds it due. A handful of
// names, never evicted.
var zones sync.Map
