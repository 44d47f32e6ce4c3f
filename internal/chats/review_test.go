package chats

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/store"
)

// fakeReviews records the presses that reached the review service.
type fakeReviews struct {
	mu      sync.Mutex
	pressed []string
}

func (f *fakeReviews) Press(_ context.Context, data string) (string, []chat.Button, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pressed = append(f.pressed, data)
	return "Weekly memory review\n1. merge [approved]", []chat.Button{{Label: "Approve all", Data: "v:rv_0a1b2c3d4e5f:a"}}, nil
}

func (f *fakeReviews) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.pressed...)
}

// TestMemoryReviewButtons: a review card is queued to the owner's direct
// chat with its buttons; a stranger's press and the owner's own press in
// a group reach nothing; the owner's press in their direct chat answers
// the review and edits the card.
func TestMemoryReviewButtons(t *testing.T) {
	rig := newChatRig(t)
	rev := &fakeReviews{}
	rig.s.d.Reviews = func() MemoryReviews { return rev }
	rig.s.d.Config.Channels.Of(chat.Telegram).Enabled = true
	ctx := context.Background()
	if err := rig.st.Write(ctx, func(tx *store.Tx) error {
		return tx.AddChatOwner(store.ChatOwner{Platform: chat.Telegram, UserID: "100", Name: "Ann", ChatID: "100", PairedAt: time.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	buttons := []chat.Button{{Label: "Approve 1", Data: "v:rv_0a1b2c3d4e5f:1"}, {Label: "Dismiss", Data: "v:rv_0a1b2c3d4e5f:x"}}
	if err := rig.s.QueueMemoryReview(ctx, "Weekly memory review\n1. merge", buttons); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the card sent", func() bool { return len(rig.fake.sentTexts("100")) == 1 })
	rig.fake.mu.Lock()
	sent := rig.fake.calls[0]
	rig.fake.mu.Unlock()
	if len(sent.Buttons) != 2 || sent.Buttons[0].Data != "v:rv_0a1b2c3d4e5f:1" {
		t.Fatalf("buttons %+v; want the card's", sent.Buttons)
	}
	press := func(in chat.Inbound, data string) {
		t.Helper()
		in.Kind, in.Press = chat.KindPress, &chat.Press{ID: "q" + in.DeliveryID, MessageID: "m1", Data: data}
		rig.push(in)
		waitFor(t, "press "+in.DeliveryID, func() bool {
			s := rig.inboxState(in.DeliveryID)
			return s == inboxHandled || s == inboxIgnored
		})
	}
	press(dm("p1", "200", ""), "v:rv_0a1b2c3d4e5f:1") // a stranger
	group := dm("p2", "100", "")
	group.Chat = chat.Chat{ID: "-500", Direct: false}
	group.Sender.IsChat = false
	press(group, "v:rv_0a1b2c3d4e5f:1") // the owner, in a group
	if got := rev.list(); len(got) != 0 || rig.inboxState("p1") != inboxIgnored || rig.inboxState("p2") != inboxIgnored {
		t.Fatalf("presses reaching the review %q; p1 %s, p2 %s; want none, both refused", got, rig.inboxState("p1"), rig.inboxState("p2"))
	}
	press(dm("p3", "100", ""), "v:rv_0a1b2c3d4e5f:1") // the owner, in their own chat
	if got := rev.list(); strings.Join(got, "|") != "v:rv_0a1b2c3d4e5f:1" {
		t.Errorf("presses reaching the review %q; want the owner's", got)
	}
	rig.fake.mu.Lock()
	edits := strings.Join(rig.fake.edits, "|")
	rig.fake.mu.Unlock()
	if !strings.Contains(edits, "100/m1: Weekly memory review\n1. merge [approved]") {
		t.Errorf("edits %q; want the card edited to where the review stands", edits)
	}
}
