package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/feishu/feishutest"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm/llmtest"
)

// Ids of the Feishu tests.
const (
	fsOwner     = "ou_ann"
	fsOwnerChat = "oc_ann"
	fsStranger  = "ou_eve"
	fsEveChat   = "oc_eve"
	fsGroup     = "oc_group"
)

// feishuServed is serve running the Feishu channel against a fake.
type feishuServed struct {
	*servedChannel
	fake *feishutest.Server
	conn int // connections to the fake so far
}

// serveFeishu configures the Feishu channel at fake (a new one when nil)
// and starts serve; it returns once the long connection is up.
func serveFeishu(t *testing.T, r *Runtime, prev *feishuServed) *feishuServed {
	t.Helper()
	fs := &feishuServed{conn: 1}
	if prev == nil {
		fs.fake = feishutest.New()
		t.Cleanup(fs.fake.Close)
		fs.fake.SetChatMode(fsOwnerChat, "p2p")
		fs.fake.SetChatMode(fsEveChat, "p2p")
		fs.fake.SetChatMode(fsGroup, "group")
		configureChannel(t, r, chat.Feishu, config.Channel{TokenSecret: "feishu", AppID: fs.fake.AppID, APIBase: fs.fake.URL(), Groups: []string{fsGroup}}, fs.fake.AppSecret)
	} else {
		fs.fake, fs.conn = prev.fake, prev.conn+1
	}
	fs.servedChannel = serveChannels(t, r, ServeOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := fs.fake.WaitConnected(ctx, fs.conn); err != nil {
		t.Fatalf("long connection: %v\nserve log:\n%s", err, fs.log)
	}
	return fs
}

// push sends one event over the long connection and returns its frame id.
func (fs *feishuServed) push(payload []byte) string {
	fs.t.Helper()
	id, err := fs.fake.Push(context.Background(), payload)
	if err != nil {
		fs.t.Fatal(err)
	}
	return id
}

// texts returns the text of every text message the fake holds that went
// to chat or replied to a message in replyTo.
func (fs *feishuServed) texts(chatID string, replyTo ...string) []string {
	var out []string
	for _, m := range fs.fake.Sent() {
		if m.MsgType != "text" || (m.ChatID != chatID && !slices.Contains(replyTo, m.ReplyTo)) {
			continue
		}
		var c struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(m.Content), &c); err != nil {
			fs.t.Fatalf("text content %s: %v", m.Content, err)
		}
		out = append(out, c.Text)
	}
	return out
}

// feishuCard is the part of an interactive card's JSON the tests read.
type feishuCard struct {
	Elements []struct {
		Tag  string `json:"tag"`
		Text struct {
			Content string `json:"content"`
		} `json:"text"`
		Actions []struct {
			Text struct {
				Content string `json:"content"`
			} `json:"text"`
			Value struct {
				D string `json:"d"`
			} `json:"value"`
		} `json:"actions"`
	} `json:"elements"`
}

// TestFeishuServeOwnerApproval: through serve and the real adapter over
// the fake's long connection: the owner's p2p message runs a turn whose
// write needs approval; the card goes to the owner's chat with its
// outbox row as uuid; the fake presses "Approve once"; the press's ack
// frame carries the toast; the file is written, the card edited, and the
// final reply (its <at> tag escaped) sent as a reply with its own uuid.
func TestFeishuServeOwnerApproval(t *testing.T) {
	r := newTestRuntime(t, "smart")
	srv := runServer(t, r,
		openAI(toolCall("c1", "write_file", `{"path":"notes/f.txt","content":"from feishu\n"}`)),
		openAI(llmtest.Turn{Text: []string{`written <at user_id="all"></at>`}}),
	)
	pairOn(t, r, chat.Feishu, fsOwner)
	fs := serveFeishu(t, r, nil)

	first := fs.push(feishutest.Message{EventID: "ev-1", MessageID: "om_in1", ChatID: fsOwnerChat, ChatType: "p2p", Sender: fsOwner, Text: "write the note"}.Event())
	var card feishutest.Sent
	waitFor(t, "the approval card", func() bool {
		for _, m := range fs.fake.Sent() {
			if m.MsgType == "interactive" {
				card = m
				return true
			}
		}
		return false
	})
	if !fs.fake.Acked(first) {
		t.Errorf("the owner's message was not acknowledged")
	}
	if row := outboxOfKey(t, r, card.UUID); card.ChatID != fsOwnerChat || row.ChatID != fsOwnerChat || row.Buttons == "" {
		t.Errorf("card to %q with uuid %q (row %+v); want the owner's chat and the card's outbox row", card.ChatID, card.UUID, row)
	}
	var cj feishuCard
	if err := json.Unmarshal([]byte(card.Content), &cj); err != nil || len(cj.Elements) != 2 || len(cj.Elements[1].Actions) != 4 {
		t.Fatalf("card content %s: %v; want text and 4 buttons", card.Content, err)
	}
	if a := cj.Elements[1].Actions[0]; a.Text.Content != "Approve once" || !strings.Contains(cj.Elements[0].Text.Content, "notes/f.txt") {
		t.Errorf("card %s; want the plan and Approve once first", card.Content)
	}

	pressFrame := fs.push(feishutest.CardPress("ev-2", "card-token", fsOwner, fsOwnerChat, card.ID, cj.Elements[1].Actions[0].Value.D))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ack, _, err := fs.fake.WaitAck(ctx, pressFrame)
	if err != nil || ack.Code != 200 || ack.Toast() != "Approved once" {
		t.Errorf("press ack = %+v (toast %q), %v; want 200 with the toast Approved once", ack, ack.Toast(), err)
	}
	waitFor(t, "the final reply", func() bool { return containsText(fs.texts(fsOwnerChat, "om_in1"), "written") })
	b, err := os.ReadFile(filepath.Join(r.Config.Workspace.Roots[0].Path, "notes", "f.txt"))
	if err != nil || string(b) != "from feishu\n" {
		t.Errorf("notes/f.txt = %q, %v; want the approved write", b, err)
	}
	for _, m := range fs.fake.Sent() {
		if m.UUID == "" || m.Attempts != 1 {
			t.Errorf("sent %+v; want a uuid on every send, each sent once", m)
		}
		if m.MsgType == "text" && (m.ReplyTo != "om_in1" || strings.Contains(m.Content, "<at")) {
			t.Errorf("final reply %+v; want a reply to om_in1 with its <at> tag escaped", m)
		}
	}
	waitFor(t, "the card edited", func() bool {
		for _, e := range fs.fake.Edits() {
			if e.MessageID == card.ID && e.Method == "PATCH" && strings.Contains(e.Content, "Answered here: Approved once") {
				return true
			}
		}
		return false
	})
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("model requests = %d; want 2", n)
	}
}

