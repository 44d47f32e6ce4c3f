package tui

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/homard/homard/internal/channel"
)

func TestMain(m *testing.M) {
	// Plain output: the tests read the screen as text.
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// fakeRuntime runs each turn with a function the test gives.
type fakeRuntime struct {
	mu      sync.Mutex // guards reqs
	reqs    []channel.TurnRequest
	turn    func(ctx context.Context, req channel.TurnRequest) (channel.TurnResult, error)
	history []channel.Message
}

func (f *fakeRuntime) Turn(ctx context.Context, req channel.TurnRequest) (channel.TurnResult, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	return f.turn(ctx, req)
}

func (f *fakeRuntime) History(context.Context, string) ([]channel.Message, error) {
	return f.history, nil
}

func (f *fakeRuntime) Info() channel.Info { return channel.Info{Model: "fake-1", Mode: "smart"} }

func (f *fakeRuntime) texts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.reqs {
		out = append(out, r.Text)
	}
	return out
}

// start runs the chat at 80×24, as a person's terminal would show it.
func start(t *testing.T, rt channel.Runtime, session string, history []channel.Message) (*teatest.TestModel, *Model) {
	t.Helper()
	m := New(context.Background(), rt, session, history)
	t.Cleanup(m.Close)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	return tm, m
}

// waitFor waits until the screen has shown every one of want.
func waitFor(t *testing.T, tm *teatest.TestModel, want ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, w := range want {
			if w == idle {
				if !idleAfter(b) {
					return false
				}
				continue
			}
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

// typeText types s as runes (teatest's Type sends bytes, which breaks
// CJK).
func typeText(tm *teatest.TestModel, s string) {
	for _, r := range s {
		tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

// idle is the footer when no turn runs ("working…" while one does).
const idle = "Enter send"

// idleAfter reports whether the turn started since the last wait has
// ended. The screen is repainted line by line as lines change: if the
// footer was painted "working…", it must have been painted idle since;
// if it never was, every frame since found it idle.
func idleAfter(b []byte) bool {
	w := bytes.LastIndex(b, []byte("working…"))
	return w < 0 || bytes.LastIndex(b, []byte(idle)) > w
}

func typeLine(tm *teatest.TestModel, s string) {
	typeText(tm, s)
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
}

// finalView leaves the chat with /exit and returns the last screen the
// model drew, checked to fit 80×24.
func finalView(t *testing.T, tm *teatest.TestModel) (*Model, string) {
	t.Helper()
	m := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	m.quitting = false // View is empty once quit; draw the last screen
	v := m.View()
	lines := strings.Split(v, "\n")
	if len(lines) > 24 {
		t.Errorf("view has %d lines; want at most 24:\n%s", len(lines), v)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("line %d is %d cells wide; want at most 80: %q", i, w, l)
		}
	}
	return m, v
}

func answer(parts ...string) func(context.Context, channel.TurnRequest) (channel.TurnResult, error) {
	return func(_ context.Context, req channel.TurnRequest) (channel.TurnResult, error) {
		for _, p := range parts {
			req.OnText(p)
		}
		return channel.TurnResult{Text: strings.Join(parts, ""), Calls: 1, MaxCalls: 24, Units: 2, MaxUnits: 48,
			Usage:   channel.Usage{Input: 120, Output: 7, Cached: 100},
			Capture: channel.CaptureUsage{Calls: 1, Turns: 4, Usage: channel.Usage{Input: 900, Output: 40}}}, nil
	}
}

func TestStreamedAnswerIsRenderedAsMarkdown(t *testing.T) {
	rt := &fakeRuntime{turn: answer("# Tea\n", "Make **strong** tea with `water`.\n", "- boil\n- pour\n```sh\necho hi\n```\nend")}
	tm, _ := start(t, rt, "chat", nil)
	typeLine(tm, "how do I make tea?")
	waitFor(t, tm, "Tea", "• boil", "• pour", "echo hi", "end", idle)
	typeLine(tm, "/exit")
	m, v := finalView(t, tm)
	if got := rt.texts(); len(got) != 1 || got[0] != "how do I make tea?" {
		t.Errorf("turns = %q; want the one message", got)
	}
	for _, want := range []string{"you› how do I make tea?", "Make strong tea with water.", "• boil", "  echo hi"} {
		if !strings.Contains(v, want) {
			t.Errorf("screen lacks %q:\n%s", want, v)
		}
	}
	for _, gone := range []string{"**", "```", "# Tea"} {
		if strings.Contains(v, gone) {
			t.Errorf("screen shows raw Markdown %q:\n%s", gone, v)
		}
	}
	if m.busy {
		t.Error("still busy after the turn ended")
	}
}

func TestMultiLineInput(t *testing.T) {
	rt := &fakeRuntime{turn: answer("ok")}
	tm, _ := start(t, rt, "chat", nil)
	typeText(tm, "first line")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter, Alt: true})
	typeText(tm, "second")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlJ})
	typeText(tm, "third")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "ok", idle)
	typeLine(tm, "/exit")
	finalView(t, tm)
	if got := rt.texts(); len(got) != 1 || got[0] != "first line\nsecond\nthird" {
		t.Errorf("sent %q; want three lines in one message", got)
	}
}

