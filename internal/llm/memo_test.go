package llm

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
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
	m := Memo[int]{MaxBytes: 2*entryCost + 10} // two entries, 10 bytes of text
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
	m.Get(Message{Content: "x"}, f) // a third entry: forget, keep x alone
	if m.Len() != 1 {
		t.Fatalf("%d kept after the bound; want 1", m.Len())
	}
	calls = 0
	big := strings.Repeat("b", entryCost+11) // over the bound on its own
	for range 2 {
		m.Get(Message{Content: big}, f)
	}
	if calls != 2 {
		t.Fatalf("a message over the bound was computed %d times; want 2 (never kept)", calls)
	}
	// Many short messages are bounded by their number: the entry cost
	// counts, not only their text.
	var many Memo[int]
	for i := range 100000 {
		many.Get(Message{Content: strconv.Itoa(i)}, f)
	}
	if n := many.Len(); n > (4<<20)/entryCost {
		t.Errorf("%d short messages kept; want at most %d", n, (4<<20)/entryCost)
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

// TestSeqServesTheLongestRunAndComputesTheRest: a conversation's next
// request computes only its new messages; a request that changes an old
// message (in any field, tool-call arguments included) gets that message's
// own value, never the run's; a caller appending to or changing its
// slices afterwards changes nothing the memo serves.
func TestSeqServesTheLongestRunAndComputesTheRest(t *testing.T) {
	var m Memo[string]
	calls := 0
	f := func(m Message) string {
		calls++
		s := string(m.Role) + ":" + m.Content
		for _, c := range m.ToolCalls {
			s += "/" + c.Name + string(c.Args)
		}
		return s
	}
	want := func(msgs []Message) []string {
		var out []string
		for _, x := range msgs {
			out = append(out, f(x))
		}
		calls -= len(msgs)
		return out
	}
	check := func(what string, msgs []Message, computed int) {
		t.Helper()
		calls = 0
		got := m.Seq(msgs, f)
		if fmt.Sprint(got) != fmt.Sprint(want(msgs)) {
			t.Fatalf("%s: got %q", what, got)
		}
		if calls != computed {
			t.Fatalf("%s: computed %d values; want %d", what, calls, computed)
		}
	}
	args := json.RawMessage(`{"path":"a"}`)
	conv := []Message{{Role: RoleUser, Content: "read a"}, {Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "1", Name: "read_file", Args: args}}}}
	check("first request", conv, 2)
	conv = append(conv, Message{Role: RoleTool, ToolCallID: "1", Content: "A"})
	check("the next one", conv, 1)
	check("the same again", conv, 0)
	// The caller changes the arguments' bytes in place: the memo kept its
	// own copy, so this is a new message and computed (by Get: its map
	// has the old bytes' value under the old key only).
	args[10] = 'b'
	check("an old message changed in place", conv, 1)
	other := []Message{{Role: RoleUser, Content: "read a"}, {Role: RoleUser, Content: "something else"}}
	check("another conversation sharing the first message", other, 1)
	got := m.Seq(conv, f)
	_ = append(got, "appended by the caller")
	check("after a caller appended to a result", conv, 0)
}

// TestSeqConcurrent: conversations served at once from one memo each get
// their own values (run with -race).
func TestSeqConcurrent(t *testing.T) {
	var m Memo[string]
	f := func(m Message) string { return m.Content }
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			var conv []Message
			for i := range 50 {
				conv = append(conv, Message{Role: RoleUser, Content: fmt.Sprintf("g%d m%d", g, i)})
				got := m.Seq(conv, f)
				if len(got) != len(conv) || got[i] != conv[i].Content || got[0] != conv[0].Content {
					t.Errorf("goroutine %d request %d: %q", g, i, got)
					return
				}
			}
		})
	}
	wg.Wait()
}