// TestFeishuServeNotOwner: through serve against the fake: a stranger's
// p2p message reaches no model and gets the private notice; a group
// message without a mention is ignored; an event Feishu delivers again
// (its ack lost) is handled once, and so is one delivered again after
// serve restarted; the twin, the owner's message, is answered.
func TestFeishuServeNotOwner(t *testing.T) {
	r := newTestRuntime(t, "smart")
	srv := runServer(t, r, openAI(llmtest.Turn{Text: []string{"once"}}), openAI(llmtest.Turn{Text: []string{"twice"}}))
	pairOn(t, r, chat.Feishu, fsOwner)
	fs := serveFeishu(t, r, nil)

	owner := feishutest.Message{EventID: "ev-10", MessageID: "om_10", ChatID: fsOwnerChat, ChatType: "p2p", Sender: fsOwner, Text: "hello"}.Event()
	fs.push(feishutest.Message{EventID: "ev-11", MessageID: "om_11", ChatID: fsEveChat, ChatType: "p2p", Sender: fsStranger, Text: "run something"}.Event())
	fs.push(feishutest.Message{EventID: "ev-12", MessageID: "om_12", ChatID: fsGroup, ChatType: "group", Sender: fsStranger, Text: "no mention"}.Event())
	fs.push(owner)
	fs.push(owner) // a redelivery: same event id, new frame
	waitFor(t, "the owner's reply", func() bool { return len(fs.texts(fsOwnerChat, "om_10")) == 1 })
	waitFor(t, "the stranger's notice", func() bool { return len(fs.texts(fsEveChat, "om_11")) == 1 })
	waitFor(t, "the group message ignored", func() bool { return inboxState(t, r, "ev-12") == inboxIgnored })
	if got := fs.texts(fsEveChat, "om_11"); got[0] != privateNotice {
		t.Errorf("stranger got %q; want %q", got, privateNotice)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("model requests = %d; want 1", n)
	}

	// After a restart the adapter has forgotten the event id; the inbox
	// has not.
	fs.stop()
	fs = serveFeishu(t, r, fs)
	again := fs.push(owner)
	fs.push(feishutest.Message{EventID: "ev-13", MessageID: "om_13", ChatID: fsOwnerChat, ChatType: "p2p", Sender: fsOwner, Text: "/new"}.Event())
	waitFor(t, "the /new answer", func() bool { return containsText(fs.texts(fsOwnerChat, "om_13"), newSession) })
	fs.stop()
	if !fs.fake.Acked(again) {
		t.Error("the redelivered event was not acknowledged")
	}
	if got := fs.texts(fsOwnerChat, "om_10", "om_13"); !slices.Equal(got, []string{"once", newSession}) {
		t.Errorf("owner's chat got %q; want [once, %q]", got, newSession)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("model requests = %d; want 1", n)
	}
	if left := fs.fake.Left(); len(left) != 0 || len(fs.texts(fsGroup)) != 0 {
		t.Errorf("group: left %q, sent %q; want nothing for a message without a mention", left, fs.texts(fsGroup))
	}
}
