package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/llm/llmtest"
)

// sentCard waits for the approval card sent to chatID and returns it.
func sentCard(t *testing.T, f *fakeAdapter, chatID string) fakeSend {
	t.Helper()
	var card fakeSend
	waitFor(t, "an approval card", func() bool {
		for _, s := range f.sent() {
			if s.Out.ChatID == chatID && len(s.Out.Buttons) > 0 {
				card = s
				return true
			}
		}
		return false
	})
	return card
}

// press is a button press on messageID with data, from user in chatID.
func press(delivery, chatID, user, messageID, data string, direct bool) chat.Inbound {
	return chat.Inbound{Platform: chat.Telegram, Bot: "bot1", DeliveryID: delivery, Kind: chat.KindPress,
		Chat: chat.Chat{ID: chatID, Direct: direct}, Sender: chat.Sender{ID: user, IsChat: direct},
		Press: &chat.Press{ID: "cb-" + delivery, MessageID: messageID, Data: data}}
}

func (f *fakeAdapter) ackFor(pressID string) (string, bool) {
	_, _, acks, _, _ := f.snapshot()
	for _, a := range acks {
		if a.Press.ID == pressID {
			return a.Notice, true
		}
	}
	return "", false
}

// TestChatsApprovalCard: a call that needs approval is a card in the
// owner's direct chat; presses that are not the owner's, not in the
// owner's chat, not on the recorded message or not with its hash are
// refused and audited; the owner's press approves it and the call runs;
// a message sent while the turn waited runs after it.
func TestChatsApprovalCard(t *testing.T) {
	rig := newChatRig(t,
		openAI(toolCall("c1", "write_file", `{"path":"notes/a.txt","content":"hello\n"}`)),
		openAI(llmtest.Turn{Text: []string{"written"}}),
		openAI(llmtest.Turn{Text: []string{"second answer"}}),
	)
	pairOwner(t, rig.r, "100")
	pairOwner(t, rig.r, "101") // another owner account: not this chat's
	rig.push(dm("1", "100", "write the note"))
	card := sentCard(t, rig.fake, "100")
	if got := len(card.Out.Buttons); got != 4 {
		t.Errorf("card buttons = %+v; want once, session, always, deny", card.Out.Buttons)
	}
	once := card.Out.Buttons[0].Data
	id, h12, _, ok := parseButton(once)
	if !ok || !strings.Contains(card.Out.Text, h12) || !strings.Contains(card.Out.Text, "notes/a.txt") {
		t.Fatalf("card %q with data %q: want the plan and hash prefix shown", card.Out.Text, once)
	}
	rig.push(dm("2", "100", "and another thing")) // queued behind the waiting turn

	bad := []struct {
		name string
		in   chat.Inbound
	}{
		{"stranger", press("p1", "200", "200", card.ID, once, true)},
		{"other owner's chat", press("p2", "101", "101", card.ID, once, true)},
		{"owner in a group", press("p3", "-5", "100", card.ID, once, false)},
		{"wrong message", press("p4", "100", "100", "m999", once, true)},
		{"wrong hash", press("p5", "100", "100", card.ID, "a:"+id+":000000000000:o", true)},
		{"malformed", press("p6", "100", "100", card.ID, "approve", true)},
	}
	for _, b := range bad {
		rig.push(b.in)
	}
	for _, b := range bad {
		waitFor(t, "ack of "+b.name, func() bool { _, ok := rig.fake.ackFor(b.in.Press.ID); return ok })
		if n, _ := rig.fake.ackFor(b.in.Press.ID); n != pressRefused {
			t.Errorf("%s: ack %q; want %q", b.name, n, pressRefused)
		}
	}
	if a, _ := rig.r.Owner.Approval(context.Background(), id); a.Status != approval.Pending {
		t.Fatalf("after refused presses the approval is %s; want pending", a.Status)
	}
	if n := countOf(auditRules(t, rig.r), "chat.press-refused"); n != len(bad) {
		t.Errorf("%d chat.press-refused audit records; want %d", n, len(bad))
	}
	if st := inboxState(t, rig.r, "2"); st != inboxReceived {
		t.Errorf("message sent during the turn is %q; want received (queued)", st)
	}

	rig.push(press("p7", "100", "100", card.ID, once, true))
	waitFor(t, "the reply", func() bool { return containsText(rig.fake.sentTexts("100"), "written") })
	if n, _ := rig.fake.ackFor("cb-p7"); n != "Approved once" {
		t.Errorf("owner's press ack %q; want Approved once", n)
	}
	b, err := os.ReadFile(filepath.Join(rig.r.Config.Workspace.Roots[0].Path, "notes", "a.txt"))
	if err != nil || string(b) != "hello\n" {
		t.Errorf("notes/a.txt = %q, %v; want the approved write", b, err)
	}
	_, edits, _, _, _ := rig.fake.snapshot()
	if len(edits) != 1 || edits[0].MessageID != card.ID || len(edits[0].Out.Buttons) != 0 || !strings.Contains(edits[0].Out.Text, "Answered here") {
		t.Errorf("edits = %+v; want the card edited once, without buttons", edits)
	}
	waitFor(t, "the queued message answered", func() bool { return containsText(rig.fake.sentTexts("100"), "second answer") })

	rig.push(press("p8", "100", "100", card.ID, once, true)) // again
	waitFor(t, "ack of the second press", func() bool { _, ok := rig.fake.ackFor("cb-p8"); return ok })
	if n, _ := rig.fake.ackFor("cb-p8"); n != pressAnswered {
		t.Errorf("second press ack %q; want %q", n, pressAnswered)
	}
}

