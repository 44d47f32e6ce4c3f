// Package engine is the seam between homard's store and a database it can
// live in besides its built-in SQLite (issue 27). An engine registers
// itself here under a URL scheme; store.OpenURL opens a URL through the
// engine registered for its scheme. The store keeps one set of queries,
// written in SQLite's dialect with ? parameters: an engine's connections
// translate them (parameters, a few idioms), and the queries a second
// database cannot take as they are — full-text search, integrity checks —
// are named and the engine gives its own text for each name.
//
// PostgreSQL (internal/store/pgstore) is the one engine, compiled only
// with -tags postgres: the default binary stays SQLite-only and within its
// size limit. This package imports nothing beyond the standard library,
// so both sides of the seam can import it.
package engine

import (
	"context"
	"database/sql"
	"io/fs"
	"sort"
	"strings"
	"sync"
)

// Engine is one database a store can live in.
type Engine struct {
	// Name is what errors and `homard doctor` call it: "PostgreSQL".
	Name string
	// Open connects to url. The pool's connections take homard's SQL as
	// the store writes it and translate it for the database. A readOnly
	// pool must refuse every write (the store's readers).
	Open func(ctx context.Context, url string, readOnly bool) (*sql.DB, error)
	// Begin are the statements that open a write transaction on the
	// store's writer connection, in order, sent as one script without
	// parameters: they must serialise every writer of the store, across
	// processes and machines, as SQLite's BEGIN IMMEDIATE does for one
	// file — with a lock only the store's own role can take, never one
	// any role of the database may hold.
	Begin []string
	// Bootstrap makes what Begin needs in a store that may be brand new
	// (the table Begin locks): the store runs it once as it opens, on its
	// writer connection, before the first write. Several processes may
	// run it at once on one new store. Nil: Begin needs nothing.
	Bootstrap func(ctx context.Context, c *sql.Conn) error
	// Migrations holds the engine's schema as files NNNN_name.sql at its
	// root, numbered without gaps from Baseline: the first file is the
	// whole schema up to that version (the engine arrived then), each
	// later one matches the SQLite migration of its number.
	Migrations fs.FS
	Baseline   int
	// Queries is the engine's text of the store's named queries (see
	// package store's named), by name. A name missing here is an error
	// when the store first runs that query, never SQLite's text sent to
	// another database.
	Queries map[string]string
	// Match is the parameter of the memory.match query for terms: the
	// units holding all of them, or with anyTerm any of them. A term is
	// only text, never the index's query syntax.
	Match func(terms []string, anyTerm bool) string
	// RunLocks returns the locks that mark a tool or task run as held by
	// a live process (see RunLocker), on db.
	RunLocks func(db *sql.DB) RunLocker
	// Listen calls fn with each announcement on topic (the store's
	// notify, named query "notify": topic, payload) from any process on
	// the database, on a connection of its own from db, until stop is
	// called; stop returns once that connection is given back, so the
	// pool can close (database/sql holds a connection's lock while its
	// driver connection is lent out). Nil: the engine announces nothing.
	Listen func(db *sql.DB, topic string, fn func(payload string)) (stop func(), err error)
	// Check returns the problems the database finds in itself (the
	// engine's integrity check); nil when it finds none.
	Check func(ctx context.Context, db *sql.DB) ([]string, error)
	// Plain opens a pool like db, one of Open's pools (the same server,
	// credentials, database and schema), but read-write and with
	// connections that send SQL as it is written, in the database's own
	// dialect (no translation, parameters as the database numbers them):
	// for a library that brings its own queries (river's jobs, on
	// PostgreSQL). Nil: the engine has no such pool.
	Plain func(ctx context.Context, db *sql.DB) (*sql.DB, error)
}

// RunLocker holds the run locks of one store: a lock taken by hold is held
// for this process's life at most — the database (or the kernel) drops it
// when the process dies, however it dies — and probe sees every holder,
// this process included, so a run recorded as running whose lock is free
// was left by a process that is gone. Only the store's own role (or the
// kernel's user) can take or hold one.
type RunLocker interface {
	// Hold takes run key's lock; holding it again is a no-op.
	Hold(key int64) error
	// Release drops run key's lock.
	Release(key int64)
	// Probe opens a fresh handle whose free reports whether key's lock
	// is free. done closes the handle.
	Probe() (free func(key int64) (bool, error), done func(), err error)
	// Close drops every lock this store holds.
	Close() error
	// TryName takes the lock called name (a session's turn) if no other
	// process holds it; the same process may take it again. Release drops
	// one taking.
	TryName(name string) (ok bool, err error)
	ReleaseName(name string)
}

var (
	mu      sync.RWMutex
	engines = map[string]*Engine{}
)

// Register makes e open URLs of the given schemes. It panics when a scheme
// is registered twice (two engines built into one binary).
func Register(e *Engine, schemes ...string) {
	mu.Lock()
	defer mu.Unlock()
	for _, s := range schemes {
		s = strings.ToLower(s)
		if _, dup := engines[s]; dup {
			panic("engine: scheme " + s + " registered twice")
		}
		engines[s] = e
	}
}

// Lookup returns the engine registered for scheme (case-insensitive).
func Lookup(scheme string) (*Engine, bool) {
	mu.RLock()
	defer mu.RUnlock()
	e, ok := engines[strings.ToLower(scheme)]
	return e, ok
}

// Schemes lists the registered schemes, sorted: what this binary can open
// besides a SQLite file.
func Schemes() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(engines))
	for s := range engines {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
