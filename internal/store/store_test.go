package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

// openOther, when set, opens openTest's stores elsewhere than a new SQLite
// file: pg_test.go sets it (-tags postgres, HOMARD_TEST_POSTGRES) to a
// fresh schema of a PostgreSQL database, so that every test written on
// openTest runs against both engines (scripts/pg-test).
var openOther func(t *testing.T) *Store

// sqliteOnly marks a test of what only the SQLite engine has (pragmas, the
// file): it runs in the SQLite suite and is left out of another engine's.
func sqliteOnly(t *testing.T) {
	t.Helper()
	if openOther != nil {
		t.Skip("SQLite only: runs in the SQLite suite")
	}
}

func openTest(t *testing.T) *Store {
	t.Helper()
	if openOther != nil {
		return openOther(t)
	}
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "homard.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func write(t *testing.T, s *Store, fn func(*Tx) error) {
	t.Helper()
	if err := s.Write(t.Context(), fn); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

func TestOpenCreatesPrivateFileAndDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "homard.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("database mode = %v; want 0600", got)
	}
	di, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if got := di.Mode().Perm(); got != 0o700 {
		t.Errorf("directory mode = %v; want 0700", got)
	}
	if s.Path() != path {
		t.Errorf("Path() = %q; want %q", s.Path(), path)
	}
}

func TestOpenRejectsQuestionMark(t *testing.T) {
	_, err := Open(t.Context(), filepath.Join(t.TempDir(), "x?mode=ro"))
	if err == nil || !strings.Contains(err.Error(), "'?'") {
		t.Fatalf("Open(path with ?) = %v; want an error naming '?'", err)
	}
}

func TestPragmas(t *testing.T) {
	sqliteOnly(t)
	s := openTest(t)
	ctx := t.Context()
	for _, tc := range []struct {
		writer bool
		name   string
		want   string
	}{
		{true, "journal_mode", "wal"},
		{true, "foreign_keys", "1"},
		{true, "synchronous", "1"}, // NORMAL
		{true, "busy_timeout", "5000"},
		{true, "trusted_schema", "0"},
		{true, "query_only", "0"},
		{false, "journal_mode", "wal"},
		{false, "foreign_keys", "1"},
		{false, "busy_timeout", "5000"},
		{false, "query_only", "1"},
	} {
		got, err := s.pragma(ctx, tc.writer, tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("PRAGMA %s (writer=%v) = %q; want %q", tc.name, tc.writer, got, tc.want)
		}
	}
}

func TestReaderPoolCannotWrite(t *testing.T) {
	s := openTest(t)
	_, err := s.execReader(t.Context(), `INSERT INTO sessions (id, owner, created_at) VALUES ('s', 'o', 1)`)
	if err == nil {
		t.Fatal("insert through the reader pool succeeded; want a query_only (SQLite) or read-only transaction (PostgreSQL) error")
	}
	// Its twin: the same insert through Write.
	if err := s.Write(t.Context(), func(tx *Tx) error {
		_, err := tx.exec(`INSERT INTO sessions (id, owner, created_at) VALUES ('s', 'o', 1)`)
		return err
	}); err != nil {
		t.Fatalf("the same insert through Write: %v", err)
	}
}

func TestMigrationsIdempotentOnReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "homard.db")
	ms, err := loadMigrations(migrationFiles, "migrations", 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("Open #%d: %v", i, err)
		}
		v, err := s.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v != len(ms) {
			t.Errorf("open #%d: SchemaVersion = %d; want %d", i, v, len(ms))
		}
		if i == 0 {
			write(t, s, func(tx *Tx) error { return tx.EnsureSession("s1", "alice", t0) })
		}
		got, err := s.Session(ctx, "s1")
		if err != nil || got.Owner != "alice" || !got.CreatedAt.Equal(t0) {
			t.Errorf("open #%d: Session(s1) = %+v, %v; want alice at %v", i, got, err, t0)
		}
		if err := s.Integrity(ctx); err != nil {
			t.Errorf("open #%d: Integrity: %v", i, err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
}

func TestSchemaTooNew(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "homard.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.execWriter(ctx, `INSERT INTO schema_migrations VALUES (999, '0999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(ctx, path)
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Open(newer schema) = %v; want ErrSchemaTooNew", err)
	}
}

