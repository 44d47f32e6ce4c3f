package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/llm/llmtest"
)

type doneJSON struct {
	Text    string   `json:"text"`
	Pending []string `json:"pending"`
	Session string   `json:"session"`
	Usage   struct {
		Input, Output int
	} `json:"usage"`
}

type approvalCard struct {
	ApprovalID  string `json:"approval_id"`
	Tool        string `json:"tool"`
	Plan        string `json:"plan"`
	PlanHash    string `json:"plan_hash"`
	Risk        string `json:"risk"`
	Session     string `json:"session"`
	Reason      string `json:"reason"`
	Preview     string `json:"preview"`
	PreviewKind string `json:"preview_kind"`
}

// TestGatewayChatStreamsAndStores: deltas then done; the turn is stored
// and listed; the history reads back.
func TestGatewayChatStreamsAndStores(t *testing.T) {
	r := newTestRuntime(t, "smart")
	runServer(t, r, openAI(llmtest.Turn{Text: []string{"The kettle ", "is blue."}}))
	g := startGateway(t, r)
	s := g.stream(g.req("POST", "/api/chat", `{"session":"kitchen","message":"What colour is the kettle?"}`, g.token))
	first, _ := s.until("session")
	if got := decode[map[string]string](t, first.data)["session"]; got != "kitchen" {
		t.Errorf("session event %s; want kitchen", first.data)
	}
	done, seen := s.until("done")
	var text string
	for _, ev := range seen {
		if ev.name == "delta" {
			text += decode[map[string]string](t, ev.data)["text"]
		}
	}
	if text != "The kettle is blue." {
		t.Errorf("deltas %q; want the streamed answer", text)
	}
	if d := decode[doneJSON](t, done.data); d.Text != "The kettle is blue." || d.Session != "kitchen" || d.Pending == nil {
		t.Errorf("done %s; want the answer, the session and pending []", done.data)
	}
	var sessions []struct {
		ID    string `json:"id"`
		Turns int    `json:"turns"`
		Busy  bool   `json:"busy"`
	}
	g.getJSON("/api/sessions", &sessions)
	if len(sessions) != 1 || sessions[0].ID != "kitchen" || sessions[0].Turns != 1 || sessions[0].Busy {
		t.Errorf("sessions %+v; want kitchen with 1 turn, idle", sessions)
	}
	var msgs []struct{ Role, Text string }
	g.getJSON("/api/sessions/kitchen/messages", &msgs)
	if len(msgs) != 2 || msgs[0].Role != "user" || msgs[1].Text != "The kettle is blue." {
		t.Errorf("messages %+v; want the question and the answer", msgs)
	}
}

// approvalTurn starts a turn whose write waits for approval and returns
// its stream and card. The model's script: the write; then, after the
// re-proposed call's result, "Done."
func approvalTurn(t *testing.T, session string, after ...llmtest.Reply) (*Runtime, *gw, *llmtest.Server, *sse, approvalCard) {
	t.Helper()
	r := newTestRuntime(t, "smart")
	if after == nil {
		after = []llmtest.Reply{openAI(llmtest.Turn{Text: []string{"Done."}})}
	}
	srv := runServer(t, r, append([]llmtest.Reply{openAI(toolCall("call_1", "write_file", `{"path":"todo.md","content":"- tea\n"}`))}, after...)...)
	g := startGateway(t, r)
	s := g.stream(g.req("POST", "/api/chat", `{"session":"`+session+`","message":"Add tea to my todo list"}`, g.token))
	ev, _ := s.until("approval")
	card := decode[approvalCard](t, ev.data)
	if card.ApprovalID == "" || card.Tool != "write_file" || card.Session != session || !strings.Contains(card.Plan, "todo.md") {
		t.Fatalf("approval event %s; want the write_file card of %s", ev.data, session)
	}
	return r, g, srv, s, card
}

func todo(t *testing.T, r *Runtime) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Config.Workspace.Roots[0].Path, "todo.md"))
	if err != nil {
		return ""
	}
	return string(b)
}

