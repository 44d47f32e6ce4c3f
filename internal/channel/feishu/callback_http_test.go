package feishu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/feishu/feishutest"
)

const cbKey = "encrypt-key-cb"

// callbackRig is an adapter in callback mode, running against a fake
// (for bot info and chat modes), with a recording sink.
type callbackRig struct {
	a   *Adapter
	srv *feishutest.Server
	snk *sink
	now time.Time
}

func newCallbackRig(t *testing.T, start bool) *callbackRig {
	t.Helper()
	srv := feishutest.New()
	t.Cleanup(srv.Close)
	srv.SetChatMode("oc_dm", "p2p")
	now := time.Unix(1764600000, 0)
	a := New(Options{AppID: srv.AppID, AppSecret: srv.AppSecret, APIBase: srv.URL(), Callback: true, EncryptKey: cbKey,
		Now: func() time.Time { return now }, AckWait: 20 * time.Second})
	rig := &callbackRig{a: a, srv: srv, snk: newSink(), now: now}
	if start {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx, rig.snk) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Run in callback mode = %v; want context.Canceled", err)
			}
		})
		deadline := time.Now().Add(20 * time.Second)
		for {
			a.mu.Lock()
			ready := a.sink != nil
			a.mu.Unlock()
			if ready {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("Run never lent its sink")
			}
			time.Sleep(time.Millisecond)
		}
	}
	return rig
}

// request is a callback as Feishu sends it: the payload encrypted, the
// body signed at ts with key.
func (rig *callbackRig) request(t *testing.T, payload []byte, ts time.Time, key string) *http.Request {
	t.Helper()
	body := []byte(`{"encrypt":"` + encrypt(t, cbKey, payload) + `"}`)
	r := httptest.NewRequest(http.MethodPost, "/callbacks/feishu", bytes.NewReader(body))
	tss := strconv.FormatInt(ts.Unix(), 10)
	r.Header.Set("X-Lark-Request-Timestamp", tss)
	r.Header.Set("X-Lark-Request-Nonce", "nonce-1")
	r.Header.Set("X-Lark-Signature", sign(tss, "nonce-1", key, body))
	return r
}

func (rig *callbackRig) serve(r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	rig.a.ServeHTTP(w, r)
	return w
}

// TestCallbackHTTP: a signed event is saved and answered 200; the same
// event again is 200 and not saved twice; a wrong signature, a stale or
// future timestamp, GET, an oversized body and a request before Run are
// refused and save nothing; a failed save is 500 (Feishu retries).
func TestCallbackHTTP(t *testing.T) {
	rig := newCallbackRig(t, true)
	ev := dm("ev-cb-1", "hello")
	if w := rig.serve(rig.request(t, ev, rig.now, cbKey)); w.Code != http.StatusOK {
		t.Fatalf("signed event = %d %s; want 200", w.Code, w.Body)
	}
	if got := rig.snk.saved(); len(got) != 1 || got[0].DeliveryID != "ev-cb-1" || got[0].Text != "hello" || !got[0].Chat.Direct || got[0].Bot != rig.srv.BotOpenID {
		t.Fatalf("saved %+v; want the one direct message for the bot", got)
	}
	refused := []struct {
		name string
		req  *http.Request
		want int
	}{
		{"replay", rig.request(t, ev, rig.now.Add(time.Minute), cbKey), http.StatusOK},
		{"wrong key", rig.request(t, dm("ev-cb-2", "x"), rig.now, "another-key"), http.StatusUnauthorized},
		{"stale", rig.request(t, dm("ev-cb-3", "x"), rig.now.Add(-6*time.Minute), cbKey), http.StatusUnauthorized},
		{"future", rig.request(t, dm("ev-cb-4", "x"), rig.now.Add(6*time.Minute), cbKey), http.StatusUnauthorized},
		{"GET", httptest.NewRequest(http.MethodGet, "/callbacks/feishu", nil), http.StatusMethodNotAllowed},
		{"oversized", httptest.NewRequest(http.MethodPost, "/callbacks/feishu", strings.NewReader(strings.Repeat("a", MaxCallbackBody+1))), http.StatusRequestEntityTooLarge},
		{"unsigned event", httptest.NewRequest(http.MethodPost, "/callbacks/feishu", bytes.NewReader(dm("ev-cb-5", "x"))), http.StatusUnauthorized},
	}
	for _, tt := range refused {
		if w := rig.serve(tt.req); w.Code != tt.want {
			t.Errorf("%s = %d %s; want %d", tt.name, w.Code, w.Body, tt.want)
		}
	}
	if got := rig.snk.saved(); len(got) != 1 {
		t.Errorf("saved %d events after the refused ones; want still 1", len(got))
	}

	rig.snk.mu.Lock()
	rig.snk.fail = 1
	rig.snk.mu.Unlock()
	if w := rig.serve(rig.request(t, dm("ev-cb-6", "x"), rig.now, cbKey)); w.Code != http.StatusInternalServerError {
		t.Errorf("failed save = %d; want 500", w.Code)
	}
	if w := rig.serve(rig.request(t, dm("ev-cb-6", "x"), rig.now, cbKey)); w.Code != http.StatusOK {
		t.Errorf("the retry after a failed save = %d; want 200", w.Code)
	}

	notRunning := newCallbackRig(t, false)
	if w := notRunning.serve(notRunning.request(t, dm("ev-cb-7", "x"), notRunning.now, cbKey)); w.Code != http.StatusServiceUnavailable {
		t.Errorf("before Run = %d; want 503", w.Code)
	}
}

