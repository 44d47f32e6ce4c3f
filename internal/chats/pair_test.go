package chats

import (
	"context"
	"errors"
	"fmt"
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
	pc, err := rig.s.PairStart(ctx, chat.Telegram)
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
	waitFor(t, "ignored", func() bool { return rig.inboxState("1") == inboxIgnored })

	rig.push(dm("2", "100", "/pair "+pc.Code))
	use, err := rig.s.PairWait(ctx, pc.ID, 5*time.Millisecond)
	if err != nil || use.UserID != "100" || use.Name != "Ann" || use.ChatID != "100" {
		t.Fatalf("PairWait = %+v, %v; want user 100 (Ann)", use, err)
	}
	if ok, _ := rig.st.IsChatOwner(ctx, chat.Telegram, "100"); ok {
		t.Fatal("owner before the confirmation")
	}
	if err := rig.s.PairConfirm(ctx, pc.ID, true); err != nil {
		t.Fatal(err)
	}
	if ok, _ := rig.st.IsChatOwner(ctx, chat.Telegram, "100"); !ok {
		t.Fatal("not an owner after the confirmation")
	}
	waitFor(t, "the paired notice", func() bool { return containsText(rig.fake.sentTexts("100"), pairDone) })
	// Single use: the same code again is not a pairing in progress.
	if err := rig.s.PairConfirm(ctx, pc.ID, true); err == nil {
		t.Error("PairConfirm twice succeeded")
	}
	rig.push(dm("3", "200", "/pair "+pc.Code))
	waitFor(t, "reused code ignored", func() bool { return rig.inboxState("3") == inboxIgnored })
	if ok, _ := rig.st.IsChatOwner(ctx, chat.Telegram, "200"); ok {
		t.Error("a used code made a second owner")
	}
	if n := rig.turns.count(); n != 0 {
		t.Errorf("model requests = %d; want none during pairing", n)
	}
}

// TestChatsPairingLimits: a code expires after 10 minutes, and only
// known platforms pair. (Wrong codes: TestChatsPairingWrongCodes.)
func TestChatsPairingLimits(t *testing.T) {
	t.Run("expiry", func(t *testing.T) {
		rig := newChatRig(t)
		rig.stop()
		ctx := context.Background()
		pc, err := rig.s.PairStart(ctx, chat.Telegram)
		if err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(pairTTL + time.Second)
		rig.setNow(later)
		if _, err := rig.s.PairWait(ctx, pc.ID, time.Millisecond); !errors.Is(err, ErrPairExpired) {
			t.Errorf("PairWait after 10 minutes = %v; want ErrPairExpired", err)
		}
		rig.start()
		rig.push(dm("1", "100", "/pair "+pc.Code))
		waitFor(t, "the expired code ignored", func() bool { return rig.inboxState("1") == inboxIgnored })
		if ok, _ := rig.st.IsChatOwner(ctx, chat.Telegram, "100"); ok {
			t.Error("an expired code paired")
		}
	})
	t.Run("platform", func(t *testing.T) {
		rig := newChatRig(t)
		if _, err := rig.s.PairStart(context.Background(), "slack"); !errors.Is(err, ErrPairPlatform) {
			t.Errorf("PairStart(slack) = %v; want ErrPairPlatform", err)
		}
	})
}

