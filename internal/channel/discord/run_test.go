package discord_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/discord"
	"github.com/homard/homard/internal/channel/discord/discordtest"
)

// guard bounds a wait that only a bug makes long; no test asserts a time.
const guard = 20 * time.Second

// sink records deliveries; fail, when set, decides a Receive's error from
// the delivery and its try number (1 first).
type sink struct {
	mu    sync.Mutex
	got   []chat.Inbound
	tries map[string]int
	fail  func(in chat.Inbound, try int) error
	ch    chan chat.Inbound
}

func newSink() *sink {
	return &sink{tries: map[string]int{}, ch: make(chan chat.Inbound, 100)}
}

func (s *sink) Receive(_ context.Context, in chat.Inbound) error {
	s.mu.Lock()
	s.tries[in.DeliveryID]++
	try := s.tries[in.DeliveryID]
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		if err := fail(in, try); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.got = append(s.got, in)
	s.mu.Unlock()
	s.ch <- in
	return nil
}

func (s *sink) next(t *testing.T) chat.Inbound {
	t.Helper()
	select {
	case in := <-s.ch:
		return in
	case <-time.After(guard):
		t.Fatal("no delivery reached the sink")
		return chat.Inbound{}
	}
}

func (s *sink) triesOf(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tries[id]
}

// start runs an adapter against a fresh fake until the test ends.
func start(t *testing.T, snk *sink, o discord.Options) (*discordtest.Server, *discord.Adapter) {
	t.Helper()
	fake := discordtest.New(discordtest.Options{})
	t.Cleanup(fake.Close)
	if o.Token == "" {
		o.Token = "test-token"
	}
	o.APIBase = fake.APIBase()
	o.RetryWait = time.Millisecond
	o.ReconnectWait = 5 * time.Millisecond
	a, err := discord.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, snk) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() after cancel = %v; want nil", err)
		}
	})
	wctx, wcancel := context.WithTimeout(context.Background(), guard)
	defer wcancel()
	if err := fake.WaitReady(wctx); err != nil {
		t.Fatal(err)
	}
	return fake, a
}

func TestRunMapsGatewayEvents(t *testing.T) {
	snk := newSink()
	fake, a := start(t, snk, discord.Options{})
	bot := fake.BotID()

	ids := fake.Identified()
	if len(ids) != 1 || ids[0].Intents != int(discord.Intents) || ids[0].Token != "Bot test-token" {
		t.Fatalf("IDENTIFY = %+v; want one with intents %d and the bot token", ids, discord.Intents)
	}

	events := []struct {
		name string
		t    string
		d    map[string]any
		want func(chat.Inbound) bool
	}{
		{"owner's dm", "MESSAGE_CREATE", map[string]any{"id": "11", "channel_id": "7", "author": map[string]any{"id": "42", "username": "ann"}, "content": "hello"},
			func(in chat.Inbound) bool {
				return in.Kind == chat.KindMessage && in.Chat.Direct && in.Sender.IsChat && !in.Sender.Bot && in.Text == "hello" && in.Bot == bot
			}},
		{"guild, no mention", "MESSAGE_CREATE", map[string]any{"id": "12", "channel_id": "8", "guild_id": "9", "author": map[string]any{"id": "43"}, "content": "hi all"},
			func(in chat.Inbound) bool {
				return !in.Chat.Direct && in.Chat.Group == "9" && !in.Mentioned && !in.Sender.IsChat
			}},
		{"guild, mention", "MESSAGE_CREATE", map[string]any{"id": "13", "channel_id": "8", "guild_id": "9", "author": map[string]any{"id": "43"}, "content": "<@" + bot + "> hi", "mentions": []any{map[string]any{"id": bot}}},
			func(in chat.Inbound) bool { return !in.Chat.Direct && in.Mentioned && !in.Sender.Bot }},
		{"bot author", "MESSAGE_CREATE", map[string]any{"id": "14", "channel_id": "7", "author": map[string]any{"id": "55", "bot": true}, "content": "x"},
			func(in chat.Inbound) bool { return in.Sender.Bot && !in.Sender.IsChat }},
		{"webhook", "MESSAGE_CREATE", map[string]any{"id": "15", "channel_id": "8", "guild_id": "9", "webhook_id": "77", "author": map[string]any{"id": "77"}, "content": "x"},
			func(in chat.Inbound) bool { return in.Sender.Bot && !in.Sender.IsChat }},
		{"edit", "MESSAGE_UPDATE", map[string]any{"id": "11", "channel_id": "7", "content": "hello!", "edited_timestamp": "2026-01-01T00:00:00Z"},
			func(in chat.Inbound) bool { return in.Kind == chat.KindOther && in.Text == "" }},
		{"press", "INTERACTION_CREATE", map[string]any{"id": "900", "type": 3, "token": "itok", "channel_id": "7", "user": map[string]any{"id": "42"}, "message": map[string]any{"id": "555"}, "data": map[string]any{"custom_id": "ap:1"}},
			func(in chat.Inbound) bool {
				return in.Kind == chat.KindPress && in.Press != nil && *in.Press == chat.Press{ID: "900", Token: "itok", MessageID: "555", Data: "ap:1"} && in.Sender.IsChat
			}},
		{"join", "GUILD_CREATE", map[string]any{"id": "9", "name": "Friends", "joined_at": "2026-01-02T03:04:05Z"},
			func(in chat.Inbound) bool {
				return in.Kind == chat.KindJoin && in.Chat.ID == "9" && in.Chat.Title == "Friends"
			}},
	}
	for _, e := range events {
		if err := fake.Dispatch(e.t, e.d); err != nil {
			t.Fatal(err)
		}
		in := snk.next(t)
		if in.Platform != chat.Discord || !e.want(in) {
			t.Errorf("%s: delivered %+v (press %+v); not what Discord's fields say", e.name, in, in.Press)
		}
		if e.t == "INTERACTION_CREATE" {
			// The press is acknowledged within the test, as app does
			// within Discord's 3 s.
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			err := a.AckPress(ctx, *in.Press, "")
			cancel()
			if err != nil {
				t.Fatalf("AckPress() = %v", err)
			}
			calls := fake.CallsTo("POST", "/interactions/900/itok/callback")
			if len(calls) != 1 || string(calls[0].Body) != `{"type":6}` {
				t.Errorf("interaction callback calls = %+v; want one {\"type\":6}", calls)
			}
		}
	}
}

