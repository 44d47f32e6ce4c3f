//go:build postgres

package automation

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/homard/homard/internal/schedule"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/task"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

// The scheduler of a shared PostgreSQL store (issue 27): the built-in
// scheduler's ticks decide which slot is due, on every replica, and hand
// each slot to run to river as a job unique by task and slot key; river
// workers on whichever replica fetches the job (FOR UPDATE SKIP LOCKED)
// claim the slot in the ledger — ClaimSlot stays the once-only barrier —
// and run it through the same schedulerDeps.Run. A job whose replica died
// mid-run is rescued by river once the run's budget and riverTuning.slack
// have passed; the rescued attempt never runs the slot again: it records
// the run interrupted in the ledger, as a start does for a stopped
// process (task bodies have no retry setting). river's tables live in the
// store's schema, on its plain pool (store.PlainDB); river is linked only
// into a build with -tags postgres.

// riverBuilt: this build has river's scheduler.
const riverBuilt = true

// newRiverScheduler is river's scheduler over core's ledger and deps on a
// shared store (PostgreSQL's), or nil: SQLite keeps the built-in one.
func newRiverScheduler(core *sqliteScheduler, st *store.Store) Scheduler {
	if !st.Shared() {
		return nil
	}
	return newRiver(core, riverDefaults)
}

// riverTuning is river's timing; tests shorten it.
type riverTuning struct {
	// poll is how often a replica looks for queued slots: river's
	// database/sql driver has no LISTEN, so a slot starts within poll
	// of being queued.
	poll time.Duration
	// slack is added to a run's wall-clock budget to make river's
	// timeout for its job (delivery and the ledger's writes come after
	// the budget). A job still running after its timeout, and at least
	// automation.max_runtime + slack after it started
	// (RescueStuckJobsAfter), is taken for a dead replica's and rescued.
	slack time.Duration
	// recheck is how soon a rescued job whose run a live process still
	// holds looks at it again.
	recheck time.Duration
	// stopWait bounds how long Run waits for river to stop once ctx
	// ended: the runs it cancelled record themselves interrupted.
	stopWait time.Duration
	// testOnly is river's TestOnly: no staggered start of its services.
	testOnly bool
}

var riverDefaults = riverTuning{poll: 500 * time.Millisecond, slack: 5 * time.Minute, recheck: time.Minute, stopWait: 30 * time.Second}

// River's names for homard's jobs.
const (
	// riverQueue starts every queue's name; each owner's slots have a
	// queue of their own (queueOf).
	riverQueue = "homard_tasks"
	// riverWorkers is how many slots one replica runs at once (the
	// built-in scheduler has no limit; a run mostly waits on the model).
	riverWorkers = 100
	// riverAttempts: the first attempt runs the slot; the second only
	// exists for a job river rescued (its replica died), and records the
	// run interrupted instead of running it again.
	riverAttempts = 2
	// riverMigrateLock is the store's named lock held while river's
	// tables are migrated, so two replicas starting at once migrate once.
	riverMigrateLock = "river.migrate"
)

// slotArgs is one slot's job. Only the task and the slot key make it
// unique: a tick on every replica may queue the same slot, once.
type slotArgs struct {
	TaskID  string    `json:"task_id" river:"unique"`
	SlotKey string    `json:"slot_key" river:"unique"`
	Slot    time.Time `json:"slot"`
	// StartBy is the latest the run may start (the catch-up policy's
	// reach after the slot); a job fetched later records the slot missed.
	StartBy time.Time `json:"start_by"`
	// Budget is the run's wall-clock budget (runBudget); river's timeout
	// for the job is Budget + riverTuning.slack.
	Budget time.Duration `json:"budget"`
}

func (slotArgs) Kind() string { return "homard.task_slot" }

// InsertOpts: every state counts for uniqueness (a finished job too,
// until river cleans it up); the ledger's ClaimSlot holds after that.
func (slotArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: riverAttempts,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: rivertype.JobStates()}}
}

// queueOf is the river queue of owner's slots. Two owners' homards on
// one schema (issue 27 point 2) must each work their own owner's jobs:
// another's would run with this home's config, workspace and key. The
// owner is hashed: a queue's name allows few characters.
func queueOf(owner string) string { return riverQueue + "_" + ownerTag(owner) }

