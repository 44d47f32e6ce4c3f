package approval

import "errors"

// Sentinel errors, checked with errors.Is. Their text is shown to the
// owner, so each says what happened and what to do next.
var (
	ErrNotFound        = errors.New("no such approval or grant; list them to check the id")
	ErrAlreadyDecided  = errors.New("this approval was already decided or used; ask the agent to propose the action again if it is still needed")
	ErrExpired         = errors.New("this approval has expired; ask the agent to propose the action again")
	ErrForeignOwner    = errors.New("this approval belongs to another owner; only its owner can decide it")
	ErrScopeNotAllowed = errors.New("this action can only be approved once (or denied); approve it with scope once")
	ErrInvalidScope    = errors.New("unknown approval scope; use once, session or always")
	ErrInvalidRequest  = errors.New("invalid approval request")
	// ErrTooManyPending: the session already has Options.MaxPending cards
	// waiting; the text is for the model, which proposed one too many.
	ErrTooManyPending = errors.New("too many approvals are already waiting for the owner in this session; wait for the owner to answer them before proposing more")
	// ErrPlanMismatch: the plan hash in the binding is not the SHA-256 of
	// the plan shown to the owner, so approving it would approve
	// something other than what is displayed.
	ErrPlanMismatch = errors.New("the plan hash does not match the plan; this is a bug in the caller")
)
