package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/telegram/telegramtest"
)

// lockDB takes the database's write lock from this process (BEGIN
// IMMEDIATE) until the returned func is called: homard cannot save
// anything meanwhile, as when its disk stalls. PostgreSQL has no lock
// that makes a writer fail rather than wait (and a write that waited
// would commit after the kill, once the lock is gone): there a trigger
// refuses every change to the inbox, the table the stalled save writes.
func (r *tgRig) lockDB() (release func()) {
	r.t.Helper()
	ctx := context.Background()
	if onPostgres() {
		db := rawStore(r.t, r.home, r.env)
		for _, q := range []string{
			`CREATE FUNCTION stalled() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the disk stalled (test)'; END $$`,
			`CREATE TRIGGER stalled BEFORE INSERT OR UPDATE OR DELETE ON chat_inbox FOR EACH STATEMENT EXECUTE FUNCTION stalled()`,
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				r.t.Fatalf("stall the inbox: %v", err)
			}
		}
		return func() {
			if _, err := db.ExecContext(ctx, `DROP FUNCTION stalled() CASCADE`); err != nil {
				r.t.Errorf("unstall the inbox: %v", err)
			}
			db.Close()
		}
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(r.home, "data", "homard.db")+"?_pragma=busy_timeout(30000)")
	if err != nil {
		r.t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		r.t.Fatalf("take the write lock: %v", err)
	}
	return func() {
		conn.ExecContext(ctx, "ROLLBACK")
		conn.Close()
		db.Close()
	}
}

// sendsOf are the sendMessage calls (failed ones too) to chat whose text
// contains s.
func (r *tgRig) sendsOf(chat int64, s string) []telegramtest.Call {
	var out []telegramtest.Call
	for _, c := range r.tg.Calls("sendMessage") {
		var p struct {
			ChatID int64  `json:"chat_id"`
			Text   string `json:"text"`
		}
		if json.Unmarshal(c.Body, &p) == nil && p.ChatID == chat && strings.Contains(p.Text, s) {
			out = append(out, c)
		}
	}
	return out
}

// outboxState is the state of the outbox part whose text is text.
func (r *tgRig) outboxState(text string) string {
	r.t.Helper()
	db := r.db()
	defer db.Close()
	var state string
	if err := db.QueryRow(`SELECT state FROM chat_outbox WHERE text = ?`, text).Scan(&state); err != nil {
		r.t.Fatalf("read the outbox part %q: %v", text, err)
	}
	return state
}

// polledAfter counts getUpdates calls after the first n whose offset does
// not confirm update u (it is asked for again).
func (r *tgRig) polledAfter(n int, u int64) int {
	calls := r.tg.Calls("getUpdates")
	count := 0
	for _, c := range calls[min(n, len(calls)):] {
		var p struct{ Offset int64 }
		if json.Unmarshal(c.Body, &p) == nil && p.Offset <= u {
			count++
		}
	}
	return count
}

