package store

import (
	"context"
	"testing"
	"time"
)

// TestTaskExpiryWarnedOncePerApproval: an approval ending before the
// horizon is listed until it is marked warned, marking it twice says so
// (two schedulers send one notice), and a renewal (a new approval) makes
// it due for a warning again.
func TestTaskExpiryWarnedOncePerApproval(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	addTask(t, s, "t1", t0)
	addTask(t, s, "t2", t0)
	approve(t, s, "t1") // expires t0+240h
	horizon := t0.Add(240 * time.Hour)
	if got, err := s.TasksExpiring(ctx, "owner", horizon.Add(-time.Second)); err != nil || len(got) != 0 {
		t.Fatalf("TasksExpiring before the expiry = %v, %v; want none", got, err)
	}
	got, err := s.TasksExpiring(ctx, "owner", horizon)
	if err != nil || len(got) != 1 || got[0].ID != "t1" {
		t.Fatalf("TasksExpiring = %v, %v; want t1 only (t2 is pending)", got, err)
	}
	for i, want := range []bool{true, false} {
		var first bool
		err := s.Write(ctx, func(tx *Tx) (err error) { first, err = tx.MarkTaskWarned("t1", t0); return err })
		if err != nil || first != want {
			t.Errorf("MarkTaskWarned #%d = %v, %v; want %v", i+1, first, err, want)
		}
	}
	if got, _ := s.TasksExpiring(ctx, "owner", horizon); len(got) != 0 {
		t.Errorf("TasksExpiring after the warning = %v; want none", got)
	}
	approve(t, s, "t1")
	if got, _ := s.TasksExpiring(ctx, "owner", horizon); len(got) != 1 {
		t.Errorf("TasksExpiring after a renewal = %v; want t1 again", got)
	}
}

// TestRunDeliveryFollowsTheOutbox: a run delivered to a chat reports its
// outbox row's state and error; one shown on the web says web.
func TestRunDeliveryFollowsTheOutbox(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	addTask(t, s, "t1", t0)
	var web, tg int64
	err := s.Write(ctx, func(tx *Tx) (err error) {
		if web, _, err = tx.ClaimSlot("t1", "a", t0, t0); err != nil {
			return err
		}
		if tg, _, err = tx.ClaimSlot("t1", "b", t0.Add(time.Hour), t0.Add(time.Hour)); err != nil {
			return err
		}
		ob, err := tx.InsertOutbox(OutboxRow{Platform: "telegram", ChatID: "42", Text: "summary", CreatedAt: t0})
		if err != nil {
			return err
		}
		if err := tx.SetRunDelivery(web, "web", 0); err != nil {
			return err
		}
		if err := tx.SetRunDelivery(tg, "telegram", ob); err != nil {
			return err
		}
		return tx.OutboxFailed(ob, "chat not found")
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.TaskRun(ctx, tg)
	if err != nil || r.Delivery != "telegram" || r.DeliveryState != "failed" || r.DeliveryError != "chat not found" {
		t.Errorf("telegram run = %+v, %v; want its outbox row's failure", r, err)
	}
	runs, err := s.RecentRuns(ctx, "t1", 5)
	if err != nil || len(runs) != 2 || runs[1].ID != web || runs[1].Delivery != "web" || runs[1].DeliveryState != "" {
		t.Errorf("RecentRuns = %+v, %v; want the web run last, delivered to web", runs, err)
	}
	if err := s.Write(ctx, func(tx *Tx) error { return tx.SetRunDelivery(999, "web", 0) }); err == nil {
		t.Error("SetRunDelivery of an unknown run: nil error")
	}
}
