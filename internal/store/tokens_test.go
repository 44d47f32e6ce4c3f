package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"
)

func TestAPITokens(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	now := time.Unix(1700000000, 0)
	h := sha256.Sum256([]byte("secret"))
	if err := s.Write(ctx, func(tx *Tx) error {
		return tx.InsertAPIToken(APIToken{ID: "t1", Name: "laptop", SecretHash: h[:], CreatedAt: now, Owner: "alice"})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, func(tx *Tx) error {
		return tx.InsertAPIToken(APIToken{ID: "t2", Name: "short", SecretHash: []byte("x"), CreatedAt: now})
	}); err == nil {
		t.Error("InsertAPIToken with a 1-byte hash succeeded; want an error")
	}
	got, err := s.APIToken(ctx, "t1")
	if err != nil || got.Name != "laptop" || !bytes.Equal(got.SecretHash, h[:]) || !got.RevokedAt.IsZero() {
		t.Fatalf("APIToken(t1) = %+v, %v; want laptop with the hash, not revoked", got, err)
	}
	if err := s.Write(ctx, func(tx *Tx) error { return tx.TouchAPIToken("t1", "alice", now.Add(time.Minute)) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, func(tx *Tx) error { return tx.RevokeAPIToken("t1", "alice", now.Add(time.Hour)) }); err != nil {
		t.Fatal(err)
	}
	err = s.Write(ctx, func(tx *Tx) error { return tx.RevokeAPIToken("t1", "alice", now.Add(time.Hour)) })
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("revoking twice: %v; want ErrNotFound", err)
	}
	list, err := s.APITokens(ctx, "alice")
	if err != nil || len(list) != 1 || list[0].RevokedAt.IsZero() || !list[0].LastUsedAt.Equal(now.Add(time.Minute)) {
		t.Errorf("APITokens = %+v, %v; want t1 revoked, used at +1m", list, err)
	}
	// Another owner's view of the store: alice's token is neither listed
	// nor revocable there.
	if err := s.Write(ctx, func(tx *Tx) error {
		return tx.InsertAPIToken(APIToken{ID: "t3", Name: "phone", SecretHash: h[:], CreatedAt: now, Owner: "alice"})
	}); err != nil {
		t.Fatal(err)
	}
	if list, err := s.APITokens(ctx, "bob"); err != nil || len(list) != 0 {
		t.Errorf("APITokens(bob) = %+v, %v; want none of alice's", list, err)
	}
	if err := s.Write(ctx, func(tx *Tx) error { return tx.RevokeAPIToken("t3", "bob", now) }); !errors.Is(err, ErrNotFound) {
		t.Errorf("bob revoking alice's token: %v; want ErrNotFound", err)
	}
	if err := s.Write(ctx, func(tx *Tx) error {
		return tx.InsertAPIToken(APIToken{ID: "t4", Name: "nobody's", SecretHash: h[:], CreatedAt: now})
	}); err == nil {
		t.Error("InsertAPIToken without an owner succeeded; want an error")
	}
	if _, err := s.APIToken(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("APIToken(nope): %v; want ErrNotFound", err)
	}
}

func TestSessionsOf(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	t0 := time.Unix(1700000000, 0)
	msg := []MessageRow{{Role: RoleUser, Content: "hi"}}
	err := s.Write(ctx, func(tx *Tx) error {
		if err := tx.EnsureSession("empty", "owner", t0); err != nil {
			return err
		}
		if _, err := tx.AppendTurn("old", "owner", msg, Usage{}, "", t0.Add(time.Minute)); err != nil {
			return err
		}
		if _, err := tx.AppendTurn("new", "owner", msg, Usage{}, "", t0.Add(2*time.Minute)); err != nil {
			return err
		}
		if _, err := tx.AppendTurn("new", "owner", msg, Usage{}, "", t0.Add(3*time.Minute)); err != nil {
			return err
		}
		_, err := tx.AppendTurn("theirs", "other", msg, Usage{}, "", t0.Add(4*time.Minute))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.SessionsOf(ctx, "owner", 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range got {
		ids = append(ids, x.ID)
	}
	if len(got) != 3 || got[0].ID != "new" || got[0].Turns != 2 || !got[0].LastAt.Equal(t0.Add(3*time.Minute)) ||
		got[1].ID != "old" || got[2].ID != "empty" || got[2].Turns != 0 {
		t.Errorf("SessionsOf(owner) = %v (%+v); want new (2 turns), old, empty; never theirs", ids, got)
	}
}
