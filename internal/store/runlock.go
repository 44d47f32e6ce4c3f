package store

import (
	"context"
	"fmt"
	"time"

	"github.com/homard/homard/internal/store/engine"
)

// A run recorded as running is held by the process running it: on Linux an
// open-file-description byte lock (fcntl F_OFD_SETLK) on byte seq of the
// file <database>.runs (elsewhere a flock(2) on <database>.runs.d/<seq>),
// taken inside the transaction that inserts the running row and released
// after the transaction that finishes the run commits. The kernel drops the lock when the process dies, however it
// dies (SIGKILL, a power cut ends every process), so at the next start a
// running row whose byte is free was left by a process that is gone — and
// a running row of a live process (the daemon next to a CLI command) is
// never mistaken for one. The lock is taken before the row commits, so no
// other process can see the row unlocked while its runner lives.

// runLocker holds the run locks of one Store. Two implementations keep
// the same contract: a lock is held through this Store's own open file
// description, the kernel drops it when the process dies, and a probe
// through another open file description sees every holder — this Store
// included. runlock_ofd_linux.go uses byte-range OFD locks on one file;
// runlock_flock.go (every other Unix, tested on Linux too) uses flock(2)
// on one small file per running run.
type runLocker interface {
	// hold takes run seq's lock; holding it again is a no-op.
	hold(seq int64) error
	// release drops run seq's lock.
	release(seq int64)
	// probe opens a fresh handle whose free reports whether run seq's
	// lock is free (its holder is gone). done closes the handle.
	probe() (free func(seq int64) (bool, error), done func(), err error)
	// close drops every lock this Store holds.
	close() error
}

// holdRun takes the lock of run seq for this process. It is released when
// the transaction rolls back, or by releaseRun once the run finished.
func (tx *Tx) holdRun(seq int64) error {
	if err := tx.s.runs.hold(seq); err != nil {
		return fmt.Errorf("hold tool run %d: %w", seq, err)
	}
	tx.onRollback = append(tx.onRollback, func() { tx.s.releaseRun(seq) })
	return nil
}

// releaseRun drops this process's lock of run seq.
func (s *Store) releaseRun(seq int64) { s.runs.release(seq) }

// RunInterrupted is the rule of a run marked interrupted at start.
const RunInterrupted = "recovery.interrupted"

// OrphanedRuns returns the runs recorded as running whose process is gone
// (their lock is free), oldest first, at most limit (≤ 0 means 1000). It
// runs in the transaction that marks them, so a run cannot finish or start
// in between. Runs this Store itself is running are held through another
// open file description and so are never returned.
func (tx *Tx) OrphanedRuns(limit int) ([]ToolRun, error) {
	if tx.done {
		return nil, errTxDone
	}
	rows, err := tx.s.wconn.QueryContext(tx.ctx, `SELECT seq, `+toolRunColumns+` FROM tool_runs
		WHERE status = 'running' ORDER BY seq LIMIT ?`, clampLimit(limit, 1000, 1000))
	if err != nil {
		return nil, fmt.Errorf("find interrupted runs: %w", err)
	}
	type seqRun struct {
		seq int64
		run ToolRun
	}
	running, err := collect(rows, func(sc interface{ Scan(...any) error }) (seqRun, error) {
		var r seqRun
		var err error
		r.run, err = scanToolRun(prefixScanner{sc, &r.seq})
		return r, err
	}, "find interrupted runs")
	if err != nil || len(running) == 0 {
		return nil, err
	}
	// The probe is another open file description: it conflicts with every
	// holder, this process's own locks included.
	free, done, err := tx.s.runs.probe()
	if err != nil {
		return nil, fmt.Errorf("find interrupted runs: %w", err)
	}
	defer done()
	var out []ToolRun
	for _, r := range running {
		ok, err := free(r.seq)
		if err != nil {
			return nil, fmt.Errorf("find interrupted runs: probe run %d: %w", r.seq, err)
		}
		if ok {
			out = append(out, r.run)
		}
	}
	return out, nil
}

