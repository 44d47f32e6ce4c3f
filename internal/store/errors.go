package store

import "errors"

var (
	// ErrNotFound: no row has the requested id.
	ErrNotFound = errors.New("not found")
	// ErrSessionOwner: the session exists and belongs to another owner.
	ErrSessionOwner = errors.New("the session belongs to another owner; start a new session")
	// ErrSessionPending: the session has approvals waiting for the owner;
	// it cannot be deleted until they are answered or expire.
	ErrSessionPending = errors.New("the session has approvals waiting for your answer; approve or deny them first")
	// ErrRunFinished: the tool run already reached a final status and
	// cannot change any more.
	ErrRunFinished = errors.New("the tool run has already finished; record a new run instead")
	// ErrRunStatus: the requested status change would move a tool run
	// backwards (or to an unknown status).
	ErrRunStatus = errors.New("invalid tool run status change")
	// ErrCorrupt: Integrity found damage. Restore from a backup or run
	// "homard doctor".
	ErrCorrupt = errors.New("the database failed its integrity check; restore it from a backup")
	// ErrSchemaTooNew: the database was migrated by a newer homard.
	ErrSchemaTooNew = errors.New("the database was written by a newer homard; upgrade homard")
	// ErrClosed: the Store was closed.
	ErrClosed = errors.New("the database is closed")
)

var (
	// ErrTaskStatus: the task cannot take that status (it was removed,
	// or it is not approved yet).
	ErrTaskStatus = errors.New("invalid task status change; `homard task show ID` shows its status")
	// ErrTaskRunEnded: StartRun or FinishRun on a task run that has
	// already ended (or is not claimed, for StartRun).
	ErrTaskRunEnded = errors.New("the task run has already ended")
)
