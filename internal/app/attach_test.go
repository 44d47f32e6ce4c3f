package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm/llmtest"
)

// TestRunAttachesToServe: `homard run` on a home where serve runs (a
// second Runtime, as another process opens it) hands its turn to the
// serve: text streams back, a card is asked here and the answer is
// posted, the write runs once, and the serve stores the turn. Once the
// serve stops, the same TurnRuntime call runs turns here, under the
// session's lock.
func TestRunAttachesToServe(t *testing.T) {
	r := newTestRuntime(t, "smart")
	runServer(t, r,
		openAI(llmtest.Turn{Text: []string{"I will ", "write it."}, Calls: toolCall("call_1", "write_file", `{"path":"todo.md","content":"- tea\n"}`).Calls}),
		openAI(llmtest.Turn{Text: []string{"Done."}}),
		openAI(llmtest.Turn{Text: []string{"Here."}}),
	)
	g := startGateway(t, r)
	cli, err := Open(context.Background(), r.Paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	rt, si, ok := cli.TurnRuntime()
	if !ok || si.URL != g.base || si.Key == "" {
		t.Fatalf("TurnRuntime() = %+v, %v; want the running serve at %s with a key", si, ok, g.base)
	}
	if strings.Contains(g.log.String(), si.Key) {
		t.Error("the serve's log holds its local key")
	}
	var text strings.Builder
	var asked []channel.Card
	var tools []channel.ToolEvent
	res, err := rt.Turn(context.Background(), channel.TurnRequest{Text: "Add tea", Session: "attached",
		OnText: func(s string) { text.WriteString(s) },
		OnTool: func(ev channel.ToolEvent) { tools = append(tools, ev) },
		Ask: func(_ context.Context, c channel.Card) (channel.Choice, error) {
			asked = append(asked, c)
			return channel.Once, nil
		},
	})
	if err != nil || res.Text != "Done." || len(res.Pending) != 0 {
		t.Fatalf("Turn through the serve = %+v, %v; want Done. with nothing pending", res, err)
	}
	if len(asked) != 1 || asked[0].Tool != "write_file" || asked[0].ApprovalID == "" || !strings.Contains(asked[0].Plan, "todo.md") {
		t.Errorf("asked %+v; want one write_file card with its plan", asked)
	}
	// The serve's tool events arrive as values: proposed, pending with
	// the approval and its rule, then ran — all in the first model step.
	var seq []string
	for _, ev := range tools {
		seq = append(seq, string(ev.Status))
		if ev.Name != "write_file" || ev.Step != 1 || (ev.Status == channel.Pending && (len(asked) == 0 || ev.ApprovalID != asked[0].ApprovalID || ev.Rule == "")) {
			t.Errorf("tool event %+v; want write_file in step 1, pending with the card's approval id and a rule", ev)
		}
	}
	if strings.Join(seq, ",") != "proposed,pending,ran" {
		t.Errorf("tool statuses through the serve = %v; want proposed, pending, ran", seq)
	}
	if got := text.String(); !strings.Contains(got, "I will write it.") || !strings.Contains(got, "Done.") {
		t.Errorf("streamed %q; want both answers' text", got)
	}
	if got := todo(t, r); got != "- tea\n" {
		t.Errorf("todo.md = %q; want the write approved from the attached client", got)
	}
	hist, err := rt.History(context.Background(), "attached")
	if err != nil || len(hist) < 3 || hist[0].Text != "Add tea" {
		t.Errorf("History through the serve = %+v, %v; want the stored turn", hist, err)
	}
	if info := rt.Info(); info.Mode != "smart" {
		t.Errorf("Info through the serve = %+v", info)
	}

	// Once the serve stops, nothing attaches.
	g.stop()
	if _, _, ok := cli.Attached(); ok {
		t.Error("Attached() after the serve stopped = ok; want false")
	}
	local, _, ok := cli.TurnRuntime()
	if ok {
		t.Fatal("TurnRuntime() after the serve stopped = attached; want the local runtime")
	}
	// Another process (here: r) runs a turn in "busy": refused here.
	unlock, err := r.LockSession("busy")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := local.Turn(context.Background(), channel.TurnRequest{Text: "hi", Session: "busy"}); !errors.Is(err, ErrSessionBusy) {
		t.Errorf("local Turn in a locked session = %v; want ErrSessionBusy", err)
	}
	// A free session runs here, in this process (with the test's model).
	cli.Config.Model, cli.Config.Memory.Capture = r.Config.Model, "off"
	if res, err := local.Turn(context.Background(), channel.TurnRequest{Text: "hi"}); err != nil || res.Text != "Here." {
		t.Errorf("local Turn in a free session = %+v, %v; want Here.", res, err)
	}
}

// TestAttachedRunTakesALongTask: a task piped to `homard run -` (up to
// 8 MiB) that serve takes over reaches the model, cut in its middle to
// fit the window as a local run would, not refused by the gateway's
// body limit; a message past 8 MiB is refused with what to do (the twin
// at the boundary).
func TestAttachedRunTakesALongTask(t *testing.T) {
	r := newTestRuntime(t, "smart")
	srv := runServer(t, r, openAI(llmtest.Turn{Text: []string{"Read."}}))
	startGateway(t, r)
	cli, err := Open(context.Background(), r.Paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	rt, _, ok := cli.TurnRuntime()
	if !ok {
		t.Fatal("TurnRuntime() is not attached to the running serve")
	}
	task := "HEAD-OF-TASK " + strings.Repeat("<lorem> ipsum ", 3<<20/14) + " END-OF-TASK" // 3 MiB, escaped in JSON
	res, err := rt.Turn(context.Background(), channel.TurnRequest{Text: task, Session: "long"})
	if err != nil || res.Text != "Read." {
		t.Fatalf("a 3 MiB task through the serve = %+v, %v; want the answer", res, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests; want 1", len(reqs))
	}
	body := string(reqs[0].Body)
	if !strings.Contains(body, "HEAD-OF-TASK") || !strings.Contains(body, "END-OF-TASK") || !strings.Contains(body, "omitted from this copy") {
		t.Errorf("the model's request lacks the task's ends or the cut marker: %.200q", body)
	}
	_, err = rt.Turn(context.Background(), channel.TurnRequest{Text: strings.Repeat("x", 8<<20+1), Session: "too-long"})
	if err == nil || !strings.Contains(err.Error(), "more than 8 MiB") {
		t.Errorf("a message past 8 MiB = %v; want refused, saying the limit", err)
	}
}
