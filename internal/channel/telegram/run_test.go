package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	tt "github.com/homard/homard/internal/channel/telegram/telegramtest"
)

func offsetOf(c tt.Call) int64 {
	num, _ := c.Params()["offset"].(json.Number) // absent: 0
	n, _ := num.Int64()
	return n
}

// TestRunConfirmsOnlySavedUpdates: an update whose Receive failed is not
// confirmed (the next poll's offset does not pass it) and comes again;
// once saved, the offset moves past it and the next update follows.
func TestRunConfirmsOnlySavedUpdates(t *testing.T) {
	fake := newFake(t)
	a := fake.Say(tt.Message{From: owner, Text: "first"})
	b := fake.Say(tt.Message{From: owner, Text: "second"})

	type seen struct {
		delivery   string
		maxOffset  int64
		stillQueue bool
	}
	var log []seen
	s := newSink(func(n int, in chat.Inbound) error {
		var max int64
		for _, c := range fake.Calls("getUpdates") {
			max = maxOf(max, offsetOf(c))
		}
		log = append(log, seen{in.DeliveryID, max, contains(fake.Pending(), a.UpdateID)})
		if n == 0 {
			return errors.New("disk full")
		}
		return nil
	})
	bot := testBot(fake, nil)
	stop, _ := run(t, bot, s)
	for range 3 {
		s.next(t)
	}
	// The twin: success moves on, to an offset past b.
	for n := 1; ; n++ {
		calls, err := fake.WaitCalls(ctxT(t), "getUpdates", n)
		if err != nil {
			t.Fatalf("no poll with offset %d after the last delivery: %v", b.UpdateID+1, err)
		}
		if offsetOf(calls[n-1]) == b.UpdateID+1 {
			break
		}
	}
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("Run after cancel = %v; want context.Canceled", err)
	}
	// a and b come in one batch. Receive fails for a: Run asks again from
	// the same offset (0: nothing confirmed), so a comes again; once a
	// and b are saved, the next poll confirms both.
	want := []seen{
		{id(a.UpdateID), 0, true},
		{id(a.UpdateID), 0, true},
		{id(b.UpdateID), 0, true},
	}
	if !reflect.DeepEqual(log, want) {
		t.Errorf("deliveries (id, highest offset asked, a still queued) = %+v; want %+v", log, want)
	}
	if p := fake.Pending(); len(p) != 0 {
		t.Errorf("Pending after both were saved = %v; want none", p)
	}
}

// TestRunRestartGetsUnsavedUpdate: homard stops while the core could not
// save an update (a crash between receiving and saving); the next Run gets
// it again.
func TestRunRestartGetsUnsavedUpdate(t *testing.T) {
	fake := newFake(t)
	u := fake.Say(tt.Message{From: owner, Text: "do not lose me"})
	failing := newSink(func(int, chat.Inbound) error { return errors.New("database is locked") })
	stop, _ := run(t, testBot(fake, nil), failing)
	if in := failing.next(t); in.DeliveryID != id(u.UpdateID) {
		t.Fatalf("first delivery = %q; want %d", in.DeliveryID, u.UpdateID)
	}
	stop()

	saving := newSink(nil)
	run(t, testBot(fake, nil), saving)
	if in := saving.next(t); in.DeliveryID != id(u.UpdateID) || in.Text != "do not lose me" {
		t.Errorf("after restart got %q %q; want update %d again", in.DeliveryID, in.Text, u.UpdateID)
	}
}

// TestRunPollParameters: the wanted update kinds are listed explicitly and
// the poll is long.
func TestRunPollParameters(t *testing.T) {
	fake := newFake(t)
	run(t, testBot(fake, nil), newSink(nil))
	calls, err := fake.WaitCalls(ctxT(t), "getUpdates", 1)
	if err != nil {
		t.Fatal(err)
	}
	var p getUpdatesParams
	if err := json.Unmarshal(calls[0].Body, &p); err != nil {
		t.Fatal(err)
	}
	want := []string{"message", "edited_message", "channel_post", "callback_query", "my_chat_member"}
	if !reflect.DeepEqual(p.AllowedUpdates, want) || p.Timeout != 30 {
		t.Errorf("getUpdates params = %+v; want allowed_updates %v and timeout 30", p, want)
	}
}

// TestRunConflict: two pollers for one bot keep ending each other's polls
// with 409; one of them stops with chat.ErrConflict and the other goes on.
func TestRunConflict(t *testing.T) {
	fake := newFake(t)
	sinks := []*sink{newSink(nil), newSink(nil)}
	stop0, done0 := run(t, testBot(fake, nil), sinks[0])
	if _, err := fake.WaitCalls(ctxT(t), "getUpdates", 1); err != nil {
		t.Fatal(err)
	}
	stop1, done1 := run(t, testBot(fake, nil), sinks[1])
	var err error
	survivor, stopSurvivor := sinks[1], stop1
	select {
	case err = <-done0:
	case err = <-done1:
		survivor, stopSurvivor = sinks[0], stop0
	case <-ctxT(t).Done():
		t.Fatal("neither poller stopped on 409")
	}
	if !errors.Is(err, chat.ErrConflict) || !strings.Contains(err.Error(), "only one bot instance") {
		t.Errorf("stopped poller's Run = %v; want chat.ErrConflict with Telegram's description", err)
	}
	// The twin: the remaining poller still receives.
	u := fake.Say(tt.Message{From: owner, Text: "still here"})
	if in := survivor.next(t); in.DeliveryID != id(u.UpdateID) {
		t.Errorf("remaining poller got %q; want %d", in.DeliveryID, u.UpdateID)
	}
	if err := stopSurvivor(); !errors.Is(err, context.Canceled) {
		t.Errorf("remaining poller's Run = %v; want context.Canceled", err)
	}
}

