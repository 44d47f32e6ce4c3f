// Package storetest opens stores for tests: a new SQLite file by default,
// or — in a build with -tags postgres and HOMARD_TEST_POSTGRES set, as
// scripts/pg-test runs them — a new schema of that PostgreSQL database,
// dropped when the test ends. A package whose tests open their stores
// here runs its suite against both engines (issue 27).
package storetest

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"

	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/store/engine"
)

// TB is the part of testing.TB these helpers use (production packages do
// not import testing).
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
	TempDir() string
	Context() context.Context
}

// fresh returns the URL of a new, empty PostgreSQL schema (pg.go), or ""
// when the tests run on SQLite.
var fresh func(tb TB) string

// Env is the variable scripts/pg-test sets to the throwaway database.
const Env = "HOMARD_TEST_POSTGRES"

// URL returns where a test's store should live: "" for a SQLite file of
// the test's choosing, or a new PostgreSQL schema's URL. Under CI with
// HOMARD_TEST_POSTGRES set, a build without the engine fails instead of
// quietly testing SQLite.
func URL(tb TB) string {
	tb.Helper()
	if fresh != nil {
		return fresh(tb)
	}
	if os.Getenv(Env) != "" && os.Getenv("CI") != "" {
		tb.Fatalf("%s is set but this test binary has no PostgreSQL engine: build with -tags postgres", Env)
	}
	return ""
}

// Where returns a new place for a store that store.OpenURL opens, as
// often as a test likes (to reopen it): a new schema's URL, or a SQLite
// file in a new temporary folder.
func Where(tb TB) string {
	tb.Helper()
	if u := URL(tb); u != "" {
		return u
	}
	return filepath.Join(tb.TempDir(), "homard.db")
}

// Open opens a new store for tb (see Where), closed when the test ends.
func Open(tb TB) *store.Store {
	tb.Helper()
	s, err := store.OpenURL(tb.Context(), Where(tb))
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// Raw opens a plain database/sql pool on the store at where (a SQLite
// file or an engine's URL), closed when the test ends: for tests that
// change the database behind homard's back, as an attacker with the file
// or the database would. Its statements are written as the store's are:
// SQLite's dialect, ? parameters (an engine translates them).
func Raw(tb TB, where string) *sql.DB {
	tb.Helper()
	var db *sql.DB
	var err error
	if eng, ok := engineOf(where); ok {
		db, err = eng.Open(tb.Context(), where, false)
	} else {
		// The driver package store links registers "sqlite".
		db, err = sql.Open("sqlite", "file:"+where+"?_pragma=busy_timeout(5000)")
	}
	if err != nil {
		tb.Fatalf("open the database behind the store: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// Postgres reports whether where is a PostgreSQL store (a test whose SQL
// must differ, such as dropping a trigger).
func Postgres(where string) bool {
	eng, ok := engineOf(where)
	return ok && eng.Name == "PostgreSQL"
}

func engineOf(where string) (*engine.Engine, bool) {
	scheme, _, ok := strings.Cut(where, "://")
	if !ok {
		return nil, false
	}
	return engine.Lookup(scheme)
}
