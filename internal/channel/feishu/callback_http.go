package feishu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/homard/homard/internal/channel/chat"
)

// MaxCallbackBody caps one callback request's body. Feishu's events and
// card callbacks are a few kilobytes.
const MaxCallbackBody = 1 << 20

// runCallback is Run in callback mode: it learns the bot's id, then
// lends sink to ServeHTTP until ctx ends. It opens no connection.
func (a *Adapter) runCallback(ctx context.Context, sink chat.Sink) error {
	if _, err := a.Info(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	a.mu.Lock()
	a.sink = sink
	a.mu.Unlock()
	<-ctx.Done()
	a.mu.Lock()
	a.sink = nil
	a.mu.Unlock()
	return ctx.Err()
}

// Pushed reports whether Feishu pushes deliveries to ServeHTTP (callback
// mode), so that every replica behind a load balancer receives them
// (chat.Pushed).
func (a *Adapter) Pushed() bool { return a.opt.Callback }

// ServeHTTP answers Feishu's HTTP callbacks (events and card presses) in
// callback mode (Options.Callback). It authenticates each request by
// Feishu's signature, not by any cookie or token of homard's:
//
//   - only POST, body at most MaxCallbackBody (405, 413);
//   - VerifyCallback: the signature over timestamp, nonce, encrypt key and
//     body, compared in constant time; the timestamp within 5 minutes
//     (else 401); an encrypted body is decrypted;
//   - a url_verification request is answered with its challenge. Feishu
//     sends it unsigned (its SDKs check it by the verification token), so
//     an unsigned one is answered only when its body was encrypted with
//     the encrypt key; it changes nothing;
//   - an event id already handled (the inbox key: Sink.Receive returns nil
//     for it) is answered 200 without being handled again;
//   - anything else is decoded and saved with Sink.Receive; 200 only after
//     Receive returned nil (else 500, and Feishu retries). A card press's
//     200 carries the notice AckPress hands over (within Options.AckWait
//     of its arrival) as a toast.
//
// Before Run has started (or after it ended) it answers 503.
func (a *Adapter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		callbackReply(w, http.StatusMethodNotAllowed, map[string]string{"msg": "POST only"})
		return
	}
	if !a.opt.Callback || a.opt.EncryptKey == "" {
		callbackReply(w, http.StatusNotFound, map[string]string{"msg": "callback mode is off"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxCallbackBody))
	if err != nil {
		callbackReply(w, http.StatusRequestEntityTooLarge, map[string]string{"msg": "body too large or unreadable"})
		return
	}
	arrived := a.opt.Now()
	plain, err := VerifyCallback(r.Header, body, a.opt.EncryptKey, arrived)
	if err != nil {
		if c, ok := a.unsignedChallenge(r.Header, body); ok {
			callbackReply(w, http.StatusOK, map[string]string{"challenge": c})
			return
		}
		a.report(err)
		callbackReply(w, http.StatusUnauthorized, map[string]string{"msg": "signature or timestamp refused"})
		return
	}
	if c, ok := challengeOf(plain); ok {
		callbackReply(w, http.StatusOK, map[string]string{"challenge": c})
		return
	}
	a.mu.Lock()
	sink := a.sink
	a.mu.Unlock()
	if sink == nil {
		callbackReply(w, http.StatusServiceUnavailable, map[string]string{"msg": "homard is starting; try again"})
		return
	}
	ctx := r.Context()
	in, err := a.Decode(ctx, plain)
	switch {
	case errors.Is(err, ErrNotEvent):
		callbackReply(w, http.StatusBadRequest, map[string]string{"msg": "not a schema 2.0 event"})
		return
	case err != nil:
		a.report(err)
		callbackReply(w, http.StatusInternalServerError, map[string]string{"msg": "could not read the event; retry"})
		return
	}
	if a.handled(in.DeliveryID) {
		callbackReply(w, http.StatusOK, struct{}{})
		return
	}
	var notice chan string
	if in.Kind == chat.KindPress && in.Press.ID != "" {
		notice = a.expectAck(in.Press.ID)
		defer a.dropAck(in.Press.ID)
	}
	if err := sink.Receive(ctx, in); err != nil {
		a.report(fmt.Errorf("feishu callback: save event: %w", err))
		callbackReply(w, http.StatusInternalServerError, map[string]string{"msg": "not saved; retry"})
		return
	}
	a.remember(in.DeliveryID)
	if notice == nil {
		callbackReply(w, http.StatusOK, struct{}{})
		return
	}
	answer, ok := a.pressAnswer(ctx, notice, arrived)
	if !ok {
		return
	}
	callbackReply(w, http.StatusOK, answer)
}

// unsignedChallenge answers Feishu's url_verification, which it sends
// without a signature: only an unsigned request whose body decrypts with
// the encrypt key and is a url_verification.
func (a *Adapter) unsignedChallenge(h http.Header, body []byte) (string, bool) {
	if h.Get("X-Lark-Signature") != "" {
		return "", false
	}
	var enc struct {
		Encrypt string `json:"encrypt"`
	}
	if json.Unmarshal(body, &enc) != nil || enc.Encrypt == "" {
		return "", false
	}
	plain, err := decrypt(enc.Encrypt, a.opt.EncryptKey)
	if err != nil {
		return "", false
	}
	return challengeOf(plain)
}

// challengeOf reads a url_verification request's challenge.
func challengeOf(plain []byte) (string, bool) {
	var v struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
	}
	if json.Unmarshal(plain, &v) != nil || v.Type != "url_verification" || v.Challenge == "" {
		return "", false
	}
	return v.Challenge, true
}

func (a *Adapter) report(err error) {
	if a.opt.Report != nil {
		a.opt.Report(err)
	}
}

func callbackReply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