// approvalTurn proposes a write, asks, and answers with the choice it got.
func approvalTurn(risk string, got chan<- channel.Choice) func(context.Context, channel.TurnRequest) (channel.TurnResult, error) {
	return approvalTurnOf(func(c *channel.Card) { c.Risk = risk }, got)
}

// approvalTurnOf is approvalTurn with the card set by edit.
func approvalTurnOf(edit func(*channel.Card), got chan<- channel.Choice) func(context.Context, channel.TurnRequest) (channel.TurnResult, error) {
	return func(ctx context.Context, req channel.TurnRequest) (channel.TurnResult, error) {
		req.OnTool(channel.ToolEvent{ID: "c1", Name: "write_file", Args: `{"path":"todo.md"}`, Status: channel.Proposed})
		card := channel.Card{ApprovalID: "ap_test1", Tool: "write_file", Plan: "write todo.md (6 bytes)\n+ - tea",
			PlanHash: "sha256:0123456789abcdef0123", Reason: "writes need approval in smart mode",
			ExpiresAt: time.Date(2030, 1, 2, 15, 4, 0, 0, time.Local)}
		edit(&card)
		req.OnTool(channel.ToolEvent{ID: "c1", Name: "write_file", Status: channel.Pending, Plan: card.Plan, Reason: card.Reason})
		choice, err := req.Ask(ctx, card)
		got <- choice
		if err != nil {
			return channel.TurnResult{}, err
		}
		st := map[channel.Choice]channel.Status{channel.Deny: channel.Denied, channel.Leave: channel.Pending}[choice]
		if st == "" {
			st = channel.Ran
		}
		req.OnTool(channel.ToolEvent{ID: "c1", Name: "write_file", Status: st, Plan: card.Plan})
		req.OnText("answer after " + string(choice))
		return channel.TurnResult{}, nil
	}
}

