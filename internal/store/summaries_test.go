package store

import (
	"errors"
	"testing"
)

func TestSummaryAndMessagesAfter(t *testing.T) {
	s := openTest(t)
	for range 3 {
		write(t, s, func(tx *Tx) error {
			_, err := tx.AppendTurn("s1", "alice", []MessageRow{{Role: RoleUser, Content: "q"}, {Role: RoleAssistant, Content: "a"}}, Usage{}, "", t0)
			return err
		})
	}
	if _, err := s.Summary(t.Context(), "s1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Summary before any = %v; want ErrNotFound", err)
	}
	write(t, s, func(tx *Tx) error { return tx.SetSummary("s1", "first", 1, t0) })
	write(t, s, func(tx *Tx) error { return tx.SetSummary("s1", "second", 2, t0) })
	got, err := s.Summary(t.Context(), "s1")
	if err != nil || got.Text != "second" || got.ThroughTurn != 2 || !got.UpdatedAt.Equal(t0) {
		t.Fatalf("Summary = %+v, %v; want the second, through turn 2", got, err)
	}
	msgs, err := s.MessagesAfter(t.Context(), "s1", got.ThroughTurn)
	if err != nil || len(msgs) != 2 || msgs[0].Turn != 3 {
		t.Fatalf("MessagesAfter(2) = %d rows, %v; want turn 3's two", len(msgs), err)
	}
	for _, tc := range []struct {
		name    string
		session string
		through int
	}{
		{"back in time", "s1", 1},
		{"turn that does not exist", "s1", 9},
		{"zero", "s1", 0},
		{"unknown session", "nope", 1},
	} {
		err := s.Write(t.Context(), func(tx *Tx) error { return tx.SetSummary(tc.session, "x", tc.through, t0) })
		if err == nil {
			t.Errorf("SetSummary (%s) succeeded; want an error", tc.name)
		}
	}
	if got, _ := s.Summary(t.Context(), "s1"); got.Text != "second" {
		t.Errorf("after refused writes Summary = %q; want second", got.Text)
	}
}
