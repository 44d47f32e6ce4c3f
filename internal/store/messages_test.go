package store

import (
	"errors"
	"testing"
)

func TestAppendTurnAndMessages(t *testing.T) {
	s := openTest(t)
	turn1 := []MessageRow{
		{Role: RoleUser, Content: "read notes"},
		{Role: RoleAssistant, ToolCalls: []byte(`[{"id":"c1","name":"read_file","args":"{}"}]`)},
		{Role: RoleTool, ToolCallID: "c1", Content: "one"},
		{Role: RoleAssistant, Content: "done"},
	}
	turn2 := []MessageRow{{Role: RoleUser, Content: "again"}, {Role: RoleAssistant, Content: "ok"}}
	var n1, n2 int
	write(t, s, func(tx *Tx) (err error) {
		n1, err = tx.AppendTurn("s1", "alice", turn1, Usage{Input: 10, Output: 2, Cached: 4}, "", t0)
		return err
	})
	write(t, s, func(tx *Tx) (err error) {
		n2, err = tx.AppendTurn("s1", "alice", turn2, Usage{}, "budget", t0)
		return err
	})
	if n1 != 1 || n2 != 2 {
		t.Fatalf("turn numbers = %d, %d; want 1, 2", n1, n2)
	}
	got, err := s.Messages(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]MessageRow(nil), turn1...), turn2...)
	if len(got) != len(want) {
		t.Fatalf("Messages = %d rows; want %d", len(got), len(want))
	}
	for i, m := range got {
		w := want[i]
		if m.Role != w.Role || m.Content != w.Content || string(m.ToolCalls) != string(w.ToolCalls) ||
			m.ToolCallID != w.ToolCallID || m.SessionID != "s1" || !m.CreatedAt.Equal(t0) {
			t.Errorf("Messages[%d] = %+v; want %+v", i, m, w)
		}
	}
	if got[4].Turn != 2 || got[4].Seq != 0 || got[3].Turn != 1 || got[3].Seq != 3 {
		t.Errorf("turn/seq = %d/%d and %d/%d; want 1/3 and 2/0", got[3].Turn, got[3].Seq, got[4].Turn, got[4].Seq)
	}
}

func TestAppendTurnIsAllOrNothing(t *testing.T) {
	s := openTest(t)
	write(t, s, func(tx *Tx) error { return tx.EnsureSession("s1", "alice", t0) })
	cases := []struct {
		name  string
		owner string
		msgs  []MessageRow
		want  error
	}{
		{"other owner", "mallory", []MessageRow{{Role: RoleUser, Content: "x"}}, ErrSessionOwner},
		{"bad role in the middle", "alice", []MessageRow{{Role: RoleUser, Content: "x"}, {Role: "system", Content: "y"}}, nil},
		{"bad tool calls JSON", "alice", []MessageRow{{Role: RoleAssistant, ToolCalls: []byte("{")}}, nil},
		{"no messages", "alice", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.Write(t.Context(), func(tx *Tx) error {
				_, err := tx.AppendTurn("s1", c.owner, c.msgs, Usage{}, "", t0)
				return err
			})
			if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
				t.Fatalf("AppendTurn = %v; want an error (%v)", err, c.want)
			}
			got, err := s.Messages(t.Context(), "s1")
			if err != nil || len(got) != 0 {
				t.Fatalf("Messages after a failed turn = %d rows, %v; want none", len(got), err)
			}
		})
	}
}
