//go:build !postgres

package store

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenURLWithoutEngine: the default build opens no postgres:// URL and
// says how to get a build that does, without repeating the URL (it may
// hold a password); its twins, a path and a file: URL, open SQLite.
func TestOpenURLWithoutEngine(t *testing.T) {
	_, err := OpenURL(t.Context(), "postgres://homard:hunter2@db.example/homard")
	if err == nil || !strings.Contains(err.Error(), "-tags postgres") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("OpenURL(postgres://…) = %v; want an error naming -tags postgres, without the password", err)
	}
	for _, u := range []string{filepath.Join(t.TempDir(), "a.db"), "file://" + filepath.Join(t.TempDir(), "b.db")} {
		s, err := OpenURL(t.Context(), u)
		if err != nil {
			t.Fatalf("OpenURL(%s): %v", u, err)
		}
		if s.Engine() != "SQLite" || !strings.HasSuffix(s.Path(), ".db") {
			t.Errorf("OpenURL(%s): engine %s, path %s", u, s.Engine(), s.Path())
		}
		s.Close()
	}
}

// TestPlainDBOnSQLite: a SQLite store has no plain pool (ok false), so
// the scheduler keeps its built-in one; TestPlainDB is its twin.
func TestPlainDBOnSQLite(t *testing.T) {
	s := openTest(t)
	if db, ok, err := s.PlainDB(t.Context()); db != nil || ok || err != nil {
		t.Errorf("PlainDB on SQLite = %v, %v, %v; want none", db, ok, err)
	}
}
