// Package store owns homard's SQLite database: it opens it, applies the
// embedded migrations and runs every query. It is the only package that
// imports the SQLite driver.
//
// Contract: callers get plain row structs (times as time.Time, stored as
// INTEGER unix nanoseconds UTC) and never see SQL. All writes go through
// Write, which runs one BEGIN IMMEDIATE transaction on the single writer
// connection, so writes are serialised in this process and a conditional
// UPDATE inside Write cannot race another writer. Reads on *Store use a
// separate pool of read-only connections and never block the writer (WAL).
// Domain rules (what an approval may become, how an audit hash is made)
// belong to the services above; store only enforces what the schema can
// (types, CHECKs, foreign keys, append-only audit).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/homard/homard/internal/store/engine"
	"modernc.org/sqlite"
)

// Store is an open database. It is safe for concurrent use.
type Store struct {
	path   string
	writer *sql.DB // a pool of exactly one connection, held by wconn for the Store's life
	reader *sql.DB // read-only pool (query_only), WAL readers do not block the writer

	// wmu serialises every use of wconn: one Write (or migration step) at
	// a time. homard holds the writer connection itself and runs BEGIN
	// IMMEDIATE / COMMIT as prepared statements instead of using
	// database/sql's Tx: a Tx starts a goroutine per transaction and the
	// driver parses BEGIN and COMMIT again each time, which together cost
	// more than the inserts of the arbiter's hot path. Holding the
	// connection also lets a statement be prepared in the middle of a
	// transaction (database/sql cannot: the Tx owns the pool's only
	// connection).
	wmu    sync.Mutex
	wconn  *sql.Conn
	wstmts map[string]*sql.Stmt // prepared on wconn; guarded by wmu

	// readStmts caches statements prepared on the reader pool (sql.Stmt
	// re-prepares on each pool connection as needed). Preparing a small
	// query costs more than running it; the hot reads repeat a few.
	readMu    sync.Mutex
	readStmts map[string]*sql.Stmt

	// runs holds the locks of the tool runs this process runs (runlock.go).
	runs runLocker
	// alone are the names TryLockAlone holds in this process.
	aloneMu sync.Mutex
	alone   map[string]bool

	// eng is the engine of a store opened by URL (OpenURL); nil for the
	// built-in SQLite. Its queries are the ones named (named).
	eng *engine.Engine
	// listeners stop the store's Listen calls, and close PlainDB's pools;
	// closed is set by Close. Both guarded by readMu.
	listeners []context.CancelFunc
	closed    bool
}

// maxWriterStmts bounds the writer's statement cache; every query text in
// this package is a constant, so the bound is never reached in practice.
const maxWriterStmts = 256

// readRow runs a one-row query on the reader pool through a cached
// prepared statement; if preparing fails, the error surfaces on Scan.
func (s *Store) readRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := s.readStmt(ctx, query)
	if err != nil {
		return s.reader.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// readRows is readRow for queries returning many rows.
func (s *Store) readRows(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := s.readStmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (s *Store) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	return cachedStmt(ctx, &s.readStmts, 0, s.reader.PrepareContext, query)
}

// cachedStmt returns the statement for query kept in *cache, preparing it
// with prepare and keeping it on first use. With limit > 0 and limit
// statements kept already it returns nil (the caller then runs query
// unprepared). The caller guards *cache.
func cachedStmt(ctx context.Context, cache *map[string]*sql.Stmt, limit int,
	prepare func(context.Context, string) (*sql.Stmt, error), query string) (*sql.Stmt, error) {
	if st, ok := (*cache)[query]; ok {
		return st, nil
	}
	if limit > 0 && len(*cache) >= limit {
		return nil, nil
	}
	st, err := prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	if *cache == nil {
		*cache = make(map[string]*sql.Stmt)
	}
	(*cache)[query] = st
	return st, nil
}

// busyTimeout is how long a connection waits for a lock held by another
// connection or process (a CLI command next to the running daemon, a WAL
// checkpoint) before failing with SQLITE_BUSY.
const busyTimeout = 5 * time.Second

// Pragmas applied to every connection, through the driver's _pragma DSN
// parameter so that a connection the pool opens later gets them too.
var pragmas = []string{
	// Wait for a lock instead of failing at once; see busyTimeout.
	fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()),
	// SQLite leaves foreign keys off by default, per connection; the
	// schema relies on them (a tool run or an approval must name a real
	// session).
	"foreign_keys(1)",
	// WAL: readers see a consistent snapshot and never block the one
	// writer, and a crash mid-write cannot corrupt the database.
	"journal_mode(WAL)",
	// NORMAL is safe from corruption in WAL mode and skips an fsync per
	// commit; a power cut can lose the last commits, never the file.
	"synchronous(NORMAL)",
	// Do not run functions named by the schema (triggers, views) unless
	// they are innocuous: the database file is data, not code.
	"trusted_schema(0)",
}