func TestWriteRollsBackOnError(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	boom := errors.New("boom")
	err := s.Write(ctx, func(tx *Tx) error {
		if err := tx.EnsureSession("s1", "alice", t0); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write = %v; want the callback's error", err)
	}
	if _, err := s.Session(ctx, "s1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after a failed Write, Session(s1) err = %v; want ErrNotFound", err)
	}
}

func TestWriteRollsBackOnPanic(t *testing.T) {
	s := openTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Write swallowed the panic")
			}
		}()
		s.Write(ctx, func(tx *Tx) error {
			if err := tx.EnsureSession("s1", "alice", t0); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if _, err := s.Session(ctx, "s1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after a panicking Write, Session(s1) err = %v; want ErrNotFound", err)
	}
	// The single writer connection must have been released.
	if err := s.Write(ctx, func(tx *Tx) error { return tx.EnsureSession("s2", "alice", t0) }); err != nil {
		t.Fatalf("Write after a panic: %v", err)
	}
}

// TestWriteCancelledMidway: a context cancelled inside a transaction (before
// a statement, or just before COMMIT) rolls it back, and the held writer
// connection works for the next Write.
func TestWriteCancelledMidway(t *testing.T) {
	s := openTest(t)
	for _, at := range []string{"before a statement", "before commit"} {
		ctx, cancel := context.WithCancel(t.Context())
		err := s.Write(ctx, func(tx *Tx) error {
			if err := tx.EnsureSession("s-"+at, "alice", t0); err != nil {
				return err
			}
			cancel()
			if at == "before a statement" {
				return tx.EnsureSession("s2-"+at, "alice", t0)
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: Write = %v; want context.Canceled", at, err)
		}
		if _, err := s.Session(t.Context(), "s-"+at); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: the cancelled transaction's session exists (err %v)", at, err)
		}
	}
	if err := s.Write(t.Context(), func(tx *Tx) error { return tx.EnsureSession("after", "alice", t0) }); err != nil {
		t.Fatalf("Write after cancelled ones: %v", err)
	}
	if _, err := s.Session(t.Context(), "after"); err != nil {
		t.Fatalf("Session(after): %v", err)
	}
}

// TestWriteAfterClose fails with ErrClosed instead of hanging or panicking.
func TestWriteAfterClose(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "homard.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), func(*Tx) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write after Close = %v; want ErrClosed", err)
	}
}

func TestTxUnusableAfterWrite(t *testing.T) {
	s := openTest(t)
	var leaked *Tx
	write(t, s, func(tx *Tx) error { leaked = tx; return nil })
	if err := leaked.EnsureSession("s1", "alice", t0); err == nil {
		t.Fatal("a Tx kept after Write still wrote")
	}
}

func TestConcurrentWritesSerialise(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			errs <- s.Write(ctx, func(tx *Tx) error {
				// read-then-write: would fail with SQLITE_BUSY or lose
				// updates without one writer and BEGIN IMMEDIATE.
				seq, _, err := tx.LastAudit()
				if err != nil {
					return err
				}
				return tx.InsertAudit(AuditRow{Seq: seq + 1, Time: t0, Owner: fmt.Sprint(i)})
			})
		})
		wg.Go(func() {
			if _, err := s.ListAudit(ctx, 0, 10); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent write: %v", err)
		}
	}
	rows, err := s.ListAudit(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != n || rows[n-1].Seq != n {
		t.Errorf("after %d appends: %d rows, last seq %d; want %d rows ending at seq %d", n, len(rows), rows[len(rows)-1].Seq, n, n)
	}
}

func TestForeignKeysEnforced(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	write(t, s, func(tx *Tx) error { return tx.EnsureSession("s1", "alice", t0) })
	// Through the engine, bypassing our own checks.
	_, err := s.execWriter(ctx, `INSERT INTO tool_runs (id, session_id, owner, tool, plan_hash, plan, display,
		status, decision, rule, reason, created_at, updated_at)
		VALUES ('r1', 'nope', 'alice', 't', 'h', '{}', '', 'requested', 'allow', '', '', 1, 1)`)
	if err == nil || !strings.Contains(strings.ToUpper(err.Error()), "FOREIGN KEY") {
		t.Errorf("insert with a missing session = %v; want a FOREIGN KEY error", err)
	}
	// Through InsertToolRun: an approval id that does not exist.
	err = s.Write(ctx, func(tx *Tx) error {
		_, err := tx.InsertToolRun(ToolRun{SessionID: "s1", Owner: "alice", Status: RunRequested,
			ApprovalID: "ap_missing", CreatedAt: t0})
		return err
	})
	if err == nil || !strings.Contains(strings.ToUpper(err.Error()), "FOREIGN KEY") {
		t.Errorf("InsertToolRun with a missing approval = %v; want a FOREIGN KEY error", err)
	}
}