// TestGatewayApprovalAnsweredInAnotherTab: the turn waits on its card,
// keeps the stream alive with pings, refuses a second turn in the same
// session (409) but not in another; a second client approves the card;
// the turn goes on, runs the write once and finishes.
func TestGatewayApprovalAnsweredInAnotherTab(t *testing.T) {
	r, g, _, s, card := approvalTurn(t, "work")

	// Another tab watches live updates.
	events := g.stream(g.req("GET", "/api/events", "", g.token))

	// A second tab joins the running turn from its start.
	joined := g.stream(g.req("GET", "/api/sessions/work/stream", "", g.token))
	if ev, _ := joined.until("approval"); decode[approvalCard](t, ev.data).ApprovalID != card.ApprovalID {
		t.Errorf("the joined stream's card %s; want %s", ev.data, card.ApprovalID)
	}
	if resp, _ := g.do(g.req("GET", "/api/sessions/idle/stream", "", g.token)); resp.StatusCode != 404 {
		t.Errorf("joining a session without a turn = %d; want 404", resp.StatusCode)
	}

	resp, body := g.do(g.req("POST", "/api/chat", `{"session":"work","message":"again"}`, g.token))
	if resp.StatusCode != 409 || !strings.Contains(body, "session work is busy with another turn") {
		t.Errorf("second turn in the same session = %d %s; want 409 busy", resp.StatusCode, body)
	}
	var pending []approvalCard
	g.getJSON("/api/approvals?status=pending", &pending)
	if len(pending) != 1 {
		t.Fatalf("pending approvals %+v; want the card", pending)
	}
	if !strings.Contains(pending[0].Reason, "smart mode asks") {
		t.Errorf("pending approval reason %q; want why homard asked (smart mode asks …)", pending[0].Reason)
	}
	if todo(t, r) != "" {
		t.Fatal("the write ran before it was approved")
	}

	resp, body = g.do(g.req("POST", "/api/approvals/"+card.ApprovalID, `{"choice":"once"}`, g.token))
	// The waiting turn may consume the approval before the answer is
	// read back.
	if resp.StatusCode != 200 || !strings.Contains(body, `"status":"approved"`) && !strings.Contains(body, `"status":"consumed"`) {
		t.Fatalf("POST approval = %d %s; want 200 approved (or consumed already)", resp.StatusCode, body)
	}
	joined.until("done")
	done, seen := s.until("done")
	ran := false
	for _, ev := range seen {
		if ev.name == "tool" && strings.Contains(ev.data, `"status":"ran"`) {
			ran = true
		}
	}
	if !ran || decode[doneJSON](t, done.data).Text != "Done." {
		t.Errorf("after approval saw %v then %s; want the tool ran and Done.", seen, done.data)
	}
	if got := todo(t, r); got != "- tea\n" {
		t.Errorf("todo.md = %q; want the approved write", got)
	}
	resp, body = g.do(g.req("POST", "/api/approvals/"+card.ApprovalID, `{"choice":"once"}`, g.token))
	if resp.StatusCode != 409 {
		t.Errorf("answering a used card = %d %s; want 409", resp.StatusCode, body)
	}
	ev, _ := events.until("approval_decided")
	if !strings.Contains(ev.data, card.ApprovalID) {
		t.Errorf("approval_decided %s; want the card's id", ev.data)
	}
	events.until("turn_done")
}

