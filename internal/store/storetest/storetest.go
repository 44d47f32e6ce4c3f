// Package storetest opens stores for tests: a new SQLite file by default,
// or — in a build with -tags postgres and HOMARD_TEST_POSTGRES set, as
// scripts/pg-test runs them — a new schema of that PostgreSQL database,
// dropped when the test ends. A package whose tests open their stores
// here runs its suite against both engines (issue 27).
package storetest

import (
	"context"
	"os"
	"path/filepath"

	"github.com/homard/homard/internal/store"
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