func TestIntegrityFindsForeignKeyDamage(t *testing.T) {
	sqliteOnly(t)
	s := openTest(t)
	ctx := t.Context()
	if err := s.Integrity(ctx); err != nil {
		t.Fatalf("Integrity on a fresh database: %v", err)
	}
	// Simulate damage made by another tool with foreign keys off.
	for _, q := range []string{
		`PRAGMA foreign_keys = OFF`,
		`INSERT INTO tool_runs (id, session_id, owner, tool, plan_hash, plan, display, status, decision, rule,
			reason, created_at, updated_at) VALUES ('r1', 'gone', 'alice', 't', 'h', '{}', '', 'requested', 'allow', '', '', 1, 1)`,
		`PRAGMA foreign_keys = ON`,
	} {
		if _, err := s.execWriter(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	err := s.Integrity(ctx)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "tool_runs") {
		t.Fatalf("Integrity after damage = %v; want ErrCorrupt naming tool_runs", err)
	}
}

func TestEnsureSession(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	write(t, s, func(tx *Tx) error { return tx.EnsureSession("s1", "alice", t0) })
	write(t, s, func(tx *Tx) error { return tx.EnsureSession("s1", "alice", t0.Add(time.Hour)) })
	err := s.Write(ctx, func(tx *Tx) error { return tx.EnsureSession("s1", "mallory", t0) })
	if !errors.Is(err, ErrSessionOwner) {
		t.Errorf("EnsureSession(s1, mallory) = %v; want ErrSessionOwner", err)
	}
	for _, in := range [][2]string{{"", "alice"}, {"s2", ""}} {
		if err := s.Write(ctx, func(tx *Tx) error { return tx.EnsureSession(in[0], in[1], t0) }); err == nil {
			t.Errorf("EnsureSession(%q, %q) = nil; want an error", in[0], in[1])
		}
	}
	got, err := s.Session(ctx, "s1")
	if err != nil || got.Owner != "alice" || !got.CreatedAt.Equal(t0) {
		t.Errorf("Session(s1) = %+v, %v; want alice created at %v (the first call)", got, err, t0)
	}
}

// TestMarkSessionPrivate: a session starts public, the first mark sets
// PrivateSince, a later mark keeps the first time, and the mark survives
// closing and reopening the database.
func TestMarkSessionPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "homard.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	write(t, s, func(tx *Tx) error { return tx.EnsureSession("s1", "alice", t0) })
	write(t, s, func(tx *Tx) error { return tx.EnsureSession("s2", "alice", t0) })
	if got, err := s.Session(t.Context(), "s1"); err != nil || !got.PrivateSince.IsZero() {
		t.Fatalf("Session(s1) = %+v, %v; want a session that is not private", got, err)
	}
	write(t, s, func(tx *Tx) error { return tx.MarkSessionPrivate("s1", t0.Add(time.Minute)) })
	write(t, s, func(tx *Tx) error { return tx.MarkSessionPrivate("s1", t0.Add(time.Hour)) })
	write(t, s, func(tx *Tx) error { return tx.MarkSessionPrivate("nope", t0) }) // no such session: nothing happens
	if err := s.Write(t.Context(), func(tx *Tx) error { return tx.MarkSessionPrivate("s2", time.Time{}) }); err == nil {
		t.Errorf("MarkSessionPrivate(s2, zero time) = nil; want an error")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	if got, err := s.Session(t.Context(), "s1"); err != nil || !got.PrivateSince.Equal(t0.Add(time.Minute)) {
		t.Errorf("Session(s1) after reopening = %+v, %v; want private since %v (the first mark)", got, err, t0.Add(time.Minute))
	}
	if got, err := s.Session(t.Context(), "s2"); err != nil || !got.PrivateSince.IsZero() {
		t.Errorf("Session(s2) = %+v, %v; want it still public", got, err)
	}
	if _, err := s.Session(t.Context(), "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Session(nope) = %v; want ErrNotFound (a mark creates no session)", err)
	}
}

func openAt(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