// prefixScanner scans a leading seq column, then the rest into sc's
// destination.
type prefixScanner struct {
	sc  interface{ Scan(...any) error }
	seq *int64
}

func (p prefixScanner) Scan(dest ...any) error {
	return p.sc.Scan(append([]any{p.seq}, dest...)...)
}

// InterruptToolRun marks a run that was left running by a process that
// died: failed, with rule RunInterrupted and result as its text. It
// returns ErrRunFinished if the run is no longer running.
func (tx *Tx) InterruptToolRun(id, result string, now time.Time) error {
	res, err := tx.exec(`UPDATE tool_runs SET status = 'failed', decision = 'error', rule = ?3, result = ?4,
		is_error = 1, updated_at = ?5 WHERE `+runWhere+` AND status = 'running'`,
		runSeq(id), id, RunInterrupted, result, nanos(now))
	if err != nil {
		return fmt.Errorf("mark tool run %s interrupted: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("mark tool run %s interrupted: %w", id, err)
	} else if n != 1 {
		return fmt.Errorf("mark tool run %s interrupted: %w", id, ErrRunFinished)
	}
	return nil
}

// InterruptedRuns returns the runs marked interrupted (InterruptToolRun)
// since the given time, newest first, at most limit (≤ 0 means 20).
func (s *Store) InterruptedRuns(ctx context.Context, since time.Time, limit int) ([]ToolRun, error) {
	return readAll(ctx, s, "list interrupted runs", scanToolRun, `SELECT `+toolRunColumns+` FROM tool_runs
		WHERE rule = ? AND updated_at >= ? ORDER BY seq DESC LIMIT ?`,
		RunInterrupted, since.UnixNano(), clampLimit(limit, 20, 1000))
}

// TryLock takes the database-wide lock called name, when the store is
// shared (an engine's): ok is false while another process holds it, and
// the database drops it when this process's session ends. A SQLite store
// is one machine's, where file locks do this (package sessionlock): it
// grants every name.
func (s *Store) TryLock(name string) (unlock func(), ok bool, err error) {
	el, shared := s.runs.(engineLocks)
	if !shared {
		return func() {}, true, nil
	}
	if ok, err = el.l.TryName(name); err != nil || !ok {
		return nil, false, err
	}
	return func() { el.l.ReleaseName(name) }, true, nil
}

// TryLockAlone is TryLock held by one taker at a time in this process
// too — TryLock lets the process holding a name take it again — for work
// one holder does alone wherever it runs (a chat's sender: its parts go
// one after the other).
func (s *Store) TryLockAlone(name string) (unlock func(), ok bool, err error) {
	s.aloneMu.Lock()
	if s.alone[name] {
		s.aloneMu.Unlock()
		return nil, false, nil
	}
	if s.alone == nil {
		s.alone = map[string]bool{}
	}
	s.alone[name] = true
	s.aloneMu.Unlock()
	free := func() {
		s.aloneMu.Lock()
		delete(s.alone, name)
		s.aloneMu.Unlock()
	}
	held, ok, err := s.TryLock(name)
	if err != nil || !ok {
		free()
		return nil, false, err
	}
	return func() { held(); free() }, true, nil
}

// Shared reports whether other machines may use this store (an engine's).
func (s *Store) Shared() bool { return s.eng != nil }

// engineLocks are an engine's run locks (engine.RunLocker) as a runLocker.
type engineLocks struct{ l engine.RunLocker }

func (e engineLocks) hold(seq int64) error { return e.l.Hold(seq) }
func (e engineLocks) release(seq int64)    { e.l.Release(seq) }
func (e engineLocks) probe() (func(int64) (bool, error), func(), error) {
	return e.l.Probe()
}
func (e engineLocks) close() error { return e.l.Close() }