// chatQueueOf is the river queue of owner's chat deliveries (river_chat.go).
func chatQueueOf(owner string) string { return riverChatQueue + "_" + ownerTag(owner) }

// ownerTag names owner in a queue's name.
func ownerTag(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(sum[:8])
}

// riverScheduler is river's Scheduler. Run must not be called twice.
type riverScheduler struct {
	core      *sqliteScheduler
	tune      riverTuning
	queue     string // queueOf(core.d.Owner)
	chatQueue string // chatQueueOf(core.d.Owner)
	chat      chatState
	// client is set by Run before the ticks start, and read by enqueue
	// on the ticks' goroutine only (core.river is set with it).
	client *river.Client[*sql.Tx]
}

var _ Scheduler = (*riverScheduler)(nil)

func newRiver(core *sqliteScheduler, tune riverTuning) *riverScheduler {
	return &riverScheduler{core: core, tune: tune, queue: queueOf(core.d.Owner), chatQueue: chatQueueOf(core.d.Owner)}
}

func (r *riverScheduler) Wake() { r.core.Wake() }

func (r *riverScheduler) Plan(ctx context.Context, now time.Time) ([]SlotPlan, error) {
	return r.core.Plan(ctx, now)
}

// Run migrates river's tables, starts river's client and ticks until ctx
// ends; then it stops river, cancelling the runs in progress (each
// records itself interrupted, as with the built-in scheduler), waiting
// at most stopWait. A store without a plain pool gets the built-in loop.
func (r *riverScheduler) Run(ctx context.Context) error {
	st := r.core.d.Store
	db, ok, err := st.PlainDB(ctx)
	if err != nil {
		return fmt.Errorf("start scheduler: %w", err)
	}
	if !ok {
		r.core.log.Warn("this store has no pool for river; using the built-in scheduler")
		return r.core.Run(ctx)
	}
	if err := migrateRiver(ctx, st, db, r.core.log); err != nil {
		return fmt.Errorf("start scheduler: %w", err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &slotWorker{r: r})
	river.AddWorker(workers, &chatWorker{r: r})
	timeout := r.core.d.Auto.MaxRuntime.Std() + r.tune.slack
	client, err := river.NewClient(riverdatabasesql.New(db), &river.Config{
		Queues:            map[string]river.QueueConfig{r.queue: {MaxWorkers: riverWorkers}, r.chatQueue: {MaxWorkers: riverWorkers}},
		Workers:           workers,
		PollOnly:          true,
		FetchPollInterval: r.tune.poll,
		FetchCooldown:     min(r.tune.poll, river.FetchCooldownDefault),
		// A job's own timeout is its run's budget plus slack (Timeout);
		// this is the floor of how long a job runs before it may be
		// rescued, and must be at least the client's timeout.
		JobTimeout:           timeout,
		RescueStuckJobsAfter: timeout,
		MaxAttempts:          riverAttempts,
		Logger:               r.core.log,
		TestOnly:             r.tune.testOnly,
	})
	if err != nil {
		return fmt.Errorf("start scheduler: river: %w", err)
	}
	// river's own stop is Run's, after the ticks: ending ctx must not
	// start a stop that nothing waits for.
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start scheduler: river: %w", err)
	}
	r.client = client
	r.chat.jobs.Store(&chatJobs{client: client, db: db})
	r.core.river = r
	err = r.core.Run(ctx)
	r.chat.jobs.Store(nil) // the chat core's sweep sends itself from now on
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.tune.stopWait)
	defer cancel()
	if serr := client.StopAndCancel(stopCtx); serr != nil {
		r.core.log.Warn("river did not stop in time; a run still going is recorded interrupted by the next start", "err", serr)
	}
	return err
}

