package task

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/homard/homard/internal/store"
)

// BenchmarkCheck is the check before every run: strict decode of the
// stored body, its canonical form, the HMAC, the expiry.
func BenchmarkCheck(b *testing.B) {
	body := sample()
	canon, err := body.Canonical()
	if err != nil {
		b.Fatal(err)
	}
	mac, err := Seal(key, body)
	if err != nil {
		b.Fatal(err)
	}
	row := store.Task{ID: body.ID, Owner: body.Owner, Name: body.Name, Body: canon, MAC: mac, Status: store.TaskActive}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Check(key, row, t0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAddTask is what `homard task add` does after parsing its flags:
// a new id, Validate, the canonical body and its hash, and the row written
// in its own transaction, next to 10,000 other tasks.
func BenchmarkAddTask(b *testing.B) {
	s, err := store.Open(b.Context(), filepath.Join(b.TempDir(), "homard.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	err = s.Write(ctx, func(tx *store.Tx) error {
		for i := range 10_000 {
			body := sample()
			body.ID = fmt.Sprintf("task_%016x", i)
			c, err := body.Canonical()
			if err != nil {
				return err
			}
			if err := tx.InsertTask(store.Task{ID: body.ID, Owner: body.Owner, Name: body.Name, Body: c, CreatedAt: t0}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		body := sample()
		body.ID = NewID()
		if err := body.Validate(); err != nil {
			b.Fatal(err)
		}
		c, err := body.Canonical()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Hash(body); err != nil {
			b.Fatal(err)
		}
		row := store.Task{ID: body.ID, Owner: body.Owner, Name: body.Name, Body: c, NextRunAt: t0.Add(time.Hour), CreatedAt: t0}
		if err := s.Write(ctx, func(tx *store.Tx) error { return tx.InsertTask(row) }); err != nil {
			b.Fatal(err)
		}
	}
}
