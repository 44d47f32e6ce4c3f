package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/task"
)

// The scheduled tasks of channel.TaskAdmin: the web UI's tasks page. It
// shows, approves (bound to the hash the page showed), pauses, resumes,
// renews and removes; adding a task stays in the CLI.

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
	case errors.Is(err, ErrBadRequest):
		return taskErr{err, channel.ErrInvalid}
	case errors.Is(err, ErrTaskChanged), errors.Is(err, ErrTaskState), errors.Is(err, task.ErrBodyChanged),
		errors.Is(err, task.ErrExpired), errors.Is(err, task.ErrNotApproved), errors.Is(err, task.ErrInvalid):
		return taskErr{err, channel.ErrConflict}
	}
	return err
}

func shownTask(in TaskInfo) channel.Task {
	out := channel.Task{ID: in.ID, Name: in.Name, Status: in.Status, Schedule: in.Schedule, Next: in.Next,
		Problem: in.Problem, Canonical: in.Canonical, Hash: in.Hash, Seal: in.Seal, SealIfApproved: in.SealIfApproved,
		ApprovedAt: in.ApprovedAt, ExpiresAt: in.ExpiresAt}
	if in.LastRun != nil {
		r := shownTaskRun(*in.LastRun)
		out.LastRun = &r
	}
	return out
}

func shownTaskRun(r store.TaskRun) channel.TaskRun {
	return channel.TaskRun{ID: r.ID, Status: r.Status, SlotAt: r.SlotAt, StartedAt: r.StartedAt, EndedAt: r.EndedAt,
		Tokens: r.Tokens, Summary: r.Summary, Error: r.Error,
		Delivery: r.Delivery, DeliveryState: r.DeliveryState, DeliveryError: r.DeliveryError}
}

func (a adminRuntime) Tasks(ctx context.Context) ([]channel.Task, error) {
	list, err := a.r.Tasks(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]channel.Task, 0, len(list))
	for _, in := range list {
		out = append(out, shownTask(in))
	}
	return out, nil
}

// shownTaskResult is a task service answer as the gateway gets it.
func shownTaskResult(in TaskInfo, err error) (channel.Task, error) {
	if err != nil {
		return channel.Task{}, shownTaskErr(err)
	}
	return shownTask(in), nil
}

func (a adminRuntime) Task(ctx context.Context, id string) (channel.Task, error) {
	return shownTaskResult(a.r.TaskInfo(ctx, id))
}

func (a adminRuntime) TaskRuns(ctx context.Context, id string, n int) ([]channel.TaskRun, error) {
	runs, err := a.r.TaskRuns(ctx, id, n)
	if err != nil {
		return nil, shownTaskErr(err)
	}
	out := make([]channel.TaskRun, 0, len(runs))
	for _, r := range runs {
		out = append(out, shownTaskRun(r))
	}
	return out, nil
}

func (a adminRuntime) ApproveTask(ctx context.Context, id, hash string) (channel.Task, error) {
	if hash == "" {
		// The page always sends what it showed; an empty hash would
		// approve whatever is stored.
		return channel.Task{}, fmt.Errorf("approve task %s: %w: say which body you approve: hash is required", id, channel.ErrInvalid)
	}
	return shownTaskResult(a.r.ApproveTask(ctx, id, hash))
}

func (a adminRuntime) PauseTask(ctx context.Context, id string) (channel.Task, error) {
	return shownTaskResult(a.r.PauseTask(ctx, id))
}

func (a adminRuntime) ResumeTask(ctx context.Context, id string) (channel.Task, error) {
	return shownTaskResult(a.r.ResumeTask(ctx, id))
}

func (a adminRuntime) RemoveTask(ctx context.Context, id string) (channel.Task, error) {
	return shownTaskResult(a.r.RemoveTask(ctx, id))
}

func (a adminRuntime) RenewTask(ctx context.Context, id string, d time.Duration) (channel.Task, error) {
	return shownTaskResult(a.r.RenewTask(ctx, id, d))
}
