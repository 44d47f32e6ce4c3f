package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteRecoversAnOpenTransaction: a transaction left open on the
// writer connection (what a BEGIN cancelled as it returned, or a ROLLBACK
// that failed, leaves) does not make every later Write fail with "cannot
// start a transaction within a transaction": it is rolled back — what it
// held is never committed — and the Write runs. The twin: a Write on a
// clean writer, and one after a cancelled Write, run as usual.
func TestWriteRecoversAnOpenTransaction(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "homard.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.execWriter(ctx, `CREATE TABLE notes (v TEXT)`); err != nil {
		t.Fatal(err)
	}
	insert := func(v string) error {
		return s.Write(ctx, func(tx *Tx) error {
			_, err := tx.exec(`INSERT INTO notes (v) VALUES (?)`, v)
			return err
		})
	}
	if err := insert("clean"); err != nil {
		t.Fatalf("Write on a clean writer: %v", err)
	}
	// Left open by "an earlier failure": begun, written, never ended.
	for _, q := range []string{"BEGIN IMMEDIATE", `INSERT INTO notes (v) VALUES ('leftover')`} {
		if _, err := s.execWriter(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := insert("after"); err != nil {
		t.Fatalf("Write after a transaction was left open = %v; want it to roll that back and run", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_ = s.Write(cancelled, func(tx *Tx) error { _, err := tx.exec(`INSERT INTO notes (v) VALUES ('cancelled')`); return err })
	if err := insert("last"); err != nil {
		t.Fatalf("Write after a cancelled Write: %v", err)
	}
	var got []string
	rows, err := s.reader.QueryContext(ctx, `SELECT v FROM notes ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if want := "clean after last"; strings.Join(got, " ") != want {
		t.Errorf("notes = %q; want %q (the leftover and the cancelled rows never committed)", got, want)
	}
}
