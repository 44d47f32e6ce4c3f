//go:build postgres

package pgstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/homard/homard/internal/store/engine"
)

// Every lock here is on an object in the store's own schema, so PostgreSQL's
// privileges keep it the store's: a role of the same database with no
// privilege on the schema cannot take one, nor hold one to stall the store
// (issue 27: advisory locks, which homard used before, are one space per
// database that any role may take any key of). TestCoOwnerCannotTakeLocks.

// writeLock is what every write transaction takes first (Begin):
// schema_migrations, which every store has from its first write
// (bootstrap), in EXCLUSIVE mode. The mode conflicts with itself, so
// writers of the store queue one after another, as SQLite's BEGIN
// IMMEDIATE queues them on one file, and not with the ACCESS SHARE of a
// plain read, so readers never wait. Taking it needs the UPDATE, DELETE or
// TRUNCATE privilege on the table (or owning it), and naming it needs
// USAGE on the schema. The strongest lock a role without privileges can
// hold on the table is ACCESS SHARE (a function given its oid), which this
// mode does not conflict with. The lock lives in the server's memory: it
// writes nothing to the table or its WAL.
const writeLock = `LOCK TABLE schema_migrations IN EXCLUSIVE MODE`

// bootstrap creates schema_migrations, the table the write lock locks, when
// the store is new: the first write (migrate's, which creates it too on
// SQLite) needs it already. Two processes opening a new store at once may
// both try: CREATE TABLE IF NOT EXISTS then fails in one of them on a
// unique index of the catalog, once the other's table is committed, and
// that table is all this one needed.
func bootstrap(ctx context.Context, c *sql.Conn) error {
	_, err := c.ExecContext(ctx, queries["schema_migrations"])
	if err == nil {
		return nil
	}
	var exists bool
	if qerr := c.QueryRowContext(ctx,
		`SELECT to_regclass(quote_ident(current_schema()) || '.schema_migrations') IS NOT NULL`).Scan(&exists); qerr == nil && exists {
		return nil
	}
	return fmt.Errorf("create schema_migrations: %w", err)
}

// Run locks and name locks are rows of held_locks (migration 0036): a
// lock's name and the session holding it, by pid and start time, which is
// the store's one connection kept for its locks (runLocks.conn). A lock is
// held while that session lives: a row whose session is no longer in
// pg_stat_activity — it ended with its process, however the process died —
// is free, and the next taker overwrites it. The start time tells a live
// session from a dead one whose pid the server gave out again.
// pg_stat_activity shows a session's start only to roles it is a member
// of, so only the store's own role's sessions count as live holders.
//
// Each taking and each release is one statement on that connection (one
// round trip, as the advisory lock was), committed without waiting for a
// WAL flush: the table is UNLOGGED, since a lock outlives no server crash
// (every session ends with one). Reads of pg_stat_activity cost a look at
// each backend's slot, a few microseconds with max_connections in the
// hundreds.
const (
	// live is true while the session holding row h runs.
	live = `EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = h.pid AND a.backend_start = h.backend_start)`
	// takeLock takes the lock named by its parameter for this session,
	// when no other live session holds it; a row comes back when taken.
	takeLock = `INSERT INTO held_locks AS h (name, pid, backend_start)
		SELECT CAST(? AS TEXT), pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()
		ON CONFLICT (name) DO UPDATE SET pid = excluded.pid, backend_start = excluded.backend_start
		WHERE h.pid = excluded.pid OR NOT ` + live + `
		RETURNING 1`
	releaseLock = `DELETE FROM held_locks WHERE name = ? AND pid = pg_backend_pid()`
	releaseAll  = `DELETE FROM held_locks WHERE pid = pg_backend_pid()`
	// sweepDead deletes the rows of sessions that ended: locks whose name
	// no one takes again (a finished run's, a deleted session's).
	sweepDead = `DELETE FROM held_locks h WHERE NOT ` + live
	// isFree is true when no live session holds the lock named by its
	// parameter — this store's own included.
	isFree = `SELECT NOT EXISTS (SELECT 1 FROM held_locks h WHERE h.name = ? AND ` + live + `)`
)

// runLockName and nameLockName are the rows' names of run key's lock and
// of the lock called name.
func runLockName(key int64) string    { return "run:" + strconv.FormatInt(key, 10) }
func nameLockName(name string) string { return "name:" + name }

