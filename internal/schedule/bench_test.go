package schedule

import (
	"testing"
	"time"
)

func BenchmarkNextCron(b *testing.B) {
	benches := []struct{ name, expr, tz string }{
		{"hourly-UTC", "0 * * * *", "UTC"},
		{"weekdays-Paris", "0 9 * * mon-fri", "Europe/Paris"},
		{"minutely-NewYork", "* * * * *", "America/New_York"},
		{"leapday-UTC", "0 0 29 2 *", "UTC"},
	}
	for _, bb := range benches {
		b.Run(bb.name, func(b *testing.B) {
			spec := cronSpec(b, bb.expr, bb.tz)
			after := time.Date(2025, 11, 2, 5, 30, 0, 0, time.UTC)
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := Next(spec, after); !ok {
					b.Fatal("no slot")
				}
			}
		})
	}
}

func BenchmarkParseCron(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseCron("*/15 8-18 1,15 jan-jun mon-fri"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDue(b *testing.B) {
	spec := cronSpec(b, "*/5 * * * *", "Europe/Paris")
	now := time.Date(2026, 5, 1, 10, 30, 20, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		Due(spec, time.Time{}, now, Once, 24*time.Hour)
	}
}
