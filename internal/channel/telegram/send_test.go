package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	tt "github.com/homard/homard/internal/channel/telegram/telegramtest"
)

// TestSendBody checks what sendMessage carries: plain text (no
// parse_mode), previews off, the reply, the inline keyboard.
func TestSendBody(t *testing.T) {
	fake := newFake(t)
	fake.AddChat(tt.Private(owner))
	bot := testBot(fake, nil)
	first, err := bot.Send(ctxT(t), chat.Outbound{ChatID: id(owner.ID), Text: "*not bold* <b>nor this</b>"})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	second, err := bot.Send(ctxT(t), chat.Outbound{ChatID: id(owner.ID), Text: "approve?", ReplyTo: first, Key: "outbox-7",
		Buttons: []chat.Button{{Label: "Approve once", Data: "ap:12:0123456789ab:o"}, {Label: "Deny", Data: "ap:12:0123456789ab:d"}}})
	if err != nil {
		t.Fatalf("Send with buttons: %v", err)
	}
	calls := fake.Calls("sendMessage")
	if len(calls) != 2 {
		t.Fatalf("sendMessage calls = %d; want 2", len(calls))
	}
	var plain, card map[string]any
	json.Unmarshal(calls[0].Body, &plain)
	json.Unmarshal(calls[1].Body, &card)
	wantPlain := map[string]any{
		"chat_id": float64(owner.ID), "text": "*not bold* <b>nor this</b>",
		"link_preview_options": map[string]any{"is_disabled": true},
	}
	if !reflect.DeepEqual(plain, wantPlain) {
		t.Errorf("plain body = %v; want %v (no parse_mode, previews off)", plain, wantPlain)
	}
	n, _ := strconv.ParseInt(first, 10, 64)
	wantCard := map[string]any{
		"chat_id": float64(owner.ID), "text": "approve?",
		"link_preview_options": map[string]any{"is_disabled": true},
		"reply_parameters":     map[string]any{"message_id": float64(n), "allow_sending_without_reply": true},
		"reply_markup": map[string]any{"inline_keyboard": []any{[]any{
			map[string]any{"text": "Approve once", "callback_data": "ap:12:0123456789ab:o"},
			map[string]any{"text": "Deny", "callback_data": "ap:12:0123456789ab:d"},
		}}},
	}
	if !reflect.DeepEqual(card, wantCard) {
		t.Errorf("card body = %v; want %v", card, wantCard)
	}
	msgs := fake.Messages(owner.ID)
	if len(msgs) != 2 || id(msgs[0].ID) != first || id(msgs[1].ID) != second || len(msgs[1].Buttons) != 2 || msgs[1].ReplyTo != n {
		t.Errorf("fake holds %+v; want the two messages with ids %s, %s", msgs, first, second)
	}
}

