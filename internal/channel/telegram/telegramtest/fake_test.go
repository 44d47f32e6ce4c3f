package telegramtest

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestEntities(t *testing.T) {
	cases := []struct {
		text string
		want []Entity
	}{
		{"hi @homard_bot", []Entity{{Type: "mention", Offset: 3, Length: 11}}},
		{"😀 @homard_bot!", []Entity{{Type: "mention", Offset: 3, Length: 11}}},
		{"mail a@homard_bot", nil},
		{"@abc is too short", nil},
		{"/start@homard_bot now", []Entity{{Type: "bot_command", Offset: 0, Length: 17}}},
		{"/pair ABC @someone_x", []Entity{{Type: "bot_command", Offset: 0, Length: 5}, {Type: "mention", Offset: 10, Length: 10}}},
		{"not /a command", nil},
	}
	for _, c := range cases {
		if got := Entities(c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Entities(%q) = %+v; want %+v", c.text, got, c.want)
		}
	}
}

// TestWire checks the fake's answers for what the adapter's tests do not
// reach: the envelope for a wrong token, a bad path and an unknown method.
func TestWire(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	cases := []struct {
		path string
		code int
		desc string
	}{
		{"/bot" + s.Token() + "/getMe", 200, ""},
		{"/bot123:wrong/getMe", 401, "Unauthorized"},
		{"/getMe", 404, "Not Found"},
		{"/bot" + s.Token() + "/noSuchMethod", 404, "Not Found"},
		{"/bot" + s.Token() + "/sendMessage", 400, "Bad Request: chat_id is empty"},
	}
	for _, c := range cases {
		resp, err := http.Post(s.URL+c.path, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			OK          bool   `json:"ok"`
			ErrorCode   int    `json:"error_code"`
			Description string `json:"description"`
		}
		json.NewDecoder(resp.Body).Decode(&env)
		resp.Body.Close()
		if resp.StatusCode != c.code || env.OK != (c.code == 200) || env.Description != c.desc || c.code != 200 && env.ErrorCode != c.code {
			t.Errorf("POST %s = %d %+v; want %d %q", c.path, resp.StatusCode, env, c.code, c.desc)
		}
	}
}

func TestWaitMessages(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	owner := User{ID: 42, FirstName: "Ada"}
	s.AddChat(Private(owner))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := make(chan []SentMessage, 1)
	go func() {
		msgs, _ := s.WaitMessages(ctx, owner.ID, 1)
		got <- msgs
	}()
	resp, err := http.Post(s.URL+"/bot"+s.Token()+"/sendMessage", "application/json",
		strings.NewReader(`{"chat_id":42,"text":"hi","reply_markup":{"inline_keyboard":[[{"text":"Deny","callback_data":"d"}]]}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	msgs := <-got
	want := []SentMessage{{ID: msgs[0].ID, Text: "hi", Buttons: []Button{{Text: "Deny", Data: "d"}}}}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("WaitMessages = %+v; want %+v", msgs, want)
	}
}

// TestRedeliver: a redelivered update comes again, to a poller that
// starts again, with its own id and body; an unknown id is not queued.
func TestRedeliver(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	u := s.Say(Message{From: User{ID: 42, FirstName: "Ada"}, Text: "hi"}).UpdateID
	poll := func(offset int64) []json.RawMessage {
		resp, err := http.Post(s.URL+"/bot"+s.Token()+"/getUpdates", "application/json",
			strings.NewReader(`{"offset":`+itoa(offset)+`,"timeout":0}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var env struct{ Result []json.RawMessage }
		json.NewDecoder(resp.Body).Decode(&env)
		return env.Result
	}
	first := poll(0)
	if len(first) != 1 || len(poll(u+1)) != 0 {
		t.Fatalf("first delivery = %s; want one update, then none once confirmed", first)
	}
	if s.Redeliver(u + 50) {
		t.Error("Redeliver of an unknown id = true")
	}
	if !s.Redeliver(u) {
		t.Fatal("Redeliver of a known id = false")
	}
	// A poller that starts again (offset 0) gets it; one whose offset is
	// past it would confirm it away, as Telegram does.
	again := poll(0)
	if len(again) != 1 || string(again[0]) != string(first[0]) {
		t.Errorf("redelivery = %s; want the same update %s", again, first[0])
	}
	if calls := s.Calls("getUpdates"); len(calls) != 3 || calls[0].At.IsZero() || calls[2].At.Before(calls[0].At) {
		t.Errorf("calls = %+v; want 3 with their times in order", calls)
	}
}

// TestAcceptedFailure: a failure scripted as Accepted sends the message
// and answers the failure; the next call is answered normally.
func TestAcceptedFailure(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	s.AddChat(Private(User{ID: 42, FirstName: "Ada"}))
	s.Fail("sendMessage", Failure{Code: 502, Description: "Bad Gateway", Accepted: true})
	send := func() int {
		resp, err := http.Post(s.URL+"/bot"+s.Token()+"/sendMessage", "application/json", strings.NewReader(`{"chat_id":42,"text":"hi"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := send(); code != 502 {
		t.Errorf("first send = %d; want the scripted 502", code)
	}
	if n := len(s.Messages(42)); n != 1 {
		t.Errorf("%d messages after the accepted failure; want 1 (it took effect)", n)
	}
	if code := send(); code != 200 || len(s.Messages(42)) != 2 {
		t.Errorf("second send = %d with %d messages; want 200 and 2", code, len(s.Messages(42)))
	}
}
