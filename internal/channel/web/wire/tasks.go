package wire

import (
	"time"

	"github.com/homard/homard/internal/channel"
)

// Task is one entry of GET /api/tasks: a scheduled task and where it
// stands. Times are UTC; a time not set yet is null.
type Task struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"` // pending, active, paused or removed
	// Origin is where the task came from: cli (homard task add), web
	// (POST /api/tasks) or chat (approved in a conversation). Not sealed.
	Origin   string      `json:"origin"`
	Schedule string      `json:"schedule"`
	Next     []time.Time `json:"next"` // never null
	// Problem says why the task will not run as things are; "" when it
	// will.
	Problem string `json:"problem"`
	Hash    string `json:"hash"` // hex SHA-256 of the body
	// Ceiling is the sealed blast ceiling: read, write, network,
	// network:HOSTS or send; "" for a task sealed before ceilings (none).
	Ceiling   string     `json:"ceiling"`
	ExpiresAt *time.Time `json:"expires_at"`
	LastRun   *TaskRun   `json:"last_run"`
}

// TaskDetail is the body of GET /api/tasks/{id} and of every task
// action's answer: the task, the exact body the owner approves, its seal
// and its last runs.
type TaskDetail struct {
	Task
	// Body is the canonical body, byte for byte what is sealed: show it
	// as text, verbatim.
	Body string `json:"body"`
	// Seal is the stored seal's prefix ("" until approved);
	// SealIfApproved is the prefix approving now would store.
	Seal           string     `json:"seal"`
	SealIfApproved string     `json:"seal_if_approved"`
	ApprovedAt     *time.Time `json:"approved_at"`
	Runs           []TaskRun  `json:"runs"` // newest first, never null
}

// TaskAdded is the answer of POST /api/tasks: the new task, pending, as
// GET /api/tasks/{id} shows it (its body and hash, which approving must
// name), and Warning, what the task's own ceiling keeps its tools from
// doing ("" when it covers them all).
type TaskAdded struct {
	TaskDetail
	Warning string `json:"warning"`
}

// TaskRun is one run of a task.
type TaskRun struct {
	ID        int64      `json:"id"`
	Status    string     `json:"status"`
	SlotAt    time.Time  `json:"slot_at"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at"`
	Tokens    int64      `json:"tokens"`
	Summary   string     `json:"summary"`
	Error     string     `json:"error"`
	// Refused lists the calls refused during the run, one per line
	// ("tool: reason (rule id)"); "" when none was.
	Refused string `json:"refused"`
	// Delivery is where the summary went ("" nowhere yet, "web", or a
	// chat platform); for a platform, DeliveryState is queued, sending,
	// sent or failed and DeliveryError says why it failed.
	Delivery      string `json:"delivery"`
	DeliveryState string `json:"delivery_state"`
	DeliveryError string `json:"delivery_error"`
}

// TaskApproveRequest is the body of POST /api/tasks/{id}/approve: the
// hash of the body the page showed (the whole hex digest, or at least its
// first 12 digits).
type TaskApproveRequest struct {
	Hash string `json:"hash"`
}

// TaskAddRequest is the body of POST /api/tasks: a task to add, pending,
// as `homard task add` takes one (its flags of the same names). Exactly
// one of At, Every and Cron; every other field may be left out for the
// configured default. Tools left out (or null) is the read-only tools,
// [] is none. Expires is a Go duration or whole days ("240h", "10d").
// A split task is added with the CLI only.
type TaskAddRequest struct {
	Name     string   `json:"name"`
	Prompt   string   `json:"prompt"`
	At       string   `json:"at,omitempty"`
	Every    string   `json:"every,omitempty"`
	Cron     string   `json:"cron,omitempty"`
	TZ       string   `json:"tz,omitempty"`
	Tools    []string `json:"tools"`
	Deliver  string   `json:"deliver,omitempty"`
	Mode     string   `json:"mode,omitempty"`
	Ceiling  string   `json:"ceiling,omitempty"`
	MaxCalls int64    `json:"max_calls,omitempty"`
	Expires  string   `json:"expires,omitempty"`
	Remind   bool     `json:"remind,omitempty"`
}

// Spec is the request as the task admin takes it, with expires parsed
// by the caller.
func (r TaskAddRequest) Spec(expires time.Duration) channel.TaskSpec {
	return channel.TaskSpec{Name: r.Name, Prompt: r.Prompt, At: r.At, Every: r.Every, Cron: r.Cron, TZ: r.TZ,
		Tools: r.Tools, Deliver: r.Deliver, Mode: r.Mode, Ceiling: r.Ceiling, MaxCalls: r.MaxCalls,
		Expires: expires, Reminder: r.Remind}
}

// TaskRenewRequest is the body of POST /api/tasks/{id}/renew: how long the
// new approval lasts, a Go duration or whole days ("240h", "10d"); empty
// means the configured expiry.
type TaskRenewRequest struct {
	Expires string `json:"expires"`
}

// NewTask is t on the wire.
func NewTask(t channel.Task) Task {
	out := Task{ID: t.ID, Name: t.Name, Status: t.Status, Origin: t.Origin, Schedule: t.Schedule, Next: make([]time.Time, 0, len(t.Next)),
		Problem: t.Problem, Hash: t.Hash, Ceiling: t.Ceiling, ExpiresAt: timeOrNull(t.ExpiresAt)}
	for _, n := range t.Next {
		out.Next = append(out.Next, n.UTC())
	}
	if t.LastRun != nil {
		r := NewTaskRun(*t.LastRun)
		out.LastRun = &r
	}
	return out
}

// NewTaskDetail is t with its runs on the wire.
func NewTaskDetail(t channel.Task, runs []channel.TaskRun) TaskDetail {
	out := TaskDetail{Task: NewTask(t), Body: t.Canonical, Seal: t.Seal, SealIfApproved: t.SealIfApproved,
		ApprovedAt: timeOrNull(t.ApprovedAt), Runs: make([]TaskRun, 0, len(runs))}
	for _, r := range runs {
		out.Runs = append(out.Runs, NewTaskRun(r))
	}
	return out
}

// NewTaskRun is r on the wire.
func NewTaskRun(r channel.TaskRun) TaskRun {
	return TaskRun{ID: r.ID, Status: r.Status, SlotAt: r.SlotAt.UTC(), StartedAt: r.StartedAt.UTC(), EndedAt: timeOrNull(r.EndedAt),
		Tokens: r.Tokens, Summary: r.Summary, Error: r.Error, Refused: r.Refused,
		Delivery: r.Delivery, DeliveryState: r.DeliveryState, DeliveryError: r.DeliveryError}
}