// TestTelegramDeliveredOnce: an edited message is ignored; an update
// Telegram delivers again after a restart is handled once; a crash
// between receiving an update and saving it, and one between saving the
// reply and sending it, lose nothing and duplicate nothing; a crash after
// Telegram took a part shows it at most twice; a 429 with retry_after is
// honoured.
func TestTelegramDeliveredOnce(t *testing.T) {
	rig := newTgRig(t)
	rig.start()
	rig.pairOwner(tgOwner)
	owner := func(text string) telegramtest.Sent {
		return rig.tg.Say(telegramtest.Message{From: tgOwner, Text: text})
	}
	replied := func(text string) {
		t.Helper()
		rig.waitUntil("the reply to "+text, func() bool { return rig.countText(tgOwner.ID, "echo: "+text) > 0 })
		if n := rig.countText(tgOwner.ID, "echo: "+text); n != 1 {
			t.Errorf("%q was answered %d times; want once", text, n)
		}
	}

	t.Run("edit ignored", func(t *testing.T) {
		said := owner("original words")
		replied("original words")
		edit := rig.tg.EditMessage(tgOwner.ID, said.MessageID, "EDITED words")
		if state := rig.settled(edit); state != "ignored" {
			t.Errorf("the edit is %s; want ignored", state)
		}
		if n := len(rig.model.RequestsWith("EDITED words")); n != 0 {
			t.Errorf("%d model requests hold the edited text; want 0", n)
		}
	})

	t.Run("redelivered after a restart", func(t *testing.T) {
		said := owner("ping one")
		replied("ping one")
		// The kill is about the update being delivered again, not about a
		// crash between sending the reply and recording it (a window
		// docs/CHANNELS.md owns up to): wait for the record first.
		rig.waitUntil("the reply to be recorded as sent", func() bool { return rig.outboxState("echo: ping one") == "sent" })
		rig.kill()
		// Telegram gives the update again (the offset that confirmed it
		// may not have reached it before the crash).
		if !rig.tg.Redeliver(said.UpdateID) {
			t.Fatal("the fake does not know the update")
		}
		rig.start()
		rig.waitUntil("the redelivered update to be taken", func() bool {
			return !slices.Contains(rig.tg.Pending(), said.UpdateID)
		})
		owner("ping two")
		replied("ping two")
		if n := rig.countText(tgOwner.ID, "echo: ping one"); n != 1 {
			t.Errorf("the redelivered update was answered %d times; want once", n)
		}
	})

	t.Run("crash between receiving and saving", func(t *testing.T) {
		release := rig.lockDB()
		n := len(rig.tg.Calls("getUpdates"))
		said := owner("after the crash A")
		// Two polls that do not confirm it: serve got it, could not save
		// it, and asked again.
		rig.waitUntil("serve to fail to save the update", func() bool { return rig.polledAfter(n, said.UpdateID) >= 2 })
		rig.kill()
		release()
		if state := rig.inboxState(said.UpdateID); state != "" {
			t.Fatalf("the update was saved (%s) while the database was locked", state)
		}
		if !slices.Contains(rig.tg.Pending(), said.UpdateID) {
			t.Fatal("the fake forgot the update: serve confirmed it without saving it")
		}
		rig.start()
		if state := rig.settled(said.UpdateID); state != "handled" {
			t.Errorf("after the restart the update is %s; want handled", state)
		}
		replied("after the crash A")
	})

	t.Run("crash between saving and sending", func(t *testing.T) {
		rig.tg.Fail("sendMessage", telegramtest.Failure{Code: 502, Description: "Bad Gateway"}, telegramtest.Failure{Code: 502, Description: "Bad Gateway"})
		said := owner("after the crash B")
		rig.waitUntil("the reply's first (failed) send", func() bool { return len(rig.sendsOf(tgOwner.ID, "echo: after the crash B")) >= 1 })
		rig.kill()
		if state := rig.outboxState("echo: after the crash B"); state == "sent" {
			t.Fatalf("the reply is %s before the restart; want it not sent (the fake refused it)", state)
		}
		if state := rig.inboxState(said.UpdateID); state != "handled" {
			t.Fatalf("the delivery is %s; want handled (its reply saved)", state)
		}
		rig.start()
		// Telegram has no duplicate-send guard; here every earlier send
		// failed, so exactly one copy may arrive.
		replied("after the crash B")
		if state := rig.outboxState("echo: after the crash B"); state != "sent" {
			t.Errorf("the reply's outbox part is %s; want sent", state)
		}
	})

	t.Run("crash after Telegram took the part", func(t *testing.T) {
		// Telegram sends the part but its answer is lost (then one more
		// failure, so no retry can succeed before the kill); serve dies;
		// the restart sends it again. Telegram has no duplicate-send
		// guard: docs/CHANNELS.md promises at most one extra copy.
		rig.tg.Fail("sendMessage", telegramtest.Failure{Code: 502, Description: "Bad Gateway", Accepted: true}, telegramtest.Failure{Code: 502, Description: "Bad Gateway"})
		owner("after the crash C")
		rig.waitUntil("the part to reach Telegram", func() bool { return rig.countText(tgOwner.ID, "echo: after the crash C") == 1 })
		rig.kill()
		rig.start()
		rig.waitUntil("the part to be recorded sent", func() bool { return rig.outboxState("echo: after the crash C") == "sent" })
		if n := rig.countText(tgOwner.ID, "echo: after the crash C"); n != 2 {
			t.Errorf("the part arrived %d times; want 2 (the lost answer's copy and one resend, never more)", n)
		}
	})

	t.Run("429 retry_after honoured", func(t *testing.T) {
		const wait = 4 // longer than the first backoff (at most 3s) would be
		rig.tg.Fail("sendMessage", telegramtest.Failure{Code: 429, Description: fmt.Sprintf("Too Many Requests: retry after %d", wait), RetryAfter: wait})
		owner("rate me")
		replied("rate me")
		sends := rig.sendsOf(tgOwner.ID, "echo: rate me")
		if len(sends) != 2 {
			t.Fatalf("%d sends of the reply; want 2 (refused, then sent)", len(sends))
		}
		if gap := sends[1].At.Sub(sends[0].At); gap < wait*time.Second {
			t.Errorf("the second send came %s after the 429; want no earlier than retry_after (%ds)", gap, wait)
		}
	})
}