// enqueue takes slot d of task t, which a tick decided to run (apply):
// it queues the slot as a job, then moves the task's next run time on. A
// failed write leaves the task due, and the next tick queues the same
// slot again, which is kept once, as is one queued by another replica's
// tick.
func (r *riverScheduler) enqueue(ctx context.Context, t store.Task, d decision) error {
	policy, err := schedule.ParsePolicy(d.body.CatchUp) // decide parsed it
	if err != nil {
		return err
	}
	a := slotArgs{TaskID: t.ID, SlotKey: d.plan.SlotKey, Slot: d.plan.Slot,
		StartBy: d.plan.Slot.Add(schedule.Reach(policy, r.core.d.Auto.CatchUpWindow.Std())),
		Budget:  runBudget(&d.body, &r.core.d.Auto)}
	if _, err := r.client.Insert(ctx, a, &river.InsertOpts{Queue: r.queue}); err != nil {
		return fmt.Errorf("queue slot %s: %w", d.plan.SlotKey, err)
	}
	err = r.core.d.Store.Write(ctx, func(tx *store.Tx) error { return tx.SetNextRun(t.ID, d.next) })
	if err != nil {
		return err
	}
	r.core.log.Info("scheduled slot queued", "task", t.ID, "slot", d.plan.SlotKey, "why", d.plan.Why)
	return nil
}

