package app

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/chats"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/store"
)

// fakeAdapter is an in-memory chat.Adapter: it records what homard sends,
// edits, acknowledges and leaves, and lets a test script send errors.
type fakeAdapter struct {
	platform string
	max      int

	mu      sync.Mutex // guards everything below
	calls   []fakeSend // every Send call, failed ones included
	edits   []fakeEdit
	acks    []fakeAck
	typing  int
	left    []string
	sendErr func(n int, m chat.Outbound) error // n counts Send calls from 0
	infoErr error
	sink    chat.Sink // set by Run
}

type fakeSend struct {
	Out chat.Outbound
	ID  string // message id returned; "" when it failed
	At  time.Time
}

type fakeEdit struct {
	ChatID, MessageID string
	Out               chat.Outbound
}

type fakeAck struct {
	Press  chat.Press
	Notice string
}

var _ chat.Adapter = (*fakeAdapter)(nil)

func newFake() *fakeAdapter { return &fakeAdapter{platform: chat.Telegram, max: 4096} }

func (f *fakeAdapter) Platform() string { return f.platform }
func (f *fakeAdapter) MaxChars() int    { return f.max }
func (f *fakeAdapter) Info(context.Context) (chat.BotInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.infoErr != nil {
		return chat.BotInfo{}, f.infoErr
	}
	return chat.BotInfo{ID: "bot1", Username: "homard_bot", Name: "homard"}, nil
}

func (f *fakeAdapter) Run(ctx context.Context, sink chat.Sink) error {
	f.mu.Lock()
	f.sink = sink
	f.mu.Unlock()
	<-ctx.Done()
	return nil
}

// running returns the sink once Run was called (nil before).
func (f *fakeAdapter) running() chat.Sink {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sink
}

func (f *fakeAdapter) Send(_ context.Context, m chat.Outbound) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.calls)
	if f.sendErr != nil {
		if err := f.sendErr(n, m); err != nil {
			f.calls = append(f.calls, fakeSend{Out: m, At: time.Now()})
			return "", err
		}
	}
	id := fmt.Sprintf("m%d", n+1)
	f.calls = append(f.calls, fakeSend{Out: m, ID: id, At: time.Now()})
	return id, nil
}

func (f *fakeAdapter) Edit(_ context.Context, chatID, messageID string, m chat.Outbound) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.edits = append(f.edits, fakeEdit{chatID, messageID, m})
	return nil
}

func (f *fakeAdapter) AckPress(_ context.Context, p chat.Press, notice string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acks = append(f.acks, fakeAck{p, notice})
	return nil
}

func (f *fakeAdapter) Typing(context.Context, string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.typing++
	return nil
}

func (f *fakeAdapter) Leave(_ context.Context, chatID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.left = append(f.left, chatID)
	return nil
}

// sent returns the parts the platform took, in order.
func (f *fakeAdapter) sent() []fakeSend {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeSend
	for _, s := range f.calls {
		if s.ID != "" {
			out = append(out, s)
		}
	}
	return out
}

func (f *fakeAdapter) snapshot() (calls []fakeSend, edits []fakeEdit, acks []fakeAck, typing int, left []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeSend(nil), f.calls...), append([]fakeEdit(nil), f.edits...), append([]fakeAck(nil), f.acks...), f.typing, append([]string(nil), f.left...)
}

// sentTexts is the texts of the parts sent to chatID.
func (f *fakeAdapter) sentTexts(chatID string) []string {
	var out []string
	for _, s := range f.sent() {
		if s.Out.ChatID == chatID {
			out = append(out, s.Out.Text)
		}
	}
	return out
}

// chatRig is a Runtime with a scripted model, a fake adapter and its
// Chats running.
type chatRig struct {
	t    *testing.T
	r    *Runtime
	srv  *llmtest.Server
	fake *fakeAdapter
	c    *chats.Runner
	stop func()
}

func testChatsOptions(f *fakeAdapter) chats.Options {
	return chats.Options{Adapters: []chat.Adapter{f}, Poll: 10 * time.Millisecond, ApprovalWait: time.Minute,
		Backoff: func(int) time.Duration { return 5 * time.Millisecond }, TypingEvery: time.Hour}
}

// newChatRig starts Chats on a new smart-mode home whose model answers
// with replies.
func newChatRig(t *testing.T, replies ...llmtest.Reply) *chatRig {
	t.Helper()
	r := newTestRuntime(t, "smart")
	srv := runServer(t, r, replies...)
	rig := &chatRig{t: t, r: r, srv: srv, fake: newFake()}
	rig.start(testChatsOptions(rig.fake))
	return rig
}

