package automation

import (
	"context"
	"fmt"
	"time"

	"github.com/homard/homard/internal/schedule"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/task"
)

// decision is what a tick does about one due task: the plan a person
// reads, and what apply needs to carry it out.
type decision struct {
	plan     SlotPlan
	body     task.Body
	next     time.Time // the task's next run time after this tick; zero: no slot left
	refuse   error     // PlanRefuse: why
	tokenCap bool      // skipped by the daily token limit: the owner is told once a day
}

// decide says what a tick at now does about t, which is due (its next run
// time is at or before now). It reads the ledger, never writes it: Plan is
// decide without apply. The time rules are package schedule's: slots
// before t.NextRunAt were dealt with, so the last one done is just before it.
func (s *sqliteScheduler) decide(ctx context.Context, t store.Task, now time.Time) (decision, error) {
	d := decision{plan: SlotPlan{TaskID: t.ID, Name: t.Name}}
	body, err := task.Decode(t.Body)
	var spec schedule.Spec
	if err == nil {
		spec, err = body.Spec()
	}
	var policy schedule.Policy
	if err == nil {
		policy, err = schedule.ParsePolicy(body.CatchUp)
	}
	if err != nil {
		d.plan.Action, d.plan.Why, d.refuse = PlanRefuse, err.Error(), err
		return d, nil
	}
	d.body = body
	d.plan.Name = body.Name
	if n, ok := schedule.Next(spec, now); ok {
		d.next = n
	}
	last := t.NextRunAt.Add(-time.Nanosecond)
	due := schedule.Due(spec, last, now, policy, s.d.Auto.CatchUpWindow.Std())
	if len(due) == 0 {
		// Missed beyond the grace (skip) or the window (once): record the
		// latest missed slot, so the owner sees it did not run.
		missed := schedule.Due(spec, last, now, schedule.Once, now.Sub(last))
		if len(missed) == 0 {
			d.plan.Action, d.plan.Why = PlanNone, "no slot between its next run time and now"
			return d, nil
		}
		if err := d.setSlot(spec, missed[0]); err != nil {
			return d, err
		}
		d.plan.Action, d.plan.Why = PlanSkip, "missed: homard was not running at "+slotTime(spec, missed[0])
		return d, nil
	}
	slot := due[0]
	if err := d.setSlot(spec, slot); err != nil {
		return d, err
	}
	d.plan.Action = PlanSkip
	if s.busy(t.ID) {
		d.plan.Why = "the previous run was still running"
		return d, nil
	}
	n, err := s.d.Store.RunsPerDay(ctx, t.ID, now.In(spec.Location()))
	if err != nil {
		return d, err
	}
	if limit := s.d.Auto.MaxRunsPerDay; n >= limit {
		d.plan.Why = fmt.Sprintf("the task already ran %d times today (automation.max_runs_per_day = %d); it runs again tomorrow (%s)", n, limit, spec.Location())
		return d, nil
	}
	tokens, err := s.d.Store.TaskTokensToday(ctx, s.d.Owner, now.UTC())
	if err != nil {
		return d, err
	}
	if tokens >= s.d.Auto.DailyTokens {
		d.plan.Why = fmt.Sprintf("daily token limit reached: %d of automation.daily_tokens = %d used today (UTC)", tokens, s.d.Auto.DailyTokens)
		d.tokenCap = true
		return d, nil
	}
	d.plan.Action, d.plan.Why = PlanRun, "due at "+slotTime(spec, slot)
	if late := now.Sub(slot); late > schedule.Grace {
		d.plan.Why += fmt.Sprintf(", caught up %v late (catch-up once)", late.Round(time.Second))
	}
	return d, nil
}

func (d *decision) setSlot(spec schedule.Spec, slot time.Time) error {
	key, ok := schedule.SlotKey(spec, slot)
	if !ok {
		return fmt.Errorf("slot %s of %s has no key", slot.Format(time.RFC3339), spec)
	}
	d.plan.Slot, d.plan.SlotKey = slot, key
	return nil
}

// slotTime is a slot as its owner reads it, in the schedule's zone.
func slotTime(spec schedule.Spec, slot time.Time) string {
	return slot.In(spec.Location()).Format("15:04 MST on 2006-01-02")
}

// Plan is what a tick at now would do about each due task, and why; it
// writes nothing. Runs in progress are this process's only: a `homard
// task tick --dry-run` next to the daemon does not see the daemon's.
func (s *sqliteScheduler) Plan(ctx context.Context, now time.Time) ([]SlotPlan, error) {
	due, err := s.d.Store.DueTasks(ctx, s.d.Owner, now, planLimit)
	if err != nil {
		return nil, fmt.Errorf("plan scheduled tasks: %w", err)
	}
	plans := make([]SlotPlan, 0, len(due))
	for _, t := range due {
		d, err := s.decide(ctx, t, now)
		if err != nil {
			return nil, fmt.Errorf("plan scheduled task %s: %w", t.ID, err)
		}
		plans = append(plans, d.plan)
	}
	return plans, nil
}