func TestApprovalCardAnsweredFromTheKeyboard(t *testing.T) {
	for _, tc := range []struct {
		key  tea.KeyMsg
		want channel.Choice
		mark string
		line string // the call's line after the answer
	}{
		{tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("o")}, channel.Once, "approved once", "✓ write_file"},
		{tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("s")}, channel.Session, "approved for this session", "✓ write_file"},
		{tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a")}, channel.Always, "approved always", "✓ write_file"},
		{tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("d")}, channel.Deny, "denied", "✗ write_file"},
		{tea.KeyMsg{Type: tea.KeyEsc}, channel.Leave, "left pending", "⏸ write_file"},
	} {
		t.Run(string(tc.want)+"_"+tc.key.String(), func(t *testing.T) {
			got := make(chan channel.Choice, 1)
			rt := &fakeRuntime{turn: approvalTurn("medium", got)}
			tm, _ := start(t, rt, "chat", nil)
			typeLine(tm, "add tea")
			waitFor(t, tm, "approval needed: write_file", "risk medium", "ap_test1", "write todo.md (6 bytes)", "+ - tea",
				"plan hash 0123456789ab · expires 15:04", "why: writes need approval", "[o]nce")
			// Typing while the card is open goes to the card, not the input.
			typeText(tm, "x")
			tm.Send(tc.key)
			select {
			case c := <-got:
				if c != tc.want {
					t.Fatalf("Ask returned %q; want %q", c, tc.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Ask did not return after the key")
			}
			waitFor(t, tm, "answer after "+string(tc.want), idle)
			typeLine(tm, "/exit")
			m, v := finalView(t, tm)
			if !strings.Contains(v, "→ "+tc.mark) {
				t.Errorf("card does not say %q:\n%s", tc.mark, v)
			}
			if !strings.Contains(v, tc.line+" write todo.md (6 bytes) + - tea") || strings.Count(v, "write_file write todo.md") != 1 {
				t.Errorf("want one line for the call, now %q:\n%s", tc.line, v)
			}
			if m.input.Value() != "" && m.input.Value() != "/exit" {
				t.Errorf("input = %q; keys for the card leaked into it", m.input.Value())
			}
		})
	}
}

func TestCriticalCardTakesOnlyOnceOrDeny(t *testing.T) {
	got := make(chan channel.Choice, 1)
	rt := &fakeRuntime{turn: approvalTurn("critical", got)}
	tm, _ := start(t, rt, "chat", nil)
	typeLine(tm, "do it")
	waitFor(t, tm, "critical: [o]nce · [d]eny")
	typeText(tm, "a")
	waitFor(t, tm, "can only be approved once (o) or denied (d)")
	select {
	case c := <-got:
		t.Fatalf("Ask returned %q after 'a' on a critical card", c)
	case <-time.After(100 * time.Millisecond):
	}
	typeText(tm, "o")
	if c := <-got; c != channel.Once {
		t.Fatalf("Ask returned %q; want once", c)
	}
	waitFor(t, tm, "answer after once", idle)
	typeLine(tm, "/exit")
	finalView(t, tm)
}

func TestCancelStopsTheTurnAndUnblocksTheCard(t *testing.T) {
	got := make(chan channel.Choice, 1)
	rt := &fakeRuntime{turn: approvalTurn("medium", got)}
	tm, _ := start(t, rt, "chat", nil)
	typeLine(tm, "add tea")
	waitFor(t, tm, "[o]nce")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC}) // during a turn: cancels it, does not quit
	if c := <-got; c != channel.Leave {
		t.Fatalf("Ask returned %q after Ctrl+C; want leave", c)
	}
	waitFor(t, tm, "Cancelled.")

	// /cancel stops a streaming answer: the turn's ctx ends.
	stopped := make(chan error, 1)
	rt.turn = func(ctx context.Context, req channel.TurnRequest) (channel.TurnResult, error) {
		req.OnText("thinking hard")
		<-ctx.Done()
		stopped <- ctx.Err()
		return channel.TurnResult{}, ctx.Err()
	}
	typeLine(tm, "second")
	waitFor(t, tm, "thinking hard")
	typeLine(tm, "/cancel")
	select {
	case err := <-stopped:
		if err != context.Canceled {
			t.Fatalf("turn ctx ended with %v; want canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("/cancel did not cancel the turn's context")
	}
	waitFor(t, tm, "Cancelled.")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC}) // idle: leaves
	m, _ := finalView(t, tm)
	if m.busy {
		t.Error("busy after the cancelled turn ended")
	}
}

