package automation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/task"
)

// Scheduler runs scheduled tasks' slots. The built-in implementation
// (newScheduler) keeps its state in the ledger and runs each slot in its
// own process; on PostgreSQL, in a build with -tags postgres, each slot
// runs as a river job on whichever replica fetches it (river.go), behind
// the same methods (docs/ARCHITECTURE.md, "Scheduled tasks: the
// scheduler").
type Scheduler interface {
	// Run schedules until ctx ends, then waits for the runs it started
	// to return.
	Run(ctx context.Context) error
	// Wake tells the scheduler something changed (a task approved,
	// resumed or removed): it re-reads the ledger at once.
	Wake()
	// Plan is what a tick at now would do, and why, without writing
	// anything: `homard task tick --dry-run`.
	Plan(ctx context.Context, now time.Time) ([]SlotPlan, error)
}

// What a tick does about a due task (SlotPlan.Action).
const (
	PlanRun    = "run"    // the slot is claimed and run
	PlanSkip   = "skip"   // the slot is claimed and recorded skipped, with the reason
	PlanRefuse = "refuse" // the stored body does not decode or its schedule does not parse
	PlanNone   = "none"   // no slot to record; only the next run time moves
)

// SlotPlan is what a tick does, or would do, about one due task.
type SlotPlan struct {
	TaskID, Name string
	Slot         time.Time // zero for refuse and none
	SlotKey      string    // schedule.SlotKey of Slot
	Action       string    // PlanRun, PlanSkip, PlanRefuse or PlanNone
	Why          string    // for a person: why this action
}

// schedulerDeps is what the scheduler needs; the run itself, the refusal
// and the notices are the caller's (runTaskSlot and its helpers).
type schedulerDeps struct {
	Store *store.Store
	// Owner is whose tasks this scheduler runs: on a store several owners
	// share, each owner's homard runs its own.
	Owner string
	// Auto gives the limits: MaxRunsPerDay, DailyTokens, CatchUpWindow,
	// WarnBefore (config defaults applied).
	Auto config.Automation
	// Run runs a claimed slot to its end, calling StartRun and FinishRun
	// itself; it blocks until the run ended. Its ctx ends when the
	// scheduler stops (and, for a river job, when river's timeout for
	// the job passes: the run's budget and a margin).
	Run func(ctx context.Context, t store.Task, runID int64, slot time.Time)
	// Refuse is told about a task whose stored body does not decode or
	// whose schedule does not parse: it is never run. Refuse records it,
	// tells the owner and clears the task's next run time.
	Refuse func(ctx context.Context, t store.Task, why error)
	// Notify tells the task's owner text on the task's delivery target:
	// an approval about to end, the daily token limit reached.
	Notify func(ctx context.Context, t store.Task, body task.Body, text string)
	// Log gets the scheduler's own events; nil discards them.
	Log *slog.Logger
}

// Plan needs only Store and Auto: `homard task tick --dry-run` may build
// a scheduler without Run, Refuse and Notify, and never call Run.

// Timing of the loop.
const (
	// maxWait caps the timer: Go timers stop while the machine sleeps,
	// so a wall-clock jump is noticed within a minute.
	maxWait = time.Minute
	// stillDue is the wait when a task is still due after a tick (a write
	// failed, a refusal did not clear its next run): retry, do not spin.
	stillDue = time.Second
	// expiryEvery is how often the expiry warnings are looked for: a
	// scan of the approved tasks, cheaper done once a minute than on
	// every tick a Wake or a due slot causes.
	expiryEvery = time.Minute
	// dueBatch is how many due tasks one tick reads; a full batch is
	// followed at once by another tick.
	dueBatch = 100
	// planLimit is how many due tasks Plan lists.
	planLimit = 1000
)

// sqliteScheduler is the built-in Scheduler: one loop over the ledger's
// next-run index, each claimed slot run on its own goroutine (one at a
// time per task, different tasks in parallel). Run must not be called
// twice at once.
type sqliteScheduler struct {
	d    schedulerDeps
	log  *slog.Logger
	wake chan struct{} // capacity 1: a Wake while a tick runs is kept

	runs sync.WaitGroup // run goroutines started by Run

	mu      sync.Mutex      // guards running (river.go's hold and release too)
	running map[string]bool // task id → one of its runs is in progress here

	// Owned by Run's goroutine.
	lastExpiry time.Time         // when the expiry warnings were last looked for
	capNotice  map[string]string // owner → UTC day they were told of the token limit

	ticks atomic.Int64 // ticks so far; tests count the loop's wake-ups

	// river, when set by river's Run (river.go), takes the slots a tick
	// decides to run, instead of apply's claim and goroutine (its
	// enqueue). Always nil in a build without river.
	river *riverScheduler
}

