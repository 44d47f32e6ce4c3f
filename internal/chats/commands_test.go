package chats

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/store"
)

// TestChatsTurnControls: in the owner's direct chat, /tools off and
// /budget N answer without a model call and shape every next turn (no
// tool offered, at most N calls), across a restart of the runner; /tools
// on and /budget off undo them; a wrong argument changes nothing. The
// twins: a stranger's "/tools off" is no command at all, and "/new ideas
// for dinner" is a message for the model.
func TestChatsTurnControls(t *testing.T) {
	rig := newChatRig(t)
	ctx := context.Background()
	if err := rig.st.Write(ctx, func(tx *store.Tx) error {
		return tx.AddChatOwner(store.ChatOwner{Platform: chat.Telegram, UserID: "100", Name: "Ann", ChatID: "100", PairedAt: time.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	n := 0
	send := func(user, text string) {
		t.Helper()
		n++
		id := strings.Repeat("d", n)
		before := len(rig.fake.sentTexts(user))
		rig.push(dm(id, user, text))
		waitFor(t, "the answer to "+text, func() bool { return len(rig.fake.sentTexts(user)) > before })
	}
	lastReply := func() string {
		got := rig.fake.sentTexts("100")
		if len(got) == 0 {
			return ""
		}
		return got[len(got)-1]
	}

	send("100", "/tools off")
	send("100", "/budget 3")
	if rig.turns.count() != 0 {
		t.Fatalf("%d turns ran for two commands; want none", rig.turns.count())
	}
	send("100", "/budget many")
	if !strings.HasPrefix(lastReply(), "Usage: /budget") {
		t.Errorf("a wrong /budget answered %q; want its usage", lastReply())
	}
	rig.stop()
	rig.start() // a restart keeps the settings
	send("100", "what does this relayed text say?")
	if req := rig.turns.lastRequest(); !req.NoTools || req.MaxCalls != 3 {
		t.Errorf("after /tools off and /budget 3: NoTools %v, MaxCalls %d; want true, 3", req.NoTools, req.MaxCalls)
	}
	send("100", "/split plan a trip")
	if !strings.HasPrefix(lastReply(), "Tools are off in this chat, and /split") {
		t.Errorf("/split with tools off answered %q; want it refused", lastReply())
	}
	send("100", "/tools")
	if !strings.Contains(lastReply(), "Tools are off") {
		t.Errorf("/tools reported %q", lastReply())
	}

	send("200", "/tools on") // a stranger: a notice, no setting changed
	send("100", "/new ideas for dinner")
	if rig.turns.count() != 2 {
		t.Errorf("%d turns; want 2 (\"/new ideas for dinner\" is a message)", rig.turns.count())
	}
	if req := rig.turns.lastRequest(); !req.NoTools {
		t.Error("a stranger's /tools on turned the owner's tools back on")
	}

	send("100", "/tools on")
	send("100", "/budget off")
	send("100", "and now?")
	if req := rig.turns.lastRequest(); req.NoTools || req.MaxCalls != 0 {
		t.Errorf("after /tools on and /budget off: NoTools %v, MaxCalls %d; want false, 0", req.NoTools, req.MaxCalls)
	}
	send("100", "/help")
	if !strings.Contains(lastReply(), "/tools off") || !strings.Contains(lastReply(), "/budget N") {
		t.Errorf("/help answered %q", lastReply())
	}
}
