package app

import (
	"errors"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/owner"
	"github.com/homard/homard/internal/store"
)

// Admin returns r as the channel.Admin contract the HTTP gateway talks
// to: the owner facade's channel view (sessions, approvals, audit, memory,
// API token checks) and the task service's (scheduled tasks).
func (r *Runtime) Admin() channel.Admin {
	return adminRuntime{Admin: r.Owner.Admin(), TaskAdmin: r.Tasks.Admin()}
}

// adminRuntime is channel.Admin: the owner facade's view and the task
// service's.
type adminRuntime struct {
	owner.Admin
	channel.TaskAdmin
}

var _ channel.Admin = adminRuntime{}

// lockSessionOf is the owner facade's session lock: LockSession, with a
// busy session said as channel.ErrSessionBusy.
func (r *Runtime) lockSessionOf(id string) (func(), error) {
	unlock, err := r.LockSession(id)
	if errors.Is(err, ErrSessionBusy) {
		return nil, channel.ErrSessionBusy
	}
	return unlock, err
}

// SessionSummary is one of the owner's sessions as listed.
type SessionSummary = store.SessionSummary