// TestSendErrors: which refusals are retried (and after how long) and
// which are not; what is refused before any call.
func TestSendErrors(t *testing.T) {
	fake := newFake(t)
	fake.AddChat(tt.Private(owner))
	bot := testBot(fake, nil)
	ok := chat.Outbound{ChatID: id(owner.ID), Text: "hi"}
	type want struct {
		retry   bool
		after   time.Duration
		errText string // in the error; "" for success
		noCall  bool   // refused before any request
	}
	cases := []struct {
		name string
		fail *tt.Failure
		out  chat.Outbound
		want want
	}{
		{"success", nil, ok, want{}},
		{"429 with retry_after", &tt.Failure{Code: 429, Description: "Too Many Requests: retry after 7", RetryAfter: 7}, ok, want{retry: true, after: 7 * time.Second, errText: "429"}},
		{"500", &tt.Failure{Code: 500, Description: "Internal Server Error"}, ok, want{retry: true, errText: "500"}},
		{"502 from a proxy", &tt.Failure{Code: 502, Body: "<html>bad gateway</html>"}, ok, want{retry: true, errText: "502"}},
		{"403 blocked by the user", &tt.Failure{Code: 403, Description: "Forbidden: bot was blocked by the user"}, ok, want{errText: "blocked"}},
		{"400 chat not found", nil, chat.Outbound{ChatID: "31337", Text: "hi"}, want{errText: "chat not found"}},
		{"button data of 64 bytes", nil, chat.Outbound{ChatID: id(owner.ID), Text: "x", Buttons: []chat.Button{{Label: "ok", Data: strings.Repeat("é", 32)}}}, want{}},
		{"button data of 65 bytes", nil, chat.Outbound{ChatID: id(owner.ID), Text: "x", Buttons: []chat.Button{{Label: "ok", Data: strings.Repeat("é", 32) + "x"}}}, want{errText: "65 bytes", noCall: true}},
		{"empty button data", nil, chat.Outbound{ChatID: id(owner.ID), Text: "x", Buttons: []chat.Button{{Label: "ok"}}}, want{errText: "0 bytes", noCall: true}},
		{"4096 units", nil, chat.Outbound{ChatID: id(owner.ID), Text: strings.Repeat("😀", 2048)}, want{}},
		{"4097 units", nil, chat.Outbound{ChatID: id(owner.ID), Text: strings.Repeat("😀", 2048) + "!"}, want{errText: "4097 UTF-16 units", noCall: true}},
		{"empty text", nil, chat.Outbound{ChatID: id(owner.ID), Text: " \n"}, want{errText: "empty", noCall: true}},
		{"chat id not a number", nil, chat.Outbound{ChatID: "@someone", Text: "hi"}, want{errText: "not a Telegram id", noCall: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.fail != nil {
				fake.Fail("sendMessage", *c.fail)
			}
			before := len(fake.Calls("sendMessage"))
			msgID, err := bot.Send(ctxT(t), c.out)
			var re *chat.RetryError
			isRetry := errors.As(err, &re)
			switch {
			case c.want.errText == "" && (err != nil || msgID == ""):
				t.Fatalf("Send = %q, %v; want a message id", msgID, err)
			case c.want.errText != "" && (err == nil || !strings.Contains(err.Error(), c.want.errText)):
				t.Fatalf("Send = %q, %v; want an error with %q", msgID, err, c.want.errText)
			case isRetry != c.want.retry:
				t.Errorf("Send error %v: RetryError = %v; want %v", err, isRetry, c.want.retry)
			case isRetry && re.After != c.want.after:
				t.Errorf("RetryError.After = %v; want %v", re.After, c.want.after)
			}
			if calls := len(fake.Calls("sendMessage")) - before; c.want.noCall != (calls == 0) {
				t.Errorf("requests sent = %d; want none: %v", calls, c.want.noCall)
			}
		})
	}
}

// TestSendNetworkFailureIsRetried: no server at all is a RetryError.
func TestSendNetworkFailureIsRetried(t *testing.T) {
	fake := tt.New(tt.Options{})
	fake.Close()
	_, err := New(Options{Token: fake.Token(), APIBase: fake.URL}).Send(ctxT(t), chat.Outbound{ChatID: "1", Text: "hi"})
	var re *chat.RetryError
	if !errors.As(err, &re) || re.After != 0 {
		t.Errorf("Send to a closed server = %v; want a RetryError with no delay", err)
	}
	// The twin: a send whose context ended is not retried.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = New(Options{Token: fake.Token(), APIBase: fake.URL}).Send(ctx, chat.Outbound{ChatID: "1", Text: "hi"})
	if errors.As(err, &re) || !errors.Is(err, context.Canceled) {
		t.Errorf("Send with an ended context = %v; want context.Canceled, not a RetryError", err)
	}
}

func TestEdit(t *testing.T) {
	fake := newFake(t)
	fake.AddChat(tt.Private(owner))
	bot := testBot(fake, nil)
	buttons := []chat.Button{{Label: "Approve once", Data: "a"}, {Label: "Deny", Data: "d"}}
	msg, err := bot.Send(ctxT(t), chat.Outbound{ChatID: id(owner.ID), Text: "approve?", Buttons: buttons})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		chatID  string
		msgID   string
		out     chat.Outbound
		wantErr string
		want    tt.SentMessage
	}{
		{"new text keeps buttons", id(owner.ID), msg, chat.Outbound{Text: "approve? (2)", Buttons: buttons}, "",
			tt.SentMessage{Text: "approve? (2)", Buttons: []tt.Button{{Text: "Approve once", Data: "a"}, {Text: "Deny", Data: "d"}}, Edits: 1}},
		{"no buttons removes them", id(owner.ID), msg, chat.Outbound{Text: "Approved in the web UI"}, "",
			tt.SentMessage{Text: "Approved in the web UI", Edits: 2}},
		{"the same edit again is not modified, a success", id(owner.ID), msg, chat.Outbound{Text: "Approved in the web UI"}, "",
			tt.SentMessage{Text: "Approved in the web UI", Edits: 2}},
		{"a message that does not exist", id(owner.ID), "999999", chat.Outbound{Text: "x"}, "message to edit not found",
			tt.SentMessage{Text: "Approved in the web UI", Edits: 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := bot.Edit(ctxT(t), c.chatID, c.msgID, c.out)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("Edit = %v; want error %q", err, c.wantErr)
			}
			got := fake.Messages(owner.ID)[0]
			c.want.ID = got.ID
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("message after Edit = %+v; want %+v", got, c.want)
			}
		})
	}
	last := fake.Calls("editMessageText")
	var body map[string]any
	json.Unmarshal(last[len(last)-1].Body, &body)
	if _, has := body["parse_mode"]; has {
		t.Errorf("editMessageText body has parse_mode: %v", body)
	}
}