var _ Scheduler = (*sqliteScheduler)(nil)

func newScheduler(d schedulerDeps) *sqliteScheduler {
	log := d.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &sqliteScheduler{
		d: d, log: log.With("component", "scheduler"),
		wake:      make(chan struct{}, 1),
		running:   make(map[string]bool),
		capNotice: make(map[string]string),
	}
}

// Wake makes a running loop tick now; it never blocks.
func (s *sqliteScheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run ends the runs a stop left open (marked interrupted, never re-run),
// then ticks: at the earliest next run time, at most a minute apart, and
// on Wake. It returns nil once ctx ended and every run it started
// returned; an error only if the ledger could not be read at start.
func (s *sqliteScheduler) Run(ctx context.Context) error {
	defer s.runs.Wait()
	var n int64
	open, err := s.d.Store.HasOpenRuns(ctx)
	if err == nil && open {
		err = s.d.Store.Write(ctx, func(tx *store.Tx) (err error) {
			n, err = tx.MarkInterrupted(time.Now())
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("start scheduler: %w", err)
	}
	if n > 0 {
		s.log.Info("scheduled runs left open by the last stop were marked interrupted; their slots are not run again", "runs", n)
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		wait, err := s.tick(ctx, time.Now())
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			s.log.Warn("scheduler tick failed; retrying", "err", err)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-s.wake:
		}
	}
}

// tick does what is due at now and returns how long to wait for the next
// tick. When nothing is due it costs one indexed query (NextRunAt), plus
// the expiry scan once a minute, and no model tokens.
func (s *sqliteScheduler) tick(ctx context.Context, now time.Time) (time.Duration, error) {
	s.ticks.Add(1)
	var errs []error
	if s.lastExpiry.IsZero() || now.Sub(s.lastExpiry) >= expiryEvery || now.Before(s.lastExpiry) {
		if err := s.warnExpiring(ctx, now); err != nil {
			errs = append(errs, err)
		} else {
			s.lastExpiry = now
		}
	}
	next, ok, err := s.d.Store.NextRunAt(ctx, s.d.Owner)
	if err != nil {
		return stillDue, errors.Join(append(errs, err)...)
	}
	if ok && !next.After(now) {
		more, err := s.runDue(ctx, now)
		if err != nil {
			errs = append(errs, err)
		}
		if more {
			return 0, errors.Join(errs...)
		}
		if next, ok, err = s.d.Store.NextRunAt(ctx, s.d.Owner); err != nil {
			return stillDue, errors.Join(append(errs, err)...)
		}
	}
	switch {
	case !ok:
		return maxWait, errors.Join(errs...)
	case !next.After(now):
		return stillDue, errors.Join(errs...)
	}
	return min(next.Sub(now), maxWait), errors.Join(errs...)
}

// runDue decides and applies one batch of due tasks. more is true when
// the batch was full and every task in it moved on: read the next at once.
func (s *sqliteScheduler) runDue(ctx context.Context, now time.Time) (more bool, err error) {
	due, err := s.d.Store.DueTasks(ctx, s.d.Owner, now, dueBatch)
	if err != nil {
		return false, err
	}
	var errs []error
	progress := true
	for _, t := range due {
		d, err := s.decide(ctx, t, now)
		if err == nil {
			err = s.apply(ctx, t, d, now)
		}
		if err != nil {
			// One task's failure must not hold the others back.
			errs = append(errs, fmt.Errorf("task %s: %w", t.ID, err))
		}
		if err != nil || d.plan.Action == PlanRefuse {
			progress = false
		}
	}
	return progress && len(due) == dueBatch, errors.Join(errs...)
}

// apply carries out a decision: the claim, the skipped row and the next
// run time in one transaction; a run on its own goroutine once claimed.
// With river set, a slot to run is river's (riverBuilt: a build without
// river has none, and this branch is compiled out of it).
func (s *sqliteScheduler) apply(ctx context.Context, t store.Task, d decision, now time.Time) error {
	p := d.plan
	if p.Action == PlanRefuse {
		s.log.Warn("scheduled task refused: its stored body does not decode", "task", t.ID, "err", d.refuse)
		s.d.Refuse(ctx, t, d.refuse)
		return nil
	}
	if riverBuilt && p.Action == PlanRun && s.river != nil {
		return s.river.enqueue(ctx, t, d)
	}
	var id int64
	var claimed bool
	err := s.d.Store.Write(ctx, func(tx *store.Tx) (err error) {
		if p.Action == PlanRun || p.Action == PlanSkip {
			// claimed false: the slot has a row already (another
			// scheduler, or this one before a restart); leave it.
			if id, claimed, err = tx.ClaimSlot(t.ID, p.SlotKey, p.Slot, now); err != nil {
				return err
			}
			if claimed && p.Action == PlanSkip {
				end := store.TaskRunEnd{Status: store.TaskRunSkipped, Error: p.Why, EndedAt: now}
				if err := tx.FinishRun(id, end); err != nil {
					return err
				}
			}
		}
		return tx.SetNextRun(t.ID, d.next)
	})
	if err != nil {
		return err
	}
	if claimed {
		s.log.Info("scheduled slot "+p.Action, "task", t.ID, "slot", p.SlotKey, "why", p.Why)
	}
	switch {
	case !claimed:
	case p.Action == PlanRun:
		s.start(ctx, t, id, p.Slot)
	case d.tokenCap:
		s.noticeTokenCap(ctx, t, d.body, now)
	}
	return nil
}

// start runs a claimed slot on its own goroutine, owned by Run.
func (s *sqliteScheduler) start(ctx context.Context, t store.Task, id int64, slot time.Time) {
	done, ok := s.claim(t.ID)
	if !ok {
		done = func() {} // a tick starts only a task not busy; the other run's mark ends with it
	}
	s.runs.Go(func() {
		defer done()
		s.d.Run(ctx, t, id, slot)
	})
}

// claim marks a run of the task in progress in this process (busy), so
// that a tick skips the task's slots that fall due meanwhile; ok is false
// while another is. done ends the mark.
func (s *sqliteScheduler) claim(taskID string) (done func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[taskID] {
		return nil, false
	}
	s.running[taskID] = true
	return func() {
		s.mu.Lock()
		delete(s.running, taskID)
		s.mu.Unlock()
	}, true
}

func (s *sqliteScheduler) busy(taskID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[taskID]
}

// noticeTokenCap tells the task's owner, once per UTC day and owner, that
// the daily token limit stopped every task. The memory of it is this
// process's: after a restart the owner may be told again that day.
func (s *sqliteScheduler) noticeTokenCap(ctx context.Context, t store.Task, body task.Body, now time.Time) {
	day := now.UTC().Format(time.DateOnly)
	if s.capNotice[t.Owner] == day {
		return
	}
	s.capNotice[t.Owner] = day
	s.d.Notify(ctx, t, body, fmt.Sprintf("Scheduled tasks are paused until midnight UTC: today's runs used the "+
		"automation.daily_tokens limit (%d model tokens). Raise it in config.toml to resume sooner.", s.d.Auto.DailyTokens))
}

// warnExpiring tells each owner, once per approval, that a task's
// approval ends within WarnBefore (or has ended).
func (s *sqliteScheduler) warnExpiring(ctx context.Context, now time.Time) error {
	tasks, err := s.d.Store.TasksExpiring(ctx, s.d.Owner, now.Add(s.d.Auto.WarnBefore.Std()))
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range tasks {
		body, err := task.Decode(t.Body)
		if err != nil {
			// Its run is refused when it is due; nothing to renew.
			continue
		}
		var first bool
		err = s.d.Store.Write(ctx, func(tx *store.Tx) (err error) {
			first, err = tx.MarkTaskWarned(t.ID, now)
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("task %s: %w", t.ID, err))
			continue
		}
		if first {
			s.d.Notify(ctx, t, body, expiryText(t, body, now))
		}
	}
	return errors.Join(errs...)
}

// expiryText is the expiry notice, in the task's zone.
func expiryText(t store.Task, body task.Body, now time.Time) string {
	loc := time.UTC
	if spec, err := body.Spec(); err == nil {
		loc = spec.Location()
	}
	when := body.Expires.In(loc).Format("Mon 2 Jan 2006 15:04 MST")
	if !now.Before(body.Expires) {
		return fmt.Sprintf("Task %s's approval ended on %s; it does not run until you renew it with `homard task renew %s`.", body.Name, when, t.ID)
	}
	return fmt.Sprintf("Task %s's approval ends on %s; renew it with `homard task renew %s`.", body.Name, when, t.ID)
}