func TestHostileTextIsShownInert(t *testing.T) {
	const osc52 = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"
	rt := &fakeRuntime{turn: func(ctx context.Context, req channel.TurnRequest) (channel.TurnResult, error) {
		req.OnTool(channel.ToolEvent{ID: "c1", Name: "read\x1b[31m_file", Args: `{"path":"\u001b[2J"}`, Status: channel.Proposed})
		req.OnTool(channel.ToolEvent{ID: "c1", Name: "read\x1b[31m_file", Status: channel.Ran, Plan: "read x\x1b[2J", Preview: "out\x1b[?1049l\x9b2J\u202eevil"})
		req.OnText("copy " + osc52 + " clear \x1b[2J\x1b[H bell\x07 cr\rback")
		return channel.TurnResult{}, nil
	}}
	tm, _ := start(t, rt, "chat", nil)
	typeLine(tm, "hi")
	waitFor(t, tm, "bell", idle)
	typeLine(tm, "/exit")
	out := tm.FinalOutput(t, teatest.WithFinalTimeout(5*time.Second))
	raw := new(bytes.Buffer)
	raw.ReadFrom(out)
	for _, bad := range []string{"\x1b]52", "\x07", "\x9b", "\u202e", "\x1b[31m", "\x1b[?1049l"} {
		if bytes.Contains(raw.Bytes(), []byte(bad)) {
			t.Errorf("terminal output contains %q from the model or a tool", bad)
		}
	}
	_, v := finalView(t, tm)
	if strings.ContainsAny(v, "\x1b\r") {
		t.Errorf("screen holds an escape byte (styling is off in tests, so it came from the model):\n%q", v)
	}
	for _, want := range []string{`copy \x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07 clear \x1b[2J\x1b[H bell\x07`, `cr\x0dback`, `read\x1b[31m_file read x\x1b[2J`, `out\x1b[?1049l\x9b2J\u202eevil`} {
		if !strings.Contains(v, want) {
			t.Errorf("screen lacks the inert %q:\n%s", want, v)
		}
	}
}

func TestCJKFitsEightyColumns(t *testing.T) {
	long := strings.Repeat("你好世界，这是一个很长的中文句子。", 8) // 8 × 17 wide runes = 272 cells
	rt := &fakeRuntime{turn: answer("## 标题\n", long, "\n- 列表项目 item\n`代码` 和 **粗体**")}
	tm, _ := start(t, rt, "chat", nil)
	typeLine(tm, "请用中文回答，谢谢你的帮助")
	waitFor(t, tm, "粗体", idle)
	typeLine(tm, "/exit")
	_, v := finalView(t, tm)
	var joined strings.Builder
	for _, l := range strings.Split(v, "\n") {
		joined.WriteString(strings.TrimRight(l, " "))
	}
	for _, want := range []string{"you› 请用中文回答，谢谢你的帮助", long, "• 列表项目 item", "代码 和 粗体", "标题"} {
		if !strings.Contains(joined.String(), want) && !strings.Contains(v, want) {
			t.Errorf("screen lacks %q (wrapped lines joined):\n%s", want, v)
		}
	}
}

func TestCommandsAndSessions(t *testing.T) {
	rt := &fakeRuntime{turn: answer("fine"), history: nil}
	hist := []channel.Message{
		{Role: "user", Text: "earlier question"},
		{Role: "tool", Tool: "read_file", Text: `{"path":"notes.txt"}`, Status: channel.Ran},
		{Role: "assistant", Text: "earlier **answer**"},
	}
	tm, _ := start(t, rt, "kitchen", hist)
	waitFor(t, tm, "homard chat · kitchen · fake-1 · smart mode", "you› earlier question", "✓ read_file", "earlier answer", "Resumed session kitchen.")
	typeLine(tm, "/budget")
	waitFor(t, tm, "No turn has finished yet")
	typeLine(tm, "/help")
	waitFor(t, tm, "Alt+Enter, Ctrl+J", "/cancel")
	typeLine(tm, "/nope")
	waitFor(t, tm, "Unknown command /nope")
	typeLine(tm, "/cancel")
	waitFor(t, tm, "No turn is running.")
	typeLine(tm, "hello")
	waitFor(t, tm, "fine", idle)
	typeLine(tm, "/budget")
	waitFor(t, tm, "Last turn: 1 of 24 tool calls, 2 of 48 budget units; tokens: 120 in (100", "cached), 7 out.",
		"Memory capture in this session so far: 1 call covering 4 turns; tokens: 900 in", "(0 cached), 40 out.")
	typeLine(tm, "/new")
	waitFor(t, tm, "New session chat-")
	typeLine(tm, "//etc is a folder")
	waitFor(t, tm, "fine", idle)
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	m, v := finalView(t, tm)
	if !strings.HasPrefix(m.Session(), "chat-") {
		t.Errorf("session after /new = %q; want chat-<time>", m.Session())
	}
	if strings.Contains(v, "earlier question") {
		t.Errorf("/new kept the old transcript:\n%s", v)
	}
	if got := rt.texts(); len(got) != 2 || got[1] != "/etc is a folder" {
		t.Errorf("turns = %q; want hello, then /etc is a folder", got)
	}
	rt.mu.Lock()
	if s := rt.reqs[1].Session; s != m.Session() {
		t.Errorf("turn after /new ran in session %q; want %q", s, m.Session())
	}
	rt.mu.Unlock()
}

