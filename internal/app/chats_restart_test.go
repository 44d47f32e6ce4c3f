package app

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/store"
)

// TestChatsCrashAfterReceive: a delivery saved by a process that died
// before its turn ran is handled once by the next one.
func TestChatsCrashAfterReceive(t *testing.T) {
	r1 := newTestRuntime(t, "smart")
	pairOwner(t, r1, "100")
	c1 := r1.Chats.NewRunner(testChatsOptions(newFake())) // never runs: the process dies
	if err := c1.Receive(context.Background(), dm("1", "100", "hello")); err != nil {
		t.Fatal(err)
	}

	r2 := reopen(t, r1)
	srv := runServer(t, r2, openAI(llmtest.Turn{Text: []string{"hi again"}}))
	rig := &chatRig{t: t, r: r2, srv: srv, fake: newFake()}
	rig.start(testChatsOptions(rig.fake))
	rig.push(dm("1", "100", "hello")) // the platform redelivers it, too
	waitFor(t, "the reply", func() bool { return len(rig.fake.sentTexts("100")) == 1 })
	waitFor(t, "handled", func() bool { return inboxState(t, r2, "1") == inboxHandled })
	rig.stop()
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("model requests = %d; want 1", n)
	}
	if got := rig.fake.sentTexts("100"); len(got) != 1 || got[0] != "hi again" {
		t.Errorf("sent = %q; want [hi again]", got)
	}
}

// TestChatsCrashMidTurn: a turn cut by the end of its process is not run
// again (its tools may have acted): it becomes interrupted and the owner
// is told.
func TestChatsCrashMidTurn(t *testing.T) {
	hang := llmtest.HangAfter(llmtest.OpenAIStream(llmtest.Turn{Text: []string{"thinking", " more"}}), 1)
	rig := newChatRig(t, hang, openAI(llmtest.Turn{Text: []string{"must not run"}}))
	pairOwner(t, rig.r, "100")
	rig.push(dm("1", "100", "do something long"))
	waitFor(t, "the turn to run", func() bool {
		return inboxState(t, rig.r, "1") == inboxRunning && len(rig.srv.Requests()) == 1
	})
	rig.stop()
	if st := inboxState(t, rig.r, "1"); st != inboxRunning {
		t.Fatalf("after the crash the row is %q; want running", st)
	}

	r2 := reopen(t, rig.r)
	srv2 := runServer(t, r2, openAI(llmtest.Turn{Text: []string{"must not run"}}))
	rig2 := &chatRig{t: t, r: r2, srv: srv2, fake: newFake()}
	rig2.start(testChatsOptions(rig2.fake))
	rig2.push(dm("1", "100", "do something long")) // redelivered
	waitFor(t, "the owner told", func() bool { return len(rig2.fake.sentTexts("100")) == 1 })
	rig2.stop()
	if got := rig2.fake.sentTexts("100"); got[0] != interruptedNotice {
		t.Errorf("sent = %q; want the interrupted notice", got)
	}
	if st := inboxState(t, r2, "1"); st != inboxInterrupted {
		t.Errorf("row = %q; want interrupted", st)
	}
	if n := len(srv2.Requests()); n != 0 {
		t.Errorf("model requests after restart = %d; want 0 (not re-run)", n)
	}
}

// TestChatsCrashBeforeSend: a part left sending by a crash is sent after
// the restart with the same key (the platform's duplicate guard).
func TestChatsCrashBeforeSend(t *testing.T) {
	r := newTestRuntime(t, "smart")
	var id int64
	err := r.Store.Write(context.Background(), func(tx *store.Tx) (err error) {
		if id, err = tx.InsertOutbox(store.OutboxRow{Platform: chat.Telegram, ChatID: "100", Text: "the reply", CreatedAt: time.Now()}); err != nil {
			return err
		}
		return tx.OutboxSending(id) // then the process died
	})
	if err != nil {
		t.Fatal(err)
	}
	rig := &chatRig{t: t, r: r, fake: newFake()}
	rig.start(testChatsOptions(rig.fake))
	waitFor(t, "the part sent", func() bool { return len(rig.fake.sent()) == 1 })
	rig.stop()
	got := rig.fake.sent()[0].Out
	if got.Key != strconv.FormatInt(id, 10) || got.Text != "the reply" {
		t.Errorf("sent %+v; want key %d and the text", got, id)
	}
	row, err := r.Store.Outbox(context.Background(), id)
	if err != nil || row.State != "sent" || row.MessageID != "m1" || row.Attempts != 2 {
		t.Errorf("outbox row = %+v, %v; want sent as m1 on attempt 2", row, err)
	}
}

// TestChatsRetry: a 429's retry_after is honoured (the next try of the
// same part, same key, comes no sooner); a part that keeps failing is
// given up after MaxAttempts, and the chat's next part goes out.
func TestChatsRetry(t *testing.T) {
	t.Run("retry after", func(t *testing.T) {
		rig := newChatRig(t, openAI(llmtest.Turn{Text: []string{"answer"}}))
		rig.stop()
		const after = 80 * time.Millisecond
		rig.fake.sendErr = func(n int, _ chat.Outbound) error {
			if n == 0 {
				return &chat.RetryError{After: after, Err: errors.New("429 too many requests")}
			}
			return nil
		}
		rig.start(testChatsOptions(rig.fake))
		pairOwner(t, rig.r, "100")
		rig.push(dm("1", "100", "hello"))
		waitFor(t, "the part sent", func() bool { return len(rig.fake.sent()) == 1 })
		rig.stop()
		calls, _, _, _, _ := rig.fake.snapshot()
		if len(calls) != 2 || calls[0].Out.Key != calls[1].Out.Key {
			t.Fatalf("send calls = %+v; want 2 of the same key", calls)
		}
		if gap := calls[1].At.Sub(calls[0].At); gap < after {
			t.Errorf("retried after %v; want at least the platform's %v", gap, after)
		}
	})
	t.Run("given up", func(t *testing.T) {
		r := newTestRuntime(t, "smart")
		var ids []int64
		err := r.Store.Write(context.Background(), func(tx *store.Tx) error {
			for _, text := range []string{"doomed", "next"} {
				id, err := tx.InsertOutbox(store.OutboxRow{Platform: chat.Telegram, ChatID: "100", Text: text, CreatedAt: time.Now()})
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		rig := &chatRig{t: t, r: r, fake: newFake()}
		rig.fake.sendErr = func(_ int, m chat.Outbound) error {
			if m.Text == "doomed" {
				return errors.New("400 bad request")
			}
			return nil
		}
		o := testChatsOptions(rig.fake)
		o.MaxAttempts = 3
		rig.start(o)
		waitFor(t, "the next part sent", func() bool { return len(rig.fake.sent()) == 1 })
		rig.stop()
		row, _ := r.Store.Outbox(context.Background(), ids[0])
		if row.State != "failed" || row.Attempts != 3 || row.Error == "" {
			t.Errorf("doomed row = %+v; want failed after 3 attempts with the error", row)
		}
		if got := rig.fake.sent()[0].Out.Text; got != "next" {
			t.Errorf("sent %q; want next", got)
		}
	})
}