// TestChatsCardAnsweredElsewhere: a card answered with `homard approval
// approve` is edited to say so, and the waiting turn goes on.
func TestChatsCardAnsweredElsewhere(t *testing.T) {
	rig := newChatRig(t,
		openAI(toolCall("c1", "write_file", `{"path":"b.txt","content":"x\n"}`)),
		openAI(llmtest.Turn{Text: []string{"done"}}),
	)
	pairOwner(t, rig.r, "100")
	rig.push(dm("1", "100", "write b"))
	card := sentCard(t, rig.fake, "100")
	id, _, _, _ := parseButton(card.Out.Buttons[0].Data)
	if _, err := rig.r.Owner.Approve(context.Background(), id, "once"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the card edited", func() bool { _, edits, _, _, _ := rig.fake.snapshot(); return len(edits) == 1 })
	waitFor(t, "the reply", func() bool { return containsText(rig.fake.sentTexts("100"), "done") })
	_, edits, _, _, _ := rig.fake.snapshot()
	if !strings.Contains(edits[0].Out.Text, "Answered elsewhere: approved (once)") || len(edits[0].Out.Buttons) != 0 {
		t.Errorf("edit = %+v; want it to say where it was answered, without buttons", edits[0])
	}
}

// TestChatsPressBeforeTheCardIsRecorded: the owner presses a card the
// platform already shows while homard has not yet recorded its message id
// (the send has not returned): the press waits for the id and approves,
// instead of being refused as a press on an unknown message.
func TestChatsPressBeforeTheCardIsRecorded(t *testing.T) {
	rig := newChatRig(t,
		openAI(toolCall("c1", "write_file", `{"path":"notes/early.txt","content":"early\n"}`)),
		openAI(llmtest.Turn{Text: []string{"written"}}),
	)
	pairOwner(t, rig.r, "100")
	rig.fake.mu.Lock()
	rig.fake.sendErr = func(n int, m chat.Outbound) error {
		if len(m.Buttons) == 0 {
			return nil
		}
		// The card is on the owner's screen (its id will be m<n+1>); the
		// owner presses before Send returns to homard.
		if err := rig.c.Receive(context.Background(), press("early", "100", "100", fmt.Sprintf("m%d", n+1), m.Buttons[0].Data, true)); err != nil {
			t.Errorf("Receive(press): %v", err)
		}
		time.Sleep(300 * time.Millisecond) // let the press reach its check first
		return nil
	}
	rig.fake.mu.Unlock()
	rig.push(dm("1", "100", "write the note"))
	waitFor(t, "the press acknowledged", func() bool { _, ok := rig.fake.ackFor("cb-early"); return ok })
	if notice, _ := rig.fake.ackFor("cb-early"); notice != answeredText(channel.Once) {
		t.Errorf("press notice = %q; want %q", notice, answeredText(channel.Once))
	}
	waitFor(t, "the write", func() bool {
		b, err := os.ReadFile(filepath.Join(rig.r.Config.Workspace.Roots[0].Path, "notes", "early.txt"))
		return err == nil && string(b) == "early\n"
	})
}

// TestChatsOnceOnlyCard: the card of a command that runs code outside a
// graded sandbox (the host backend) offers only "Approve once" and
// "Deny"; a press for "This session" (data the owner's client could still
// send) is answered with a refusal and the card stays open, the call
// waiting; "Deny" then answers it and the turn goes on. The twins are
// TestChatsApprovalCard's write, with four buttons, and
// TestSmartCodingSessionGrant's graded command, with three.
func TestChatsOnceOnlyCard(t *testing.T) {
	rig := newChatRig(t,
		openAI(toolCall("c1", "run_command", findExec)),
		openAI(llmtest.Turn{Text: []string{"not run"}}),
	)
	rig.r.Config.Sandbox.Backend = "host" // ungraded: once only
	pairOwner(t, rig.r, "100")
	rig.push(dm("1", "100", "find things"))
	card := sentCard(t, rig.fake, "100")
	var labels []string
	for _, b := range card.Out.Buttons {
		labels = append(labels, b.Label)
	}
	if strings.Join(labels, ",") != "Approve once,Deny" || strings.Contains(card.Out.Text, "\"This session\"") {
		t.Fatalf("once-only card buttons %q, text %q; want once and deny only", labels, card.Out.Text)
	}
	id, h12, _, _ := parseButton(card.Out.Buttons[0].Data)
	session := "a:" + id + ":" + h12 + ":s"
	rig.push(press("p1", "100", "100", card.ID, session, true))
	waitFor(t, "ack of the session press", func() bool { _, ok := rig.fake.ackFor("cb-p1"); return ok })
	if n, _ := rig.fake.ackFor("cb-p1"); n != pressOnceOnly {
		t.Errorf("session press ack %q; want %q", n, pressOnceOnly)
	}
	if a, _ := rig.r.Owner.Approval(context.Background(), id); a.Status != approval.Pending {
		t.Fatalf("after a session press the approval is %s; want pending", a.Status)
	}
	if _, edits, _, _, _ := rig.fake.snapshot(); len(edits) != 0 {
		t.Errorf("edits = %+v; want the card left open", edits)
	}
	rig.push(press("p2", "100", "100", card.ID, card.Out.Buttons[1].Data, true))
	waitFor(t, "the reply", func() bool { return containsText(rig.fake.sentTexts("100"), "not run") })
	if n, _ := rig.fake.ackFor("cb-p2"); n != "Denied" {
		t.Errorf("deny press ack %q; want Denied", n)
	}
}

// TestChatsNoAlwaysCard: a graded code command's card (bwrap: a copy, no
// network, changes through the gate) offers once, this session and deny;
// a press for "Always" is refused with what the card does take, and the
// card stays open, the call waiting. The twin is TestChatsOnceOnlyCard
// (the same command on the host: once and deny only).
func TestChatsNoAlwaysCard(t *testing.T) {
	rig := newChatRig(t,
		openAI(toolCall("c1", "run_command", findExec)),
		openAI(llmtest.Turn{Text: []string{"not run"}}),
	)
	rig.r.Config.Sandbox.Backend = "bwrap" // graded: CI installs bubblewrap
	pairOwner(t, rig.r, "100")
	rig.push(dm("1", "100", "find things"))
	card := sentCard(t, rig.fake, "100")
	var labels []string
	for _, b := range card.Out.Buttons {
		labels = append(labels, b.Label)
	}
	if strings.Join(labels, ",") != "Approve once,This session,Deny" {
		t.Fatalf("graded code card buttons %q; want once, this session and deny", labels)
	}
	id, h12, _, _ := parseButton(card.Out.Buttons[0].Data)
	rig.push(press("p1", "100", "100", card.ID, "a:"+id+":"+h12+":a", true))
	waitFor(t, "ack of the always press", func() bool { _, ok := rig.fake.ackFor("cb-p1"); return ok })
	if n, _ := rig.fake.ackFor("cb-p1"); n != pressNoAlways {
		t.Errorf("always press ack %q; want %q", n, pressNoAlways)
	}
	if a, _ := rig.r.Owner.Approval(context.Background(), id); a.Status != approval.Pending {
		t.Fatalf("after an always press the approval is %s; want pending", a.Status)
	}
	rig.push(press("p2", "100", "100", card.ID, card.Out.Buttons[2].Data, true))
	waitFor(t, "the reply", func() bool { return containsText(rig.fake.sentTexts("100"), "not run") })
}
