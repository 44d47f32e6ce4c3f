package feishu

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/feishu/feishutest"
)

func newPair(t *testing.T) (*feishutest.Server, *Adapter) {
	t.Helper()
	srv := feishutest.New()
	t.Cleanup(srv.Close)
	a := New(Options{AppID: srv.AppID, AppSecret: srv.AppSecret, APIBase: srv.URL(), Backoff: 10 * time.Millisecond})
	return srv, a
}

func TestAPIBase(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", FeishuBase},
		{LarkBase, LarkBase},
		{"https://open.larksuite.com/", LarkBase},
		{"http://127.0.0.1:9/", "http://127.0.0.1:9"},
	}
	for _, c := range cases {
		if got := New(Options{APIBase: c.in}).base; got != c.want {
			t.Errorf("New(APIBase %q).base = %q; want %q", c.in, got, c.want)
		}
	}
	// And a base is really used: Info against the fake through its URL
	// with a trailing slash.
	srv := feishutest.New()
	defer srv.Close()
	a := New(Options{AppID: srv.AppID, AppSecret: srv.AppSecret, APIBase: srv.URL() + "/"})
	info, err := a.Info(context.Background())
	if err != nil || info.ID != srv.BotOpenID || info.Name != srv.BotName {
		t.Errorf("Info() = %+v, %v; want id %q name %q", info, err, srv.BotOpenID, srv.BotName)
	}
	if a.Platform() != chat.Feishu || a.MaxChars() != maxChars || a.Typing(context.Background(), "oc_1") != nil {
		t.Errorf("Platform/MaxChars/Typing = %q/%d; want feishu/%d and a nil Typing", a.Platform(), a.MaxChars(), maxChars)
	}
}

func TestInfoRefusedSecret(t *testing.T) {
	srv := feishutest.New()
	defer srv.Close()
	a := New(Options{AppID: srv.AppID, AppSecret: "wrong", APIBase: srv.URL()})
	_, err := a.Info(context.Background())
	if !errors.Is(err, chat.ErrUnauthorized) {
		t.Errorf("Info with a wrong secret: err = %v; want chat.ErrUnauthorized", err)
	}
	if err != nil && strings.Contains(err.Error(), "wrong") {
		t.Errorf("error %q shows the secret", err)
	}
}

