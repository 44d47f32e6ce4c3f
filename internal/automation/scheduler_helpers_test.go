package automation

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/schedule"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/store/storetest"
	"github.com/homard/homard/internal/task"
)

// The scheduler's tests run in a synctest bubble: time.Now is a fake
// clock that jumps to the next timer once every goroutine is blocked, so
// a day of ticks takes milliseconds and every instant is exact. The store
// is a real SQLite file (opened inside the bubble; its pools' goroutines
// end when it is closed).

var schedKey = bytes.Repeat([]byte{7}, 32)

var newYork = func() *time.Location {
	loc, err := schedule.LoadZone("America/New_York")
	if err != nil {
		panic(err)
	}
	return loc
}()

// utc parses an RFC 3339 time or fails the test.
func mustUTC(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v.UTC()
}

// sleepUntil advances the fake clock to at and waits for every goroutine
// of the bubble to be blocked again (the ticks due by then are done).
func sleepUntil(at time.Time) {
	time.Sleep(time.Until(at))
	synctest.Wait()
}

func openSchedStore(t *testing.T, path string) *store.Store {
	t.Helper()
	s, err := store.OpenURL(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// schedTask describes a task for schedAddTask.
type schedTask struct {
	owner   string // "" means "owner"
	name    string
	sched   task.Schedule
	catchUp string // "" means skip
	expires time.Duration
}

func everySched(d time.Duration, anchor time.Time) task.Schedule {
	return task.Schedule{Kind: task.KindEvery, Expr: task.EveryExpr(d, anchor)}
}

func cronIn(expr, tz string) task.Schedule {
	return task.Schedule{Kind: task.KindCron, Expr: expr, TZ: tz}
}

// schedAddTask seals, inserts and approves a task at time.Now(), with its
// next run time the first slot after now, and returns its row.
func schedAddTask(t *testing.T, s *store.Store, st schedTask) store.Task {
	t.Helper()
	now := time.Now()
	if st.catchUp == "" {
		st.catchUp = task.CatchUpSkip
	}
	if st.expires == 0 {
		st.expires = 30 * 24 * time.Hour
	}
	if st.owner == "" {
		st.owner = "owner"
	}
	body := task.Body{
		ID: task.NewID(), Owner: st.owner, Name: st.name, Prompt: "say hello",
		Sched: st.sched, CatchUp: st.catchUp, Mode: policy.ModeSafe, Deliver: "web",
		Expires: now.Add(st.expires).Truncate(time.Second),
	}
	mac, err := task.Seal(schedKey, body)
	if err != nil {
		t.Fatal(err)
	}
	canon, err := body.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := body.Spec()
	if err != nil {
		t.Fatal(err)
	}
	next, _ := schedule.Next(spec, now)
	row := store.Task{ID: body.ID, Owner: body.Owner, Name: body.Name, Body: canon, NextRunAt: next, CreatedAt: now}
	err = s.Write(t.Context(), func(tx *store.Tx) error {
		if err := tx.InsertTask(row); err != nil {
			return err
		}
		return tx.ApproveTask(row.ID, canon, mac, now, body.Expires)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Task(t.Context(), body.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// testAuto is [automation] with its defaults.
func testAuto() config.Automation {
	return config.Automation{
		MaxRunsPerDay: config.DefaultAutomationMaxRunsPerDay, DailyTokens: config.DefaultAutomationDailyTokens,
		CatchUpWindow: config.Duration(config.DefaultAutomationCatchUpWindow), WarnBefore: config.Duration(config.DefaultAutomationWarnBefore),
	}
}

// schedRun is one call of the fake Run.
type schedRun struct {
	task string
	slot time.Time
	at   time.Time // the clock when Run was called
}

// schedRecorder is the fake of the lead's run and notices: Run records
// the call, starts and finishes the run (succeeded, tokens each), waiting
// first on block[task id] if set; Notify and Refuse record their calls.
type schedRecorder struct {
	tokens int64

	mu       sync.Mutex
	runs     []schedRun
	block    map[string]chan struct{}
	notices  []string
	refusals []string
}

func (r *schedRecorder) deps(t testing.TB, s *store.Store, auto config.Automation) schedulerDeps {
	return schedulerDeps{
		Store: s, Owner: "owner", Auto: auto,
		Run: func(ctx context.Context, tk store.Task, id int64, slot time.Time) {
			r.mu.Lock()
			r.runs = append(r.runs, schedRun{task: tk.Name, slot: slot, at: time.Now()})
			wait := r.block[tk.ID]
			r.mu.Unlock()
			bg := context.WithoutCancel(ctx)
			if err := s.Write(bg, func(tx *store.Tx) error { return tx.StartRun(id) }); err != nil {
				t.Errorf("StartRun(%d): %v", id, err)
			}
			if wait != nil {
				select {
				case <-wait:
				case <-ctx.Done():
				}
			}
			end := store.TaskRunEnd{Status: store.TaskRunSucceeded, Summary: "done", Tokens: r.tokens, EndedAt: time.Now()}
			if err := s.Write(bg, func(tx *store.Tx) error { return tx.FinishRun(id, end) }); err != nil {
				t.Errorf("FinishRun(%d): %v", id, err)
			}
		},
		Notify: func(_ context.Context, tk store.Task, _ task.Body, text string) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.notices = append(r.notices, tk.Name+": "+text)
		},
		Refuse: func(ctx context.Context, tk store.Task, why error) {
			r.mu.Lock()
			r.refusals = append(r.refusals, tk.Name+": "+why.Error())
			r.mu.Unlock()
			// As the lead's code does: a refused task has no next run.
			if err := s.Write(ctx, func(tx *store.Tx) error { return tx.SetNextRun(tk.ID, time.Time{}) }); err != nil {
				t.Errorf("SetNextRun(%s): %v", tk.ID, err)
			}
		},
	}
}

// slots returns the recorded runs as "name@slot" in call order, and fails
// the test for a run that did not start at its slot's instant unless late.
func (r *schedRecorder) slots(t *testing.T, late bool) []string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, x := range r.runs {
		if !late && !x.at.Equal(x.slot) {
			t.Errorf("%s: slot %s ran at %s; want on time", x.task, x.slot.UTC().Format(time.RFC3339), x.at.UTC().Format(time.RFC3339))
		}
		out = append(out, x.task+"@"+x.slot.UTC().Format(time.RFC3339))
	}
	return out
}

// startSched runs a scheduler on s until the returned stop is called;
// stop waits for Run to return.
func startSched(t *testing.T, d schedulerDeps) (*sqliteScheduler, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sc := newScheduler(d)
	done := make(chan error, 1)
	go func() { done <- sc.Run(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	t.Cleanup(stop)
	return sc, stop
}

// ledgerRows returns every run of every task as
// "name@slot status: error", ordered by slot then name.
func ledgerRows(t *testing.T, s *store.Store) []string {
	t.Helper()
	tasks, err := s.Tasks(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		slot time.Time
		text string
	}
	var rows []row
	for _, tk := range tasks {
		runs, err := s.RecentRuns(t.Context(), tk.ID, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			text := fmt.Sprintf("%s@%s %s", tk.Name, r.SlotAt.UTC().Format(time.RFC3339), r.Status)
			if r.Error != "" {
				text += ": " + r.Error
			}
			rows = append(rows, row{r.SlotAt, text})
		}
	}
	slices.SortFunc(rows, func(a, b row) int {
		if c := a.slot.Compare(b.slot); c != 0 {
			return c
		}
		return strings.Compare(a.text, b.text)
	})
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.text
	}
	return out
}

// dumpTables returns every row of the scheduler's tables, read with
// plain SQL behind the store's back.
func dumpTables(t *testing.T, path string) string {
	t.Helper()
	db := storetest.Raw(t, path)
	defer db.Close()
	var b strings.Builder
	for _, q := range []string{
		`SELECT id, body, mac, status, coalesce(next_run_at, -1), coalesce(warned_at, -1) FROM tasks ORDER BY id`,
		`SELECT id, task_id, slot_key, status, error FROM task_runs ORDER BY id`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, vals...)
		}
		rows.Close()
	}
	return b.String()
}

// dbPath returns where a test's store lives, on either engine
// (storetest.Where), for openSchedStore to open as often as it likes.
func dbPath(t *testing.T) string { return storetest.Where(t) }

// noticed returns the notices so far; the scheduler may still be running.
func (r *schedRecorder) noticed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.notices)
}
