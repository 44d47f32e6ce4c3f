package chats

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/store/storetest"
)

// fakeAdapter is an in-memory chat.Adapter: it records what homard sends.
type fakeAdapter struct {
	mu    sync.Mutex // guards calls, edits
	calls []chat.Outbound
	edits []string // "chat/message: text"
}

var _ chat.Adapter = (*fakeAdapter)(nil)

func (f *fakeAdapter) Platform() string { return chat.Telegram }
func (f *fakeAdapter) MaxChars() int    { return 4096 }
func (f *fakeAdapter) Info(context.Context) (chat.BotInfo, error) {
	return chat.BotInfo{ID: "bot1", Username: "homard_bot", Name: "homard"}, nil
}
func (f *fakeAdapter) Run(ctx context.Context, _ chat.Sink) error { <-ctx.Done(); return nil }
func (f *fakeAdapter) Send(_ context.Context, m chat.Outbound) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, m)
	return fmt.Sprintf("m%d", len(f.calls)), nil
}
func (f *fakeAdapter) Edit(_ context.Context, chatID, messageID string, m chat.Outbound) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.edits = append(f.edits, chatID+"/"+messageID+": "+m.Text)
	return nil
}
func (f *fakeAdapter) AckPress(context.Context, chat.Press, string) error { return nil }
func (f *fakeAdapter) Typing(context.Context, string) error               { return nil }
func (f *fakeAdapter) Leave(context.Context, string) error                { return nil }

// sentTexts is the texts of the parts sent to chatID.
func (f *fakeAdapter) sentTexts(chatID string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, m := range f.calls {
		if m.ChatID == chatID {
			out = append(out, m.Text)
		}
	}
	return out
}

// countTurns is a Turner that answers "ok" and counts the turns it ran:
// the chat core's tests run no model.
type countTurns struct {
	mu   sync.Mutex // guards n, last
	n    int
	last channel.TurnRequest
}

func (c *countTurns) Turn(_ context.Context, req channel.TurnRequest) (channel.TurnResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.last = req
	return channel.TurnResult{Text: "ok"}, nil
}

// lastRequest is the request of the last turn run.
func (c *countTurns) lastRequest() channel.TurnRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

func (c *countTurns) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// serviceApprovals is Approvals over a real approval.Service, answering
// as the owner "owner" (app's adapter does the same with its config's
// owner and its one waiter).
type serviceApprovals struct{ s *approval.Service }

func (a serviceApprovals) Get(ctx context.Context, id string) (approval.Approval, error) {
	return a.s.Get(ctx, id)
}

func (a serviceApprovals) Answer(ctx context.Context, id string, c channel.Choice) (approval.Approval, error) {
	if c == channel.Deny {
		return a.s.Deny(ctx, id, "owner")
	}
	return a.s.Approve(ctx, id, "owner", approval.Scope(c))
}

func (a serviceApprovals) Deny(ctx context.Context, id, approver string) (approval.Approval, error) {
	return a.s.Deny(ctx, id, approver)
}

func (a serviceApprovals) Await(ctx context.Context, id string, within, poll time.Duration) (channel.Choice, error) {
	_, w, err := a.s.Wait(ctx, id, within, poll)
	switch {
	case err != nil:
		return channel.Leave, err
	case w == approval.Answered:
		return channel.Recorded, nil
	}
	return channel.Lapsed, nil
}

// noTokens is a vault with no channel secret.
type noTokens struct{}

func (noTokens) ChannelToken(name, platform string) (string, error) {
	return "", fmt.Errorf("no secret %s", name)
}

// chatRig is the chat service on a real database in a temporary folder, a
// fake adapter, a clock a test may move, and a runner started on demand.
type chatRig struct {
	t     *testing.T
	st    *store.Store
	s     *Service
	fake  *fakeAdapter
	turns *countTurns
	c     *Runner
	stop  func()

	mu sync.Mutex // guards at
	at time.Time  // the clock; zero: time.Now
}

// newChatRig returns a rig whose runner is running.
func newChatRig(t *testing.T) *chatRig {
	t.Helper()
	st := storetest.Open(t)
	rg := &chatRig{t: t, st: st, fake: &fakeAdapter{}, turns: &countTurns{}, stop: func() {}}
	cfg := config.Default(config.Paths{})
	rg.s = New(Deps{
		Store: st, Config: cfg, ConfigFile: "config.toml", Turns: rg.turns,
		Approvals: serviceApprovals{approval.New(st, approval.Options{Now: rg.now})},
		Redactor:  secrets.NewRedactor(), Tokens: noTokens{},
		Untrusted: func(s string) string { return "[UNTRUSTED]" + s + "[END_UNTRUSTED]" },
		Now:       rg.now,
	})
	rg.start()
	return rg
}

func (rg *chatRig) now() time.Time {
	rg.mu.Lock()
	defer rg.mu.Unlock()
	if rg.at.IsZero() {
		return time.Now()
	}
	return rg.at
}

func (rg *chatRig) setNow(at time.Time) {
	rg.mu.Lock()
	defer rg.mu.Unlock()
	rg.at = at
}

// start runs a Runner over the fake adapter until the test ends or stop
// is called.
func (rg *chatRig) start() {
	rg.c = rg.s.NewRunner(Options{Adapters: []chat.Adapter{rg.fake}, Poll: 10 * time.Millisecond, ApprovalWait: time.Minute,
		Backoff: func(int) time.Duration { return 5 * time.Millisecond }, TypingEvery: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = rg.c.Run(ctx) }()
	var once sync.Once
	rg.stop = func() { once.Do(func() { cancel(); <-done }) }
	rg.t.Cleanup(rg.stop)
}

func (rg *chatRig) push(in chat.Inbound) {
	rg.t.Helper()
	if err := rg.c.Receive(context.Background(), in); err != nil {
		rg.t.Fatalf("Receive(%s): %v", in.DeliveryID, err)
	}
}

// dm is a direct message from user, who is the chat.
func dm(delivery, user, text string) chat.Inbound {
	return chat.Inbound{Platform: chat.Telegram, Bot: "bot1", DeliveryID: delivery, Kind: chat.KindMessage,
		Chat: chat.Chat{ID: user, Direct: true}, Sender: chat.Sender{ID: user, Name: "Ann", IsChat: true},
		MessageID: "in-" + delivery, Text: text}
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
func (rg *chatRig) inboxState(delivery string) string {
	rg.t.Helper()
	for _, st := range []string{inboxReceived, inboxRunning, inboxHandled, inboxIgnored, inboxInterrupted} {
		rows, err := rg.st.InboxByState(context.Background(), st)
		if err != nil {
			rg.t.Fatal(err)
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
func (rg *chatRig) auditRules() []string {
	rg.t.Helper()
	rows, err := rg.st.ListAudit(context.Background(), 0, 500)
	if err != nil {
		rg.t.Fatal(err)
	}
	var out []string
	for _, row := range rows {
		out = append(out, row.Rule)
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

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
