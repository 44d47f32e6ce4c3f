package store

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestTitleOf(t *testing.T) {
	long := strings.Repeat("word ", titleScan/5)
	cases := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"short", "  read my\n notes  ", "read my notes"},
		{"eight words kept", "one two three four five six seven eight", "one two three four five six seven eight"},
		{"nine words cut", "one two three four five six seven eight nine", "one two three four five six seven eight…"},
		{"long word cut by characters", strings.Repeat("x", 70), strings.Repeat("x", 59) + "…"},
		{"chinese cut by characters", strings.Repeat("乌龙茶", 30), string([]rune(strings.Repeat("乌龙茶", 30))[:59]) + "…"},
		{"scan stopped inside", long, "word word word word word word word word…"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := TitleOf(c.in); got != c.want {
				t.Errorf("TitleOf(%q) = %q; want %q", c.in, got, c.want)
			}
		})
	}
}

func TestSessionsOfTitle(t *testing.T) {
	s := openTest(t)
	write(t, s, func(tx *Tx) error {
		if _, err := tx.AppendTurn("s1", "alice", []MessageRow{{Role: RoleUser, Content: "please summarise my notes from Monday"}, {Role: RoleAssistant, Content: "ok"}}, Usage{}, "", t0); err != nil {
			return err
		}
		if _, err := tx.AppendTurn("s1", "alice", []MessageRow{{Role: RoleUser, Content: "second message"}}, Usage{}, "", t0.Add(time.Second)); err != nil {
			return err
		}
		return tx.EnsureSession("empty", "alice", t0)
	})
	list, err := s.SessionsOf(t.Context(), "alice", 10)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, x := range list {
		got[x.ID] = x.Title
	}
	want := map[string]string{"s1": "please summarise my notes from Monday", "empty": ""}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("session %s title = %q; want %q (the first words of the first owner message)", id, got[id], w)
		}
	}
}

func TestDeleteSession(t *testing.T) {
	s := openTest(t)
	write(t, s, func(tx *Tx) error {
		for _, id := range []string{"gone", "kept", "asks"} {
			if _, err := tx.AppendTurn(id, "alice", []MessageRow{{Role: RoleUser, Content: "hello " + id}}, Usage{}, "", t0); err != nil {
				return err
			}
		}
		if err := tx.SetSummary("gone", "a summary", 1, t0); err != nil {
			return err
		}
		for _, a := range []Approval{
			{ID: "ap_pending", SessionID: "asks", Status: "pending", ExpiresAt: t0.Add(time.Hour)},
			{ID: "ap_lapsed", SessionID: "gone", Status: "pending", ExpiresAt: t0.Add(-time.Minute)},
		} {
			a.Tool, a.PlanHash, a.Owner, a.Display, a.Plan, a.CreatedAt = "write_file", "sha256:00", "alice", "plan", []byte("{}"), t0
			if err := tx.InsertApproval(a); err != nil {
				return err
			}
		}
		return tx.InsertGrant(Grant{ID: "g1", Owner: "alice", SessionID: "gone", Tool: "write_file", Scope: "session",
			ApprovalID: "ap_lapsed", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)})
	})
	now := t0.Add(time.Minute)
	cases := []struct {
		name, id, owner string
		want            error
	}{
		{"another owner's session", "kept", "mallory", ErrNotFound},
		{"unknown session", "nope", "alice", ErrNotFound},
		{"a pending approval refuses", "asks", "alice", ErrSessionPending},
		{"delete (a lapsed approval does not block)", "gone", "alice", nil},
		{"deleted twice", "gone", "alice", ErrNotFound},
	}
	for _, c := range cases {
		err := s.Write(t.Context(), func(tx *Tx) error { return tx.DeleteSession(c.id, c.owner, now) })
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: DeleteSession(%s, %s) = %v; want %v", c.name, c.id, c.owner, err, c.want)
		}
	}
	list, err := s.SessionsOf(t.Context(), "alice", 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range list {
		ids = append(ids, x.ID)
	}
	if strings.Join(ids, ",") != "asks,kept" && strings.Join(ids, ",") != "kept,asks" {
		t.Errorf("listed sessions = %v; want asks and kept (gone deleted, asks refused)", ids)
	}
	if msgs, _ := s.Messages(t.Context(), "gone"); len(msgs) != 0 {
		t.Errorf("messages of the deleted session = %d; want none", len(msgs))
	}
	if msgs, _ := s.Messages(t.Context(), "asks"); len(msgs) != 1 {
		t.Errorf("messages of the refused session = %d; want 1 (nothing deleted)", len(msgs))
	}
	g, err := s.GetGrant(t.Context(), "g1")
	if err != nil || g.RevokedAt.IsZero() {
		t.Errorf("the deleted session's grant = %+v, %v; want revoked", g, err)
	}
	// The id used again is a new, empty conversation.
	var turn int
	write(t, s, func(tx *Tx) (err error) {
		turn, err = tx.AppendTurn("gone", "alice", []MessageRow{{Role: RoleUser, Content: "fresh start"}}, Usage{}, "", now)
		return err
	})
	list, _ = s.SessionsOf(t.Context(), "alice", 10)
	if turn != 1 || len(list) != 3 || list[0].ID != "gone" || list[0].Title != "fresh start" {
		t.Errorf("after reuse: turn %d, sessions %+v; want turn 1 and gone listed first titled \"fresh start\"", turn, list)
	}
}
