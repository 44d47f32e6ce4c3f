package reqlog

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
)

const canary = "sk-proj-CANARY0123456789abcdef"

func request() llm.Request {
	return llm.Request{Model: "m1", System: "you are homard",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "read notes/key.txt"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"path":"notes/key.txt"}`)}}},
			{Role: llm.RoleTool, ToolCallID: "c1", Content: "the key is " + canary},
		},
		Tools: []llm.ToolSpec{{Name: "read_file"}, {Name: "http_get"}}}
}

func lines(t *testing.T, path string) []Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// TestEntryShapeWithoutText: a line has the sizes, roles, the calls and
// the tools — and, by default, no text at all (the canary is nowhere in
// the file).
func TestEntryShapeWithoutText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	l := Open(path, Options{Redact: func(s string) string { return strings.ReplaceAll(s, canary, "[REDACTED]") }})
	l.Add(l.EntryOf("main", request()))
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), canary) || strings.Contains(string(raw), "the key is") {
		t.Fatalf("text reached the log without log_model_inputs:\n%s", raw)
	}
	e := lines(t, path)[0]
	if e.Role != "main" || e.Model != "m1" || e.SystemBytes != 14 || len(e.Messages) != 3 || e.Messages[1].Calls[0] != "read_file" ||
		e.Messages[2].Answers != "c1" || e.Messages[2].Bytes != len("the key is "+canary) || len(e.Tools) != 2 {
		t.Errorf("entry %+v", e)
	}
	if want := 14 + 18 + len(`{"path":"notes/key.txt"}`) + len("the key is "+canary); e.Bytes != want {
		t.Errorf("bytes %d; want %d", e.Bytes, want)
	}
}

// TestTextIsRedacted: with Text on, each message's text is kept through
// the redactor; without a redactor no text is kept at all.
func TestTextIsRedacted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	l := Open(path, Options{Text: true, Redact: func(s string) string { return strings.ReplaceAll(s, canary, "[REDACTED]") }})
	l.Add(l.EntryOf("main", request()))
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), canary) || !strings.Contains(string(raw), "the key is [REDACTED]") {
		t.Errorf("with text: %s", raw)
	}
	bare := Open(filepath.Join(t.TempDir(), "b.jsonl"), Options{Text: true})
	if e := bare.EntryOf("main", request()); e.Messages[2].Text != "" {
		t.Error("text kept with no redactor")
	}
}

// TestRotationAndNil: past MaxBytes the file moves to .1 and a new one
// starts; a nil Log writes nothing and wraps nothing.
func TestRotationAndNil(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.jsonl")
	l := Open(path, Options{MaxBytes: 600, Now: func() time.Time { return time.Unix(0, 0) }})
	for range 5 {
		l.Add(l.EntryOf("main", request()))
	}
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Errorf("no rotated file: %v", err)
	}
	if fi, _ := os.Stat(path); fi.Size() > 600 {
		t.Errorf("the current file is %d bytes; want at most 600", fi.Size())
	}
	var none *Log
	none.Add(Entry{})
	var m llm.Model
	if none.Wrap(m, "main") != nil {
		t.Error("a nil Log wrapped a model")
	}
}

// TestLineIsTheEntry: the line a wrapped request writes, its messages'
// parts remembered across a growing conversation, is byte for byte the
// JSON of its entry with the messages the line before listed summed up —
// with text on (never remembered) and off.
func TestLineIsTheEntry(t *testing.T) {
	for _, text := range []bool{false, true} {
		l := Open(filepath.Join(t.TempDir(), "r.jsonl"), Options{Text: text, Redact: strings.ToUpper, Now: func() time.Time { return time.Unix(7, 0) }})
		req := request()
		known := 0
		for i := range 6 {
			got, err := l.line(nil, "main", req)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(l.entryAfter("main", req, known))
			if string(got) != string(want) {
				t.Fatalf("text %v, request %d:\n got %s\nwant %s", text, i, got, want)
			}
			known = len(req.Messages)
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: strings.Repeat("x", i)})
		}
	}
}

// TestLongSessionListsOnlyWhatIsNew: a request that continues the
// conversation of an earlier line lists only the messages after those,
// and sums the earlier ones up (count, bytes, roles, calls), its Bytes
// still the whole request's — a 50-turn session's line no longer grows
// with its history. Twin: a request of another conversation lists every
// message; with text on, the new messages' text is there, redacted.
func TestLongSessionListsOnlyWhatIsNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	l := Open(path, Options{Text: true, Redact: func(s string) string { return strings.ReplaceAll(s, canary, "[REDACTED]") }})
	answer := []llm.Event{llmtest.Text("ok"), llmtest.Done(llm.StopEnd)}
	m := l.Wrap(llmtest.NewScripted(answer, answer, answer), "main")
	first := request()
	next := first
	next.Messages = append(slices.Clone(first.Messages),
		llm.Message{Role: llm.RoleAssistant, Content: "done"},
		llm.Message{Role: llm.RoleUser, Content: "again " + canary})
	other := request()
	other.Messages[0].Content = "another conversation"
	for _, req := range []llm.Request{first, next, other} {
		s, err := m.Stream(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	got := lines(t, path)
	if len(got) != 3 {
		t.Fatalf("%d lines; want 3", len(got))
	}
	if got[0].Earlier != nil || len(got[0].Messages) != 3 {
		t.Errorf("first request: earlier %+v, %d messages listed; want none, 3", got[0].Earlier, len(got[0].Messages))
	}
	e := got[1]
	want := Earlier{Messages: 3, Bytes: 18 + len(`{"path":"notes/key.txt"}`) + len("the key is "+canary), User: 1, Assistant: 1, Tool: 1, Calls: 1}
	if e.Earlier == nil || *e.Earlier != want {
		t.Errorf("continued request: earlier %+v; want %+v", e.Earlier, want)
	}
	if len(e.Messages) != 2 || e.Messages[0].Text != "done" || e.Messages[1].Text != "again [REDACTED]" {
		t.Errorf("continued request lists %+v; want only its two new messages, redacted", e.Messages)
	}
	if whole := 14 + want.Bytes + len("done") + len("again "+canary); e.Bytes != whole {
		t.Errorf("continued request: bytes %d; want the whole request's %d", e.Bytes, whole)
	}
	if got[2].Earlier != nil || len(got[2].Messages) != 3 {
		t.Errorf("another conversation: earlier %+v, %d messages listed; want none, 3", got[2].Earlier, len(got[2].Messages))
	}
}

// TestDeletedLogStartsAgain: the file is held open between requests; when
// the owner deletes it, a later request writes a new one at the path.
func TestDeletedLogStartsAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	l := Open(path, Options{})
	defer l.Close()
	l.Add(l.EntryOf("main", request()))
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.seen = time.Time{} // as if reopenEvery had passed
	l.mu.Unlock()
	l.Add(l.EntryOf("main", request()))
	if got := lines(t, path); len(got) != 1 {
		t.Fatalf("%d lines at the path after it was deleted; want 1", len(got))
	}
}
