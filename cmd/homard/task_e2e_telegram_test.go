package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestTaskE2EScheduledToTelegram: the owner pairs their Telegram account,
// adds a task due a few seconds ahead delivered to Telegram and approves
// it; `homard serve`, started after, finds the slot with its own timer
// (no run-now, no wake from the CLI), runs it at its time with the
// scripted model, and the summary reaches the owner's chat through the
// outbox; `task runs` shows the run delivered to telegram, sent.
func TestTaskE2EScheduledToTelegram(t *testing.T) {
	rig := newTgRig(t)
	const summary = "Three new issues; none urgent."
	rig.model.on("TASK-DIGEST", rig.model.call("complete_task", `{"summary":"`+summary+`"}`))
	rig.start()
	rig.pairOwner(tgOwner)
	// Stopped while the task is added: a CLI approval cannot wake another
	// process's scheduler, so serve must find the slot by itself.
	rig.stop()

	at := time.Now().Add(taskSlotLead).UTC().Truncate(time.Second)
	var in taskJSON
	out := rig.run("", "task", "add", "digest", "--at", at.Format(time.RFC3339), "--tools", "", "--deliver", "telegram", "--json",
		"TASK-DIGEST: summarise the new issues")
	if err := json.Unmarshal([]byte(out), &in); err != nil || in.Status != "pending" {
		t.Fatalf("task add --json = %s (%v); want a pending task", out, err)
	}
	out = rig.run("", "task", "approve", in.ID, "--yes", "--json")
	if err := json.Unmarshal([]byte(out), &in); err != nil || in.Status != "active" || in.NextRunAt == nil || !in.NextRunAt.Equal(at) {
		t.Fatalf("task approve --json = %s (%v); want active, next run at %s (did adding and approving take over 7 s?)", out, err, at)
	}
	before := len(rig.model.Requests())

	rig.start()
	want := "Scheduled task digest:\n\n" + summary
	rig.waitUntil("the summary in the owner's chat", func() bool { return rig.countText(tgOwner.ID, summary) > 0 })
	if got := rig.texts(tgOwner.ID); rig.countText(tgOwner.ID, summary) != 1 || got[len(got)-1] != want {
		t.Errorf("messages to the owner = %q; want the summary once, as %q", got, want)
	}
	if sends := rig.sendsOf(tgOwner.ID, summary); len(sends) != 1 {
		t.Errorf("%d sendMessage calls to chat %d carry the summary; want 1", len(sends), tgOwner.ID)
	}
	if n := len(rig.model.Requests()) - before; n != 1 {
		t.Errorf("the run made %d model requests; want 1 (complete_task at once)", n)
	}

	var runs []taskRunJSON
	rig.waitUntil("the run's delivery to be recorded sent", func() bool {
		runs = decodeArray[taskRunJSON](t, "task runs", rig.run("", "task", "runs", in.ID, "--json"))
		return len(runs) == 1 && runs[0].DeliveryState == "sent"
	})
	r := runs[0]
	if r.Status != "succeeded" || r.Summary != summary || r.Delivery != "telegram" || !r.SlotAt.Equal(at) {
		t.Errorf("task runs --json = %+v; want the slot at %s succeeded, its summary delivered to telegram", r, at)
	}
	// At its time: never before the slot.
	if r.StartedAt == nil || r.StartedAt.Before(at) {
		t.Errorf("the run started at %v; want at or after its slot %s", r.StartedAt, at)
	}
	if out := rig.run("", "task", "runs", in.ID); !strings.Contains(out, "telegram sent") {
		t.Errorf("task runs = %q; want the delivery shown as telegram sent", out)
	}
	var completed int
	for _, rec := range rig.audit() {
		if rec.Tool == "task" && rec.Rule == "task.completed" && strings.Contains(rec.Args, in.ID) {
			completed++
		}
	}
	if completed != 2 {
		t.Errorf("%d task.completed audit records for %s; want 2 (complete_task called, the run ended)", completed, in.ID)
	}
	// Its one slot is spent: nothing is due, nothing left to run.
	if out := strings.TrimSpace(rig.run("", "task", "tick", "--dry-run", "--json")); out != "[]" {
		t.Errorf("task tick --dry-run --json after the run = %s; want []", out)
	}
	var after taskJSON
	if err := json.Unmarshal([]byte(rig.run("", "task", "show", in.ID, "--json")), &after); err != nil || after.NextRunAt != nil || after.Problem != "no slot left to run" {
		t.Errorf("task show after its one slot = next %v, problem %q (%v); want no next run, no slot left", after.NextRunAt, after.Problem, err)
	}
}
