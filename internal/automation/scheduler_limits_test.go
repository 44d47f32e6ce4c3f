package automation

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/homard/homard/internal/task"
)

// TestSchedulerRunsPerDayCap: past automation.max_runs_per_day in the
// task's own zone's day, slots are recorded skipped with the reason; the
// next day the task runs again.
func TestSchedulerRunsPerDayCap(t *testing.T) {
	tests := []struct {
		name         string
		sched        task.Schedule
		start, until string
		wantRuns     []string
		wantSkipped  int
		firstSkipped string
	}{
		{
			name: "every, a UTC day", sched: everySched(time.Hour, mustUTC(t, "2025-06-01T00:00:00Z")),
			start: "2025-06-01T00:30:00Z", until: "2025-06-02T01:30:00Z",
			wantRuns:    []string{"2025-06-01T01:00:00Z", "2025-06-01T02:00:00Z", "2025-06-02T00:00:00Z", "2025-06-02T01:00:00Z"},
			wantSkipped: 21, // 03:00 to 23:00
			firstSkipped: "t@2025-06-01T03:00:00Z skipped: the task already ran 2 times today " +
				"(automation.max_runs_per_day = 2); it runs again tomorrow (UTC)",
		},
		{
			// 23:00 EDT on 31 May is another day than 00:00 and 01:00
			// EDT on 1 June, though all three are 1 June in UTC.
			name: "cron, a New York day", sched: cronIn("0 * * * *", "America/New_York"),
			start: "2025-06-01T02:30:00Z", until: "2025-06-01T06:30:00Z",
			wantRuns:    []string{"2025-06-01T03:00:00Z", "2025-06-01T04:00:00Z", "2025-06-01T05:00:00Z"},
			wantSkipped: 1,
			firstSkipped: "t@2025-06-01T06:00:00Z skipped: the task already ran 2 times today " +
				"(automation.max_runs_per_day = 2); it runs again tomorrow (America/New_York)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := dbPath(t)
			synctest.Test(t, func(t *testing.T) {
				sleepUntil(mustUTC(t, tc.start))
				s := openSchedStore(t, path)
				schedAddTask(t, s, schedTask{name: "t", sched: tc.sched})
				auto := testAuto()
				auto.MaxRunsPerDay = 2
				var rec schedRecorder
				_, stop := startSched(t, rec.deps(t, s, auto))
				sleepUntil(mustUTC(t, tc.until))
				stop()
				var want []string
				for _, w := range tc.wantRuns {
					want = append(want, "t@"+w)
				}
				if got := rec.slots(t, false); !slices.Equal(got, want) {
					t.Errorf("runs = %q; want %q", got, want)
				}
				var skipped []string
				for _, r := range ledgerRows(t, s) {
					if strings.Contains(r, " skipped: ") {
						skipped = append(skipped, r)
					}
				}
				if len(skipped) != tc.wantSkipped || skipped[0] != tc.firstSkipped {
					t.Errorf("%d skipped rows, first %q; want %d, first %q", len(skipped), skipped, tc.wantSkipped, tc.firstSkipped)
				}
			})
		})
	}
}

// TestSchedulerDailyTokenCap: once the day's runs used
// automation.daily_tokens, every task's slots are skipped with the reason
// until the next UTC day, and the owner is told once a day.
func TestSchedulerDailyTokenCap(t *testing.T) {
	path := dbPath(t)
	synctest.Test(t, func(t *testing.T) {
		sleepUntil(mustUTC(t, "2025-06-01T00:40:00Z"))
		s := openSchedStore(t, path)
		schedAddTask(t, s, schedTask{name: "a", sched: everySched(time.Hour, mustUTC(t, "2025-06-01T00:00:00Z"))})
		schedAddTask(t, s, schedTask{name: "b", sched: everySched(time.Hour, mustUTC(t, "2025-06-01T00:30:00Z"))})
		auto := testAuto()
		auto.DailyTokens = 100
		rec := schedRecorder{tokens: 60} // two runs pass the limit
		_, stop := startSched(t, rec.deps(t, s, auto))
		sleepUntil(mustUTC(t, "2025-06-02T01:15:00Z"))
		stop()
		want := []string{"a@2025-06-01T01:00:00Z", "b@2025-06-01T01:30:00Z", "a@2025-06-02T00:00:00Z", "b@2025-06-02T00:30:00Z"}
		if got := rec.slots(t, false); !slices.Equal(got, want) {
			t.Errorf("runs = %q; want %q", got, want)
		}
		rows := ledgerRows(t, s)
		const reason = "a@2025-06-01T02:00:00Z skipped: daily token limit reached: 120 of automation.daily_tokens = 100 used today (UTC)"
		if !slices.Contains(rows, reason) {
			t.Errorf("ledger = %q; want a row %q", rows, reason)
		}
		if len(rec.notices) != 2 {
			t.Fatalf("notices = %q; want one on each UTC day", rec.notices)
		}
		for _, n := range rec.notices {
			if !strings.Contains(n, "automation.daily_tokens limit (100 model tokens)") {
				t.Errorf("notice %q does not name the limit", n)
			}
		}
	})
}

// TestSchedulerExpiryWarning: the owner is told once, WarnBefore ahead,
// that a task's approval ends, even across a restart; a task whose
// approval ends later is not warned.
func TestSchedulerExpiryWarning(t *testing.T) {
	path := dbPath(t)
	synctest.Test(t, func(t *testing.T) {
		t0 := mustUTC(t, "2025-06-01T00:00:00Z")
		sleepUntil(t0)
		s := openSchedStore(t, path)
		never := task.Schedule{Kind: task.KindAt, Expr: task.AtExpr(t0.Add(100 * 24 * time.Hour))}
		soon := schedAddTask(t, s, schedTask{name: "soon", sched: never, expires: 30 * time.Hour})
		schedAddTask(t, s, schedTask{name: "far", sched: never, expires: 10 * 24 * time.Hour})
		var rec schedRecorder
		_, stop := startSched(t, rec.deps(t, s, testAuto()))
		// A second scheduler on the database ticks at the same instants:
		// the owner is still told once.
		_, stop2 := startSched(t, rec.deps(t, openSchedStore(t, path), testAuto()))
		sleepUntil(t0.Add(6*time.Hour - time.Second))
		if n := rec.noticed(); len(n) != 0 {
			t.Errorf("notices before the warning time: %q", n)
		}
		sleepUntil(t0.Add(7 * time.Hour))
		stop()
		stop2()
		_, stop = startSched(t, rec.deps(t, s, testAuto()))
		sleepUntil(t0.Add(31 * time.Hour))
		stop()
		want := []string{"soon: Task soon's approval ends on Mon 2 Jun 2025 06:00 UTC; renew it with `homard task renew " + soon.ID + "`."}
		if !slices.Equal(rec.notices, want) {
			t.Errorf("notices = %q; want %q", rec.notices, want)
		}
	})
}
