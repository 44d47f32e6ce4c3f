package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/tui"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/store"
)

// chatTest drives the real chat over the real pipeline (arbiter, approvals,
// store, workspace) against a fake OpenAI endpoint, at 80×24, key by key.
type chatTest struct {
	t  *testing.T
	tm *teatest.TestModel
}

func startChat(t *testing.T, r *Runtime, session string) *chatTest {
	t.Helper()
	lipgloss.SetColorProfile(termenv.Ascii)
	hist, err := r.Channel().History(context.Background(), session)
	if err != nil {
		t.Fatalf("History(%s): %v", session, err)
	}
	m := tui.New(context.Background(), r.Channel(), session, hist)
	t.Cleanup(m.Close)
	return &chatTest{t: t, tm: teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))}
}

func (c *chatTest) wait(want ...string) {
	c.t.Helper()
	teatest.WaitFor(c.t, c.tm.Output(), func(b []byte) bool {
		for _, w := range want {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

// done waits for the end of a turn: want on screen and the idle footer
// back (it reads "working…" while a turn runs).
func (c *chatTest) done(want ...string) {
	c.t.Helper()
	teatest.WaitFor(c.t, c.tm.Output(), func(b []byte) bool {
		for _, w := range want {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		// The screen is repainted line by line as lines change: if the
		// footer was painted "working…" since the last wait, it must have
		// been painted idle after; if it never was, every frame found it
		// idle.
		w := bytes.LastIndex(b, []byte("working…"))
		return w < 0 || bytes.LastIndex(b, []byte("Enter send")) > w
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

func (c *chatTest) key(s string) {
	for _, r := range s {
		c.tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

func (c *chatTest) line(s string) {
	c.key(s)
	c.tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
}

// exit leaves with /exit and returns the session the chat ended in and its
// last screen.
func (c *chatTest) exit() (string, string) {
	c.t.Helper()
	c.line("/exit")
	m := c.tm.FinalModel(c.t, teatest.WithFinalTimeout(10*time.Second)).(*tui.Model)
	return m.Session(), m.View()
}

func TestChatApprovesAWriteFromTheKeyboard(t *testing.T) {
	r := newTestRuntime(t, "smart")
	runServer(t, r,
		openAI(llmtest.Turn{Text: []string{"Hello, ", "**owner**."}}),
		openAI(toolCall("c1", "write_file", `{"path":"todo.md","content":"- tea\n"}`)),
		openAI(llmtest.Turn{Text: []string{"Wrote todo.md."}}),
		openAI(toolCall("c2", "write_file", `{"path":"no.md","content":"x"}`)),
		openAI(llmtest.Turn{Text: []string{"You said no."}}),
	)
	ws := r.Config.Workspace.Roots[0].Path
	c := startChat(t, r, "chat")
	c.line("hi")
	c.done("Hello, owner.")

	c.line("add tea to todo.md")
	c.wait("approval needed: write_file", "+++ todo.md", "plan hash ", " · expires ", "[o]nce")
	if _, err := os.Stat(filepath.Join(ws, "todo.md")); err == nil {
		t.Fatal("todo.md written before the owner answered")
	}
	c.key("o")
	c.done("approved once", "Wrote todo.md.")
	if got, err := os.ReadFile(filepath.Join(ws, "todo.md")); err != nil || string(got) != "- tea\n" {
		t.Fatalf("todo.md = %q, %v; want it written after o", got, err)
	}

	c.line("write no.md")
	// The first card is still in the transcript and is repainted as the
	// screen scrolls: wait for what only the second card shows (its diff).
	c.wait("approval needed: write_file", "+++ no.md")
	c.key("d")
	c.done("→ denied", "You said no.")
	if _, err := os.Stat(filepath.Join(ws, "no.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no.md exists (stat error %v); want nothing written after d", err)
	}
	c.line("/budget")
	c.wait("Last turn: 1 of 24 tool calls")
	c.exit()

	stored, err := r.Store.Messages(context.Background(), "chat")
	if err != nil || len(stored) < 8 {
		t.Fatalf("stored %d messages, %v; want the three turns kept in session chat", len(stored), err)
	}
}

// TestChatResumesASession: /new starts a fresh session; a new chat on that
// session (as after a restart with --session) shows its history, and the
// old session still holds its own.
func TestChatResumesASession(t *testing.T) {
	r := newTestRuntime(t, "smart")
	runServer(t, r,
		openAI(llmtest.Turn{Text: []string{"first answer"}}),
		openAI(llmtest.Turn{Text: []string{"second answer"}}),
		openAI(llmtest.Turn{Text: []string{"third answer"}}),
	)
	c := startChat(t, r, "chat")
	c.line("question one")
	c.done("first answer")
	c.line("/new")
	c.wait("New session chat-")
	c.line("question two")
	c.done("second answer")
	session, _ := c.exit()
	if !strings.HasPrefix(session, "chat-") {
		t.Fatalf("session after /new = %q; want chat-<time>", session)
	}

	c = startChat(t, r, session)
	c.wait("you› question two", "second answer", "Resumed session "+session)
	c.line("question three")
	c.done("third answer")
	_, v := c.exit()
	if strings.Contains(v, "question one") {
		t.Errorf("resumed %s shows the other session's history:\n%s", session, v)
	}

	hist, err := r.Channel().History(context.Background(), "chat")
	if err != nil || len(hist) != 2 || hist[0].Text != "question one" || hist[1].Text != "first answer" {
		t.Fatalf("History(chat) = %+v, %v; want the first exchange only", hist, err)
	}
}

// TestStoredStatus: the stored value wins over the text; rows from before
// migration 0016 fall back to homard's own first line.
func TestStoredStatus(t *testing.T) {
	for _, c := range []struct {
		stored, content string
		want            channel.Status
	}{
		{"ran", "decision: denied\n…", channel.Ran},
		{"pending", "anything", channel.Pending},
		{"", "decision: ran\nresult", channel.Ran},
		{"", "decision: denied\nreason", channel.Denied},
		{"", "not run: the budget is spent", channel.Denied},
	} {
		if got := storedStatus(c.stored, c.content); got != c.want {
			t.Errorf("storedStatus(%q, %q) = %q; want %q", c.stored, c.content, got, c.want)
		}
	}
}

func TestChatHistoryShowsToolCallsAndRefusesOtherOwners(t *testing.T) {
	r := newTestRuntime(t, "smart")
	writeWorkspaceFile(t, r, "notes.txt", "blue\n")
	runServer(t, r,
		openAI(toolCall("c1", "read_file", `{"path":"notes.txt"}`)),
		openAI(llmtest.Turn{Text: []string{"It is blue."}}),
	)
	if _, err := r.Run(context.Background(), channel.TurnRequest{Text: "colour?", Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	hist, err := r.Channel().History(context.Background(), "s1")
	want := []channel.Message{
		{Role: "user", Text: "colour?"},
		{Role: "tool", Tool: "read_file", Text: `{"path":"notes.txt"}`, Status: channel.Ran},
		{Role: "assistant", Text: "It is blue."},
	}
	if err != nil || len(hist) != len(want) {
		t.Fatalf("History = %+v, %v; want %+v", hist, err, want)
	}
	for i := range want {
		if hist[i] != want[i] {
			t.Errorf("History[%d] = %+v; want %+v", i, hist[i], want[i])
		}
	}
	// The status is stored as a value with the tool message, not read back
	// out of the text written for the model.
	rows, err := r.Store.Messages(context.Background(), "s1")
	var stored []string
	for _, row := range rows {
		if row.Role == "tool" {
			stored = append(stored, row.Status)
		}
	}
	if err != nil || len(stored) != 1 || stored[0] != string(channel.Ran) {
		t.Errorf("stored tool statuses %q, %v; want [ran]", stored, err)
	}

	if _, err := r.Call(context.Background(), CallRequest{Tool: "current_time", Args: `{}`, As: "guest", Session: "theirs"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Channel().History(context.Background(), "theirs"); !errors.Is(err, store.ErrSessionOwner) {
		t.Fatalf("History of a guest's session = %v; want ErrSessionOwner", err)
	}
	if s, err := tui.Run(context.Background(), r.Channel(), tui.Options{Session: "theirs", In: strings.NewReader(""), Out: &bytes.Buffer{}}); !errors.Is(err, store.ErrSessionOwner) || s != "" {
		t.Fatalf("tui.Run on a guest's session = %v; want it refused before drawing", err)
	}
}

// TestChatCancelStopsTheModelStream: /cancel during a streaming answer
// closes the connection to the model, and nothing of the turn is kept.
func TestChatCancelStopsTheModelStream(t *testing.T) {
	r := newTestRuntime(t, "smart")
	srv := runServer(t, r,
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"partial answer"}})[:2], Hang: true},
		openAI(llmtest.Turn{Text: []string{"after the cancel"}}),
	)
	c := startChat(t, r, "chat")
	c.line("tell me a long story")
	c.wait("partial answer", "working…")
	c.line("/cancel")
	select {
	case <-srv.Disconnected:
	case <-time.After(10 * time.Second):
		t.Fatal("/cancel did not close the model stream")
	}
	c.wait("Cancelled.")
	c.line("again")
	c.done("after the cancel")
	c.exit()
	stored, err := r.Store.Messages(context.Background(), "chat")
	if err != nil || len(stored) != 2 || stored[0].Content != "again" {
		t.Fatalf("stored = %+v, %v; want only the turn after the cancel", stored, err)
	}
}