// Open opens the database at path, creating it (mode 0600) and its parent
// directory (0700) when missing, and applies pending migrations.
func Open(ctx context.Context, path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	// The driver splits the DSN at the first '?'; a name holding one
	// would silently open another file.
	if strings.ContainsRune(abs, '?') {
		return nil, fmt.Errorf("open store %s: the path contains '?'; choose a data directory without it", abs)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open store: create directory: %w", err)
	}
	// Create the file ourselves so it is 0600 from the first byte; SQLite
	// would create it with the umask's mode, and gives its -wal and -shm
	// files the same mode as the database file.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open store: create file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("open store: create file: %w", err)
	}

	writer, err := openDB(abs, nil)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	// One writer connection, held by the Store: writes queue on wmu
	// instead of fighting over the file lock, and Write's BEGIN IMMEDIATE
	// takes the write lock at the start of a transaction, so a
	// read-then-write transaction can never fail half-way with SQLITE_BUSY.
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)

	// query_only makes a write through the reader pool an error instead
	// of a second, unserialised writer.
	reader, err := openDB(abs, url.Values{"_query_only": {"1"}})
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	reader.SetMaxOpenConns(max(4, runtime.NumCPU()))

	s := &Store{path: abs, writer: writer, reader: reader, runs: newRunLocker(abs)}
	if s.wconn, err = writer.Conn(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	if err := s.init(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	return s, nil
}

func openDB(path string, extra url.Values) (*sql.DB, error) {
	q := url.Values{"_pragma": pragmas}
	for k, v := range extra {
		q[k] = v
	}
	c, err := sqlite.NewConnector(path + "?" + q.Encode())
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// OpenURL opens the store url names. A path, or a file: URL, is a SQLite
// file (Open). Another scheme opens through the engine registered for it
// (package engine): postgres:// and postgresql:// in a homard built with
// -tags postgres. Errors never repeat the URL, which may hold a password.
func OpenURL(ctx context.Context, url string) (*Store, error) {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok || strings.ContainsAny(scheme, `/\`) {
		return Open(ctx, url)
	}
	if strings.EqualFold(scheme, "file") {
		return Open(ctx, rest)
	}
	eng, found := engine.Lookup(scheme)
	if !found {
		known := "none"
		if s := engine.Schemes(); len(s) > 0 {
			known = strings.Join(s, ", ")
		}
		hint := ""
		if strings.HasPrefix(strings.ToLower(scheme), "postgres") {
			hint = "; PostgreSQL needs a homard built with it: go build -tags postgres ./cmd/homard"
		}
		return nil, fmt.Errorf("open store: this homard cannot open %s:// URLs (besides SQLite files it opens: %s)%s", scheme, known, hint)
	}
	return openEngine(ctx, eng, url)
}

// openEngine opens url through eng: a writer pool of one connection held
// for the store's life, like SQLite's, and a reader pool. Writes are
// serialised in this process by wmu and across processes by eng.Begin.
func openEngine(ctx context.Context, eng *engine.Engine, url string) (*Store, error) {
	writer, err := eng.Open(ctx, url, false)
	if err != nil {
		return nil, fmt.Errorf("open %s store: %w", eng.Name, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	reader, err := eng.Open(ctx, url, true)
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("open %s store: %w", eng.Name, err)
	}
	// Two more than SQLite's readers: the run locks hold a connection,
	// and so does a listener (Listen).
	reader.SetMaxOpenConns(max(4, runtime.NumCPU()) + 2)
	s := &Store{path: eng.Name, writer: writer, reader: reader, eng: eng, runs: engineLocks{eng.RunLocks(reader)}}
	if s.wconn, err = writer.Conn(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s store: %w", eng.Name, err)
	}
	if eng.Bootstrap != nil {
		if err := eng.Bootstrap(ctx, s.wconn); err != nil {
			s.Close()
			return nil, fmt.Errorf("open %s store: %w", eng.Name, err)
		}
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s store: %w", eng.Name, err)
	}
	return s, nil
}

// named returns the text of the query called name: sqlite as it is in a
// SQLite store, the engine's own text otherwise. A name the engine does
// not know gives a statement that fails naming it, never SQLite's text
// sent to another database.
func (s *Store) named(name, sqlite string) string {
	if s.eng == nil {
		return sqlite
	}
	if q, ok := s.eng.Queries[name]; ok {
		return q
	}
	return `SELECT * FROM "the ` + s.eng.Name + ` engine has no query ` + name + `"`
}

// Engine names the database the store lives in: "SQLite", or the
// engine's name.
func (s *Store) Engine() string {
	if s.eng == nil {
		return "SQLite"
	}
	return s.eng.Name
}

func (s *Store) init(ctx context.Context) error {
	var mode string
	s.wmu.Lock()
	err := s.wconn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
	s.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("read journal mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("the database is in %s journal mode, not WAL; keep the data directory on a local file system", mode)
	}
	return s.migrate(ctx)
}

// Path is the absolute path of the database file; for a store opened
// through an engine, the engine's name (never its URL, which may hold a
// password).
func (s *Store) Path() string { return s.path }

// Close closes both pools. The last connection to close checkpoints the
// WAL into the database file. A Write after Close fails with ErrClosed.
func (s *Store) Close() error {
	var errs []error
	// Listeners first: each holds a reader connection that a statement
	// closing below may need to lock.
	s.readMu.Lock()
	listeners := s.listeners
	s.listeners, s.closed = nil, true
	s.readMu.Unlock()
	for _, stop := range listeners {
		stop()
	}
	s.wmu.Lock()
	for _, st := range s.wstmts {
		errs = append(errs, st.Close())
	}
	s.wstmts = nil
	if s.wconn != nil {
		errs = append(errs, s.wconn.Close())
		s.wconn = nil
	}
	s.wmu.Unlock()
	s.readMu.Lock()
	for _, st := range s.readStmts {
		errs = append(errs, st.Close())
	}
	s.readStmts = nil
	s.readMu.Unlock()
	errs = append(errs, s.runs.close()) // drops this process's run locks
	return errors.Join(append(errs, s.reader.Close(), s.writer.Close())...)
}

// Tx is one write transaction, valid only inside the function given to
// Write. Its methods fail once Write has returned.
type Tx struct {
	s *Store
	// ctx is Write's context. A Tx lives only for the duration of one
	// Write call (like an *http.Request carries its request's context),
	// so keeping it here does not outlive the call that owns it.
	ctx context.Context
	// done is set when Write returns; only Write's goroutine sets it and
	// a Tx is not for use by other goroutines.
	done bool
	// onCommit and onRollback run after the transaction ended that way
	// (the run locks of runlock.go).
	onCommit, onRollback []func()
}

// Write runs fn in one BEGIN IMMEDIATE transaction on the writer
// connection. It commits when fn returns nil and rolls back when fn returns
// an error (returned unchanged, so errors.Is works) or panics. Write must
// not be called from inside fn: the writer is held until fn returns.
func (s *Store) Write(ctx context.Context, fn func(*Tx) error) (err error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.wconn == nil {
		return fmt.Errorf("begin write: %w", ErrClosed)
	}
	if err := s.begin(ctx); err != nil {
		return fmt.Errorf("begin write: %w", err)
	}
	tx := &Tx{s: s, ctx: ctx}
	finished := false
	defer func() {
		tx.done = true
		if !finished {
			s.rollback() // fn panicked; the panic continues
			runAll(tx.onRollback)
		}
	}()
	if err := fn(tx); err != nil {
		finished = true
		rbErr := s.rollback()
		runAll(tx.onRollback)
		if rbErr != nil {
			return errors.Join(err, fmt.Errorf("rollback: %w", rbErr))
		}
		return err
	}
	finished = true
	// A context cancelled by now rolls the transaction back; the COMMIT
	// itself is not cancelled: cancelled halfway, the driver may report an
	// error for a COMMIT that took effect, and the caller would act as if
	// nothing was written (a scheduler stopped on a slot's instant claimed
	// the slot, was told the claim failed, and never ran it:
	// TestSchedulerRestart, about 1 run in 100).
	if err := ctx.Err(); err != nil {
		err = errors.Join(fmt.Errorf("commit: %w", err), s.rollback())
		runAll(tx.onRollback)
		return err
	}
	if _, err := s.wexec(context.WithoutCancel(ctx), "COMMIT"); err != nil {
		// A failed COMMIT (cancelled, SQLITE_BUSY, disk full) may leave
		// the transaction open; never leave it for the next Write.
		err = errors.Join(fmt.Errorf("commit: %w", err), s.rollback())
		runAll(tx.onRollback)
		return err
	}
	runAll(tx.onCommit)
	return nil
}

func runAll(fns []func()) {
	for _, f := range fns {
		f()
	}
}

// rollback ends the open transaction, if any. It ignores the caller's
// cancellation: a transaction must not outlive its Write.
// begin opens the writer's transaction. Nothing else uses the writer
// while wmu is held, so a transaction already open on it is what an
// earlier failure left (a BEGIN cancelled as it returned, a ROLLBACK that
// failed): it is rolled back and BEGIN tried once more, rather than every
// later Write failing with "cannot start a transaction within a
// transaction". A BEGIN that fails is rolled back too, in case it took
// effect. The caller holds wmu.
func (s *Store) begin(ctx context.Context) error {
	if s.eng != nil {
		err := s.beginEngine(ctx)
		if err != nil && ctx.Err() == nil && s.wconn.PingContext(ctx) != nil {
			// The writer's session is gone: a statement cancelled with
			// its context ends a PostgreSQL connection (the driver cannot
			// interrupt a query and keep the session), as does a server
			// restart. Take a new one and begin again, once.
			if rerr := s.reconnectWriter(ctx); rerr != nil {
				return errors.Join(err, rerr)
			}
			err = s.beginEngine(ctx)
		}
		return err
	}
	_, err := s.wexec(ctx, "BEGIN IMMEDIATE")
	if err == nil {
		return nil
	}
	if rbErr := s.rollback(); rbErr != nil || !strings.Contains(err.Error(), "within a transaction") {
		return err
	}
	if _, err = s.wexec(ctx, "BEGIN IMMEDIATE"); err != nil {
		_ = s.rollback()
		return err
	}
	return nil
}

// beginEngine runs the engine's BEGIN statements, as one unprepared
// script: one round trip to the server instead of one per statement
// (BEGIN and the write lock open every write). The caller holds wmu.
func (s *Store) beginEngine(ctx context.Context) error {
	if _, err := s.wconn.ExecContext(ctx, strings.Join(s.eng.Begin, "; ")); err != nil {
		_ = s.rollback()
		return err
	}
	return nil
}

// reconnectWriter replaces the writer's connection, and the statements
// prepared on it, with a new session from the writer pool. The caller
// holds wmu.
func (s *Store) reconnectWriter(ctx context.Context) error {
	for _, st := range s.wstmts {
		_ = st.Close()
	}
	s.wstmts = nil
	_ = s.wconn.Close()
	c, err := s.writer.Conn(ctx)
	if err != nil {
		return fmt.Errorf("reconnect the writer: %w", err)
	}
	s.wconn = c
	return nil
}

func (s *Store) rollback() error {
	_, err := s.wexec(context.Background(), "ROLLBACK")
	if err != nil && strings.Contains(err.Error(), "no transaction is active") {
		return nil // SQLite already rolled back (e.g. after an I/O error)
	}
	return err
}

// wstmt returns the statement for query prepared on the writer connection,
// preparing it on first use, or nil when the cache is full (the caller
// then runs the query unprepared). The caller holds wmu.
func (s *Store) wstmt(ctx context.Context, query string) (*sql.Stmt, error) {
	return cachedStmt(ctx, &s.wstmts, maxWriterStmts, s.wconn.PrepareContext, query)
}

// wexec runs one statement on the writer connection through the statement
// cache. The caller holds wmu.
func (s *Store) wexec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := s.wstmt(ctx, query)
	switch {
	case err != nil:
		return nil, err
	case st == nil:
		return s.wconn.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

// errTxDone is returned by a Tx used after its Write returned.
var errTxDone = errors.New("store: transaction used after its Write returned")

// exec runs a statement in the transaction, from the writer's prepared
// statement cache: SQLite spends more time parsing a small statement than
// running it.
func (tx *Tx) exec(query string, args ...any) (sql.Result, error) {
	if tx.done {
		return nil, errTxDone
	}
	return tx.s.wexec(tx.ctx, query, args...)
}

// script runs SQL that may hold several statements (a migration), without
// caching it.
func (tx *Tx) script(query string) error {
	if tx.done {
		return errTxDone
	}
	_, err := tx.s.wconn.ExecContext(tx.ctx, query)
	return err
}

// row is the result of queryRow: a *sql.Row, or the error that kept the
// query from running.
type row struct {
	r   *sql.Row
	err error
}

func (r row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.r.Scan(dest...)
}

func (tx *Tx) queryRow(query string, args ...any) row {
	if tx.done {
		return row{err: errTxDone}
	}
	st, err := tx.s.wstmt(tx.ctx, query)
	switch {
	case err != nil:
		return row{err: err}
	case st == nil:
		return row{r: tx.s.wconn.QueryRowContext(tx.ctx, query, args...)}
	}
	return row{r: st.QueryRowContext(tx.ctx, args...)}
}

// Integrity runs PRAGMA integrity_check and foreign_key_check and returns
// an error wrapping ErrCorrupt that lists the first problems found.
func (s *Store) Integrity(ctx context.Context) error {
	if s.eng != nil {
		problems, err := s.eng.Check(ctx, s.reader)
		if err != nil {
			return fmt.Errorf("integrity check: %w", err)
		}
		return corrupt(problems)
	}
	var problems []string
	rows, err := s.reader.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			rows.Close()
			return fmt.Errorf("integrity check: %w", err)
		}
		if msg != "ok" {
			problems = append(problems, msg)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}

	rows, err = s.reader.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		return fmt.Errorf("foreign key check: %w", err)
	}
	for rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fkid int64
		if err := rows.Scan(&table, &rowid, &parent, &fkid); err != nil {
			rows.Close()
			return fmt.Errorf("foreign key check: %w", err)
		}
		problems = append(problems, fmt.Sprintf("%s row %d refers to a missing %s row", table, rowid.Int64, parent))
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("foreign key check: %w", err)
	}
	return corrupt(problems)
}

// corrupt is nil for no problems, else an error wrapping ErrCorrupt that
// names the first few.
func corrupt(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	const show = 5
	msg := strings.Join(problems[:min(show, len(problems))], "; ")
	if len(problems) > show {
		msg += fmt.Sprintf("; and %d more", len(problems)-show)
	}
	return fmt.Errorf("%w: %s", ErrCorrupt, msg)
}

// nanos converts t for an INTEGER column. The zero time is NULL.
func nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// fromNanos is the inverse of nanos.
func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// clampLimit bounds a caller's page size.
func clampLimit(limit, def, maxLimit int) int {
	if limit <= 0 {
		return def
	}
	return min(limit, maxLimit)
}

// rawText is v as a parameter for a column that keeps text byte for byte,
// invalid UTF-8 included (a tool's output): SQLite's TEXT does, so v goes
// as it is; an engine's such column is bytes (PostgreSQL refuses invalid
// UTF-8 in TEXT), so v goes as bytes.
func (s *Store) rawText(v string) any {
	if s.eng == nil {
		return v
	}
	return []byte(v)
}

// boolInt is b as the 0 or 1 an INTEGER flag column holds: SQLite's driver
// converts a bool itself, PostgreSQL's refuses one for an integer.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
