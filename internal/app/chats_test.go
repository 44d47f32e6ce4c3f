package app

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/llm/llmtest"
)

// TestChatOwnerTurn: the owner's direct message runs one turn whose
// reply is split into parts, queued and sent in order, the first a reply
// to the message, with the typing indicator on.
func TestChatsOwnerTurn(t *testing.T) {
	long := strings.Repeat("word ", 10) + "\n\n" + strings.Repeat("more ", 10)
	rig := newChatRig(t, openAI(llmtest.Turn{Text: []string{long}}))
	rig.fake.max = 60
	pairOwner(t, rig.r, "100")
	rig.push(dm("1", "100", "hello"))
	waitFor(t, "two reply parts", func() bool { return len(rig.fake.sentTexts("100")) == 2 })
	if n := len(rig.srv.Requests()); n != 1 {
		t.Errorf("model requests = %d; want 1", n)
	}
	parts := rig.fake.sent()
	if parts[0].Out.ReplyTo != "in-1" || parts[1].Out.ReplyTo != "" {
		t.Errorf("ReplyTo = %q, %q; want the first part to reply to in-1", parts[0].Out.ReplyTo, parts[1].Out.ReplyTo)
	}
	if got := strings.Join(rig.fake.sentTexts("100"), "\n\n"); got != strings.TrimSpace(long) && got != long {
		t.Errorf("parts joined = %q; want the model's text %q", got, long)
	}
	if parts[0].Out.Key == parts[1].Out.Key || parts[0].Out.Key == "" {
		t.Errorf("keys = %q, %q; want each part its own outbox id", parts[0].Out.Key, parts[1].Out.Key)
	}
	if _, _, _, typing, _ := rig.fake.snapshot(); typing == 0 {
		t.Error("no typing indicator during the turn")
	}
	waitFor(t, "inbox handled", func() bool { return inboxState(t, rig.r, "1") == inboxHandled })
	// The turn ran in the chat's own session, as the owner.
	s, err := rig.r.Store.Session(context.Background(), "telegram-100")
	if err != nil || s.Owner != rig.r.Config.Owner {
		t.Errorf("session telegram-100 = %+v, %v; want the owner's", s, err)
	}
}

// TestChatStranger: an unknown sender's direct message reaches no model;
// one private notice (rate-limited) and an audit record per message.
func TestChatsStranger(t *testing.T) {
	tests := []struct {
		name string
		in   chat.Inbound
	}{
		{"unpaired", dm("1", "200", "hi")},
		{"paired id but not the chat", func() chat.Inbound { in := dm("1", "100", "hi"); in.Sender.IsChat = false; return in }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rig := newChatRig(t, openAI(llmtest.Turn{Text: []string{"must not be asked"}}))
			pairOwner(t, rig.r, "100")
			rig.push(tt.in)
			second := tt.in
			second.DeliveryID = "2"
			rig.push(second)
			waitFor(t, "both ignored", func() bool {
				return inboxState(t, rig.r, "1") == inboxIgnored && inboxState(t, rig.r, "2") == inboxIgnored
			})
			waitFor(t, "the notice", func() bool { return len(rig.fake.sentTexts(tt.in.Chat.ID)) == 1 })
			if n := len(rig.srv.Requests()); n != 0 {
				t.Errorf("model requests = %d; want none for a stranger", n)
			}
			rig.stop()
			if got := rig.fake.sentTexts(tt.in.Chat.ID); len(got) != 1 || got[0] != privateNotice {
				t.Errorf("sent = %q; want one %q (rate-limited)", got, privateNotice)
			}
			rules := auditRules(t, rig.r)
			if n := countOf(rules, "chat.unknown-sender"); n != 2 {
				t.Errorf("audit rules %q: %d chat.unknown-sender; want 2", rules, n)
			}
		})
	}
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// TestChatRedelivery: a delivery saved twice is handled once.
func TestChatsRedelivery(t *testing.T) {
	rig := newChatRig(t, openAI(llmtest.Turn{Text: []string{"once"}}), openAI(llmtest.Turn{Text: []string{"twice"}}))
	pairOwner(t, rig.r, "100")
	rig.push(dm("7", "100", "hello"))
	rig.push(dm("7", "100", "hello"))
	waitFor(t, "handled", func() bool { return inboxState(t, rig.r, "7") == inboxHandled })
	rig.push(dm("7", "100", "hello")) // after it was handled, too
	rig.push(dm("8", "100", "/new"))  // a later message: everything before it is done
	waitFor(t, "the /new reply", func() bool { return containsText(rig.fake.sentTexts("100"), newSession) })
	if n := len(rig.srv.Requests()); n != 1 {
		t.Errorf("model requests = %d; want 1 for one delivery saved three times", n)
	}
	if got := rig.fake.sentTexts("100"); !slices.Equal(got, []string{"once", newSession}) {
		t.Errorf("sent = %q; want [once, %q]", got, newSession)
	}
}

