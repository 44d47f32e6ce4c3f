package app

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/web"
)

// scriptedTurns is a channel.Runtime whose turn emits fixed values with
// every field set, and a channel.Admin that takes any answer: the gateway
// around it is the real one.
type scriptedTurns struct {
	channel.Admin // only Approval, Answer, Await and VerifyToken are called
	text          []string
	tools         []channel.ToolEvent
	card          channel.Card
	result        channel.TurnResult
	info          channel.Info
	history       []channel.Message

	mu   sync.Mutex     // guards fail and got: the turn runs on the gateway's goroutine
	fail string         // when set, the turn fails with it
	got  channel.Choice // what the turn's Ask returned

	answered   chan struct{} // closed by the first Answer
	answerOnce sync.Once
}

func (s *scriptedTurns) Turn(ctx context.Context, req channel.TurnRequest) (channel.TurnResult, error) {
	s.mu.Lock()
	fail := s.fail
	s.mu.Unlock()
	if fail != "" {
		return channel.TurnResult{}, &turnError{fail}
	}
	req.OnText(s.text[0])
	req.OnTool(s.tools[0])
	got, err := req.Ask(ctx, s.card)
	if err != nil {
		return channel.TurnResult{}, err
	}
	s.mu.Lock()
	s.got = got
	s.mu.Unlock()
	req.OnTool(s.tools[1])
	req.OnText(s.text[1])
	return s.result, nil
}

type turnError struct{ msg string }

func (e *turnError) Error() string { return e.msg }

func (s *scriptedTurns) History(context.Context, string) ([]channel.Message, error) {
	return s.history, nil
}
func (s *scriptedTurns) Info() channel.Info { return s.info }
func (s *scriptedTurns) Approval(_ context.Context, id string) (channel.Approval, error) {
	return channel.Approval{ID: id, Status: "pending"}, nil
}
func (s *scriptedTurns) Answer(_ context.Context, id string, c channel.Choice, _ string) (channel.Approval, error) {
	if !c.Approves() && c != channel.Deny {
		return channel.Approval{}, channel.ErrBadChoice
	}
	s.answerOnce.Do(func() { close(s.answered) })
	return channel.Approval{ID: id, Status: "approved"}, nil
}

// Await holds until Answer was called: the one approval waiter's contract.
func (s *scriptedTurns) Await(ctx context.Context, id string, within time.Duration) (channel.Choice, error) {
	select {
	case <-s.answered:
		return channel.Recorded, nil
	case <-ctx.Done():
		return channel.Leave, ctx.Err()
	case <-time.After(within):
		return channel.Lapsed, nil
	}
}
func (s *scriptedTurns) VerifyToken(context.Context, string) (bool, error) { return false, nil }

// TestAttachDecodesEveryGatewayEvent: each value a turn produces — text
// fragments, tool events, an approval card, the result, an error, a
// session's history and the runtime's info — goes through the real
// gateway's encoder (internal/channel/web) and comes out of the attach
// client's decoder (remote) equal, field for field; the owner's answer
// goes back and wakes the turn.
func TestAttachDecodesEveryGatewayEvent(t *testing.T) {
	at := time.Date(2026, 12, 1, 19, 30, 0, 0, time.UTC)
	s := &scriptedTurns{answered: make(chan struct{}),
		text: []string{"Let me ", "write it."},
		tools: []channel.ToolEvent{
			{ID: "call_1", Name: "write_file", Args: `{"path":"a.md"}`, Status: channel.Pending, Plan: "write a.md",
				Reason: "writes ask in smart mode", Rule: "mode.smart.write", Step: 2, ApprovalID: "ap_1", Preview: "p"},
			{ID: "call_1", Name: "write_file", Args: `{"path":"a.md"}`, Status: channel.Ran, Plan: "write a.md",
				Reason: "approved", Rule: "approval.once", Step: 2, Preview: "wrote 3 bytes"},
		},
		card: channel.Card{ApprovalID: "ap_1", Tool: "write_file", Plan: "write a.md", PlanHash: "sha256:abc",
			Risk: "medium", Reason: "writes ask", ExpiresAt: at, Preview: "+a\n-b\n", PreviewOmitted: 7, PreviewDiff: true},
		result: channel.TurnResult{Text: "Let me write it.", Pending: []string{"ap_2"}, Usage: channel.Usage{Input: 11, Output: 5, Cached: 3},
			Calls: 2, Units: 4, MaxCalls: 20, MaxUnits: 60, Stopped: "the tool budget is spent"},
		info:    channel.Info{Model: "m", Mode: "smart", Workspace: "/w", Owner: "me", Version: "v1"},
		history: []channel.Message{{Role: "user", Text: "hi"}, {Role: "tool", Text: "{}", Tool: "read_file", Status: channel.Denied}},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gw, err := web.New(web.Options{Runtime: s, Admin: s, Addr: ln.Addr().String(), LocalKey: "local-key"})
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: gw}}
	srv.Start()
	defer srv.Close()
	defer gw.Shutdown(context.Background(), 0)
	rt := &remote{base: srv.URL, key: "local-key", client: srv.Client()}

	var text []string
	var tools []channel.ToolEvent
	var cards []channel.Card
	res, err := rt.Turn(context.Background(), channel.TurnRequest{Session: "wire", Text: "go",
		OnText: func(s string) { text = append(text, s) },
		OnTool: func(ev channel.ToolEvent) { tools = append(tools, ev) },
		Ask: func(_ context.Context, c channel.Card) (channel.Choice, error) {
			cards = append(cards, c)
			return channel.Session, nil
		},
	})
	if err != nil {
		t.Fatalf("Turn through the gateway: %v", err)
	}
	if !reflect.DeepEqual(text, s.text) {
		t.Errorf("delta events decoded as %q; want %q", text, s.text)
	}
	if !reflect.DeepEqual(tools, s.tools) {
		t.Errorf("tool events decoded as\n%+v; want\n%+v", tools, s.tools)
	}
	if len(cards) != 1 || !reflect.DeepEqual(cards[0], s.card) {
		t.Errorf("approval events decoded as %+v; want one %+v", cards, s.card)
	}
	s.mu.Lock()
	got := s.got
	s.fail = "the model endpoint went away"
	s.mu.Unlock()
	if got != channel.Recorded {
		t.Errorf("the gateway's turn got %q after the client answered; want %q (the answer was posted and recorded)", got, channel.Recorded)
	}
	if !reflect.DeepEqual(res, s.result) {
		t.Errorf("done event decoded as %+v; want %+v", res, s.result)
	}
	if info := rt.Info(); info != s.info {
		t.Errorf("info decoded as %+v; want %+v", info, s.info)
	}
	if hist, err := rt.History(context.Background(), "wire"); err != nil || !reflect.DeepEqual(hist, s.history) {
		t.Errorf("messages decoded as %+v, %v; want %+v", hist, err, s.history)
	}

	if _, err := rt.Turn(context.Background(), channel.TurnRequest{Session: "wire", Text: "again"}); err == nil || !strings.Contains(err.Error(), "the model endpoint went away") {
		t.Errorf("error event decoded as %v; want an error holding the turn's error", err)
	}
}
