package feishu

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/feishu/feishutest"
)

// FuzzDecode: any payload decodes to an error or to an Inbound whose
// delivery id is set and whose press fields agree with its kind.
func FuzzDecode(f *testing.F) {
	f.Add(feishutest.Message{EventID: "e1", MessageID: "om_1", ChatID: "oc_1", ChatType: "p2p", Sender: "ou_1", Text: "hi"}.Event())
	f.Add(feishutest.Message{EventID: "e2", ChatType: "group", MsgType: "post", Content: `{"content":[[{"tag":"at","user_id":"@_user_1"}]]}`}.Event())
	f.Add(feishutest.BotAdded("e3", "oc_2", "ou_2", "x"))
	f.Add(feishutest.Other("e4", "x.y"))
	f.Add([]byte(`{"schema":"2.0","header":{"event_id":"e","event_type":"im.message.receive_v1"},"event":null}`))
	// No HTTP client: a card press must fail (no chat mode), not panic.
	a := New(Options{APIBase: "http://127.0.0.1:1", HTTPClient: &http.Client{Timeout: time.Millisecond}})
	f.Fuzz(func(t *testing.T, payload []byte) {
		in, err := a.Decode(context.Background(), payload)
		if err != nil {
			return
		}
		if in.DeliveryID == "" || in.Platform != chat.Feishu {
			t.Fatalf("Decode(%q) = %+v: no delivery id or platform", payload, in)
		}
		if (in.Kind == chat.KindPress) != (in.Press != nil) {
			t.Fatalf("Decode(%q): kind %s with press %+v", payload, in.Kind, in.Press)
		}
		if in.Sender.IsChat && !in.Chat.Direct {
			t.Fatalf("Decode(%q): IsChat outside a direct chat", payload)
		}
	})
}

// FuzzVerifyCallback: no input panics, and nothing passes without the
// right signature.
func FuzzVerifyCallback(f *testing.F) {
	f.Add("1764600000", "n", "sig", []byte(`{"encrypt":"AAAA"}`))
	f.Add("x", "", "", []byte(`{}`))
	now := time.Unix(1764600000, 0)
	f.Fuzz(func(t *testing.T, ts, nonce, sig string, body []byte) {
		h := http.Header{}
		h.Set("X-Lark-Request-Timestamp", ts)
		h.Set("X-Lark-Request-Nonce", nonce)
		h.Set("X-Lark-Signature", sig)
		if _, err := VerifyCallback(h, body, "key", now); err == nil && sig != sign(h.Get("X-Lark-Request-Timestamp"), h.Get("X-Lark-Request-Nonce"), "key", body) {
			t.Fatalf("accepted a wrong signature %q", sig)
		}
	})
}
