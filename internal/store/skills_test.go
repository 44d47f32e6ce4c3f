package store

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSkillTrustRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "homard.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.SkillTrust(ctx, "weather"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("SkillTrust before any pin = %v; want ErrNotFound", err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, h := range []string{strings.Repeat("a", 64), strings.Repeat("b", 64)} {
		err := s.Write(ctx, func(tx *Tx) error { return tx.PutSkillTrust(SkillTrust{Name: "weather", Hash: h, TrustedAt: at}) })
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.SkillTrust(ctx, "weather")
		if err != nil || got.Hash != h || !got.TrustedAt.Equal(at) {
			t.Errorf("SkillTrust = %+v, %v; want hash %s at %v", got, err, h, at)
		}
	}
	if err := s.Write(ctx, func(tx *Tx) error { return tx.PutSkillTrust(SkillTrust{Name: "x", Hash: "short", TrustedAt: at}) }); err == nil {
		t.Errorf("a hash that is not 64 hex digits was stored")
	}
	if all, err := s.SkillTrusts(ctx); err != nil || len(all) != 1 {
		t.Errorf("SkillTrusts = %+v, %v; want one", all, err)
	}
	if err := s.Write(ctx, func(tx *Tx) error { return tx.DeleteSkillTrust("weather") }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SkillTrust(ctx, "weather"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SkillTrust after delete = %v; want ErrNotFound", err)
	}
}
