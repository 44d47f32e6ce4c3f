// Package owner is the one facade for what the owner does by hand:
// answer approvals, list and revoke grants, read and verify the audit,
// read and edit memory, list and delete sessions, manage API tokens and
// secrets, roll a checkpoint back. The CLI calls it directly; the HTTP
// gateway reaches it through Admin, the channel.Admin view of the same
// methods, so both surfaces do exactly the same thing. Everything acts as
// the configured owner; nothing takes an owner from the caller. What the
// owner changes outside a turn (memory, rollbacks) is audited with the
// actor "owner".
package owner

import (
	"errors"
	"fmt"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/memory"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/totp"
)

// Deps are what Actions works with; app builds them at Open.
type Deps struct {
	// Owner is the configured owner every action is taken as.
	Owner     string
	Store     *store.Store
	Approvals *approval.Service
	Memory    *memory.Memory
	// Reviews is the weekly memory review (memreview.Service); nil: none.
	Reviews Reviews
	Vault   *secrets.Vault
	// Gate rolls checkpoints back (the one gate for every write).
	Gate *changeset.Gate
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// Redact hides secret values in what the audit keeps. Nil keeps text
	// as it is.
	Redact func(string) string
	// LockSession takes a session's turn lock, held by a turn of another
	// process (homard run, homard chat); its error wraps
	// channel.ErrSessionBusy when a turn holds it. Nil takes no lock.
	LockSession func(id string) (unlock func(), err error)
	// ChannelOfSecret names the chat platform whose token a secret name
	// is, or "" (SecretSet refuses a host-less secret of a channel's name
	// unless it is stored for that channel).
	ChannelOfSecret func(name string) string
	// TOTP keeps the owner's authenticator (homard totp …) and checks
	// its codes. Nil: no authenticator, and no code is ever asked for.
	TOTP *totp.Service
	// CodeFrom is the lowest risk whose approval needs a code from the
	// authenticator (permissions.totp = "medium" …); zero: none does.
	CodeFrom policy.Risk
	// CodeFromReach is the lowest blast class whose approval needs a
	// code (permissions.totp = "write", "network" or "send"); zero: none
	// does. With both set, either asks.
	CodeFromReach policy.Reach
}

// ParseCodeFrom reads permissions.totp: "off"; a risk (medium, high,
// critical), the lowest whose approval needs a code; or a blast class
// (write, network, send), the lowest class whose approval needs one.
func ParseCodeFrom(s string) (policy.Risk, policy.Reach, error) {
	if s == "off" || s == "" {
		return 0, 0, nil
	}
	if r, ok := policy.ParseReach(s); ok && r > policy.ReachRead {
		return 0, r, nil
	}
	if r, err := policy.ParseRisk(s); err == nil && r > policy.RiskLow {
		return r, 0, nil
	}
	return 0, 0, fmt.Errorf("permissions.totp = %q: want off; a risk (medium, high or critical); or a blast class (write, network or send)", s)
}

// Actions are the owner's actions. It is safe for concurrent use.
type Actions struct{ d Deps }

// New returns the owner's actions over d.
func New(d Deps) *Actions {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Redact == nil {
		d.Redact = func(s string) string { return s }
	}
	if d.ChannelOfSecret == nil {
		d.ChannelOfSecret = func(string) string { return "" }
	}
	return &Actions{d: d}
}

// Errors a front end shows as a bad request or a missing thing.
var (
	// ErrBadRequest wraps an argument the owner gave wrong.
	ErrBadRequest = errors.New("bad request")
	// ErrGrantNotFound is a grant id that is not one of the owner's grants.
	ErrGrantNotFound = errors.New("no such grant")
	// ErrNoToken: no valid API token has that id.
	ErrNoToken = errors.New("no valid token has that id; see `homard token list`")
)
