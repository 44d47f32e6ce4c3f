package discord_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/discord"
	"github.com/homard/homard/internal/channel/discord/discordtest"
)

const token = "test-token"

// rest builds an adapter against a fake without running the gateway.
func rest(t *testing.T) (*discordtest.Server, *discord.Adapter) {
	t.Helper()
	fake := discordtest.New(discordtest.Options{Token: token})
	t.Cleanup(fake.Close)
	a, err := discord.New(discord.Options{Token: token, APIBase: fake.APIBase()})
	if err != nil {
		t.Fatal(err)
	}
	return fake, a
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return c
}

func decode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return m
}

func TestInfo(t *testing.T) {
	_, a := rest(t)
	got, err := a.Info(ctx(t))
	if err != nil || got.ID != "100" || got.Username != "homard" {
		t.Errorf("Info() = %+v, %v; want the fake's bot 100 homard", got, err)
	}
	if a.Platform() != chat.Discord || a.MaxChars() != 2000 {
		t.Errorf("Platform, MaxChars = %s, %d; want discord, 2000", a.Platform(), a.MaxChars())
	}
}

func TestSendBody(t *testing.T) {
	fake, a := rest(t)
	m := chat.Outbound{ChatID: "7", Text: "@everyone look <@42>", ReplyTo: "11", Key: "row-17",
		Buttons: []chat.Button{{Label: "Approve once", Data: "ap:1:abc"}, {Label: "Deny", Data: "ap:1:deny"}}}
	id, err := a.Send(ctx(t), m)
	if err != nil || id == "" {
		t.Fatalf("Send() = %q, %v; want a message id", id, err)
	}
	calls := fake.CallsTo("POST", "/channels/7/messages")
	if len(calls) != 1 || !calls[0].Authorized {
		t.Fatalf("calls = %+v; want one authorized POST /channels/7/messages", calls)
	}
	body := decode(t, calls[0].Body)
	want := map[string]any{
		"content":           m.Text,
		"allowed_mentions":  map[string]any{"parse": []any{}},
		"nonce":             "row-17",
		"enforce_nonce":     true,
		"message_reference": map[string]any{"message_id": "11", "fail_if_not_exists": false},
		"flags":             float64(4),
		"components": []any{map[string]any{"type": float64(1), "components": []any{
			map[string]any{"type": float64(2), "style": float64(2), "label": "Approve once", "custom_id": "ap:1:abc"},
			map[string]any{"type": float64(2), "style": float64(2), "label": "Deny", "custom_id": "ap:1:deny"},
		}}},
	}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("send body =\n%s\nwant\n%v", calls[0].Body, want)
	}

	// The same outbox row sent again (a crash after Discord got it): the
	// nonce makes Discord answer with the first message.
	again, err := a.Send(ctx(t), m)
	if err != nil || again != id {
		t.Errorf("second Send() of the same key = %q, %v; want the first message %q", again, err, id)
	}
	// Its twin: another row is another message.
	m.Key = "row-18"
	if other, err := a.Send(ctx(t), m); err != nil || other == id {
		t.Errorf("Send() of another key = %q, %v; want a new message", other, err)
	}
}

func TestSendLongKeyAndPlainText(t *testing.T) {
	fake, a := rest(t)
	key := strings.Repeat("r", 40)
	if _, err := a.Send(ctx(t), chat.Outbound{ChatID: "7", Text: "hi", Key: key}); err != nil {
		t.Fatal(err)
	}
	body := decode(t, fake.CallsTo("POST", "/channels/7/messages")[0].Body)
	if n, _ := body["nonce"].(string); len(n) != 25 || n == key[:25] {
		t.Errorf("nonce for a 40-character key = %q; want 25 characters of its hash", n)
	}
	for _, absent := range []string{"components", "message_reference"} {
		if _, ok := body[absent]; ok {
			t.Errorf("plain send body has %q: %v", absent, body)
		}
	}
}

