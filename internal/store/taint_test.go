package store

import (
	"context"
	"testing"
	"time"
)

// TestTaintTextsKeptAndDeletedWithTheSession: texts come back in order for
// their session only, and deleting the session deletes them.
func TestTaintTextsKeptAndDeletedWithTheSession(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	err := s.Write(ctx, func(tx *Tx) error {
		for _, id := range []string{"s1", "s2"} {
			if err := tx.EnsureSession(id, "alice", now); err != nil {
				return err
			}
		}
		for _, tt := range []TaintText{{Label: 1, What: "the file a.txt", Text: "secret one", At: now}, {Label: 0, What: "https://x.example/", Text: "page", At: now}} {
			if err := tx.AddTaintText("s1", tt); err != nil {
				return err
			}
		}
		return tx.AddTaintText("s2", TaintText{Label: 2, What: "you", Text: "hello", At: now})
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.TaintTexts(ctx, "s1", 0)
	if err != nil || len(got) != 2 || got[0].Text != "secret one" || got[0].Label != 1 || got[1].What != "https://x.example/" || !got[0].At.Equal(now) {
		t.Fatalf("s1: %+v, %v", got, err)
	}
	if later, err := s.TaintTexts(ctx, "s1", got[0].ID); err != nil || len(later) != 1 || later[0].Text != "page" {
		t.Fatalf("after the first: %+v, %v", later, err)
	}
	if err := s.Write(ctx, func(tx *Tx) error { return tx.DeleteSession("s1", "alice", now) }); err != nil {
		t.Fatal(err)
	}
	if got, err := s.TaintTexts(ctx, "s1", 0); err != nil || len(got) != 0 {
		t.Fatalf("after delete: %+v, %v", got, err)
	}
	if got, err := s.TaintTexts(ctx, "s2", 0); err != nil || len(got) != 1 {
		t.Fatalf("s2 after s1's delete: %+v, %v", got, err)
	}
}
