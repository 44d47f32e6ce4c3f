//go:build postgres

package store

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/store/pgstore"
)

// With HOMARD_TEST_POSTGRES (scripts/pg-test sets it), openTest opens a
// store in a new schema of that database, dropped after the test. (The
// store's own tests cannot use package storetest, which imports store.)
func init() {
	base := os.Getenv("HOMARD_TEST_POSTGRES")
	if base == "" {
		return
	}
	openOther = func(t *testing.T) *Store {
		t.Helper()
		url, drop, err := pgstore.NewSchema(t.Context(), base)
		if err != nil {
			t.Fatalf("new schema: %v", err)
		}
		s, err := OpenURL(t.Context(), url)
		if err != nil {
			t.Fatalf("OpenURL: %v", err)
		}
		t.Cleanup(func() {
			s.Close()
			if err := drop(); err != nil {
				t.Errorf("drop schema: %v", err)
			}
		})
		return s
	}
}

// TestSchemasMatch: the PostgreSQL schema has every table and column the
// SQLite one has (besides the rowid columns it adds, and FTS5's own
// tables), so a query written against one finds its columns in the other.
func TestSchemasMatch(t *testing.T) {
	if openOther == nil {
		if os.Getenv("CI") != "" {
			t.Fatal("HOMARD_TEST_POSTGRES is not set: CI runs this suite through scripts/pg-test")
		}
		t.Skip("HOMARD_TEST_POSTGRES is not set: run scripts/pg-test")
	}
	ctx := t.Context()
	lite, err := Open(ctx, t.TempDir()+"/homard.db")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg := openTest(t)
	columns := func(s *Store, q string) map[string]bool {
		rows, err := s.reader.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for rows.Next() {
			var table, col string
			if err := rows.Scan(&table, &col); err != nil {
				t.Fatal(err)
			}
			out[table+"."+col] = true
		}
		rows.Close()
		return out
	}
	liteCols := columns(lite, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'memory_fts%' AND m.name NOT LIKE 'sqlite_%'`)
	pgCols := columns(pg, `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()`)
	for c := range liteCols {
		if !pgCols[c] {
			t.Errorf("PostgreSQL has no column %s", c)
		}
	}
	for c := range pgCols {
		if !liteCols[c] && !strings.HasSuffix(c, ".rowid") && !strings.HasPrefix(c, "memory_fts.") {
			t.Errorf("PostgreSQL has a column %s that SQLite has not", c)
		}
	}
	if len(liteCols) < 100 {
		t.Errorf("SQLite schema: %d columns; the query read too little", len(liteCols))
	}
}

// TestWriterSurvivesACancelledStatement: a write whose context ends while
// its statement runs ends the PostgreSQL session under the writer; the
// next write takes a new one instead of failing for the store's life.
func TestWriterSurvivesACancelledStatement(t *testing.T) {
	if openOther == nil {
		t.Skip("HOMARD_TEST_POSTGRES is not set: run scripts/pg-test")
	}
	s := openTest(t)
	ctx, cancel := context.WithCancel(t.Context())
	err := s.Write(ctx, func(tx *Tx) error {
		go func() { time.Sleep(50 * time.Millisecond); cancel() }()
		_, err := tx.exec(`SELECT pg_sleep(5)`)
		return err
	})
	if err == nil {
		t.Fatal("a write cancelled in the middle of a statement succeeded")
	}
	// The twin: the next write, with a live context, succeeds.
	write(t, s, func(tx *Tx) error { return tx.EnsureSession("s1", "alice", t0) })
}

// TestTryLockAcrossReplicas: two stores on one database (two replicas)
// exclude each other on a name; its twins: another name locks, and when
// the holder's session dies (a replica killed mid-turn) the name is free.
func TestTryLockAcrossReplicas(t *testing.T) {
	base := os.Getenv("HOMARD_TEST_POSTGRES")
	if base == "" {
		t.Skip("HOMARD_TEST_POSTGRES is not set: run scripts/pg-test")
	}
	url, drop, err := pgstore.NewSchema(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer drop()
	a, err := OpenURL(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenURL(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !a.Shared() {
		t.Fatal("a PostgreSQL store says it is not shared")
	}
	unlock, ok, err := a.TryLock("session:s1")
	if err != nil || !ok {
		t.Fatalf("a.TryLock = %v, %v", ok, err)
	}
	if _, ok, err := b.TryLock("session:s1"); err != nil || ok {
		t.Fatalf("b.TryLock of a's name = %v, %v; want refused", ok, err)
	}
	if u, ok, err := b.TryLock("session:s2"); err != nil || !ok {
		t.Fatalf("b.TryLock of another name = %v, %v", ok, err)
	} else {
		u()
	}
	unlock()
	u2, ok, err := b.TryLock("session:s1")
	if err != nil || !ok {
		t.Fatalf("b.TryLock after a's unlock = %v, %v", ok, err)
	}
	u2()
	// a takes it again and its process dies: the server ends a's
	// sessions, and the name is free for b.
	if _, ok, err := a.TryLock("session:s1"); err != nil || !ok {
		t.Fatalf("a.TryLock again = %v, %v", ok, err)
	}
	var pid int
	if err := b.readRow(t.Context(), `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = 1851878757 AND granted LIMIT 1`).Scan(&pid); err != nil {
		t.Fatalf("find a's lock holder: %v", err)
	}
	if _, err := b.reader.ExecContext(t.Context(), `SELECT pg_terminate_backend(?)`, pid); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		u, ok, err := b.TryLock("session:s1")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			u()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the name stayed locked after its holder's session ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