// TestGatewayApprovalAnsweredOnTheCommandLine: `homard approval approve`
// is a second Runtime on the same home; the waiting turn notices and goes
// on.
func TestGatewayApprovalAnsweredOnTheCommandLine(t *testing.T) {
	r, _, _, s, card := approvalTurn(t, "cli-approved")
	cli, err := Open(context.Background(), r.Paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Owner.Approve(context.Background(), card.ApprovalID, "once"); err != nil {
		t.Fatal(err)
	}
	done, _ := s.until("done")
	if d := decode[doneJSON](t, done.data); d.Text != "Done." || len(d.Pending) != 0 {
		t.Errorf("done %s; want Done. with nothing pending", done.data)
	}
	if got := todo(t, r); got != "- tea\n" {
		t.Errorf("todo.md = %q; want the write approved on the command line", got)
	}
}

// TestGatewayApprovalDeniedInAnotherTab: a denial recorded elsewhere
// reaches the model as a denial; nothing runs.
func TestGatewayApprovalDeniedInAnotherTab(t *testing.T) {
	r, g, srv, s, card := approvalTurn(t, "denied")
	if resp, body := g.do(g.req("POST", "/api/approvals/"+card.ApprovalID, `{"choice":"deny"}`, g.token)); resp.StatusCode != 200 {
		t.Fatalf("deny = %d %s", resp.StatusCode, body)
	}
	s.until("done")
	if todo(t, r) != "" {
		t.Error("a denied write ran")
	}
	reqs := srv.Requests()
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "the owner denied this call") {
		t.Errorf("the model was not told of the denial: %s", last)
	}
}

// TestGatewayApprovalWaitLapses: no one answers; after gateway.approval_wait
// the model is told the call was not approved; the card stays pending.
func TestGatewayApprovalWaitLapses(t *testing.T) {
	r := newTestRuntime(t, "smart")
	r.Config.Gateway.ApprovalWait = 300 * 1e6 // 300ms
	srv := runServer(t, r,
		openAI(toolCall("call_1", "write_file", `{"path":"todo.md","content":"- tea\n"}`)),
		openAI(llmtest.Turn{Text: []string{"It was not approved."}}),
	)
	g := startGateway(t, r)
	s := g.stream(g.req("POST", "/api/chat", `{"session":"lapse","message":"Add tea"}`, g.token))
	ev, _ := s.until("approval")
	card := decode[approvalCard](t, ev.data)
	done, _ := s.until("done")
	if d := decode[doneJSON](t, done.data); len(d.Pending) != 1 || d.Pending[0] != card.ApprovalID {
		t.Errorf("done %s; want the card still pending", done.data)
	}
	reqs := srv.Requests()
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "not approved while the turn waited") {
		t.Errorf("the model was not told the call was not approved: %s", last)
	}
	if todo(t, r) != "" {
		t.Error("a lapsed write ran")
	}
}

// TestGatewayKeepsWaitingStreamsAlive: while a turn waits on a card, the
// stream gets ": ping" comments (the interval is configurable; 15s by
// default), and so does /api/events.
func TestGatewayKeepsWaitingStreamsAlive(t *testing.T) {
	r := newTestRuntime(t, "smart")
	r.Config.Gateway.PingInterval = 30 * 1e6 // 30ms
	runServer(t, r,
		openAI(toolCall("call_1", "write_file", `{"path":"todo.md","content":"- tea\n"}`)),
		openAI(llmtest.Turn{Text: []string{"Done."}}),
	)
	g := startGateway(t, r)
	events := g.stream(g.req("GET", "/api/events", "", g.token))
	s := g.stream(g.req("POST", "/api/chat", `{"session":"ping","message":"Add tea"}`, g.token))
	ev, _ := s.until("approval")
	card := decode[approvalCard](t, ev.data)
	for range 3 {
		if c, _ := s.until(":"); c.comment != "ping" {
			t.Fatalf("comment %q; want ping", c.comment)
		}
	}
	if c, _ := events.until(":"); c.comment != "ping" {
		t.Fatalf("events comment %q; want ping", c.comment)
	}
	g.do(g.req("POST", "/api/approvals/"+card.ApprovalID, `{"choice":"once"}`, g.token))
	s.until("done")
}