// TestChatsPairingWrongCodes: wrong codes count against the account that
// sent them, never against the code, and a platform-wide rate limit
// refuses codes unchecked without spending one. Each hostile case has its
// legitimate twin.
func TestChatsPairingWrongCodes(t *testing.T) {
	ctx := context.Background()
	// handled pushes a message and waits until it was decided.
	handled := func(t *testing.T, rig *chatRig, in chat.Inbound, want string) {
		t.Helper()
		rig.push(in)
		waitFor(t, in.DeliveryID+" "+want, func() bool { return rig.inboxState(in.DeliveryID) == want })
	}
	pairState := func(t *testing.T, rig *chatRig, id int64) string {
		t.Helper()
		p, err := rig.st.Pairing(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return p.State
	}

	t.Run("stranger cannot spend the owner's code", func(t *testing.T) {
		rig := newChatRig(t)
		pc, err := rig.s.PairStart(ctx, chat.Telegram)
		if err != nil {
			t.Fatal(err)
		}
		// A stranger sends wrong codes: each is answered, the last one says
		// the account is no longer heard.
		for i := range pairSenderTries {
			handled(t, rig, dm(fmt.Sprintf("w%d", i), "300", "/pair WRONGCODE1"), inboxHandled)
		}
		waitFor(t, "the locked-out reply", func() bool { return len(rig.fake.sentTexts("300")) == pairSenderTries })
		if got := rig.fake.sentTexts("300"); got[len(got)-1] != pairLocked || got[0] != pairWrong {
			t.Errorf("replies to the stranger = %q; want %q first and %q last", got, pairWrong, pairLocked)
		}
		if st := pairState(t, rig, pc.ID); st != "open" {
			t.Fatalf("after %d wrong codes from one account the pairing is %q; want open", pairSenderTries, st)
		}
		// The lockout is kept in the database: it survives a restart.
		rig.stop()
		rig.start()
		// The stranger goes on, then even sends the right code (it leaked,
		// or he guessed): none of it is checked or answered.
		for i := range 3 {
			handled(t, rig, dm(fmt.Sprintf("x%d", i), "300", "/pair WRONGCODE2"), inboxIgnored)
		}
		handled(t, rig, dm("x-right", "300", "/pair "+pc.Code), inboxIgnored)
		if st := pairState(t, rig, pc.ID); st != "open" {
			t.Fatalf("the locked-out account's right code made the pairing %q; want open", st)
		}
		if n := len(rig.fake.sentTexts("300")); n != pairSenderTries {
			t.Errorf("%d replies to the locked-out account; want %d (none after the lockout)", n, pairSenderTries)
		}
		// The owner, from another account, still pairs with the code.
		handled(t, rig, dm("owner", "100", "/pair "+pc.Code), inboxHandled)
		use, err := rig.s.PairWait(ctx, pc.ID, 5*time.Millisecond)
		if err != nil || use.UserID != "100" {
			t.Fatalf("PairWait = %+v, %v; want the owner's account 100", use, err)
		}
		rules := rig.auditRules()
		if n := countOf(rules, "chat.pair-wrong"); n != pairSenderTries {
			t.Errorf("%d chat.pair-wrong audit records; want %d", n, pairSenderTries)
		}
		if n := countOf(rules, "chat.pair-locked"); n != 4 {
			t.Errorf("%d chat.pair-locked audit records; want 4", n)
		}
	})

	t.Run("twin: the owner's mistypes below the limit", func(t *testing.T) {
		rig := newChatRig(t)
		pc, err := rig.s.PairStart(ctx, chat.Telegram)
		if err != nil {
			t.Fatal(err)
		}
		for i := range pairSenderTries - 1 {
			handled(t, rig, dm(fmt.Sprintf("m%d", i), "100", "/pair MISTYPED01"), inboxHandled)
		}
		handled(t, rig, dm("right", "100", "/pair "+pc.Code), inboxHandled)
		if use, err := rig.s.PairWait(ctx, pc.ID, 5*time.Millisecond); err != nil || use.UserID != "100" {
			t.Fatalf("PairWait after %d mistypes = %+v, %v; want account 100", pairSenderTries-1, use, err)
		}
	})

	t.Run("twin: the owner's right code on the first try", func(t *testing.T) {
		rig := newChatRig(t)
		pc, err := rig.s.PairStart(ctx, chat.Telegram)
		if err != nil {
			t.Fatal(err)
		}
		handled(t, rig, dm("1", "100", "/pair "+pc.Code), inboxHandled)
		if use, err := rig.s.PairWait(ctx, pc.ID, 5*time.Millisecond); err != nil || use.UserID != "100" {
			t.Fatalf("PairWait = %+v, %v; want account 100", use, err)
		}
		waitFor(t, "the accepted reply", func() bool { return containsText(rig.fake.sentTexts("100"), pairAccepted) })
		if n := countOf(rig.auditRules(), "chat.pair-wrong"); n != 0 {
			t.Errorf("%d chat.pair-wrong audit records; want none", n)
		}
	})

	t.Run("rate limit refuses without spending", func(t *testing.T) {
		rig := newChatRig(t)
		pc, err := rig.s.PairStart(ctx, chat.Telegram)
		if err != nil {
			t.Fatal(err)
		}
		// Many strangers, each below its own limit, send wrong codes fast.
		per := pairSenderTries - 1
		for i := range (pairWrongPerMinute + per - 1) / per {
			for j := range per {
				handled(t, rig, dm(fmt.Sprintf("s%d-%d", i, j), fmt.Sprint(400+i), "/pair WRONGCODE1"), inboxHandled)
			}
		}
		// The owner's right code is refused unchecked: not used, not spent.
		handled(t, rig, dm("owner1", "100", "/pair "+pc.Code), inboxHandled)
		waitFor(t, "the busy reply", func() bool { return containsText(rig.fake.sentTexts("100"), pairBusy) })
		if st := pairState(t, rig, pc.ID); st != "open" {
			t.Fatalf("the pairing is %q during the rate limit; want open", st)
		}
		if n := countOf(rig.auditRules(), "chat.pair-limited"); n != 1 {
			t.Errorf("%d chat.pair-limited audit records; want 1", n)
		}
		// A minute later (the code lives 10) the rate has dropped and the
		// same code pairs.
		rig.stop()
		later := time.Now().Add(pairRateWindow + time.Second)
		rig.setNow(later)
		rig.start()
		handled(t, rig, dm("owner2", "100", "/pair "+pc.Code), inboxHandled)
		if use, err := rig.s.PairWait(ctx, pc.ID, 5*time.Millisecond); err != nil || use.UserID != "100" {
			t.Fatalf("PairWait after the rate dropped = %+v, %v; want account 100", use, err)
		}
	})
}