// TestRunConflictCount: one or two 409s in a row (a one-off getUpdates
// from elsewhere) do not stop Run; three do.
func TestRunConflictCount(t *testing.T) {
	conflict := tt.Failure{Code: 409, Description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}
	for _, n := range []int{1, 2, 3} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			fake := newFake(t)
			for range n {
				fake.Fail("getUpdates", conflict)
			}
			u := fake.Say(tt.Message{From: owner, Text: "hi"})
			s := newSink(nil)
			stop, done := run(t, testBot(fake, nil), s)
			if n < conflictLimit {
				if in := s.next(t); in.DeliveryID != id(u.UpdateID) {
					t.Errorf("after %d conflicts got %q; want %d", n, in.DeliveryID, u.UpdateID)
				}
				if err := stop(); !errors.Is(err, context.Canceled) {
					t.Errorf("Run = %v; want context.Canceled", err)
				}
				return
			}
			select {
			case err := <-done:
				if !errors.Is(err, chat.ErrConflict) {
					t.Errorf("Run after %d conflicts = %v; want chat.ErrConflict", n, err)
				}
			case <-ctxT(t).Done():
				t.Fatalf("Run did not stop after %d conflicts", n)
			}
			if len(s.got) != 0 {
				t.Errorf("the sink got %d deliveries; want none", len(s.got))
			}
		})
	}
}

// TestRunRetries: failures that may pass (5xx, a proxy's HTML page, 429)
// are retried and the update arrives; a refused token stops Run.
func TestRunRetries(t *testing.T) {
	fake := newFake(t)
	fake.Fail("getMe", tt.Failure{Code: 502, Body: "<html>Bad Gateway</html>"})
	fake.Fail("getUpdates",
		tt.Failure{Code: 500, Description: "Internal Server Error"},
		tt.Failure{Code: 502, Body: "<html>Bad Gateway</html>"},
		tt.Failure{Code: 429, Description: "Too Many Requests: retry after 0"},
	)
	u := fake.Say(tt.Message{From: owner, Text: "after the storm"})
	s := newSink(nil)
	run(t, testBot(fake, nil), s)
	if in := s.next(t); in.DeliveryID != id(u.UpdateID) {
		t.Errorf("got %q; want %d", in.DeliveryID, u.UpdateID)
	}
	if n := len(fake.Calls("getUpdates")); n < 4 {
		t.Errorf("getUpdates calls = %d; want the 3 failures and a success", n)
	}
}

func TestRunUnauthorized(t *testing.T) {
	fake := newFake(t)
	bad := New(Options{Token: "123:wrong", APIBase: fake.URL})
	err := bad.Run(ctxT(t), newSink(nil))
	if !errors.Is(err, chat.ErrUnauthorized) {
		t.Errorf("Run with a wrong token = %v; want chat.ErrUnauthorized", err)
	}
}

func TestInfo(t *testing.T) {
	fake := newFake(t)
	cases := []struct {
		name    string
		token   string
		want    chat.BotInfo
		wantErr error
	}{
		{"the right token", fake.Token(), chat.BotInfo{ID: "7000000001", Username: "homard_test_bot", Name: "Homard"}, nil},
		{"a wrong token", "7000000001:nope", chat.BotInfo{}, chat.ErrUnauthorized},
		{"a malformed token", "no/such", chat.BotInfo{}, chat.ErrUnauthorized},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := New(Options{Token: c.token, APIBase: fake.URL}).Info(ctxT(t))
			if got != c.want || !errors.Is(err, c.wantErr) {
				t.Errorf("Info = %+v, %v; want %+v, %v", got, err, c.want, c.wantErr)
			}
		})
	}
}

func maxOf(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func contains(list []int64, x int64) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

// TestRunUndecodableUpdate: an update with a field of an unexpected type is
// still handed over (as other, by its id) before it is confirmed, and the
// next update follows.
func TestRunUndecodableUpdate(t *testing.T) {
	fake := newFake(t)
	bad := fake.Push(map[string]any{"message": map[string]any{"message_id": "not a number", "text": 5}})
	good := fake.Say(tt.Message{From: owner, Text: "fine"})
	s := newSink(nil)
	run(t, testBot(fake, nil), s)
	if in := s.next(t); in.DeliveryID != id(bad) || in.Kind != chat.KindOther {
		t.Errorf("undecodable update gave %q %q; want %d as %q", in.DeliveryID, in.Kind, bad, chat.KindOther)
	}
	if in := s.next(t); in.DeliveryID != id(good.UpdateID) || in.Kind != chat.KindMessage {
		t.Errorf("next update gave %q %q; want %d as a message", in.DeliveryID, in.Kind, good.UpdateID)
	}
}

func TestBackoff(t *testing.T) {
	b := New(Options{RetryMin: time.Second, RetryMax: time.Minute})
	cases := []struct {
		failures int
		lo, hi   time.Duration
	}{
		{1, 500 * time.Millisecond, time.Second},
		{2, time.Second, 2 * time.Second},
		{4, 4 * time.Second, 8 * time.Second},
		{7, 30 * time.Second, time.Minute},
		{100, 30 * time.Second, time.Minute},
	}
	for _, c := range cases {
		for range 50 {
			if d := b.backoff(c.failures); d < c.lo || d > c.hi {
				t.Fatalf("backoff(%d) = %v; want within [%v, %v]", c.failures, d, c.lo, c.hi)
			}
		}
	}
}