func TestSendRefusals(t *testing.T) {
	fake, a := rest(t)
	tests := []struct {
		name string
		m    chat.Outbound
	}{
		{"path in the channel id", chat.Outbound{ChatID: "7/../../users/@me/guilds/9", Text: "x"}},
		{"empty channel id", chat.Outbound{Text: "x"}},
		{"path in the reply id", chat.Outbound{ChatID: "7", ReplyTo: "1?x=2", Text: "x"}},
		{"too long", chat.Outbound{ChatID: "7", Text: strings.Repeat("é", 2001)}},
		{"button data too long", chat.Outbound{ChatID: "7", Text: "x", Buttons: []chat.Button{{Label: "a", Data: strings.Repeat("d", 65)}}}},
	}
	for _, tt := range tests {
		if _, err := a.Send(ctx(t), tt.m); err == nil {
			t.Errorf("Send(%s) = nil error; want a refusal", tt.name)
		}
	}
	if n := len(fake.Calls()); n != 0 {
		t.Errorf("refused sends made %d REST calls: %+v; want none", n, fake.Calls())
	}
	// The twin: 2,000 characters (not bytes) are fine.
	if _, err := a.Send(ctx(t), chat.Outbound{ChatID: "7", Text: strings.Repeat("é", 2000)}); err != nil {
		t.Errorf("Send(2000 characters) = %v; want it sent", err)
	}
}

func TestSendErrors(t *testing.T) {
	tests := []struct {
		name   string
		script func(*discordtest.Server)
		retry  bool
		after  time.Duration
	}{
		{"429 with retry_after", func(f *discordtest.Server) { f.RateLimitNext("POST", "/channels/7/messages", 1.5) }, true, 1500 * time.Millisecond},
		{"500", func(f *discordtest.Server) { f.FailNext("POST", "/channels/7/messages", 500) }, true, 0},
		{"502", func(f *discordtest.Server) { f.FailNext("POST", "/channels/7/messages", 502) }, true, 0},
		{"503", func(f *discordtest.Server) { f.FailNext("POST", "/channels/7/messages", 503) }, true, 0},
		{"403 missing access", func(f *discordtest.Server) { f.FailNext("POST", "/channels/7/messages", 403) }, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, a := rest(t)
			tt.script(fake)
			_, err := a.Send(ctx(t), chat.Outbound{ChatID: "7", Text: "x", Key: "1"})
			var re *chat.RetryError
			if got := errors.As(err, &re); got != tt.retry {
				t.Fatalf("Send() = %v; RetryError %v, want %v", err, got, tt.retry)
			}
			if tt.retry && re.After != tt.after {
				t.Errorf("RetryError.After = %v; want %v", re.After, tt.after)
			}
			if n := len(fake.CallsTo("POST", "/channels/7/messages")); n != 1 {
				t.Errorf("the adapter made %d calls; want 1 (the outbox retries, not the adapter)", n)
			}
			// The twin: the next try goes through.
			if _, err := a.Send(ctx(t), chat.Outbound{ChatID: "7", Text: "x", Key: "1"}); err != nil {
				t.Errorf("Send() after the failure = %v; want it sent", err)
			}
		})
	}
}

func TestTokenNeverInErrors(t *testing.T) {
	const secret = "s3cret-token-value"
	fake := discordtest.New(discordtest.Options{Token: "other"})
	defer fake.Close()
	a, err := discord.New(discord.Options{Token: "Bot " + secret, APIBase: fake.APIBase()})
	if err != nil {
		t.Fatal(err)
	}
	_, infoErr := a.Info(ctx(t))
	if !errors.Is(infoErr, chat.ErrUnauthorized) {
		t.Errorf("Info(refused token) = %v; want chat.ErrUnauthorized", infoErr)
	}
	_, sendErr := a.Send(ctx(t), chat.Outbound{ChatID: "7", Text: "x"})
	ackErr := a.AckPress(ctx(t), chat.Press{ID: "900", Token: "interaction-secret"}, "")

	down, err := discord.New(discord.Options{Token: secret, APIBase: "http://127.0.0.1:1/api/v10"})
	if err != nil {
		t.Fatal(err)
	}
	_, netErr := down.Send(ctx(t), chat.Outbound{ChatID: "7", Text: "x"})
	netAck := down.AckPress(ctx(t), chat.Press{ID: "900", Token: "interaction-secret"}, "")
	var re *chat.RetryError
	if !errors.As(netErr, &re) {
		t.Errorf("Send(unreachable) = %v; want a RetryError", netErr)
	}
	for name, err := range map[string]error{"info": infoErr, "send": sendErr, "ack": ackErr, "network send": netErr, "network ack": netAck} {
		if err == nil {
			t.Errorf("%s: nil error; want one", name)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "interaction-secret") {
			t.Errorf("%s error holds a token: %v", name, err)
		}
	}
}

