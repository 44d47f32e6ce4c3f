package app

import (
	"errors"
	"fmt"

	"github.com/homard/homard/internal/sessionlock"
)

// ErrSessionBusy is returned when a turn already runs in the session in
// another process on the same home or, on a shared database, on another
// machine (`homard serve`, `homard chat`, `homard run`).
var ErrSessionBusy = sessionlock.ErrBusy

// LockSession takes the session's turn lock (package sessionlock). Call
// unlock when the turn has ended.
func (r *Runtime) LockSession(session string) (unlock func(), err error) {
	unlock, err = r.locks.Lock(session)
	if errors.Is(err, ErrSessionBusy) {
		var who string
		if si, ok := r.RunningServe(); ok {
			who = fmt.Sprintf(" (homard serve, pid %d, runs turns on this home: http://%s)", si.PID, si.Addr)
		}
		return nil, fmt.Errorf("session %s: %w%s; wait for it to finish or use another --session", session, ErrSessionBusy, who)
	}
	return unlock, err
}
