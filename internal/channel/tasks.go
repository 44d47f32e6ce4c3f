package channel

import (
	"context"
	"errors"
	"time"
)

// TaskAdmin is the owner's scheduled tasks as the HTTP gateway manages
// them: add one (pending), list, show, approve the body that was shown,
// pause, resume, renew and remove. No turn reaches it: only the owner's
// authenticated requests do.
type TaskAdmin interface {
	// AddTask adds a task from the web UI, pending the owner's approval,
	// exactly as `homard task add` does (the same rules and defaults); it
	// records origin web. Nothing runs until ApproveTask is given the
	// hash of the body it returns. ErrInvalid, with what to fix, when the
	// spec breaks a rule.
	AddTask(ctx context.Context, spec TaskSpec) (Task, error)
	// Tasks lists the owner's tasks that are not removed, oldest first.
	Tasks(ctx context.Context) ([]Task, error)
	// Task returns one task. ErrNotFound when the owner has no such task.
	Task(ctx context.Context, id string) (Task, error)
	// TaskRuns returns a task's last n runs, newest first.
	TaskRuns(ctx context.Context, id string, n int) ([]TaskRun, error)
	// ApproveTask seals the task's stored body, which must be the one
	// whose Hash the owner was shown: ErrConflict when it is not (the
	// body changed since), when the task was removed or its approval
	// would already be over; ErrInvalid when the body breaks this
	// homard's rules (a mode above the ceiling, a tool that is gone).
	ApproveTask(ctx context.Context, id, hash string) (Task, error)
	// PauseTask, ResumeTask and RemoveTask change the task's status;
	// ErrConflict when the change does not apply (resuming an active
	// task, pausing a pending one).
	PauseTask(ctx context.Context, id string) (Task, error)
	ResumeTask(ctx context.Context, id string) (Task, error)
	RemoveTask(ctx context.Context, id string) (Task, error)
	// RenewTask re-approves an unchanged, approved task for d more (0:
	// the configured expiry). ErrConflict when its body changed since it
	// was sealed or it was never approved; ErrInvalid for a d out of range.
	RenewTask(ctx context.Context, id string, d time.Duration) (Task, error)
}

// Errors a TaskAdmin returns besides ErrNotFound; the message of the
// error that wraps one says what happened and what to do.
var (
	// ErrConflict: the action does not apply to the task as it is now.
	ErrConflict = errors.New("not possible for the task as it is now")
	// ErrInvalid: the request or the task breaks a rule.
	ErrInvalid = errors.New("invalid request")
)

// TaskSpec is a task the owner asks to add from the web UI, as `homard
// task add` asks for one (its flags of the same names). Zero values mean
// the configured defaults.
type TaskSpec struct {
	Name   string
	Prompt string // for a reminder, its text
	// Exactly one of At, Every and Cron.
	At, Every, Cron string
	TZ              string // IANA zone of Cron and of a local At
	// Tools is the tool profile: nil means the read-only tools, empty
	// means none.
	Tools    []string
	Deliver  string // web or an enabled chat channel
	Mode     string
	Ceiling  string // read, write, network, network:HOSTS or send
	MaxCalls int64
	Expires  time.Duration // how long the approval lasts
	Reminder bool          // deliver Prompt as it is, no model, no tools
}

// Task is a scheduled task as the owner sees it. Canonical is the exact
// body the owner approves; its prompt is the owner's, but show it as
// untrusted text all the same.
type Task struct {
	ID, Name string
	Status   string // pending, active, paused or removed
	// Origin is where the task came from: cli, web or chat (not sealed).
	Origin   string
	Schedule string // for a person: "every 1h0m0s from 2026-01-01T00:00:00Z", "cron 0 8 * * * Europe/Paris"
	// Next are the next slots (none unless active).
	Next []time.Time
	// Problem says why the task will not run as things are; "" when it
	// will.
	Problem string
	// Canonical is the sealed text; Hash its SHA-256 in hex, what an
	// approval must name.
	Canonical string
	Hash      string
	// Ceiling is the sealed blast ceiling (policy.Ceiling.String):
	// read, write, network, network:HOSTS or send; "" for a task sealed
	// before ceilings existed (none).
	Ceiling string
	// Seal is the stored seal's prefix ("" until approved);
	// SealIfApproved the prefix approving now would store.
	Seal, SealIfApproved string
	ApprovedAt           time.Time // zero until approved
	ExpiresAt            time.Time // the approval's end; zero until approved
	LastRun              *TaskRun  // nil before the first run
	// Warning, from AddTask only, says what the task's own ceiling keeps
	// its tools from doing ("" when it covers them all).
	Warning string
}

// TaskRun is one slot of a task.
type TaskRun struct {
	ID        int64
	Status    string // claimed, running, succeeded, failed, skipped, interrupted or refused
	SlotAt    time.Time
	StartedAt time.Time
	EndedAt   time.Time // zero while it runs
	Tokens    int64
	Summary   string // the run's complete_task summary
	Error     string // why a run did not succeed
	// Refused lists the calls refused during the run, one per line
	// ("tool: reason (rule id)"); "" when none was.
	Refused string
	// Delivery is where the summary went ("" nowhere yet, "web", or a
	// chat platform); for a platform, DeliveryState is its outbox row's
	// (queued, sending, sent or failed) and DeliveryError why it failed.
	Delivery, DeliveryState, DeliveryError string
}
