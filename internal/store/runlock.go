package store

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A run recorded as running is held by the process running it: an
// open-file-description byte lock (fcntl F_OFD_SETLK) on byte seq of the
// file <database>.runs, taken inside the transaction that inserts the
// running row and released after the transaction that finishes the run
// commits. The kernel drops the lock when the process dies, however it
// dies (SIGKILL, a power cut ends every process), so at the next start a
// running row whose byte is free was left by a process that is gone — and
// a running row of a live process (the daemon next to a CLI command) is
// never mistaken for one. The lock is taken before the row commits, so no
// other process can see the row unlocked while its runner lives.

// runLocks is the Store's lock file, opened on first use.
type runLocks struct {
	once sync.Once
	f    *os.File
	err  error
}

func (s *Store) runLockFile() (*os.File, error) {
	s.runs.once.Do(func() {
		s.runs.f, s.runs.err = os.OpenFile(s.path+".runs", os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	})
	return s.runs.f, s.runs.err
}

// lockRange is the byte a run's lock covers.
func lockRange(seq int64, typ int16) unix.Flock_t {
	return unix.Flock_t{Type: typ, Whence: 0, Start: seq, Len: 1}
}

// holdRun takes the lock of run seq for this process. It is released when
// the transaction rolls back, or by releaseRun once the run finished.
func (tx *Tx) holdRun(seq int64) error {
	f, err := tx.s.runLockFile()
	if err != nil {
		return fmt.Errorf("hold tool run: %w", err)
	}
	lk := lockRange(seq, unix.F_WRLCK)
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		return fmt.Errorf("hold tool run %d: %w", seq, err)
	}
	tx.onRollback = append(tx.onRollback, func() { tx.s.releaseRun(seq) })
	return nil
}

// releaseRun drops this process's lock of run seq.
func (s *Store) releaseRun(seq int64) {
	f, err := s.runLockFile()
	if err != nil {
		return
	}
	lk := lockRange(seq, unix.F_UNLCK)
	_ = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
}

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
	// A second open of the file is another open file description: it
	// conflicts with every holder, this process's own lock file included.
	probe, err := os.OpenFile(tx.s.path+".runs", os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("find interrupted runs: %w", err)
	}
	defer probe.Close()
	var out []ToolRun
	for _, r := range running {
		lk := lockRange(r.seq, unix.F_WRLCK)
		if err := unix.FcntlFlock(probe.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
			return nil, fmt.Errorf("find interrupted runs: probe run %d: %w", r.seq, err)
		}
		if lk.Type == unix.F_UNLCK {
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
	rows, err := s.readRows(ctx, `SELECT `+toolRunColumns+` FROM tool_runs
		WHERE rule = ? AND updated_at >= ? ORDER BY seq DESC LIMIT ?`,
		RunInterrupted, since.UnixNano(), clampLimit(limit, 20, 1000))
	if err != nil {
		return nil, fmt.Errorf("list interrupted runs: %w", err)
	}
	return collect(rows, scanToolRun, "list interrupted runs")
}