// TestGatewayTurnOutlivesItsClient: the client goes away mid-turn; the
// turn finishes and is stored.
func TestGatewayTurnOutlivesItsClient(t *testing.T) {
	r, g, _, s, card := approvalTurn(t, "gone")
	s.close()
	if resp, body := g.do(g.req("POST", "/api/approvals/"+card.ApprovalID, `{"choice":"once"}`, g.token)); resp.StatusCode != 200 {
		t.Fatalf("approve = %d %s", resp.StatusCode, body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var sessions []struct {
			ID    string `json:"id"`
			Turns int    `json:"turns"`
			Busy  bool   `json:"busy"`
		}
		g.getJSON("/api/sessions", &sessions)
		if len(sessions) == 1 && sessions[0].Turns == 1 && !sessions[0].Busy {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sessions %+v; want the turn stored although its client left", sessions)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := todo(t, r); got != "- tea\n" {
		t.Errorf("todo.md = %q; want the write", got)
	}
}

// TestGatewayCancelAndShutdown: cancelling a waiting turn ends it with an
// error event and stores nothing; shutting down cancels a turn that
// outlives the grace period, and Serve returns.
func TestGatewayCancelAndShutdown(t *testing.T) {
	// The second turn's model stream hangs until it is cancelled.
	r, g, srv, s, _ := approvalTurn(t, "cancel-me", llmtest.HangAfter(llmtest.OpenAIStream(llmtest.Turn{Text: []string{"partial"}}), 2))
	if resp, body := g.do(g.req("POST", "/api/sessions/cancel-me/cancel", `{}`, g.token)); resp.StatusCode != 202 {
		t.Fatalf("cancel = %d %s; want 202", resp.StatusCode, body)
	}
	ev, _ := s.until("error")
	if !strings.Contains(ev.data, "cancelled") {
		t.Errorf("error event %s; want cancelled", ev.data)
	}
	if resp, _ := g.do(g.req("POST", "/api/sessions/cancel-me/cancel", `{}`, g.token)); resp.StatusCode != 404 {
		t.Errorf("cancel with no running turn = %d; want 404", resp.StatusCode)
	}
	if msgs, err := r.Store.Messages(context.Background(), "cancel-me"); err != nil || len(msgs) != 0 {
		t.Errorf("a cancelled turn stored %d messages (%v); want none", len(msgs), err)
	}

	// A turn still waiting at shutdown is cancelled after the grace.
	s2 := g.stream(g.req("POST", "/api/chat", `{"session":"at-shutdown","message":"Add tea"}`, g.token))
	s2.until("delta") // the model is streaming, and then hangs
	if err := g.stop(); err != nil {
		t.Errorf("Serve after shutdown: %v", err)
	}
	select {
	case <-srv.Disconnected: // the model stream was cancelled
	case <-time.After(20 * time.Second):
		t.Fatal("the hanging model stream was never cancelled")
	}
	if msgs, err := r.Store.Messages(context.Background(), "at-shutdown"); err != nil || len(msgs) != 0 {
		t.Errorf("a turn cancelled at shutdown stored %d messages (%v); want none", len(msgs), err)
	}
}

// TestGatewayHoldsTheSessionAgainstOtherProcesses: while the gateway runs
// a turn in a session, `homard run` in that session (another Runtime on
// the same home, as another process would open it) is refused and told
// about the running serve; another session is free.
func TestGatewayHoldsTheSessionAgainstOtherProcesses(t *testing.T) {
	r, g, _, s, card := approvalTurn(t, "shared")
	cli, err := Open(context.Background(), r.Paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	_, err = cli.LockSession("shared")
	if !errors.Is(err, ErrSessionBusy) || !strings.Contains(err.Error(), "homard serve") || !strings.Contains(err.Error(), g.host) {
		t.Errorf("LockSession(shared) during a served turn: %v; want ErrSessionBusy naming homard serve and its address", err)
	}
	unlock, err := cli.LockSession("other")
	if err != nil {
		t.Errorf("LockSession(other): %v; want it free", err)
	} else {
		unlock()
	}
	g.do(g.req("POST", "/api/approvals/"+card.ApprovalID, `{"choice":"deny"}`, g.token))
	s.until("done")
	unlock, err = cli.LockSession("shared")
	if err != nil {
		t.Errorf("LockSession(shared) after the turn: %v; want it free", err)
	} else {
		unlock()
	}
}