// queuedSlots lists the slots of st queued as river jobs that have not
// ended (CarryQueuedSlots): none on SQLite, or before river's tables were
// made. It reads river's own table in the store's schema.
func queuedSlots(ctx context.Context, st *store.Store) ([]QueuedSlot, error) {
	db, ok, err := st.PlainDB(ctx)
	if err != nil || !ok {
		return nil, err
	}
	var made bool
	if err := db.QueryRowContext(ctx, `SELECT to_regclass('river_job') IS NOT NULL`).Scan(&made); err != nil || !made {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT args FROM river_job
		WHERE kind = $1 AND state IN ('available', 'pending', 'retryable', 'running', 'scheduled')`, slotArgs{}.Kind())
	if err != nil {
		return nil, fmt.Errorf("list queued slots: %w", err)
	}
	defer rows.Close()
	var out []QueuedSlot
	for rows.Next() {
		var b []byte
		var a slotArgs
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("list queued slots: %w", err)
		}
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, fmt.Errorf("list queued slots: %w", err)
		}
		out = append(out, QueuedSlot{TaskID: a.TaskID, SlotKey: a.SlotKey, Slot: a.Slot})
	}
	return out, rows.Err()
}

// hold marks a run of the task in progress, in this process as start
// does (so that a tick skips the task's slots that fall due meanwhile)
// and across replicas with the store's lock "task:ID" (which the database
// drops with a dead replica's session): ok is false, and nothing changes,
// while a run of the task goes on here or on another replica. release
// ends it.
func (r *riverScheduler) hold(taskID string) (release func(), ok bool, err error) {
	s := r.core
	done, ok := s.claim(taskID)
	if !ok {
		return nil, false, nil
	}
	unlock, ok, err := s.d.Store.TryLock("task:" + taskID)
	if err != nil || !ok {
		done()
		return nil, false, err
	}
	return func() { unlock(); done() }, true, nil
}

// migrateRiver brings river's tables in the store's schema up to date,
// under the store's named lock: replicas starting at once migrate one
// after the other, and the later ones find nothing to do.
func migrateRiver(ctx context.Context, st *store.Store, db *sql.DB, log *slog.Logger) error {
	for {
		unlock, ok, err := st.TryLock(riverMigrateLock)
		if err != nil {
			return fmt.Errorf("migrate river's tables: %w", err)
		}
		if ok {
			defer unlock()
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	m, err := rivermigrate.New(riverdatabasesql.New(db), &rivermigrate.Config{Logger: log})
	if err != nil {
		return fmt.Errorf("migrate river's tables: %w", err)
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("migrate river's tables: %w", err)
	}
	if len(res.Versions) > 0 {
		log.Info("river's tables migrated", "versions", len(res.Versions))
	}
	return nil
}

// slotWorker runs one slot's job on the replica that fetched it.
type slotWorker struct {
	river.WorkerDefaults[slotArgs]
	r *riverScheduler
}

// Timeout is the run's budget and slack: the run ends itself before it.
func (w *slotWorker) Timeout(job *river.Job[slotArgs]) time.Duration {
	return job.Args.Budget + w.r.tune.slack
}

// NextRetry: a second attempt (a rescued job, or a failed claim) is due at
// once; it runs nothing twice.
func (w *slotWorker) NextRetry(*river.Job[slotArgs]) time.Time { return time.Now() }

// Work claims the job's slot and runs it. A slot with a run already is
// settled, never run again. A task paused or removed since its slot was
// queued is not run (nor recorded, as a tick records nothing for it); a
// slot fetched after its StartBy, or while this replica still runs the
// task, is recorded skipped, as a tick would.
func (w *slotWorker) Work(ctx context.Context, job *river.Job[slotArgs]) error {
	core, a := w.r.core, job.Args
	st := core.d.Store
	switch run, err := st.SlotRun(ctx, a.TaskID, a.SlotKey); {
	case err == nil:
		return w.settle(ctx, a, run)
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	t, err := st.Task(ctx, a.TaskID)
	if errors.Is(err, store.ErrNotFound) || err == nil && t.Status != store.TaskActive {
		return river.JobCancel(fmt.Errorf("task %s is no longer active", a.TaskID))
	}
	if err != nil {
		return err
	}
	if t.Owner != core.d.Owner {
		// Another owner's slot in this owner's queue: never run here
		// (queueOf keeps them apart; this holds if a row was moved).
		return river.JobCancel(fmt.Errorf("task %s is another owner's", a.TaskID))
	}
	now := time.Now()
	skip := ""
	switch {
	case now.After(a.StartBy):
		skip = "missed: homard was not running at " + slotTimeOf(t, a.Slot)
	default:
		release, ok, err := w.r.hold(t.ID)
		if err != nil {
			return err
		}
		if !ok {
			skip = "the previous run was still running"
			break
		}
		defer release()
	}
	var id int64
	var claimed bool
	err = st.Write(ctx, func(tx *store.Tx) (err error) {
		if id, claimed, err = tx.ClaimSlot(a.TaskID, a.SlotKey, a.Slot, now); err != nil || !claimed || skip == "" {
			return err
		}
		return tx.FinishRun(id, store.TaskRunEnd{Status: store.TaskRunSkipped, Error: skip, EndedAt: now})
	})
	switch {
	case err != nil:
		return err
	case !claimed:
		// A tick recorded the slot in between.
		return nil
	case skip != "":
		core.log.Info("scheduled slot skip", "task", t.ID, "slot", a.SlotKey, "why", skip)
		return nil
	}
	core.log.Info("scheduled slot run", "task", t.ID, "slot", a.SlotKey, "attempt", job.Attempt)
	core.d.Run(ctx, t, id, a.Slot)
	return nil
}

// settle ends a job whose slot has a run already. Finished: nothing to
// do. Open: an earlier attempt of this job claimed it and river rescued
// the job, its replica presumably dead. MarkInterrupted ends the open
// runs whose run lock is free (their process is gone), this one with
// them; a run a live process still holds is looked at again after
// recheck, so the slot never runs twice and its record ends truthful.
func (w *slotWorker) settle(ctx context.Context, a slotArgs, run store.TaskRun) error {
	core := w.r.core
	if run.Status != store.TaskRunClaimed && run.Status != store.TaskRunRunning {
		return nil
	}
	err := core.d.Store.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.MarkInterrupted(time.Now())
		return err
	})
	if err == nil {
		run, err = core.d.Store.SlotRun(ctx, a.TaskID, a.SlotKey)
	}
	if err != nil {
		core.log.Warn("a rescued scheduled slot could not be settled; looking again later", "task", a.TaskID, "slot", a.SlotKey, "err", err)
		return river.JobSnooze(w.r.tune.recheck)
	}
	if run.Status == store.TaskRunClaimed || run.Status == store.TaskRunRunning {
		return river.JobSnooze(w.r.tune.recheck)
	}
	core.log.Info("a scheduled run whose replica stopped is recorded; its slot is not run again",
		"task", a.TaskID, "slot", a.SlotKey, "status", run.Status)
	return nil
}

// slotTimeOf is slot in the task's zone (slotTime), or in UTC when its
// body does not decode (its run is refused anyway).
func slotTimeOf(t store.Task, slot time.Time) string {
	if b, err := task.Decode(t.Body); err == nil {
		if spec, err := b.Spec(); err == nil {
			return slotTime(spec, slot)
		}
	}
	return slot.UTC().Format("15:04 MST on 2006-01-02")
}