func TestSmallAndResizedTerminal(t *testing.T) {
	rt := &fakeRuntime{turn: answer("# 标题 heading\n", strings.Repeat("mixed 中文 words ", 20))}
	tm, _ := start(t, rt, "a-very-long-session-name-that-does-not-fit-in-forty-columns", nil)
	tm.Send(tea.WindowSizeMsg{Width: 40, Height: 12})
	typeLine(tm, "请 please")
	waitFor(t, tm, "mixed", idle)
	tm.Send(tea.WindowSizeMsg{Width: 120, Height: 40})
	tm.Send(tea.WindowSizeMsg{Width: 40, Height: 12})
	typeLine(tm, "/exit")
	m := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	m.quitting = false
	v := m.View()
	lines := strings.Split(v, "\n")
	if len(lines) > 12 {
		t.Errorf("view has %d lines at 40×12; want at most 12:\n%s", len(lines), v)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("line %d is %d cells at 40 columns: %q", i, w, l)
		}
	}
	if !strings.Contains(v, "Enter send") || !strings.Contains(v, "homard chat · a-very") {
		t.Errorf("header or footer lost at 40×12:\n%s", v)
	}
}

func TestToolLinesFollowTheirCalls(t *testing.T) {
	rt := &fakeRuntime{turn: func(_ context.Context, req channel.TurnRequest) (channel.TurnResult, error) {
		req.OnTool(channel.ToolEvent{ID: "call_0", Name: "read_file", Args: `{"path":"a"}`, Status: channel.Proposed})
		req.OnTool(channel.ToolEvent{ID: "call_0", Name: "read_file", Plan: "read a", Status: channel.Ran, Preview: "alpha"})
		// The next response numbers its calls from 0 again.
		req.OnTool(channel.ToolEvent{ID: "call_0", Name: "list_dir", Args: `{}`, Status: channel.Proposed})
		req.OnTool(channel.ToolEvent{ID: "call_0", Name: "list_dir", Plan: "list .", Status: channel.Denied, Reason: "no"})
		req.OnTool(channel.ToolEvent{ID: "call_1", Name: "grep", Args: `{}`, Status: channel.Proposed})
		req.OnTool(channel.ToolEvent{ID: "call_1", Name: "grep", Plan: "grep x", Status: channel.Failed, Reason: "bad pattern"})
		req.OnText("done")
		return channel.TurnResult{}, nil
	}}
	tm, _ := start(t, rt, "chat", nil)
	typeLine(tm, "go")
	waitFor(t, tm, "done", idle)
	typeLine(tm, "/exit")
	_, v := finalView(t, tm)
	lines := strings.Split(v, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	v = strings.Join(lines, "\n")
	for _, want := range []string{"✓ read_file read a\n    alpha\n", "✗ list_dir list .\n    no\n", "! grep grep x\n    bad pattern"} {
		if !strings.Contains(v, want) {
			t.Errorf("screen lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "⋯") {
		t.Errorf("a decided call still shows as proposed:\n%s", v)
	}
}

// TestOnceOnlyCardTakesOnlyOnceOrDeny: a card the approval service takes
// only once (a command that runs code, here a medium one) offers once and
// deny; s and a show a hint and keep the card open, never "approved for
// this session"; o then answers it. The twin is
// TestApprovalCardAnsweredFromTheKeyboard's session case.
func TestOnceOnlyCardTakesOnlyOnceOrDeny(t *testing.T) {
	got := make(chan channel.Choice, 1)
	rt := &fakeRuntime{turn: approvalTurnOf(func(c *channel.Card) {
		c.Risk, c.OnceOnly, c.Covers = "medium", true, "commands like go test ./..."
	}, got)}
	tm, _ := start(t, rt, "chat", nil)
	typeLine(tm, "run the tests")
	waitFor(t, tm, "[o]nce · [d]eny · Esc leave pending")
	typeText(tm, "s")
	waitFor(t, tm, "This card can only be approved once (o) or denied (d).")
	typeText(tm, "a")
	typeText(tm, "o")
	// Had s or a been taken, Ask would have returned it first.
	if c := <-got; c != channel.Once {
		t.Fatalf("Ask returned %q; want once (s and a refused in place)", c)
	}
	waitFor(t, tm, "answer after once", idle)
	typeLine(tm, "/exit")
	_, v := finalView(t, tm)
	if strings.Contains(v, "[s]ession") || strings.Contains(v, "approved for this session") || strings.Contains(v, "would cover") {
		t.Errorf("a once-only card offered or took a session:\n%s", v)
	}
	if !strings.Contains(v, "→ approved once") {
		t.Errorf("card does not say approved once:\n%s", v)
	}
}

// TestNoAlwaysCardTakesSessionNotAlways: a card the approval service takes
// once or for the session but not always (a command that runs code in the
// graded sandbox) offers once, session and deny and says what a session
// would cover; a shows a hint and keeps the card open; s then answers it.
// The twin is TestOnceOnlyCardTakesOnlyOnceOrDeny.
func TestNoAlwaysCardTakesSessionNotAlways(t *testing.T) {
	got := make(chan channel.Choice, 1)
	rt := &fakeRuntime{turn: approvalTurnOf(func(c *channel.Card) {
		c.Risk, c.NoAlways, c.Covers = "medium", true, "commands like make test (this session only)"
	}, got)}
	tm, _ := start(t, rt, "chat", nil)
	typeLine(tm, "run the tests")
	waitFor(t, tm, "[o]nce · [s]ession · [d]eny · Esc leave pending", "session would cover: commands like make test")
	typeText(tm, "a")
	waitFor(t, tm, "This command runs code: approve it once (o), for this session (s)")
	typeText(tm, "s")
	// Had a been taken, Ask would have returned it first.
	if c := <-got; c != channel.Session {
		t.Fatalf("Ask returned %q; want session (a refused in place)", c)
	}
	waitFor(t, tm, "answer after session", idle)
	typeLine(tm, "/exit")
	_, v := finalView(t, tm)
	if strings.Contains(v, "[a]lways") || strings.Contains(v, "approved always") {
		t.Errorf("a no-always card offered or took always:\n%s", v)
	}
}

// TestCardShowsThePreview: a card shows what the call does below its
// plan — a diff's lines, control characters and bidi controls in the
// content as inert escapes — at most cardPreviewLines of it, then how many
// lines were left out (here and by the runtime) and the command that shows
// them all. A card without a preview has no such section (the twin).
// TestCardSaysWhatASessionCovers: a card that offers session and always
// says what they would cover, the model's text through clean; a critical
// or once-only card offers neither and says nothing of a cover.
func TestCardSaysWhatASessionCovers(t *testing.T) {
	c := channel.Card{ApprovalID: "ap_cov1", Tool: "write_file", Plan: "write docs/notes.md", PlanHash: "sha256:0123456789abcdef",
		Risk: "medium", Covers: "docs/**\x1b[2J"}
	got := strings.Join((&entry{kind: kindCard, card: c}).render(100), "\n")
	if !strings.Contains(got, "session/always would cover: docs/**\\x1b[2J") || strings.Contains(got, "\x1b[2J") {
		t.Errorf("card does not name the cover (made visible):\n%q", got)
	}
	for _, c := range []channel.Card{{Risk: "critical", Covers: "docs/**"}, {Risk: "medium", OnceOnly: true, Covers: "docs/**"}} {
		c.Tool, c.Plan, c.PlanHash = "write_file", "p", "sha256:00"
		got := strings.Join((&entry{kind: kindCard, card: c}).render(100), "\n")
		if strings.Contains(got, "would cover") || strings.Contains(got, "[s]ession") {
			t.Errorf("%s once-only=%v card offers a session or names a cover:\n%s", c.Risk, c.OnceOnly, got)
		}
	}
}

func TestCardShowsThePreview(t *testing.T) {
	var preview strings.Builder
	preview.WriteString("--- /dev/null\n+++ notes.md\n@@ -0,0 +1,50 @@\n+first \x1b[2J\x1b]0;pwned\x07 \u202eevil\n")
	for i := 2; i <= 50; i++ {
		fmt.Fprintf(&preview, "+line %d\n", i)
	}
	c := channel.Card{ApprovalID: "ap_prev1", Tool: "write_file", Plan: "write notes.md: 300 bytes", PlanHash: "sha256:0123456789abcdef",
		Risk: "medium", Preview: preview.String(), PreviewOmitted: 7, PreviewDiff: true}
	got := strings.Join((&entry{kind: kindCard, card: c}).render(80), "\n")
	for _, want := range []string{"─ what it does ─", "--- /dev/null", "+++ notes.md", "@@ -0,0 +1,50 @@",
		`+first \x1b[2J\x1b]0;pwned\x07 \u202eevil`, "+line 37", "… 20 more lines; homard approval show ap_prev1 --full"} {
		if !strings.Contains(got, want) {
			t.Errorf("card lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "+line 38") || strings.ContainsAny(got, "\x1b\u202e\x07") {
		t.Errorf("card shows more than %d preview lines, or a raw control:\n%q", cardPreviewLines, got)
	}
	c.Preview, c.PreviewOmitted = "", 0
	if got := strings.Join((&entry{kind: kindCard, card: c}).render(80), "\n"); strings.Contains(got, "what it does") {
		t.Errorf("a card without a preview has a preview section:\n%s", got)
	}
}

// TestBudgetAndToolsOff: /budget N caps the next turns' tool calls and
// /tools off offers none — both reach the runtime with the turn — until
// /budget off and /tools on; /clear starts a fresh session as /new does.
func TestBudgetAndToolsOff(t *testing.T) {
	rt := &fakeRuntime{turn: answer("fine")}
	tm, m := start(t, rt, "kitchen", nil)
	typeLine(tm, "/budget 2")
	waitFor(t, tm, "at most 2 tool calls each")
	typeLine(tm, "/tools off")
	waitFor(t, tm, "Tools off")
	typeLine(tm, "relayed text")
	waitFor(t, tm, "fine", idle)
	typeLine(tm, "/budget x")
	waitFor(t, tm, "Usage: /budget")
	typeLine(tm, "/budget off")
	waitFor(t, tm, "cap lifted")
	typeLine(tm, "/tools on")
	waitFor(t, tm, "Tools on.")
	typeLine(tm, "/clear")
	waitFor(t, tm, "New session chat-")
	typeLine(tm, "my own text")
	waitFor(t, tm, "fine", idle)
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	finalView(t, tm)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.reqs) != 2 {
		t.Fatalf("%d turns; want 2", len(rt.reqs))
	}
	if r := rt.reqs[0]; r.MaxCalls != 2 || !r.NoTools {
		t.Errorf("turn under /budget 2 and /tools off: MaxCalls %d NoTools %v; want 2, true", r.MaxCalls, r.NoTools)
	}
	if r := rt.reqs[1]; r.MaxCalls != 0 || r.NoTools || r.Session == "kitchen" || r.Session != m.Session() {
		t.Errorf("turn after /budget off, /tools on, /clear: %+v; want no cap, tools, a new session", r)
	}
}