// TestCallbackChallenge: url_verification is answered with its challenge
// when signed, or unsigned but encrypted with the encrypt key; not when
// encrypted with another key or sent in clear without a signature.
func TestCallbackChallenge(t *testing.T) {
	rig := newCallbackRig(t, false)
	payload := []byte(`{"challenge":"ch-123","token":"vt","type":"url_verification"}`)
	unsigned := func(body []byte) *http.Request {
		return httptest.NewRequest(http.MethodPost, "/callbacks/feishu", bytes.NewReader(body))
	}
	tests := []struct {
		name string
		req  *http.Request
		want int
	}{
		{"signed", rig.request(t, payload, rig.now, cbKey), http.StatusOK},
		{"unsigned, encrypted", unsigned([]byte(`{"encrypt":"` + encrypt(t, cbKey, payload) + `"}`)), http.StatusOK},
		{"unsigned, other key", unsigned([]byte(`{"encrypt":"` + encrypt(t, "other", payload) + `"}`)), http.StatusUnauthorized},
		{"unsigned, clear", unsigned(payload), http.StatusUnauthorized},
	}
	for _, tt := range tests {
		w := rig.serve(tt.req)
		var got struct {
			Challenge string `json:"challenge"`
		}
		_ = json.Unmarshal(w.Body.Bytes(), &got)
		if w.Code != tt.want || (tt.want == http.StatusOK) != (got.Challenge == "ch-123") {
			t.Errorf("%s = %d %s; want %d (with the challenge when 200)", tt.name, w.Code, w.Body, tt.want)
		}
	}
}

// TestCallbackPressToast: a card press's 200 carries the notice AckPress
// hands over, as a toast.
func TestCallbackPressToast(t *testing.T) {
	rig := newCallbackRig(t, true)
	rig.snk.during = func() {
		go rig.a.AckPress(context.Background(), chat.Press{ID: "card-tok"}, "Approved once")
	}
	w := rig.serve(rig.request(t, feishutest.CardPress("ev-p1", "card-tok", "ou_owner", "oc_dm", "om_card", "a:x:y:o"), rig.now, cbKey))
	var got struct {
		Toast struct {
			Content string `json:"content"`
		} `json:"toast"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK || got.Toast.Content != "Approved once" {
		t.Errorf("press = %d %s; want 200 with the toast Approved once", w.Code, w.Body)
	}
	if s := rig.snk.saved(); len(s) != 1 || s[0].Kind != chat.KindPress || !s[0].Sender.IsChat || s[0].Press.Data != "a:x:y:o" {
		t.Errorf("saved %+v; want the owner's press in their p2p chat", s)
	}
}

// TestCallbackModeIsPushed: in callback mode Feishu pushes to every
// replica behind a load balancer, so the adapter says so (chat.Pushed:
// every replica receives); with the long connection it does not (one
// replica holds the connection).
func TestCallbackModeIsPushed(t *testing.T) {
	var p chat.Pushed = New(Options{Callback: true})
	if !p.Pushed() {
		t.Error("callback mode: Pushed() = false; want true")
	}
	if New(Options{}).Pushed() {
		t.Error("long connection: Pushed() = true; want false")
	}
}
