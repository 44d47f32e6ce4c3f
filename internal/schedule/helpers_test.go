package schedule

import (
	"testing"
	"time"
)

func unixDate(days int64) time.Time { return time.Unix(days*86400, 0).UTC() }

func zone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := LoadZone(name)
	if err != nil {
		t.Fatalf("LoadZone(%q): %v", name, err)
	}
	return loc
}

func cronSpec(t testing.TB, expr, tz string) Spec {
	t.Helper()
	s, err := Cron(expr, zone(t, tz))
	if err != nil {
		t.Fatalf("Cron(%q, %s): %v", expr, tz, err)
	}
	return s
}

func everySpec(t testing.TB, d time.Duration, anchor string) Spec {
	t.Helper()
	s, err := Every(d, instant(t, anchor))
	if err != nil {
		t.Fatalf("Every(%v): %v", d, err)
	}
	return s
}

// instant parses an RFC 3339 time ("2025-03-09T06:00:00Z", or with an offset).
func instant(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("bad test time %q: %v", s, err)
	}
	return v
}

// utcList formats slots as UTC RFC 3339 with the local wall time in
// brackets, so a failure shows both.
func utcList(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, v := range ts {
		out[i] = v.UTC().Format(time.RFC3339) + " [" + v.Format("15:04 MST") + "]"
	}
	return out
}
