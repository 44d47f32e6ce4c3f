package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/store/storetest"
)

// TestOldArtifactsArePruned: artifacts older than artifacts.keep are gone
// after the next start and after serve's periodic pass; newer ones stay.
func TestOldArtifactsArePruned(t *testing.T) {
	home := t.TempDir()
	paths, err := config.ResolvePaths(home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Init(context.Background(), paths, config.InitOptions{StoreURL: storetest.URL(t)}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	r, err := Open(context.Background(), paths, Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	ages := map[string]time.Duration{"art_old": 31 * 24 * time.Hour, "art_edge": 29 * 24 * time.Hour, "art_new": time.Minute}
	err = r.Store.Write(context.Background(), func(tx *store.Tx) error {
		for id, age := range ages {
			if err := tx.InsertArtifact(store.Artifact{ID: id, Owner: "owner", Session: "s", CreatedAt: now.Add(-age), Text: id}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()

	r, err = Open(context.Background(), paths, Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	exists := func(id string) bool {
		_, err := r.Store.Artifact(context.Background(), id)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	got := fmt.Sprint(exists("art_old"), exists("art_edge"), exists("art_new"))
	if got != "false true true" {
		t.Fatalf("after a start with keep=720h: old/edge/new exist = %s; want false true true", got)
	}

	// Two days later, serve's loop takes the one that has now aged out.
	now = now.Add(2 * 24 * time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		r.pruneLoop(ctx, time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)))
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for exists("art_edge") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if exists("art_edge") || !exists("art_new") {
		t.Fatalf("after serve's pass: edge exists %v, new exists %v; want false, true", exists("art_edge"), exists("art_new"))
	}
}