// TestChatIgnored: edits and other events, bots, and group messages
// without a mention reach no model and get no reply.
func TestChatsIgnored(t *testing.T) {
	edited := dm("1", "100", "edited text")
	edited.Kind = chat.KindOther
	fromBot := dm("2", "100", "beep")
	fromBot.Sender.Bot = true
	rig := newChatRig(t)
	rig.r.Config.Channels.Of("telegram").Groups = []string{"-5"}
	pairOwner(t, rig.r, "100")
	for _, in := range []chat.Inbound{edited, fromBot, groupMsg("3", "-5", "300", "no mention here", false)} {
		rig.push(in)
	}
	for _, d := range []string{"1", "2", "3"} {
		waitFor(t, "delivery "+d+" ignored", func() bool { return inboxState(t, rig.r, d) == inboxIgnored })
	}
	rig.stop()
	if n := len(rig.srv.Requests()); n != 0 {
		t.Errorf("model requests = %d; want none", n)
	}
	if calls, _, _, _, left := rig.fake.snapshot(); len(calls) != 0 || len(left) != 0 {
		t.Errorf("sent %d, left %q; want nothing", len(calls), left)
	}
}

// TestChatGroupNotAllowed: a group that is not allowed gets one notice and
// the bot leaves, once; nothing reaches the model.
func TestChatsGroupNotAllowed(t *testing.T) {
	rig := newChatRig(t)
	join := groupMsg("1", "-9", "300", "", false)
	join.Kind = chat.KindJoin
	rig.push(join)
	rig.push(groupMsg("2", "-9", "300", "@homard_bot hi", true))
	waitFor(t, "both ignored", func() bool {
		return inboxState(t, rig.r, "1") == inboxIgnored && inboxState(t, rig.r, "2") == inboxIgnored
	})
	rig.stop()
	calls, _, _, _, left := rig.fake.snapshot()
	if len(calls) != 1 || calls[0].Out.Text != leaveNotice || !slices.Equal(left, []string{"-9"}) {
		t.Errorf("sent %+v, left %q; want one notice and one leave", calls, left)
	}
	if n := len(rig.srv.Requests()); n != 0 {
		t.Errorf("model requests = %d; want none", n)
	}
}

// TestChatsGroupHoldsChats: where a group holds many chats (a Discord
// guild and its channels), the allow-list names the group: a mention in a
// channel of an allowed guild is answered there as a guest; the twin, a
// guild whose channel id (not the guild) is listed, is left with its
// notice posted in the channel.
func TestChatsGroupHoldsChats(t *testing.T) {
	rig := newChatRig(t, openAI(llmtest.Turn{Text: []string{"guest answer"}}))
	rig.r.Config.Channels.Of("telegram").Groups = []string{"g7"}
	in := groupMsg("1", "c7", "300", "@homard_bot hi", true)
	in.Chat.Group = "g7"
	rig.push(in)
	waitFor(t, "the guest reply", func() bool { return containsText(rig.fake.sentTexts("c7"), "guest answer") })

	other := groupMsg("2", "c8", "300", "@homard_bot hi", true)
	other.Chat.Group = "g8"
	rig.r.Config.Channels.Of("telegram").Groups = []string{"g7", "c8"}
	rig.push(other)
	waitFor(t, "the other guild ignored", func() bool { return inboxState(t, rig.r, "2") == inboxIgnored })
	rig.stop()
	_, _, _, _, left := rig.fake.snapshot()
	if !slices.Equal(left, []string{"g8"}) || !containsText(rig.fake.sentTexts("c8"), leaveNotice) {
		t.Errorf("left %q, sent to c8 %q; want guild g8 left with the notice in its channel", left, rig.fake.sentTexts("c8"))
	}
}
