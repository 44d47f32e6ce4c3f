package store

import "testing"

// TestClaimOwner: the first owner to claim a store keeps it; another's
// claim returns the first, and changes nothing; the first claims again.
func TestClaimOwner(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	if got, err := s.StoreOwner(ctx); err != nil || got != "" {
		t.Fatalf("StoreOwner of a new store = %q, %v; want none", got, err)
	}
	if got, err := s.ClaimOwner(ctx, "alice", t0); err != nil || got != "alice" {
		t.Fatalf("alice's claim = %q, %v; want alice", got, err)
	}
	if got, err := s.ClaimOwner(ctx, "bob", t0); err != nil || got != "alice" {
		t.Errorf("bob's claim = %q, %v; want alice (hers, kept)", got, err)
	}
	if got, err := s.ClaimOwner(ctx, "alice", t0); err != nil || got != "alice" {
		t.Errorf("alice claiming again = %q, %v; want alice", got, err)
	}
	if got, err := s.StoreOwner(ctx); err != nil || got != "alice" {
		t.Errorf("StoreOwner = %q, %v; want alice", got, err)
	}
	if _, err := s.ClaimOwner(ctx, "", t0); err == nil {
		t.Error("a claim with no owner succeeded")
	}
}
