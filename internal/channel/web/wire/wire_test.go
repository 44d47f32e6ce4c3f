package wire

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
)

// TestShapes pins the JSON of every type: these bytes are the API
// (docs/API.md) that browsers, scripts and attached terminals read.
func TestShapes(t *testing.T) {
	at := time.Date(2026, 12, 1, 19, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"chat", ChatRequest{Session: "s", Message: "hi"}, `{"session":"s","message":"hi"}`},
		{"answer", AnswerRequest{Choice: channel.Always}, `{"choice":"always"}`},
		{"session", Session{Session: "s"}, `{"session":"s"}`},
		{"delta", Delta{Text: "a"}, `{"text":"a"}`},
		{"error", Error{Error: "boom"}, `{"error":"boom"}`},
		{"tool proposed", NewTool(channel.ToolEvent{ID: "c", Name: "n", Args: "{}", Status: channel.Proposed}),
			`{"id":"c","name":"n","args":"{}","status":"proposed","plan":"","reason":"","preview":""}`},
		{"tool pending", NewTool(channel.ToolEvent{ID: "c", Name: "n", Args: "{}", Status: channel.Pending, Plan: "p", Reason: "r",
			Rule: "mode.smart.write", Step: 1, ApprovalID: "ap", Preview: "v"}),
			`{"id":"c","name":"n","args":"{}","status":"pending","plan":"p","reason":"r","preview":"v","rule":"mode.smart.write","step":1,"approval_id":"ap"}`},
		{"tool with artifact", NewTool(channel.ToolEvent{ID: "c", Name: "browser_screenshot", Args: "{}", Status: channel.Ran, Artifact: "art_1"}),
			`{"id":"c","name":"browser_screenshot","args":"{}","status":"ran","plan":"","reason":"","preview":"","artifact":"art_1"}`},
		{"card", NewCard(channel.Card{ApprovalID: "ap", Tool: "t", Plan: "p", PlanHash: "sha256:h", Risk: "high", Reason: "r",
			ExpiresAt: at, Preview: "+x", PreviewOmitted: 2, PreviewDiff: true}, "s"),
			`{"approval_id":"ap","tool":"t","plan":"p","plan_hash":"sha256:h","risk":"high","reason":"r","expires_at":"2026-12-01T19:30:00Z","session":"s","preview":"+x","preview_omitted_lines":2,"preview_kind":"diff","once_only":false}`},
		{"done", NewDone(channel.TurnResult{Text: "t", Usage: channel.Usage{Input: 1, Output: 2, Cached: 3}, Calls: 4, Units: 5, MaxCalls: 6, MaxUnits: 7, Stopped: "x",
			Capture: channel.CaptureUsage{Calls: 1, Turns: 4, Usage: channel.Usage{Input: 8, Output: 9, Cached: 10}}}, "s"),
			`{"text":"t","pending":[],"usage":{"input":1,"output":2,"cached":3},"calls":4,"units":5,"max_calls":6,"max_units":7,"stopped":"x","session":"s","capture":{"calls":1,"turns":4,"usage":{"input":8,"output":9,"cached":10}}}`},
		{"message", NewMessage(channel.Message{Role: "tool", Text: "{}", Tool: "t", Status: channel.Ran}), `{"role":"tool","text":"{}","tool":"t","status":"ran"}`},
		{"info", NewInfo(channel.Info{Model: "m", Mode: "smart", Workspace: "/w", Owner: "o", Version: "v"}),
			`{"mode":"smart","model":"m","owner":"o","version":"v","workspace":"/w"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			if err != nil || string(b) != tc.want {
				t.Errorf("json.Marshal(%+v) = %s, %v; want %s", tc.v, b, err, tc.want)
			}
		})
	}
}

// TestPreviewKind: how a client is told to show a preview.
func TestPreviewKind(t *testing.T) {
	for _, tc := range []struct {
		preview string
		diff    bool
		want    string
	}{{"", true, ""}, {"", false, ""}, {"+a", true, "diff"}, {"argv", false, "text"}} {
		if got := PreviewKind(tc.preview, tc.diff); got != tc.want {
			t.Errorf("PreviewKind(%q, %v) = %q; want %q", tc.preview, tc.diff, got, tc.want)
		}
	}
}

// TestConversionsKeepEveryField: each channel value survives the trip to
// the wire and back, JSON included.
func TestConversionsKeepEveryField(t *testing.T) {
	at := time.Date(2026, 12, 1, 19, 30, 0, 0, time.UTC)
	ev := channel.ToolEvent{ID: "c", Name: "n", Args: "{}", Status: channel.Pending, Plan: "p", Reason: "r", Rule: "x", Step: 3, ApprovalID: "ap", Preview: "v", Artifact: "art"}
	card := channel.Card{ApprovalID: "ap", Tool: "t", Plan: "p", PlanHash: "h", Risk: "critical", Reason: "r", ExpiresAt: at, Preview: "+x", PreviewOmitted: 9, PreviewDiff: true}
	res := channel.TurnResult{Text: "t", Pending: []string{"ap"}, Usage: channel.Usage{Input: 1, Output: 2, Cached: 3}, Calls: 4, Units: 5, MaxCalls: 6, MaxUnits: 7, Stopped: "x",
		Capture: channel.CaptureUsage{Calls: 2, Turns: 8, Usage: channel.Usage{Input: 11, Output: 12, Cached: 13}}}
	msg := channel.Message{Role: "tool", Text: "{}", Tool: "t", Status: channel.Failed}
	info := channel.Info{Model: "m", Mode: "yolo", Workspace: "/w", Owner: "o", Version: "v"}
	trip := func(in, out any) {
		t.Helper()
		b, err := json.Marshal(in)
		if err == nil {
			err = json.Unmarshal(b, out)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var tw Tool
	trip(NewTool(ev), &tw)
	var cw Card
	trip(NewCard(card, "s"), &cw)
	var dw Done
	trip(NewDone(res, "s"), &dw)
	var mw Message
	trip(NewMessage(msg), &mw)
	var iw Info
	trip(NewInfo(info), &iw)
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"tool", tw.Channel(), ev}, {"card", cw.Channel(), card}, {"done", dw.Channel(), res},
		{"message", mw.Channel(), msg}, {"info", iw.Channel(), info},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s after the wire = %+v; want %+v", c.name, c.got, c.want)
		}
	}
}

// TestBrowserShapes pins the browser API's JSON and the state's trip to
// the wire and back.
func TestBrowserShapes(t *testing.T) {
	st := channel.BrowserState{Running: true, Owner: true, URL: "https://example.com/", Title: "Example"}
	x, y := 12.5, 3.0
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"state", NewBrowser(st), `{"running":true,"owner":true,"url":"https://example.com/","title":"Example"}`},
		{"off", NewBrowser(channel.BrowserState{}), `{"running":false,"owner":false,"url":"","title":""}`},
		{"open", BrowserOpen{URL: "https://example.com/"}, `{"url":"https://example.com/"}`},
		{"press", BrowserInput{Kind: channel.MousePress, X: &x, Y: &y}, `{"kind":"press","x":12.5,"y":3}`},
		{"key", BrowserInput{Kind: InputKey, Key: "Enter"}, `{"kind":"key","key":"Enter"}`},
		{"text", BrowserInput{Kind: InputText, Text: "ab"}, `{"kind":"text","text":"ab"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			if err != nil || string(b) != tc.want {
				t.Errorf("json.Marshal(%+v) = %s, %v; want %s", tc.v, b, err, tc.want)
			}
		})
	}
	var back Browser
	b, _ := json.Marshal(NewBrowser(st))
	if err := json.Unmarshal(b, &back); err != nil || back.Channel() != st {
		t.Errorf("state after the wire = %+v, %v; want %+v", back.Channel(), err, st)
	}
}
