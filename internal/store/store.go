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

	"modernc.org/sqlite"
)

// Store is an open database. It is safe for concurrent use.
type Store struct {
	path   string
	writer *sql.DB // exactly one connection: the only writer in this process
	reader *sql.DB // read-only pool (query_only), WAL readers do not block the writer

	// stmtMu guards stmts and missed. stmts are statements prepared on the
	// writer's single connection: SQLite spends more time parsing a
	// statement than running a small insert, and the arbiter's hot path
	// repeats the same few. A statement cannot be prepared while a
	// transaction holds that connection, so a miss inside a transaction
	// runs unprepared and is prepared after the transaction ends.
	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt
	missed map[string]bool
	// reads are statements prepared on the reader pool for hot queries
	// (memory recall); database/sql prepares each on a connection the
	// first time it runs there and reuses it after. Guarded by stmtMu.
	reads map[string]*sql.Stmt
}

// readStmt returns the reader-pool statement for query, preparing it on
// first use.
func (s *Store) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if st, ok := s.reads[query]; ok {
		return st, nil
	}
	st, err := s.reader.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if s.reads == nil {
		s.reads = make(map[string]*sql.Stmt)
	}
	s.reads[query] = st
	return st, nil
}

// cachedStmt returns the prepared writer statement for query, or nil
// (and remembers the miss) if it has not been prepared yet.
func (s *Store) cachedStmt(query string) *sql.Stmt {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if st, ok := s.stmts[query]; ok {
		return st
	}
	if s.missed == nil {
		s.missed = make(map[string]bool)
	}
	s.missed[query] = true
	return nil
}

// prepareMissed prepares the statements that missed the cache. It runs
// after a transaction, when the writer connection is free; it never holds
// stmtMu while waiting for the connection.
func (s *Store) prepareMissed(ctx context.Context) {
	s.stmtMu.Lock()
	var todo []string
	for q := range s.missed {
		todo = append(todo, q)
	}
	s.missed = nil
	s.stmtMu.Unlock()
	for _, q := range todo {
		st, err := s.writer.PrepareContext(ctx, q)
		if err != nil {
			continue // the statement keeps running unprepared
		}
		s.stmtMu.Lock()
		if s.stmts == nil {
			s.stmts = make(map[string]*sql.Stmt)
		}
		if _, dup := s.stmts[q]; dup {
			st.Close()
		} else {
			s.stmts[q] = st
		}
		s.stmtMu.Unlock()
	}
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

	writer, err := openDB(abs, url.Values{"_txlock": {"immediate"}})
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	// One writer connection: writes queue in database/sql instead of
	// fighting over the file lock, and BEGIN IMMEDIATE (_txlock) takes the
	// write lock at the start of a transaction, so a read-then-write
	// transaction can never fail half-way with SQLITE_BUSY.
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

	s := &Store{path: abs, writer: writer, reader: reader}
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

func (s *Store) init(ctx context.Context) error {
	var mode string
	if err := s.writer.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("read journal mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("the database is in %s journal mode, not WAL; keep the data directory on a local file system", mode)
	}
	return s.migrate(ctx)
}

// Path is the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes both pools. The last connection to close checkpoints the
// WAL into the database file.
func (s *Store) Close() error {
	s.stmtMu.Lock()
	var errs []error
	for _, st := range s.stmts {
		errs = append(errs, st.Close())
	}
	for _, st := range s.reads {
		errs = append(errs, st.Close())
	}
	s.stmts, s.reads = nil, nil
	s.stmtMu.Unlock()
	return errors.Join(append(errs, s.reader.Close(), s.writer.Close())...)
}

// Tx is one write transaction, valid only inside the function given to
// Write. Its methods fail once Write has returned.
type Tx struct {
	s  *Store
	tx *sql.Tx
	// ctx is Write's context. A Tx lives only for the duration of one
	// Write call (like an *http.Request carries its request's context),
	// so keeping it here does not outlive the call that owns it.
	ctx context.Context
}

// Write runs fn in one BEGIN IMMEDIATE transaction on the writer
// connection. It commits when fn returns nil and rolls back when fn returns
// an error (returned unchanged, so errors.Is works) or panics.
func (s *Store) Write(ctx context.Context, fn func(*Tx) error) (err error) {
	sqlTx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write: %w", err)
	}
	// Runs last, once the transaction has released the connection.
	defer s.prepareMissed(context.WithoutCancel(ctx))
	done := false
	defer func() {
		if !done {
			sqlTx.Rollback() // fn panicked; the panic continues
		}
	}()
	if err := fn(&Tx{s: s, tx: sqlTx, ctx: ctx}); err != nil {
		done = true
		if rbErr := sqlTx.Rollback(); rbErr != nil && !errors.Is(rbErr, sql.ErrTxDone) {
			return errors.Join(err, fmt.Errorf("rollback: %w", rbErr))
		}
		return err
	}
	done = true
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// exec runs a statement in the transaction, from the prepared cache: on
// the writer's single connection database/sql reuses the prepared
// statement instead of parsing the SQL again.
func (tx *Tx) exec(query string, args ...any) (sql.Result, error) {
	if st := tx.s.cachedStmt(query); st != nil {
		return tx.tx.StmtContext(tx.ctx, st).ExecContext(tx.ctx, args...)
	}
	return tx.tx.ExecContext(tx.ctx, query, args...)
}

func (tx *Tx) queryRow(query string, args ...any) *sql.Row {
	if st := tx.s.cachedStmt(query); st != nil {
		return tx.tx.StmtContext(tx.ctx, st).QueryRowContext(tx.ctx, args...)
	}
	return tx.tx.QueryRowContext(tx.ctx, query, args...)
}

// Integrity runs PRAGMA integrity_check and foreign_key_check and returns
// an error wrapping ErrCorrupt that lists the first problems found.
func (s *Store) Integrity(ctx context.Context) error {
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