func TestRunRetriesAFailedReceiveThenDrops(t *testing.T) {
	snk := newSink()
	snk.fail = func(in chat.Inbound, try int) error {
		switch {
		case in.DeliveryID == "21" && try < 3:
			return errors.New("database is locked")
		case in.DeliveryID == "22":
			return errors.New("disk full")
		}
		return nil
	}
	var logs lockedBuffer
	fake, _ := start(t, snk, discord.Options{ReceiveTries: 4, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, id := range []string{"21", "22", "23"} {
		if err := fake.Dispatch("MESSAGE_CREATE", map[string]any{"id": id, "channel_id": "7", "author": map[string]any{"id": "42"}, "content": "private words"}); err != nil {
			t.Fatal(err)
		}
	}
	if in := snk.next(t); in.DeliveryID != "21" {
		t.Fatalf("first delivery saved = %s; want 21 (after two failed tries)", in.DeliveryID)
	}
	if in := snk.next(t); in.DeliveryID != "23" {
		t.Fatalf("second delivery saved = %s; want 23 (22 is dropped, and does not block what follows)", in.DeliveryID)
	}
	if got := snk.triesOf("21"); got != 3 {
		t.Errorf("tries of 21 = %d; want 3", got)
	}
	if got := snk.triesOf("22"); got != 4 {
		t.Errorf("tries of 22 = %d; want ReceiveTries (4), then dropped", got)
	}
	log := logs.String()
	if !strings.Contains(log, "delivery dropped") || !strings.Contains(log, "delivery=22") {
		t.Errorf("log = %q; want the drop of delivery 22 logged", log)
	}
	if strings.Contains(log, "private words") || strings.Contains(log, "test-token") {
		t.Errorf("log holds message text or the token: %q", log)
	}
}

// lockedBuffer is a log sink written from the gateway's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestRunResumesAfterALostConnection(t *testing.T) {
	snk := newSink()
	fake, _ := start(t, snk, discord.Options{})
	msg := func(id string) map[string]any {
		return map[string]any{"id": id, "channel_id": "7", "author": map[string]any{"id": "42"}, "content": "x"}
	}
	if err := fake.Dispatch("MESSAGE_CREATE", msg("31")); err != nil {
		t.Fatal(err)
	}
	if in := snk.next(t); in.DeliveryID != "31" {
		t.Fatalf("delivery = %s; want 31", in.DeliveryID)
	}
	fake.Disconnect()
	// Sent while the connection is down: Discord keeps it for the resume.
	if err := fake.Dispatch("MESSAGE_CREATE", msg("32")); err != nil {
		t.Fatal(err)
	}
	if in := snk.next(t); in.DeliveryID != "32" {
		t.Fatalf("delivery after reconnect = %s; want 32", in.DeliveryID)
	}
	if got, ids := fake.Resumes(), len(fake.Identified()); got != 1 || ids != 1 {
		t.Errorf("resumes = %d, identifies = %d; want the session resumed once, identified once", got, ids)
	}
}

func TestRunStopsOnARefusedToken(t *testing.T) {
	fake := discordtest.New(discordtest.Options{})
	defer fake.Close()
	a, err := discord.New(discord.Options{Token: "wrong-token", APIBase: fake.APIBase()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	err = a.Run(ctx, newSink())
	if !errors.Is(err, chat.ErrUnauthorized) {
		t.Errorf("Run(wrong token) = %v; want chat.ErrUnauthorized", err)
	}
}
