package browser

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// wire is Chromium's end of the pipe: it hands each command homard
// writes to the test.
type wire chan []byte

func (w wire) Write(p []byte) (int, error) {
	w <- append([]byte(nil), p...)
	return len(p), nil
}

func (w wire) Close() error { return nil }

// TestConnInvalidUTF8: a reply and an event whose strings hold a byte
// that is not UTF-8 (a page's title may) still decode, the byte turned
// into U+FFFD, and the command went out as Chromium reads it.
func TestConnInvalidUTF8(t *testing.T) {
	sent := make(wire, 4)
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	c := newConn(sent, pr, nil, &wg)
	defer func() {
		pw.Close()
		wg.Wait()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	events, stop := session{c: c, id: "S1"}.Subscribe(evPageFrameStartedLoading)
	defer stop()
	type answer struct {
		res getTargetInfoResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		a.err = session{c: c}.Call(ctx, cmdTargetGetTargetInfo, &targetParams{TargetID: "T1"}, &a.res)
		done <- a
	}()
	var cmd []byte
	select {
	case cmd = <-sent:
	case <-ctx.Done():
		t.Fatal("no command was written")
	}
	if want := `{"id":1,"method":"Target.getTargetInfo","params":{"targetId":"T1"}}` + "\x00"; string(cmd) != want {
		t.Errorf("wrote %q; want %q", cmd, want)
	}
	for _, m := range []string{
		`{"method":"Page.frameStartedLoading","sessionId":"S1","params":{"frameId":"F` + "\xff" + `1"}}`,
		`{"id":1,"result":{"targetInfo":{"targetId":"T1","type":"page","title":"caf` + "\xe9 \xff" + `","url":"http://a/"}}}`,
	} {
		if _, err := io.WriteString(pw, m+"\x00"); err != nil {
			t.Fatal(err)
		}
	}
	a := <-done
	if a.err != nil {
		t.Fatalf("Call: %v", a.err)
	}
	if a.res.TargetInfo == nil || a.res.TargetInfo.Title != "caf\uFFFD \uFFFD" {
		t.Errorf("result = %+v; want the title %q", a.res.TargetInfo, "caf\uFFFD \uFFFD")
	}
	select {
	case raw := <-events:
		var e frameEvent
		if err := jsonv2.Unmarshal(raw, &e, jsonv2.AllowInvalidUTF8(true)); err != nil {
			t.Fatalf("event params %q: %v", raw, err)
		}
		if e.FrameID != "F\uFFFD1" {
			t.Errorf("event frameId = %q; want %q", e.FrameID, "F\uFFFD1")
		}
	case <-ctx.Done():
		t.Fatal("the event did not arrive")
	}
}

// TestConnClosed: once Chromium's end closes, a call fails with
// errConnClosed and subscriptions end.
func TestConnClosed(t *testing.T) {
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	c := newConn(make(wire, 4), pr, nil, &wg)
	events, _ := session{c: c}.Subscribe(evPageLoadEventFired)
	pw.Close()
	wg.Wait()
	if _, ok := <-events; ok {
		t.Error("a subscription outlived the connection")
	}
	err := session{c: c}.Call(context.Background(), cmdBrowserGetVersion, nil, nil)
	if !errors.Is(err, errConnClosed) {
		t.Errorf("Call after close = %v; want errConnClosed", err)
	}
}

// FuzzDecodeMessage: every message the JSON v2 decoder (with invalid
// UTF-8 allowed, as conn used it) read, encoding/json reads too, to the
// same id, method and session.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"id":3,"result":{}}`,
		`{"id":4,"error":{"code":-32000,"message":"No node","data":"x"}}`,
		`{"method":"Fetch.requestPaused","sessionId":"AB","params":{"requestId":"1","request":{"url":"http://a/` + "\xff" + `"}}}`,
		`{"method":"Page.loadEventFired","params":{"timestamp":1.5}}`,
		"{\"method\":\"m\xc3\",\"params\":null}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMessage(b)
		// conn's message as it was under JSON v2.
		var old struct {
			ID        int64        `json:"id,omitzero"`
			Method    string       `json:"method,omitzero"`
			Params    jsonv2.Value `json:"params,omitzero"`
			SessionID string       `json:"sessionId,omitzero"`
			Result    jsonv2.Value `json:"result,omitzero"`
			Error     *struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
				Data    string `json:"data,omitzero"`
			} `json:"error,omitzero"`
		}
		if jsonv2.Unmarshal(b, &old, jsonv2.AllowInvalidUTF8(true)) != nil {
			return
		}
		// encoding/json also matches a name in another case ("ID"), which
		// Chromium never writes; JSON v2 ignored it.
		var keys map[string]jsonv2.Value
		if jsonv2.Unmarshal(b, &keys, jsonv2.AllowInvalidUTF8(true)) != nil {
			return
		}
		for k := range keys {
			for _, name := range []string{"id", "method", "params", "sessionId", "result", "error"} {
				if k != name && strings.EqualFold(k, name) {
					return
				}
			}
		}
		if err != nil {
			t.Fatalf("decodeMessage(%q): %v; JSON v2 read it", b, err)
		}
		if m.ID != old.ID || m.Method != old.Method || string(m.SessionID) != old.SessionID || (m.Error == nil) != (old.Error == nil) {
			t.Errorf("decodeMessage(%q) = %d %q %q; JSON v2: %d %q %q", b, m.ID, m.Method, m.SessionID, old.ID, old.Method, old.SessionID)
		}
	})
}