// runLocks are one store's run and name locks (see held_locks above).
type runLocks struct {
	db *sql.DB // the store's reader pool

	mu sync.Mutex // guards the fields below
	// conn is the session that holds every lock of this store, from the
	// reader pool but allowed to write; nil until the first taking, and
	// after its session was lost. It never goes back to the pool.
	conn  *sql.Conn
	held  map[int64]bool // run keys held
	names map[string]int // takings of each name held, the same name taken again counts
}

var _ engine.RunLocker = (*runLocks)(nil)

// newRunLocks returns the locks of the store whose reader pool is db.
func newRunLocks(db *sql.DB) engine.RunLocker {
	return &runLocks{db: db, held: map[int64]bool{}, names: map[string]int{}}
}

// pin takes the connection that will hold the locks, when there is none.
// The caller holds mu.
func (l *runLocks) pin(ctx context.Context) error {
	if l.conn != nil {
		return nil
	}
	c, err := l.db.Conn(ctx)
	if err != nil {
		return err
	}
	// The reader pool's sessions refuse writes; this one writes its
	// locks' rows, and is closed rather than given back (discard).
	if _, err := c.ExecContext(ctx, `SET default_transaction_read_only = off`); err != nil {
		discard(c)
		return err
	}
	if _, err := c.ExecContext(ctx, sweepDead); err != nil {
		discard(c)
		return err
	}
	l.conn = c
	return nil
}

// discard closes c's session instead of returning it to the pool.
func discard(c *sql.Conn) {
	_ = c.Raw(func(any) error { return driver.ErrBadConn })
	_ = c.Close()
}

// failed is called after a statement on conn failed: when its session is
// gone (a server restart, a terminated backend), so are the locks it held
// — their rows are free to any taker — and the next taking pins a new
// one. The caller holds mu.
func (l *runLocks) failed(ctx context.Context) {
	if l.conn.PingContext(ctx) == nil {
		return
	}
	discard(l.conn)
	l.conn = nil
	clear(l.held)
	clear(l.names)
}

// take takes the lock called name for this store's session; false when
// another live session holds it. A session found lost is replaced and
// the taking tried once more. The caller holds mu.
func (l *runLocks) take(name string) (bool, error) {
	ctx := context.Background()
	for try := 0; ; try++ {
		if err := l.pin(ctx); err != nil {
			return false, err
		}
		var one int
		err := l.conn.QueryRowContext(ctx, takeLock, name).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		if err == nil {
			return true, nil
		}
		if l.failed(ctx); l.conn != nil || try > 0 {
			return false, err
		}
	}
}

// drop releases the lock called name. The caller holds mu.
func (l *runLocks) drop(name string) {
	if l.conn == nil {
		return
	}
	ctx := context.Background()
	if _, err := l.conn.ExecContext(ctx, releaseLock, name); err != nil {
		l.failed(ctx)
	}
}

func (l *runLocks) Hold(key int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[key] {
		return nil
	}
	ok, err := l.take(runLockName(key))
	if err != nil {
		return fmt.Errorf("take run lock %d: %w", key, err)
	}
	if !ok {
		return fmt.Errorf("run lock %d is held by another process", key)
	}
	l.held[key] = true
	return nil
}

func (l *runLocks) Release(key int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held[key] {
		return
	}
	delete(l.held, key)
	l.drop(runLockName(key))
}

func (l *runLocks) TryName(name string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.names[name]; n > 0 {
		l.names[name] = n + 1
		return true, nil
	}
	ok, err := l.take(nameLockName(name))
	if ok {
		l.names[name] = 1
	}
	return ok, err
}

func (l *runLocks) ReleaseName(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch n := l.names[name]; n {
	case 0:
		return
	case 1:
		delete(l.names, name)
		l.drop(nameLockName(name))
	default:
		l.names[name] = n - 1
	}
}

// Probe reads the locks' rows through the reader pool: a lock is held by
// any live session, this store's own included.
func (l *runLocks) Probe() (func(int64) (bool, error), func(), error) {
	free := func(key int64) (bool, error) {
		var ok bool
		err := l.db.QueryRowContext(context.Background(), isFree, runLockName(key)).Scan(&ok)
		return ok, err
	}
	return free, func() {}, nil
}

func (l *runLocks) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.held)
	clear(l.names)
	if l.conn == nil {
		return nil
	}
	// Were this step to fail, the rows would still be free once the
	// session ends, just below; a session already gone freed them.
	ctx := context.Background()
	_, err := l.conn.ExecContext(ctx, releaseAll)
	if err != nil && l.conn.PingContext(ctx) != nil {
		err = nil
	}
	discard(l.conn)
	l.conn = nil
	return err
}
