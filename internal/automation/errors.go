package automation

import "errors"

// Errors of the task service, besides store.ErrNotFound and the task
// package's (task.ErrNotApproved, task.ErrExpired, task.ErrBodyChanged).
var (
	// ErrInvalid marks a task, or a request about one, that breaks a rule
	// (a bad flag value, a mode above the ceiling, a tool that is gone):
	// the person who asked must change it. Its text is app's
	// ErrBadRequest's, so messages read as before.
	ErrInvalid = errors.New("bad request")
	// ErrTaskChanged: the body the owner was shown is not the stored one.
	ErrTaskChanged = errors.New("the task changed since it was shown; show it again and approve what you read")
	// ErrTaskState: the action does not apply to the task as it is (a
	// removed task, renewing a task never approved).
	ErrTaskState = errors.New("not possible for the task as it is")
)
