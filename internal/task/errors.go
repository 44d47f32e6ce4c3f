package task

import "errors"

// Errors of the check made before every run. Each is wrapped with the
// detail for the audit; the owner is told only that the task did not run.
var (
	// ErrBodyChanged: the stored body is not the one the owner approved
	// (edited after approval, or changed directly in the database), or
	// the seal does not hold under this vault's key.
	ErrBodyChanged = errors.New("the task changed since it was approved; review it with `homard task show ID` and approve it again")
	// ErrExpired: the approval's expiry has passed.
	ErrExpired = errors.New("the task's approval has expired; renew it with `homard task renew ID`")
	// ErrNotApproved: the task was never approved (or was removed).
	ErrNotApproved = errors.New("the task is not approved; approve it with `homard task approve ID`")
	// ErrInvalid: the body breaks a rule of Validate.
	ErrInvalid = errors.New("invalid task")
)