func TestTokenCachedAndRefreshedWhenInvalid(t *testing.T) {
	srv, a := newPair(t)
	ctx := context.Background()
	for range 3 {
		if _, err := a.Info(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.TokensIssued(); n != 1 {
		t.Errorf("three calls fetched %d tokens; want 1 (cached)", n)
	}
	srv.ExpireTokens() // the fake now answers 99991663 to the cached token
	if _, err := a.Info(ctx); err != nil {
		t.Fatalf("Info after the token was invalidated: %v; want a refresh and success", err)
	}
	if n := srv.TokensIssued(); n != 2 {
		t.Errorf("tokens issued = %d; want 2 (one refresh)", n)
	}
}

func content(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("content %q is not JSON: %v", s, err)
	}
	return m
}

func TestSendText(t *testing.T) {
	srv, a := newPair(t)
	ctx := context.Background()
	text := `hi <at user_id="all"></at> and <AT user_id="ou_x">x</At> 1<2`
	id, err := a.Send(ctx, chat.Outbound{ChatID: "oc_1", Text: text, Key: "outbox-17"})
	if err != nil || id == "" {
		t.Fatalf("Send = %q, %v", id, err)
	}
	sent := srv.Sent()
	if len(sent) != 1 {
		t.Fatalf("fake got %d messages; want 1", len(sent))
	}
	m := sent[0]
	if m.ID != id || m.ChatID != "oc_1" || m.MsgType != "text" || m.UUID != "outbox-17" {
		t.Errorf("sent %+v; want id %s, chat oc_1, text, uuid outbox-17", m, id)
	}
	got := content(t, m.Content)["text"].(string)
	for _, tag := range []string{"<at", "<AT", "</at", "</At"} {
		if strings.Contains(got, tag) {
			t.Errorf("sent text %q still holds %q: model text could mention someone", got, tag)
		}
	}
	if strings.ReplaceAll(got, "\u200b", "") != text {
		t.Errorf("sent text %q reads differently from %q once zero-width spaces are removed", got, text)
	}
	// Same key again: Feishu's uuid guard answers the first message.
	id2, err := a.Send(ctx, chat.Outbound{ChatID: "oc_1", Text: text, Key: "outbox-17"})
	if err != nil || id2 != id || len(srv.Sent()) != 1 {
		t.Errorf("second Send with the same key = %q, %v, %d messages; want %q and still 1", id2, err, len(srv.Sent()), id)
	}
}

func TestSendUUID(t *testing.T) {
	long := strings.Repeat("k", 80)
	cases := []struct{ key, want string }{
		{"row-1", "row-1"},
		{strings.Repeat("x", 50), strings.Repeat("x", 50)},
	}
	for _, c := range cases {
		if got := sendUUID(c.key); got != c.want {
			t.Errorf("sendUUID(%q) = %q; want %q", c.key, got, c.want)
		}
	}
	h := sendUUID(long)
	if len(h) > 50 || h == sendUUID(long+"x") || h != sendUUID(long) {
		t.Errorf("sendUUID(80 chars) = %q: want ≤ 50 chars, stable, distinct per key", h)
	}
	srv, a := newPair(t)
	if _, err := a.Send(context.Background(), chat.Outbound{ChatID: "oc_1", Text: "x", Key: long}); err != nil {
		t.Fatalf("Send with an 80-char key: %v", err)
	}
	if u := srv.Sent()[0].UUID; u != h {
		t.Errorf("uuid sent = %q; want %q", u, h)
	}
}

func TestSendCardAndReply(t *testing.T) {
	srv, a := newPair(t)
	ctx := context.Background()
	buttons := []chat.Button{{Label: "Approve once", Data: "a:1:abc"}, {Label: "Deny", Data: "d:1:abc"}}
	id, err := a.Send(ctx, chat.Outbound{ChatID: "oc_1", Text: "run <at>rm</at>?", Buttons: buttons, ReplyTo: "om_9"})
	if err != nil {
		t.Fatal(err)
	}
	m := srv.Sent()[0]
	if m.ID != id || m.MsgType != "interactive" || m.ReplyTo != "om_9" || m.ChatID != "" {
		t.Fatalf("sent %+v; want an interactive reply to om_9", m)
	}
	var card struct {
		Config   map[string]bool `json:"config"`
		Elements []struct {
			Tag  string `json:"tag"`
			Text struct {
				Tag, Content string
			} `json:"text"`
			Actions []struct {
				Tag  string `json:"tag"`
				Text struct {
					Tag, Content string
				} `json:"text"`
				Value map[string]string `json:"value"`
			} `json:"actions"`
		} `json:"elements"`
	}
	if err := json.Unmarshal([]byte(m.Content), &card); err != nil {
		t.Fatal(err)
	}
	if len(card.Elements) != 2 || card.Elements[0].Text.Tag != "plain_text" || card.Elements[0].Text.Content != "run <at>rm</at>?" {
		t.Fatalf("card elements = %+v; want the text as plain_text, then an action row", card.Elements)
	}
	row := card.Elements[1].Actions
	if card.Elements[1].Tag != "action" || len(row) != 2 || row[0].Value["d"] != "a:1:abc" || row[1].Text.Content != "Deny" {
		t.Errorf("action row = %+v; want two buttons with value {d: data}", row)
	}
	if !card.Config["update_multi"] {
		t.Errorf("card config = %v; want update_multi (PATCH needs it)", card.Config)
	}
	if _, err := a.Send(ctx, chat.Outbound{ChatID: "oc_1", Buttons: []chat.Button{{Label: "x", Data: strings.Repeat("d", 65)}}}); err == nil {
		t.Error("Send with 65 bytes of button data succeeded; want an error")
	}
}

func TestSendRateLimited(t *testing.T) {
	srv, a := newPair(t)
	srv.RateLimit(1, 7)
	_, err := a.Send(context.Background(), chat.Outbound{ChatID: "oc_1", Text: "x"})
	var re *chat.RetryError
	if !errors.As(err, &re) || re.After != 7*time.Second {
		t.Fatalf("Send when rate limited: err = %v; want a RetryError after 7s", err)
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != codeRateLimited || ae.Status != http.StatusTooManyRequests {
		t.Errorf("wrapped error = %v; want APIError 429/99991400", err)
	}
	// Twin: the next send goes through.
	if _, err := a.Send(context.Background(), chat.Outbound{ChatID: "oc_1", Text: "x"}); err != nil {
		t.Errorf("Send after the limit: %v", err)
	}
}

func TestEdit(t *testing.T) {
	srv, a := newPair(t)
	ctx := context.Background()
	card, _ := a.Send(ctx, chat.Outbound{ChatID: "oc_1", Text: "approve?", Buttons: []chat.Button{{Label: "Deny", Data: "d"}}})
	text, _ := a.Send(ctx, chat.Outbound{ChatID: "oc_1", Text: "hello"})
	if err := a.Edit(ctx, "oc_1", card, chat.Outbound{Text: "answered in the web UI"}); err != nil {
		t.Fatalf("Edit card: %v", err)
	}
	if err := a.Edit(ctx, "oc_1", text, chat.Outbound{Text: "<at user_id=\"all\"></at>"}); err != nil {
		t.Fatalf("Edit text: %v", err)
	}
	e := srv.Edits()
	if len(e) != 2 || e[0].Method != http.MethodPatch || e[0].MessageID != card || e[1].Method != http.MethodPut || e[1].MsgType != "text" {
		t.Fatalf("edits = %+v; want PATCH of the card, PUT of the text", e)
	}
	if strings.Contains(e[0].Content, `"action"`) {
		t.Errorf("edited card %s still has an action row", e[0].Content)
	}
	if strings.Contains(e[1].Content, "<at") {
		t.Errorf("edited text %s holds an <at> tag", e[1].Content)
	}
	if err := a.Edit(ctx, "oc_1", text, chat.Outbound{Text: "x", Buttons: []chat.Button{{Label: "y", Data: "y"}}}); err == nil {
		t.Error("Edit adding buttons to a text message succeeded; want an error")
	}
}

func TestLeave(t *testing.T) {
	srv, a := newPair(t)
	if err := a.Leave(context.Background(), "oc_group"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Left(); len(got) != 1 || got[0] != "oc_group" {
		t.Errorf("left = %v; want [oc_group]", got)
	}
}
