package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/store"
)

// TestConversationFollowsTheStore: the conversation a turn is given is
// what the database holds, though recent sessions' messages are kept
// decoded between turns (internal/history): turns another process
// appended are there; a deleted session's messages are not, nor after its
// id is used again; a summary's turns leave. Each step has its twin, the
// conversation as it should read.
func TestConversationFollowsTheStore(t *testing.T) {
	r := newTestRuntime(t, "smart")
	ctx := context.Background()
	owner := r.Config.Owner
	// appendTurn stores one user/assistant turn the way another process
	// would: only through the database.
	appendTurn := func(text string) {
		t.Helper()
		err := r.Store.Write(ctx, func(tx *store.Tx) error {
			_, err := tx.AppendTurn("s", owner, []store.MessageRow{{Role: "user", Content: text}, {Role: "assistant", Content: "ok " + text}},
				store.Usage{}, "", time.Now())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		t.Helper()
		conv, _, err := r.conversation(ctx, "s", owner)
		if err != nil {
			t.Fatal(err)
		}
		var b []string
		for _, m := range conv.History {
			b = append(b, m.Content)
		}
		return strings.Join(b, "|")
	}
	del := func() {
		t.Helper()
		if err := r.Store.Write(ctx, func(tx *store.Tx) error { return tx.DeleteSession("s", owner, time.Now()) }); err != nil {
			t.Fatal(err)
		}
	}
	appendTurn("one")
	appendTurn("two")
	if got := read(); got != "one|ok one|two|ok two" {
		t.Fatalf("conversation = %q; want turns one and two", got)
	}
	// Deleted and used again with no read between: only the new turn.
	del()
	appendTurn("again")
	if got := read(); got != "again|ok again" {
		t.Errorf("the id used again: %q; want only the new turn, none of the deleted ones", got)
	}
	appendTurn("more")
	if got := read(); got != "again|ok again|more|ok more" {
		t.Fatalf("after another process's turn: %q; want turns again and more", got)
	}
	// Deleted: nothing.
	del()
	if got := read(); got != "" {
		t.Errorf("a deleted session's conversation = %q; want nothing", got)
	}
	appendTurn("one")
	appendTurn("two")
	appendTurn("three")
	if got := read(); got != "one|ok one|two|ok two|three|ok three" {
		t.Fatalf("conversation = %q; want turns one to three", got)
	}
	if err := r.Store.Write(ctx, func(tx *store.Tx) error { return tx.SetSummary("s", "one happened", 1, time.Now()) }); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "two|ok two|three|ok three" {
		t.Errorf("after a summary through turn 1: %q; want turns two and three", got)
	}
}