func TestAckTypingLeave(t *testing.T) {
	fake := newFake(t)
	fake.AddChat(tt.Private(owner))
	fake.AddChat(group)
	bot := testBot(fake, nil)
	_, q := fake.Press(tt.Press{From: owner, Chat: tt.Private(owner), MessageID: 1, Data: "x"})
	ctx := ctxT(t)
	steps := []struct {
		name    string
		do      func() error
		wantErr string
	}{
		{"ack with a notice", func() error { return bot.AckPress(ctx, chat.Press{ID: q}, "Approved") }, ""},
		{"ack of an answered query", func() error { return bot.AckPress(ctx, chat.Press{ID: q}, "") }, "query is too old"},
		{"ack without an id", func() error { return bot.AckPress(ctx, chat.Press{}, "") }, "no callback query id"},
		{"typing", func() error { return bot.Typing(ctx, id(owner.ID)) }, ""},
		{"leave a group", func() error { return bot.Leave(ctx, id(group.ID)) }, ""},
		{"typing in the group left", func() error { return bot.Typing(ctx, id(group.ID)) }, "not a member"},
	}
	for _, s := range steps {
		err := s.do()
		if s.wantErr == "" && err != nil || s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)) {
			t.Errorf("%s = %v; want error %q", s.name, err, s.wantErr)
		}
	}
	acks := fake.Calls("answerCallbackQuery")
	var body map[string]any
	json.Unmarshal(acks[0].Body, &body)
	if body["callback_query_id"] != q || body["text"] != "Approved" {
		t.Errorf("answerCallbackQuery body = %v", body)
	}
	if !fake.Left(group.ID) {
		t.Errorf("the fake says the bot did not leave the group")
	}
	if bot.MaxChars() != 4096 || bot.Platform() != chat.Telegram {
		t.Errorf("MaxChars, Platform = %d, %q", bot.MaxChars(), bot.Platform())
	}
}

// TestTokenNeverShown: no error and no log line holds the token, whatever
// failed (Go's url.Error quotes the URL, which holds it).
func TestTokenNeverShown(t *testing.T) {
	fake := newFake(t)
	token := fake.Token()
	closed := tt.New(tt.Options{})
	closed.Close()
	// A server that redirects to a URL holding the token, in a loop.
	loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path+"?again="+token, http.StatusFound)
	}))
	t.Cleanup(loop.Close)

	var logs bytes.Buffer
	logger := testBot(fake, &logs).log
	bot := func(base string) *Bot {
		return New(Options{Token: token, APIBase: base, Logger: logger, RetryMin: time.Millisecond, RetryMax: time.Millisecond})
	}
	ctx := ctxT(t)
	fake.AddChat(tt.Private(owner))
	fake.Fail("sendMessage", tt.Failure{Code: 429, Description: "Too Many Requests: retry after 1", RetryAfter: 1})
	var errs []error
	_, err := bot(closed.URL).Info(ctx)
	errs = append(errs, err)
	_, err = bot(closed.URL).Send(ctx, chat.Outbound{ChatID: "1", Text: "hi"})
	errs = append(errs, err)
	_, err = bot(loop.URL).Info(ctx)
	errs = append(errs, err)
	_, err = bot("http://[::1").Info(ctx)
	errs = append(errs, err)
	_, err = bot(fake.URL).Send(ctx, chat.Outbound{ChatID: id(owner.ID), Text: "hi"})
	errs = append(errs, err)
	errs = append(errs, New(Options{Token: "123:wrong-" + token, APIBase: fake.URL}).Run(ctx, newSink(nil)))

	// Run against a closed server logs its retries until ctx ends.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	errs = append(errs, bot(closed.URL).Run(short, newSink(nil)))

	for i, err := range errs {
		if err == nil {
			t.Errorf("case %d: no error", i)
			continue
		}
		if strings.Contains(err.Error(), token) || strings.Contains(err.Error(), "AAFake") {
			t.Errorf("case %d: error shows the token: %v", i, err)
		}
	}
	if strings.Contains(logs.String(), "AAFake") {
		t.Errorf("logs show the token:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "getMe failed") {
		t.Errorf("logs = %q; want the retries logged (the check above would pass on empty logs)", logs.String())
	}
}
