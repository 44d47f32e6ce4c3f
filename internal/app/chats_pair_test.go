package app

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
)

// TestChatsPairing: `/pair CODE` in a direct chat from the chat's own
// user marks the code used (never a model call); confirming makes the
// account an owner, whose next message runs a turn.
func TestChatsPairing(t *testing.T) {
	rig := newChatRig(t)
	ctx := context.Background()
	pc, err := rig.r.PairStart(ctx, chat.Telegram)
	if err != nil {
		t.Fatal(err)
	}
	if len(pc.Code) != pairCodeLen || !pc.ExpiresAt.After(time.Now().Add(9*time.Minute)) {
		t.Errorf("code %q expires %v; want %d characters, 10 minutes", pc.Code, pc.ExpiresAt, pairCodeLen)
	}
	// A sender who is not the chat cannot pair (it is a stranger).
	notChat := dm("1", "100", "/pair "+pc.Code)
	notChat.Sender.IsChat = false
	rig.push(notChat)
	waitFor(t, "ignored", func() bool { return inboxState(t, rig.r, "1") == inboxIgnored })

	rig.push(dm("2", "100", "/pair "+pc.Code))
	use, err := rig.r.PairWait(ctx, pc.ID, 5*time.Millisecond)
	if err != nil || use.UserID != "100" || use.Name != "Ann" || use.ChatID != "100" {
		t.Fatalf("PairWait = %+v, %v; want user 100 (Ann)", use, err)
	}
	if ok, _ := rig.r.Store.IsChatOwner(ctx, chat.Telegram, "100"); ok {
		t.Fatal("owner before the confirmation")
	}
	if err := rig.r.PairConfirm(ctx, pc.ID, true); err != nil {
		t.Fatal(err)
	}
	if ok, _ := rig.r.Store.IsChatOwner(ctx, chat.Telegram, "100"); !ok {
		t.Fatal("not an owner after the confirmation")
	}
	waitFor(t, "the paired notice", func() bool { return containsText(rig.fake.sentTexts("100"), pairDone) })
	// Single use: the same code again is not a pairing in progress.
	if err := rig.r.PairConfirm(ctx, pc.ID, true); err == nil {
		t.Error("PairConfirm twice succeeded")
	}
	rig.push(dm("3", "200", "/pair "+pc.Code))
	waitFor(t, "reused code ignored", func() bool { return inboxState(t, rig.r, "3") == inboxIgnored })
	if ok, _ := rig.r.Store.IsChatOwner(ctx, chat.Telegram, "200"); ok {
		t.Error("a used code made a second owner")
	}
	if n := len(rig.srv.Requests()); n != 0 {
		t.Errorf("model requests = %d; want none during pairing", n)
	}
}

// TestChatsPairingLimits: wrong codes spend a code after 5 tries, and a
// code expires after 10 minutes.
func TestChatsPairingLimits(t *testing.T) {
	t.Run("tries", func(t *testing.T) {
		rig := newChatRig(t)
		ctx := context.Background()
		pc, err := rig.r.PairStart(ctx, chat.Telegram)
		if err != nil {
			t.Fatal(err)
		}
		for i := range pairTries {
			rig.push(dm(string(rune('a'+i)), "300", "/pair WRONGCODE1"))
		}
		if _, err := rig.r.PairWait(ctx, pc.ID, 5*time.Millisecond); !errors.Is(err, ErrPairExhausted) {
			t.Fatalf("PairWait after %d wrong codes = %v; want ErrPairExhausted", pairTries, err)
		}
		rig.push(dm("z", "300", "/pair "+pc.Code)) // the right code, too late
		waitFor(t, "the late code ignored", func() bool { return inboxState(t, rig.r, "z") == inboxIgnored })
		if ok, _ := rig.r.Store.IsChatOwner(ctx, chat.Telegram, "300"); ok {
			t.Error("an exhausted code paired")
		}
		if n := countOf(auditRules(t, rig.r), "chat.pair-wrong"); n != pairTries {
			t.Errorf("%d chat.pair-wrong audit records; want %d", n, pairTries)
		}
	})
	t.Run("expiry", func(t *testing.T) {
		rig := newChatRig(t)
		rig.stop()
		ctx := context.Background()
		pc, err := rig.r.PairStart(ctx, chat.Telegram)
		if err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(pairTTL + time.Second)
		rig.r.now = func() time.Time { return later }
		if _, err := rig.r.PairWait(ctx, pc.ID, time.Millisecond); !errors.Is(err, ErrPairExpired) {
			t.Errorf("PairWait after 10 minutes = %v; want ErrPairExpired", err)
		}
		rig.start(testChatsOptions(rig.fake))
		rig.push(dm("1", "100", "/pair "+pc.Code))
		waitFor(t, "the expired code ignored", func() bool { return inboxState(t, rig.r, "1") == inboxIgnored })
		if ok, _ := rig.r.Store.IsChatOwner(ctx, chat.Telegram, "100"); ok {
			t.Error("an expired code paired")
		}
	})
	t.Run("platform", func(t *testing.T) {
		r := newTestRuntime(t, "smart")
		if _, err := r.PairStart(context.Background(), "slack"); !errors.Is(err, ErrPairPlatform) {
			t.Errorf("PairStart(slack) = %v; want ErrPairPlatform", err)
		}
	})
}
