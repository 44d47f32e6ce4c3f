package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/store/storetest"
)

// Every test home keeps its state in a store of its own: its SQLite file
// by default, or — in a test binary built with -tags postgres and run with
// HOMARD_TEST_POSTGRES set, as scripts/pg-test runs it — a new schema of
// that PostgreSQL database, named to homard in HOMARD_STORE_URL and
// dropped when the test ends (issue 27). There, a home that still grew a
// data/homard.db fails its test: nothing falls back to SQLite unseen.

// postgresBuild is set by postgres_test.go: this test binary, and the
// homard that buildHomard builds, have the PostgreSQL engine.
var postgresBuild bool

// onPostgres reports whether the test homes keep their state in
// PostgreSQL (storetest.URL gives them schemas).
func onPostgres() bool {
	return postgresBuild && os.Getenv(storetest.Env) != ""
}

// storeEnv returns what to add to the environment of a child homard on
// home so that the home uses a store of its own: nothing on SQLite. Under
// CI with HOMARD_TEST_POSTGRES set, a binary without the engine fails the
// test instead of testing SQLite (storetest.URL).
func storeEnv(t *testing.T, home string) []string {
	t.Helper()
	u := storetest.URL(t)
	if u == "" {
		return nil
	}
	t.Cleanup(func() { noSQLiteFile(t.Errorf, home) })
	return []string{config.StoreEnv + "=" + u}
}

// useTestStore is storeEnv for homard run in this process (run reads
// HOMARD_STORE_URL) and for children that inherit its environment: it
// sets the variable until the test ends (t.Setenv: not in a parallel
// test).
func useTestStore(t *testing.T, home string) {
	t.Helper()
	for _, kv := range storeEnv(t, home) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// noSQLiteFile reports a home on PostgreSQL that has a SQLite database
// file all the same.
func noSQLiteFile(errorf func(string, ...any), home string) {
	if _, err := os.Stat(filepath.Join(home, "data", "homard.db")); err == nil {
		errorf("%s has data/homard.db though its store is PostgreSQL (%s): something used SQLite", home, config.StoreEnv)
	}
}

// homeStore returns where the store of a test's home lives: the store
// URL in env (storeEnv's, or os.Environ() after useTestStore), or the
// home's SQLite file.
func homeStore(home string, env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], config.StoreEnv+"="); ok && v != "" {
			return v
		}
	}
	return filepath.Join(home, "data", "homard.db")
}

// rawStore opens the store of a test's home behind homard's back, as an
// attacker with the file or the database would (storetest.Raw: SQLite's
// dialect, ? parameters), closed when the test ends if not before. It
// works in t's cleanups too (a failing test's dump).
func rawStore(t *testing.T, home string, env []string) *sql.DB {
	t.Helper()
	return storetest.Raw(cleanupTB{t}, homeStore(home, env))
}

// cleanupTB is t with a context that outlives it: t.Context() is
// cancelled before t's cleanups run.
type cleanupTB struct{ *testing.T }

func (cleanupTB) Context() context.Context { return context.Background() }

// scriptStore sets a script's HOMARD_STORE_URL to a store of its own, as
// storeEnv does for a Go test, and TEST_STORE_URL to the same value (""
// on SQLite) for a script that changes the variable and puts it back.
func scriptStore(env *testscript.Env) {
	tb := scriptTB{env}
	u := storetest.URL(tb)
	if u != "" {
		env.Setenv(config.StoreEnv, u)
		home := env.Getenv("HOMARD_HOME")
		env.Defer(func() { noSQLiteFile(tb.Fatalf, home) })
	}
	env.Setenv("TEST_STORE_URL", u)
}

// scriptTB is the part of testing.TB storetest uses, for a script: its
// cleanups run when the script ends.
type scriptTB struct{ env *testscript.Env }

func (s scriptTB) Helper()                        {}
func (s scriptTB) Fatalf(format string, a ...any) { s.env.T().Fatal(fmt.Sprintf(format, a...)) }
func (s scriptTB) Cleanup(f func())               { s.env.Defer(f) }
func (s scriptTB) Context() context.Context       { return context.Background() }

func (s scriptTB) TempDir() string {
	dir, err := os.MkdirTemp(s.env.WorkDir, "tmp")
	if err != nil {
		s.Fatalf("temp dir: %v", err)
	}
	return dir
}