func TestEditTypingLeaveAck(t *testing.T) {
	fake, a := rest(t)
	id, err := a.Send(ctx(t), chat.Outbound{ChatID: "7", Text: "card", Buttons: []chat.Button{{Label: "Deny", Data: "d"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Edit(ctx(t), "7", id, chat.Outbound{Text: "answered in the web UI"}); err != nil {
		t.Fatalf("Edit() = %v", err)
	}
	edits := fake.CallsTo("PATCH", "/channels/7/messages/"+id)
	if len(edits) != 1 {
		t.Fatalf("edit calls = %+v; want one", edits)
	}
	body := decode(t, edits[0].Body)
	if comps, ok := body["components"].([]any); !ok || len(comps) != 0 || body["content"] != "answered in the web UI" {
		t.Errorf("edit body = %s; want the new content and components [] (buttons removed)", edits[0].Body)
	}
	if got, _ := fake.Message(id); got != "answered in the web UI" {
		t.Errorf("message after edit = %q", got)
	}
	if err := a.Edit(ctx(t), "7", "999999", chat.Outbound{Text: "x"}); err == nil {
		t.Error("Edit(unknown message) = nil; want an error")
	}

	if err := a.Typing(ctx(t), "7"); err != nil || len(fake.CallsTo("POST", "/channels/7/typing")) != 1 {
		t.Errorf("Typing() = %v, calls %+v; want one POST /channels/7/typing", err, fake.CallsTo("POST", "/channels/7/typing"))
	}
	if err := a.Leave(ctx(t), "9"); err != nil || len(fake.CallsTo("DELETE", "/users/@me/guilds/9")) != 1 {
		t.Errorf("Leave(9) = %v; calls %+v; want one DELETE /users/@me/guilds/9", err, fake.Calls())
	}

	if err := a.AckPress(ctx(t), chat.Press{ID: "900", Token: "itok"}, "Only the owner can answer this card."); err != nil {
		t.Fatalf("AckPress(notice) = %v", err)
	}
	acks := fake.CallsTo("POST", "/interactions/900/itok/callback")
	if len(acks) != 1 {
		t.Fatalf("ack calls = %+v", acks)
	}
	got := decode(t, acks[0].Body)
	want := map[string]any{"type": float64(4), "data": map[string]any{
		"content": "Only the owner can answer this card.", "flags": float64(64 | 4), "allowed_mentions": map[string]any{"parse": []any{}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ack body = %s; want an ephemeral message %v", acks[0].Body, want)
	}
	if err := a.AckPress(ctx(t), chat.Press{ID: "900", Token: "a/b"}, ""); err == nil {
		t.Error("AckPress(token with a slash) = nil; want a refusal")
	}
}

func TestLeaveByChannel(t *testing.T) {
	snk := newSink()
	fake, a := start(t, snk, discord.Options{})
	if err := fake.Dispatch("MESSAGE_CREATE", map[string]any{"id": "1", "channel_id": "8", "guild_id": "9", "author": map[string]any{"id": "43"}, "content": "x"}); err != nil {
		t.Fatal(err)
	}
	snk.next(t)
	if err := a.Leave(ctx(t), "8"); err != nil {
		t.Fatal(err)
	}
	if n := len(fake.CallsTo("DELETE", "/users/@me/guilds/9")); n != 1 {
		t.Errorf("Leave(channel 8) calls = %+v; want DELETE of its guild 9", fake.CallsTo("DELETE", "/"))
	}
}

func TestNewRefuses(t *testing.T) {
	for _, o := range []discord.Options{{}, {Token: "  "}, {Token: "x", APIBase: "ftp://x"}, {Token: "x", APIBase: "not a url"}} {
		if _, err := discord.New(o); err == nil {
			t.Errorf("New(%+v) = nil error; want a refusal", o)
		}
	}
	if _, err := discord.New(discord.Options{Token: "x"}); err != nil {
		t.Errorf("New(token only) = %v; want the default base", err)
	}
}
