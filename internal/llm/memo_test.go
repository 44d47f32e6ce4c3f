package llm

import (
	"encoding/json"
	"testing"
)

// TestKeysTellMessagesApart: messages that differ in any field, including
// where one tool call's fields end and the next begin, have different
// keys; equal messages have equal keys.
func TestKeysTellMessagesApart(t *testing.T) {
	call := func(id, name, args string) ToolCall { return ToolCall{ID: id, Name: name, Args: json.RawMessage(args)} }
	ms := []Message{
		{Role: RoleUser, Content: "a"},
		{Role: RoleAssistant, Content: "a"},
		{Role: RoleUser, Content: "b"},
		{Role: RoleTool, Content: "a", ToolCallID: "1"},
		{Role: RoleTool, Content: "a", ToolCallID: "2"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{call("1", "ab", "{}")}},
		{Role: RoleAssistant, ToolCalls: []ToolCall{call("1a", "b", "{}")}},
		{Role: RoleAssistant, ToolCalls: []ToolCall{call("1", "a", "b{}")}},
		{Role: RoleAssistant, ToolCalls: []ToolCall{call("1", "ab", "{}"), call("", "", "")}},
		{Role: RoleAssistant, ToolCalls: []ToolCall{call("1", "ab", `{"x":1}`)}},
	}
	seen := map[Key]int{}
	for i, m := range ms {
		if j, dup := seen[KeyOf(m)]; dup {
			t.Errorf("messages %d and %d share a key", j, i)
		}
		seen[KeyOf(m)] = i
		copied := m
		copied.ToolCalls = append([]ToolCall(nil), m.ToolCalls...)
		if KeyOf(copied) != KeyOf(m) {
			t.Errorf("message %d: a copy has another key", i)
		}
	}
}

// TestMemoComputesOnceAndForgets: a value is computed once per message;
// past MaxBytes the memo starts again rather than growing, and a message
// larger than the bound is computed every time, never kept.
func TestMemoComputesOnceAndForgets(t *testing.T) {
	m := Memo[int]{MaxBytes: 10}
	calls := 0
	f := func(m Message) int { calls++; return len(m.Content) }
	for range 3 {
		if got := m.Get(Message{Content: "four"}, f); got != 4 {
			t.Fatalf("got %d", got)
		}
	}
	if calls != 1 || m.Len() != 1 {
		t.Fatalf("computed %d times, %d kept; want 1, 1", calls, m.Len())
	}
	m.Get(Message{Content: "sixsix"}, f) // 4+6 = 10: still within
	if m.Len() != 2 {
		t.Fatalf("%d kept; want 2", m.Len())
	}
	m.Get(Message{Content: "x"}, f) // 11 > 10: forget, keep x alone
	if m.Len() != 1 {
		t.Fatalf("%d kept after the bound; want 1", m.Len())
	}
	calls = 0
	for range 2 {
		m.Get(Message{Content: "eleven char"}, f)
	}
	if calls != 2 {
		t.Fatalf("a message over the bound was computed %d times; want 2 (never kept)", calls)
	}
}

// TestSpliceMessages fills the null messages field, and refuses an
// envelope without one.
func TestSpliceMessages(t *testing.T) {
	got, err := SpliceMessages([]byte(`{"model":"m","messages":null,"stream":true}`), [][]byte{[]byte(`{"a":1}`), []byte(`{"b":2}`)})
	if err != nil || string(got) != `{"model":"m","messages":[{"a":1},{"b":2}],"stream":true}` {
		t.Fatalf("%s, %v", got, err)
	}
	got, err = SpliceMessages([]byte(`{"messages":null}`), nil)
	if err != nil || string(got) != `{"messages":[]}` {
		t.Fatalf("%s, %v", got, err)
	}
	if _, err := SpliceMessages([]byte(`{"model":"\"messages\":null"}`), nil); err == nil {
		t.Fatal("an envelope with the field only inside a string was filled")
	}
}