// start runs Chats on rig.r with o until the test ends or stop is called.
func (rig *chatRig) start(o chats.Options) {
	rig.c = rig.r.Chats.NewRunner(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = rig.c.Run(ctx) }()
	var once sync.Once
	rig.stop = func() { once.Do(func() { cancel(); <-done }) }
	rig.t.Cleanup(rig.stop)
}

func (rig *chatRig) push(in chat.Inbound) {
	rig.t.Helper()
	if err := rig.c.Receive(context.Background(), in); err != nil {
		rig.t.Fatalf("Receive(%s): %v", in.DeliveryID, err)
	}
}

// pairOwner makes user an owner on telegram, as pairing would.
func pairOwner(t *testing.T, r *Runtime, user string) {
	t.Helper()
	err := r.Store.Write(context.Background(), func(tx *store.Tx) error {
		return tx.AddChatOwner(store.ChatOwner{Platform: chat.Telegram, UserID: user, Name: "Ann", PairedAt: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// dm is a direct message from user, who is the chat.
func dm(delivery, user, text string) chat.Inbound {
	return chat.Inbound{Platform: chat.Telegram, Bot: "bot1", DeliveryID: delivery, Kind: chat.KindMessage,
		Chat: chat.Chat{ID: user, Direct: true}, Sender: chat.Sender{ID: user, Name: "Ann", IsChat: true},
		MessageID: "in-" + delivery, Text: text}
}

// groupMsg is a message in group chatID from user.
func groupMsg(delivery, chatID, user, text string, mentioned bool) chat.Inbound {
	return chat.Inbound{Platform: chat.Telegram, Bot: "bot1", DeliveryID: delivery, Kind: chat.KindMessage,
		Chat: chat.Chat{ID: chatID, Title: "friends"}, Sender: chat.Sender{ID: user, Name: "Bob"},
		MessageID: "in-" + delivery, Text: text, Mentioned: mentioned}
}

// waitFor polls cond until it holds; the limit only keeps a broken test
// from hanging, it is not a timing assertion.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// inboxState is the state of the delivery's inbox row ("" when none).
func inboxState(t *testing.T, r *Runtime, delivery string) string {
	t.Helper()
	for _, st := range []string{inboxReceived, inboxRunning, inboxHandled, inboxIgnored, inboxInterrupted} {
		rows, err := r.Store.InboxByState(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			if row.DeliveryID == delivery {
				return st
			}
		}
	}
	return ""
}

// auditRules lists the rules of the audit records so far.
func auditRules(t *testing.T, r *Runtime) []string {
	t.Helper()
	page, err := r.Admin().Audit(context.Background(), chatAuditQuery())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rec := range page.Records {
		out = append(out, rec.Rule)
	}
	return out
}

func containsText(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func chatAuditQuery() channel.AuditQuery { return channel.AuditQuery{Limit: 500} }

// What the chat core (internal/chats) writes and records, as the owner
// and the database see it. These tests drive it through the whole
// Runtime (a real turn, a real approval), so they name its words and its
// stored states, not its identifiers; its own tests use those.
const (
	inboxReceived    = "received"
	inboxRunning     = "running"
	inboxHandled     = "handled"
	inboxIgnored     = "ignored"
	inboxInterrupted = "interrupted"

	trustGuest    = "guest"
	guestMaxChars = 4000 // what a guest's message puts before the model

	privateNotice     = "This bot is private: it answers its owner only."
	leaveNotice       = "This bot answers only in chats its owner allowed, so it is leaving."
	newSession        = "Started a new conversation."
	interruptedNotice = "A message of yours was interrupted by a restart of homard and was not run again; its tools may have acted. `homard audit` on the computer shows what ran."

	pressRefused  = "This button is not for you."
	pressAnswered = "This card was already answered or has expired."
	pressOnceOnly = "This card can only be approved once or denied; it is still waiting."
	pressNoAlways = "This card can be approved once or for this session, not always; it is still waiting."
)

// parseButton reads a card button's data, "a:<approval id>:<hash12>:<o|s|a|d>".
func parseButton(data string) (id, h12 string, c channel.Choice, ok bool) {
	f := strings.Split(data, ":")
	if len(f) != 4 || f[0] != "a" || f[1] == "" || len(f[2]) != 12 {
		return "", "", "", false
	}
	c, ok = map[string]channel.Choice{"o": channel.Once, "s": channel.Session, "a": channel.Always, "d": channel.Deny}[f[3]]
	return f[1], f[2], c, ok
}

// answeredText is what a press on a card is acknowledged with.
func answeredText(c channel.Choice) string {
	switch c {
	case channel.Once:
		return "Approved once"
	case channel.Session:
		return "Approved for this session"
	case channel.Always:
		return "Approved always"
	}
	return "Denied"
}
