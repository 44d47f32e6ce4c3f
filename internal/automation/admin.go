package automation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/task"
)

// Admin is the service as channel.TaskAdmin: the web UI's tasks page. It
// adds (pending, origin web), shows, approves (bound to the hash the page
// showed), pauses, resumes, renews and removes. A split task is added
// with the CLI only: the web has no way to ask for one.
func (s *Service) Admin() channel.TaskAdmin { return taskAdmin{s} }

// taskAdmin adapts Service to channel.TaskAdmin.
type taskAdmin struct{ s *Service }

var _ channel.TaskAdmin = taskAdmin{}

// taskErr is err with mark added for errors.Is, its message unchanged:
// the gateway picks the status from mark and shows err's own words.
type taskErr struct{ err, mark error }

func (e taskErr) Error() string   { return e.err.Error() }
func (e taskErr) Unwrap() []error { return []error{e.err, e.mark} }

// shownTaskErr marks the task service's errors with the channel error
// that stands for them.
func shownTaskErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return taskErr{err, channel.ErrNotFound}
	case errors.Is(err, ErrInvalid):
		return taskErr{err, channel.ErrInvalid}
	case errors.Is(err, ErrTaskChanged), errors.Is(err, ErrTaskState), errors.Is(err, task.ErrBodyChanged),
		errors.Is(err, task.ErrExpired), errors.Is(err, task.ErrNotApproved), errors.Is(err, task.ErrInvalid):
		return taskErr{err, channel.ErrConflict}
	}
	return err
}

func shownTask(in TaskInfo) channel.Task {
	out := channel.Task{ID: in.ID, Name: in.Name, Status: in.Status, Origin: in.Origin, Schedule: in.Schedule, Next: in.Next,
		Problem: in.Problem, Canonical: in.Canonical, Hash: in.Hash, Ceiling: in.Body.Ceiling.String(), Seal: in.Seal, SealIfApproved: in.SealIfApproved,
		ApprovedAt: in.ApprovedAt, ExpiresAt: in.ExpiresAt}
	if in.LastRun != nil {
		r := shownTaskRun(*in.LastRun)
		out.LastRun = &r
	}
	return out
}

func shownTaskRun(r store.TaskRun) channel.TaskRun {
	return channel.TaskRun{ID: r.ID, Status: r.Status, SlotAt: r.SlotAt, StartedAt: r.StartedAt, EndedAt: r.EndedAt,
		Tokens: r.Tokens, Summary: r.Summary, Error: r.Error, Refused: r.Refused,
		Delivery: r.Delivery, DeliveryState: r.DeliveryState, DeliveryError: r.DeliveryError}
}

func (a taskAdmin) Tasks(ctx context.Context) ([]channel.Task, error) {
	list, err := a.s.List(ctx)
	return channel.Shown(list, err, shownTask)
}

// shownTaskResult is a task service answer as the gateway gets it.
func shownTaskResult(in TaskInfo, err error) (channel.Task, error) {
	if err != nil {
		return channel.Task{}, shownTaskErr(err)
	}
	return shownTask(in), nil
}

// AddTask is Add with origin web. Every refusal of the spec (a rule of
// the body, of this homard's config, a bad name) is ErrInvalid: 400, not
// the 409 the same body errors are for a stored task.
func (a taskAdmin) AddTask(ctx context.Context, sp channel.TaskSpec) (channel.Task, error) {
	in, err := a.s.Add(ctx, TaskSpec{Name: sp.Name, Prompt: sp.Prompt, At: sp.At, Every: sp.Every, Cron: sp.Cron, TZ: sp.TZ,
		Tools: sp.Tools, Deliver: sp.Deliver, Mode: sp.Mode, Ceiling: sp.Ceiling, MaxCalls: sp.MaxCalls, Expires: sp.Expires,
		Reminder: sp.Reminder, Origin: store.TaskFromWeb})
	if errors.Is(err, task.ErrInvalid) && !errors.Is(err, ErrInvalid) {
		err = fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	t, err := shownTaskResult(in, err)
	t.Warning = in.Warning
	return t, err
}

func (a taskAdmin) Task(ctx context.Context, id string) (channel.Task, error) {
	return shownTaskResult(a.s.Info(ctx, id))
}

func (a taskAdmin) TaskRuns(ctx context.Context, id string, n int) ([]channel.TaskRun, error) {
	runs, err := a.s.Runs(ctx, id, n)
	return channel.Shown(runs, shownTaskErr(err), shownTaskRun)
}

func (a taskAdmin) ApproveTask(ctx context.Context, id, hash string) (channel.Task, error) {
	if hash == "" {
		// The page always sends what it showed; an empty hash would
		// approve whatever is stored.
		return channel.Task{}, fmt.Errorf("approve task %s: %w: say which body you approve: hash is required", id, channel.ErrInvalid)
	}
	return shownTaskResult(a.s.Approve(ctx, id, hash))
}

func (a taskAdmin) PauseTask(ctx context.Context, id string) (channel.Task, error) {
	return shownTaskResult(a.s.Pause(ctx, id))
}

func (a taskAdmin) ResumeTask(ctx context.Context, id string) (channel.Task, error) {
	return shownTaskResult(a.s.Resume(ctx, id))
}

func (a taskAdmin) RemoveTask(ctx context.Context, id string) (channel.Task, error) {
	return shownTaskResult(a.s.Remove(ctx, id))
}

func (a taskAdmin) RenewTask(ctx context.Context, id string, d time.Duration) (channel.Task, error) {
	return shownTaskResult(a.s.Renew(ctx, id, d))
}
